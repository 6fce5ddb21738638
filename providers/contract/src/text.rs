//! The text rules shared by providers and tools: what counts as text, how line endings are
//! normalised, what a byte-order mark is. (The reference model keeps its own copy on purpose, so
//! the two check each other.)
//!
//! * A read refuses a file with a NUL byte in its first [`NUL_SAMPLE_BYTES`] bytes, or one that
//!   is not strict UTF-8; a NUL later in a valid UTF-8 file is text for a read (an edit refuses
//!   any NUL: see [`crate::edit`]).
//! * A leading UTF-8 BOM is not part of the text a read returns; an edit keeps it on disk.
//! * "LF-normalised" means every `\r\n` became `\n` in one left-to-right pass; a lone `\r` stays.

use crate::{FsError, Verb};
use std::borrow::Cow;

/// The UTF-8 encoding of U+FEFF.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads treat a NUL byte within this many leading bytes as binary.
pub const NUL_SAMPLE_BYTES: usize = 8192;

/// Why bytes are not text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotText {
    /// A NUL byte where the rule looks for one.
    Binary,
    /// Not strict UTF-8.
    InvalidUtf8,
}

impl NotText {
    /// The contract's failure for `verb` on `display`.
    pub fn into_error(self, verb: Verb, display: &str) -> FsError {
        match self {
            NotText::Binary => FsError::binary(verb, display),
            NotText::InvalidUtf8 => FsError::invalid_utf8(verb, display),
        }
    }
}

/// The text a read returns for a whole file's bytes: refused when a NUL sits in the first
/// [`NUL_SAMPLE_BYTES`] bytes or the bytes are not UTF-8; a leading BOM removed.
pub fn decode_for_read(mut bytes: Vec<u8>) -> Result<String, NotText> {
    if bytes[..bytes.len().min(NUL_SAMPLE_BYTES)].contains(&0) {
        return Err(NotText::Binary);
    }
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    String::from_utf8(bytes).map_err(|_| NotText::InvalidUtf8)
}

/// Replaces every `\r\n` with `\n` in one left-to-right pass; a lone `\r` stays.
pub fn lf_normalize(text: &str) -> Cow<'_, str> {
    // One scan for a single byte tells most texts (no `\r` at all) apart, faster than the
    // search for the pair.
    if memchr::memchr(b'\r', text.as_bytes()).is_some() && text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The bytes without a leading UTF-8 BOM, and whether there was one.
pub fn strip_bom(bytes: &[u8]) -> (&[u8], bool) {
    match bytes.strip_prefix(BOM) {
        Some(rest) => (rest, true),
        None => (bytes, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_becomes_lf_in_one_pass_and_lone_cr_stays() {
        assert_eq!(lf_normalize("a\r\nb\rc\n"), "a\nb\rc\n");
        assert_eq!(lf_normalize("a\r\r\n"), "a\r\n");
        assert!(matches!(lf_normalize("plain"), Cow::Borrowed(_)));
        assert!(matches!(lf_normalize("lone\rcr"), Cow::Borrowed(_)));
    }

    #[test]
    fn reads_look_for_nul_in_the_window_only() {
        let at = |i: usize| {
            let mut b = vec![b'a'; NUL_SAMPLE_BYTES + 2];
            b[i] = 0;
            decode_for_read(b)
        };
        assert_eq!(at(0), Err(NotText::Binary));
        assert_eq!(at(NUL_SAMPLE_BYTES - 1), Err(NotText::Binary));
        assert!(at(NUL_SAMPLE_BYTES).is_ok());
        assert_eq!(
            decode_for_read(b"\xEF\xBB\xBFhi".to_vec()),
            Ok("hi".to_string())
        );
        assert_eq!(
            decode_for_read(b"h\xFFi".to_vec()),
            Err(NotText::InvalidUtf8)
        );
    }

    #[test]
    fn a_bom_is_recognised_only_at_the_start() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBFa"), (&b"a"[..], true));
        assert_eq!(strip_bom(b"a\xEF\xBB\xBF"), (&b"a\xEF\xBB\xBF"[..], false));
    }
}
