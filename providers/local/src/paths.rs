//! Keys: the real path of what a display path leads to, or — for a path that does not exist yet
//! — the real path of its nearest existing ancestor plus the missing suffix, so the key is stable
//! across creation (also under a symlinked ancestor). Display paths, refusals, URLs and
//! containment are the contract's ([`seam::paths`]).
//!
//! A key is asked for at every resolve, so finding a real path is on every call's way:
//! [`real_path`] opens the path once and asks the kernel where the descriptor is, rather than
//! `realpath(3)`'s walk, which reads every prefix of the path as a link — from the root each
//! time.

use crate::errors::io as io_err;
use seam::{FsError, Verb};
use std::path::PathBuf;

/// The real path of `path`, links followed, as `realpath(3)` gives it (and with its errors: a
/// component missing, not a directory, a loop, a path too long): the path opened for its place
/// alone (`O_PATH`, which follows links as the walk does), then its descriptor's name in
/// `/proc/self/fd`. `realpath(3)` itself wherever the two could differ: the open refused for
/// another reason (no search permission on a directory the path leaves again by `..`, which
/// `realpath(3)` takes by the text; no descriptor to spare), or the name not to be had or
/// trusted (no `/proc`; the file removed between the two calls, named `… (deleted)`).
pub fn real_path(path: &str) -> std::io::Result<PathBuf> {
    use rustix::fs::{Mode, OFlags, open};
    use rustix::io::Errno;
    match open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => name_of(&fd).map_or_else(|| std::fs::canonicalize(path), Ok),
        Err(e @ (Errno::NOENT | Errno::NOTDIR | Errno::LOOP | Errno::NAMETOOLONG)) => Err(e.into()),
        Err(_) => std::fs::canonicalize(path),
    }
}

/// The path the kernel has for `fd`, where it can be had and trusted.
fn name_of(fd: &std::os::fd::OwnedFd) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let removed = real.as_os_str().as_bytes().ends_with(b" (deleted)");
    (real.is_absolute() && !removed).then_some(real)
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

    #[test]
    fn keys_split_into_parent_and_name() {
        assert_eq!(split_key("/a/b"), ("/a", "b"));
        assert_eq!(split_key("/a"), ("/", "a"));
    }

    /// `real_path` answers as `realpath(3)` does, path for path and error for error.
    #[test]
    fn real_paths_are_realpaths() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().to_str().expect("utf-8").to_string();
        std::fs::create_dir_all(format!("{base}/d/e")).expect("dirs");
        std::fs::write(format!("{base}/d/e/f"), b"x").expect("file");
        std::fs::write(format!("{base}/g (deleted)"), b"x").expect("file");
        symlink("d/e", format!("{base}/to-e")).expect("link");
        symlink(format!("{base}/to-e/f"), format!("{base}/abs-f")).expect("link");
        symlink("abs-f", format!("{base}/chain")).expect("link");
        symlink("nowhere", format!("{base}/dangling")).expect("link");
        symlink("loop-b", format!("{base}/loop-a")).expect("link");
        symlink("loop-a", format!("{base}/loop-b")).expect("link");
        let found = [
            "",
            "/d",
            "/d/e/f",
            "/to-e",
            "/to-e/f",
            "/abs-f",
            "/chain",
            "/to-e/../e/f",
            "/d/./e/../e",
            "/g (deleted)",
        ];
        for p in found {
            let path = format!("{base}{p}");
            let real = std::fs::canonicalize(&path).expect("realpath");
            assert_eq!(real_path(&path).expect("real_path"), real, "{p:?}");
        }
        let errors = [
            "/missing",
            "/d/missing/f",
            "/dangling",
            "/d/e/f/g",
            "/loop-a",
            "/chain/x",
        ];
        for p in errors {
            let path = format!("{base}{p}");
            let want = std::fs::canonicalize(&path).expect_err("realpath fails");
            let got = real_path(&path).expect_err("real_path fails");
            assert_eq!(got.kind(), want.kind(), "{p:?}");
            assert_eq!(got.raw_os_error(), want.raw_os_error(), "{p:?}");
        }
    }

    /// A descriptor's name is not trusted once its file is removed.
    #[test]
    fn a_removed_file_has_no_name_to_trust() {
        use rustix::fs::{Mode, OFlags, open};
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").expect("file");
        let fd = open(&path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).expect("open");
        let real = std::fs::canonicalize(&path).expect("realpath");
        assert_eq!(name_of(&fd), Some(real));
        std::fs::remove_file(&path).expect("removed");
        assert_eq!(name_of(&fd), None);
    }
}
