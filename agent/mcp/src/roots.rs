//! MCP roots: the client names the directories the session may work in, and they become the
//! deployment's roots — for reads and writes alike — on the next call after the client says so.
//!
//! When the client declares the `roots` capability, the server asks it for its roots once it
//! is initialised, and again on every `notifications/roots/list_changed`. The composition turns
//! the list into a provider fenced to those roots ([`RootsBinder`]); the session then runs its
//! next calls on it, with the same gate and owner (what it read stays read). A list with no
//! usable root (none given, none a `file://` URL of a directory) leaves the session as it was,
//! and says why on stderr: a client cannot widen anything by sending rubbish.

use seam::FileSystem;
use std::sync::Arc;

/// Makes the provider a session runs on for the roots its client names.
pub trait RootsBinder: Send + Sync {
    /// A provider confined to `roots` (absolute paths, the first the working directory), and
    /// that working directory — or why these roots cannot be served.
    ///
    /// # Errors
    ///
    /// A root that does not exist or is not a directory, or none at all.
    fn bind(&self, roots: &[String]) -> Result<(Arc<dyn FileSystem>, String), String>;
}

/// The path of a `file://` URL (`file:///a%20b` → `/a b`); `None` for another scheme or a
/// malformed escape.
pub fn path_of_file_url(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/p` and `file:///p` name the same local path.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = rest.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let path = String::from_utf8(out).ok()?;
    // A NUL in a path names nothing the kernel can open.
    (!path.contains('\0')).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_decode_to_paths_and_nothing_else_does() {
        assert_eq!(
            path_of_file_url("file:///work/p").as_deref(),
            Some("/work/p")
        );
        assert_eq!(
            path_of_file_url("file:///a%20b/%C3%A9").as_deref(),
            Some("/a b/é")
        );
        assert_eq!(
            path_of_file_url("file://localhost/x").as_deref(),
            Some("/x")
        );
        assert_eq!(path_of_file_url("https://example.com/x"), None);
        assert_eq!(path_of_file_url("file://host/x"), None);
        assert_eq!(path_of_file_url("file:///bad%zz"), None);
        assert_eq!(path_of_file_url("file:///nul%00x"), None);
    }
}
