//! Keys: the real path of what a display path leads to, or — for a path that does not exist yet
//! — the real path of its nearest existing ancestor plus the missing suffix, so the key is stable
//! across creation (also under a symlinked ancestor). Display paths, refusals, URLs and
//! containment are the contract's ([`seam::paths`]).

use crate::errors::io as io_err;
use seam::{FsError, Verb};
use std::path::PathBuf;

fn to_string(p: PathBuf, display: &str) -> Result<String, FsError> {
    p.into_os_string()
        .into_string()
        .map_err(|_| FsError::io(Verb::Resolve, display, "the real path is not valid UTF-8"))
}

/// The real path of `path`, as `std::fs::canonicalize` gives it, in two calls where it can:
/// the path opened for its identity alone (`O_PATH`, which follows links as `canonicalize`
/// does) and the kernel asked which path that open file is (`/proc/self/fd/N`). glibc's
/// `realpath` instead reads every component as a link, each time walking the whole prefix
/// again — a fifth of a key's cost under a deep root. Any answer the fast way cannot vouch for
/// (no `/proc`, an error, an object removed meanwhile) is `canonicalize`'s, so the errors are
/// exactly its own.
fn real(path: &str) -> std::io::Result<PathBuf> {
    use rustix::fs::{Mode, OFlags, open, readlink};
    use std::os::fd::AsRawFd;
    let fast = open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .ok()
        .and_then(|fd| readlink(format!("/proc/self/fd/{}", fd.as_raw_fd()), Vec::new()).ok())
        .and_then(|name| name.into_string().ok())
        .filter(|name| name.starts_with('/') && !name.ends_with(" (deleted)"));
    match fast {
        Some(name) => Ok(PathBuf::from(name)),
        None => std::fs::canonicalize(path),
    }
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
    match real(display) {
        Ok(real) => to_string(real, display),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let comps: Vec<&str> = display.split('/').filter(|c| !c.is_empty()).collect();
            for i in (0..comps.len()).rev() {
                let prefix = join("/", &comps[..i]);
                match real(&prefix) {
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
}
