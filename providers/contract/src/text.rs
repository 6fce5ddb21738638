//! Small text rules shared by providers and tools: how line endings are normalised and what a
//! byte-order mark is. (The reference model keeps its own copy on purpose.)

use std::borrow::Cow;

/// The UTF-8 encoding of U+FEFF.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Replaces every `\r\n` with `\n` in one left-to-right pass; a lone `\r` stays.
pub fn lf_normalize(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
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
    }

    #[test]
    fn a_bom_is_recognised_only_at_the_start() {
        assert_eq!(strip_bom(b"\xEF\xBB\xBFa"), (&b"a"[..], true));
        assert_eq!(strip_bom(b"a\xEF\xBB\xBF"), (&b"a\xEF\xBB\xBF"[..], false));
    }
}
