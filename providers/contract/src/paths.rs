//! The path rules every backend shares: how a caller's spelling becomes a display path, which
//! spellings are refused before any lookup, how a process path becomes a `file:` URL, and what
//! "beneath" means.
//!
//! They are written once here because they are the contract, not an implementation detail: a
//! model that sees `d/../a` must get the same display path, the same refusal of a 256-byte name
//! and the same message from every backend. (The reference model keeps its own implementation on
//! purpose, so the two check each other.)
//!
//! ```
//! use seam::paths::{display_path, file_url, is_within};
//! use seam::Verb;
//! assert_eq!(display_path("d/../a/", "/w", Verb::Resolve).unwrap(), "/w/a");
//! assert_eq!(file_url("/w/x y#1"), "file:///w/x%20y%231");
//! assert!(is_within("/w", "/w/a") && !is_within("/w", "/wx"));
//! ```

use crate::{FsError, Verb};

/// The longest path component a backend accepts (Linux `NAME_MAX`); longer is `FS_NOT_FOUND`.
pub const NAME_MAX: usize = 255;

/// The absolute spelling of `path` before normalisation: `path` itself when absolute, else
/// `cwd/path`. Messages about paths that cannot be normalised (NUL, over-long) name this.
pub fn raw_display(path: &str, cwd: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else if cwd.ends_with('/') {
        format!("{cwd}{path}")
    } else {
        format!("{cwd}/{path}")
    }
}

/// `..` collapsed textually (links are not followed), `.` and empty components dropped; `/..`
/// is `/`. The result is absolute and has no trailing slash unless it is `/`.
pub fn lexical(abs: &str) -> String {
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

/// The display path of a caller's spelling, or the failure every backend gives for it.
///
/// * blank (empty or white space only) → [`FsError::blank_path`];
/// * a NUL byte → [`FsError::nul_in_path`] naming [`raw_display`];
/// * a component longer than [`NAME_MAX`] bytes → [`FsError::name_too_long`];
/// * otherwise [`lexical`] of the absolute spelling, a relative path taken against `cwd`.
pub fn display_path(path: &str, cwd: &str, verb: Verb) -> Result<String, FsError> {
    if path.trim().is_empty() {
        return Err(FsError::blank_path());
    }
    let raw = raw_display(path, cwd);
    if path.contains('\0') {
        return Err(FsError::nul_in_path(verb, &raw));
    }
    if path.split('/').any(|c| c.len() > NAME_MAX) {
        return Err(FsError::name_too_long(verb, &raw));
    }
    Ok(lexical(&raw))
}

/// Whether the absolute path `child` is `parent` or lies beneath it, component by component
/// (`/a` contains `/a/b` but not `/ab`; `/` contains everything).
pub fn is_within(parent: &str, child: &str) -> bool {
    let parent = parent.trim_end_matches('/');
    match child.strip_prefix(parent) {
        Some("") => true,
        Some(rest) => rest.starts_with('/') || parent.is_empty(),
        None => false,
    }
}

/// Bytes a `file:` URL path keeps as they are; everything else is percent-encoded.
fn url_keeps(b: u8) -> bool {
    b.is_ascii_alphanumeric()
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
        )
}

/// The canonical `file://` URL of an absolute process path: every byte outside RFC 3986's
/// unreserved set, sub-delimiters, `:`, `@` and `/` is percent-encoded with upper-case hex.
pub fn file_url(process_path: &str) -> String {
    let mut out = String::with_capacity(process_path.len() + 7);
    out.push_str("file://");
    for b in process_path.bytes() {
        if url_keeps(b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
    out
}

/// The path a `file:` URL names, if it is a well-formed local `file://` URL whose path is
/// percent-encoded wherever it must be (any encoding choice for the rest is accepted).
pub fn file_url_path(url: &str) -> Option<String> {
    let rest = url.strip_prefix("file://")?;
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = rest.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else if url_keeps(b) {
            out.push(b);
            i += 1;
        } else {
            return None;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsErrorCode;

    #[test]
    fn spellings_normalise_lexically() {
        assert_eq!(lexical("/a/./b/../c/"), "/a/c");
        assert_eq!(lexical("/.."), "/");
        assert_eq!(lexical("/a/b/../../.."), "/");
        assert_eq!(
            display_path("../b", "/w/a", Verb::Resolve).ok(),
            Some("/w/b".to_string())
        );
        assert_eq!(
            display_path("b", "/", Verb::Resolve).ok(),
            Some("/b".to_string())
        );
    }

    #[test]
    fn bad_spellings_are_refused_with_the_contract_texts() {
        let e = display_path("  ", "/w", Verb::Resolve).expect_err("blank");
        assert_eq!(e, FsError::blank_path());
        let e = display_path("a\0b", "/w", Verb::Lstat).expect_err("nul");
        assert_eq!(e.code(), FsErrorCode::NotFound);
        assert_eq!(
            e.message(),
            "cannot lstat \"/w/a\0b\": the path contains a NUL byte"
        );
        let ok = "x".repeat(NAME_MAX);
        assert!(display_path(&ok, "/w", Verb::Resolve).is_ok());
        let long = "x".repeat(NAME_MAX + 1);
        let e = display_path(&long, "/w", Verb::Resolve).expect_err("long");
        assert!(
            e.message()
                .ends_with("a path component is longer than 255 bytes")
        );
    }

    #[test]
    fn containment_is_by_component() {
        assert!(is_within("/a", "/a"));
        assert!(is_within("/a", "/a/b"));
        assert!(is_within("/a/", "/a/b"));
        assert!(!is_within("/a", "/ab"));
        assert!(!is_within("/a/b", "/a"));
        assert!(is_within("/", "/x"));
    }

    #[test]
    fn urls_encode_and_decode() {
        assert_eq!(file_url("/srv/x y#1%"), "file:///srv/x%20y%231%25");
        assert_eq!(file_url("/é"), "file:///%C3%A9");
        for p in ["/srv/x y#1%", "/é/日本", "/a?b"] {
            assert_eq!(file_url_path(&file_url(p)).as_deref(), Some(p));
        }
        assert_eq!(file_url_path("file:///a%2fb").as_deref(), Some("/a/b"));
        assert_eq!(file_url_path("file:///a b"), None);
        assert_eq!(file_url_path("file:///a#b"), None);
        assert_eq!(file_url_path("http:///a"), None);
        assert_eq!(file_url_path("file:///a%zz"), None);
    }
}
