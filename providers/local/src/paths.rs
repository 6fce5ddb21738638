//! Keys: the real path of what a display path leads to, or — for a path that does not exist yet
//! — the real path of its nearest existing ancestor plus the missing suffix, so the key is stable
//! across creation (also under a symlinked ancestor). Display paths, refusals, URLs and
//! containment are the contract's ([`seam::paths`]).

use crate::errors::io as io_err;
use seam::{FsError, Verb};
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// The real path of `path` (every link followed, `.` and `..` gone), as
/// [`std::fs::canonicalize`] gives it, with its errors — in three system calls where `/proc` is
/// mounted: the path is opened (`O_PATH`: nothing is read, no device is woken) and the kernel
/// says what the descriptor leads to. `canonicalize` reads every component of the path as a
/// link, one call each; a provider asks for a key in every call, and the gate measured those
/// reads at a twentieth of a check. Where `/proc` says nothing usable (not mounted, or what
/// the path led to was removed meanwhile) it is `canonicalize` after all.
pub fn real_path(path: impl AsRef<Path>) -> std::io::Result<PathBuf> {
    use rustix::fs::{Mode, OFlags, open};
    let path = path.as_ref();
    let fd = open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?;
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    match rustix::fs::readlink(link.as_str(), Vec::new()) {
        Ok(real) => {
            let real = PathBuf::from(OsString::from_vec(real.into_bytes()));
            let deleted = real.as_os_str().as_encoded_bytes().ends_with(b" (deleted)");
            if real.is_absolute() && !deleted {
                return Ok(real);
            }
            std::fs::canonicalize(path)
        }
        Err(_) => std::fs::canonicalize(path),
    }
}

fn to_string(p: PathBuf, display: &str) -> Result<String, FsError> {
    p.into_os_string()
        .into_string()
        .map_err(|_| FsError::io(Verb::Resolve, display, "the real path is not valid UTF-8"))
}

fn join(base: &str, rest: &[&str]) -> String {
    let mut out = base.trim_end_matches('/').to_string();
    for r in rest {
        out.push('/');
        out.push_str(r);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The key of a lexical absolute path.
pub(crate) fn key_of(display: &str) -> Result<String, FsError> {
    let classify = |e: std::io::Error, at: &str| -> FsError {
        match e.raw_os_error() {
            Some(raw) if raw == rustix::io::Errno::NOTDIR.raw_os_error() => {
                FsError::parent_not_directory(Verb::Resolve, at)
            }
            _ => io_err(e, Verb::Resolve, at),
        }
    };
    match real_path(display) {
        Ok(real) => to_string(real, display),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let comps: Vec<&str> = display.split('/').filter(|c| !c.is_empty()).collect();
            for i in (0..comps.len()).rev() {
                let prefix = join("/", &comps[..i]);
                match real_path(&prefix) {
                    Ok(real) => return Ok(join(&to_string(real, display)?, &comps[i..])),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(classify(e, display)),
                }
            }
            Ok(display.to_string())
        }
        Err(e) => Err(classify(e, display)),
    }
}

/// Splits an absolute key into its parent directory and final name.
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    match key.rfind('/') {
        Some(0) => ("/", &key[1..]),
        Some(i) => (&key[..i], &key[i + 1..]),
        None => (".", key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `real_path` answers what `canonicalize` answers, errors included, for every kind of
    /// path a key is asked of.
    #[test]
    fn the_real_path_is_what_canonicalize_says() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path();
        std::fs::create_dir_all(base.join("d/e")).expect("dirs");
        std::fs::write(base.join("d/f"), b"x").expect("file");
        std::fs::write(base.join("d/g (deleted)"), b"x").expect("file");
        std::os::unix::fs::symlink("d", base.join("to-d")).expect("link");
        std::os::unix::fs::symlink("d/e/../f", base.join("to-f")).expect("link");
        std::os::unix::fs::symlink("nowhere", base.join("dangling")).expect("link");
        std::os::unix::fs::symlink("loop", base.join("loop")).expect("link");
        std::os::unix::fs::symlink(base.join("to-d"), base.join("abs")).expect("link");
        let cases = [
            "d",
            "d/e",
            "d/e/../f",
            "./d/./e/",
            "d/f",
            "d/g (deleted)",
            "to-d",
            "to-d/e/..",
            "to-f",
            "abs/f",
            "dangling",
            "loop",
            "d/f/",
            "d/f/x",
            "missing",
            "missing/x",
            "",
        ];
        for case in cases {
            let path = base.join(case);
            let ours = real_path(&path).map_err(|e| e.raw_os_error());
            let std = std::fs::canonicalize(&path).map_err(|e| e.raw_os_error());
            assert_eq!(ours, std, "{case:?}");
        }
        assert!(real_path(base.join("d")).is_ok_and(|p| p.ends_with("d")));
        assert_eq!(
            real_path(".").expect("the working directory"),
            std::fs::canonicalize(".").expect("the working directory")
        );
    }

    #[test]
    fn keys_split_into_parent_and_name() {
        assert_eq!(split_key("/a/b"), ("/a", "b"));
        assert_eq!(split_key("/a"), ("/", "a"));
    }
}
