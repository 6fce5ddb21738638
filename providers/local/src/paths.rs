//! Paths: the lexical display path, the key (real path, or nearest existing ancestor plus the
//! missing suffix), file URLs and containment.

use crate::errors::{LOOP_TEXT, fail, io as io_err};
use seam::{FsError, FsErrorCode};
use std::path::{Path, PathBuf};

/// Longest component a path may have.
const NAME_MAX: usize = 255;

/// Checks a raw path and returns its lexically normalised absolute form.
pub(crate) fn display_path(path: &str, cwd: &str, verb: &str) -> Result<String, FsError> {
    if path.trim().is_empty() {
        return Err(FsError::new(
            FsErrorCode::NotFound,
            "file_path must be a non-empty string",
        ));
    }
    let raw = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    if path.contains('\0') {
        return Err(fail(
            FsErrorCode::NotFound,
            verb,
            &raw,
            "the path contains a NUL byte",
        ));
    }
    if path.split('/').any(|c| c.len() > NAME_MAX) {
        return Err(fail(
            FsErrorCode::NotFound,
            verb,
            &raw,
            "a path component is longer than 255 bytes",
        ));
    }
    Ok(lexical(&raw))
}

/// `..` collapsed textually, `.` and empty components dropped; `/..` is `/`.
pub(crate) fn lexical(abs: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in abs.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            name => parts.push(name),
        }
    }
    let mut out = String::with_capacity(abs.len());
    for p in &parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

fn to_string(p: PathBuf, display: &str) -> Result<String, FsError> {
    p.into_os_string().into_string().map_err(|_| {
        fail(
            FsErrorCode::IoError,
            "resolve",
            display,
            "the real path is not valid UTF-8",
        )
    })
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
            Some(raw) if raw == rustix::io::Errno::NOTDIR.raw_os_error() => fail(
                FsErrorCode::NotFound,
                "resolve",
                at,
                "a parent path segment is not a directory",
            ),
            Some(raw) if raw == rustix::io::Errno::LOOP.raw_os_error() => {
                fail(FsErrorCode::IoError, "resolve", at, LOOP_TEXT)
            }
            _ => io_err(e, "resolve", at),
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

/// Whether `child` is `parent` or beneath it (lexically, on keys).
pub(crate) fn contains(parent: &str, child: &str) -> bool {
    let p = Path::new(parent);
    let c = Path::new(child);
    c.starts_with(p)
}

/// A `file://` URL with everything outside the unreserved set and `/` percent-encoded.
pub(crate) fn file_url(path: &str) -> String {
    let mut out = String::from("file://");
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'/' | b'-'
                    | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalisation_collapses_dots_textually() {
        assert_eq!(lexical("/a/./b/../c/"), "/a/c");
        assert_eq!(lexical("/.."), "/");
        assert_eq!(lexical("/a/b/../../.."), "/");
    }

    #[test]
    fn bad_paths_are_coded_and_name_the_path() {
        let e = display_path("  ", "/w", "resolve").expect_err("blank");
        assert_eq!(
            (e.code(), e.message()),
            (
                FsErrorCode::NotFound,
                "file_path must be a non-empty string"
            )
        );
        let e = display_path("a\0b", "/w", "resolve").expect_err("nul");
        assert_eq!(e.code(), FsErrorCode::NotFound);
        assert!(e.message().contains("\"/w/a\0b\""));
        let long = "x".repeat(256);
        let e = display_path(&long, "/w", "lstat").expect_err("long");
        assert!(e.message().starts_with("cannot lstat \"/w/xxx"));
        assert_eq!(display_path("../b", "/w/a", "resolve").expect("ok"), "/w/b");
    }

    #[test]
    fn urls_and_containment() {
        assert_eq!(file_url("/srv/x y#1%"), "file:///srv/x%20y%231%25");
        assert_eq!(file_url("/é"), "file:///%C3%A9");
        assert!(contains("/a", "/a"));
        assert!(contains("/a", "/a/b"));
        assert!(!contains("/a", "/ab"));
        assert!(!contains("/a/b", "/a"));
        assert!(contains("/", "/x"));
        assert_eq!(split_key("/a/b"), ("/a", "b"));
        assert_eq!(split_key("/a"), ("/", "a"));
    }
}
