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
    match std::fs::canonicalize(display) {
        Ok(real) => to_string(real, display),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let comps: Vec<&str> = display.split('/').filter(|c| !c.is_empty()).collect();
            for i in (0..comps.len()).rev() {
                let prefix = join("/", &comps[..i]);
                match std::fs::canonicalize(&prefix) {
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
