//! Decoding rules, written out longhand.

/// Reads treat a NUL within this many leading bytes as binary.
pub const NUL_SAMPLE_BYTES: usize = 8192;

/// The line-ending style of an edited file is decided on this many leading characters.
pub const STYLE_SAMPLE_CHARS: usize = 4096;

/// The seed's default exclusive limit on each side of an overwrite's diff basis (10 MiB).
pub const DIFF_BASIS_DEFAULT: u64 = 10 * 1024 * 1024;

/// Why bytes are not text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotText {
    /// A NUL byte where the rule looks for one.
    Binary,
    /// Not strict UTF-8.
    InvalidUtf8,
}

/// `\r\n` becomes `\n`, scanning left to right once; every other character stays.
pub fn lf_normalize(text: &str) -> String {
    // Non-overlapping matches, found left to right: exactly the rule (`\r\r\n` → `\r\n`).
    // Every write and edit of the model normalises its text (the `after` of its result), and
    // most texts hold no CRLF at all: one vectorised scan finds them, and the text between
    // them is copied whole.
    // The searcher is built once: laws normalise many short texts, where building it was most
    // of the cost.
    static CRLF: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\r\n"));
    // A text without a `\r` (most) has no CRLF: one scan for a single byte, faster than the
    // search for a pair, tells.
    if memchr::memchr(b'\r', text.as_bytes()).is_none() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for at in CRLF.find_iter(text.as_bytes()) {
        // `at` is a `\r`, so `at` and `at + 1` are character boundaries.
        out.push_str(&text[from..at]);
        out.push('\n');
        from = at + 2;
    }
    out.push_str(&text[from..]);
    out
}

fn strip_bom(text: &str) -> (&str, bool) {
    match text.strip_prefix('\u{FEFF}') {
        Some(rest) => (rest, true),
        None => (text, false),
    }
}

/// The text a read returns: NUL in the first 8192 bytes is binary, then strict UTF-8, then the
/// leading BOM (if any) is removed. Nothing else changes.
pub fn decode_for_read(bytes: &[u8]) -> Result<String, NotText> {
    let sample = &bytes[..bytes.len().min(NUL_SAMPLE_BYTES)];
    if sample.contains(&0) {
        return Err(NotText::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| NotText::InvalidUtf8)?;
    Ok(strip_bom(text).0.to_string())
}

/// The text an edit works on: a NUL anywhere is binary, then strict UTF-8. Returns the text
/// without its BOM and whether there was one.
pub fn decode_for_edit(bytes: &[u8]) -> Result<(&str, bool), NotText> {
    if memchr::memchr(0, bytes).is_some() {
        return Err(NotText::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| NotText::InvalidUtf8)?;
    Ok(strip_bom(text))
}

/// The `before` of an overwrite: the prior text LF-normalised, or `None` when the prior bytes
/// are at or over `limit`, contain a NUL anywhere, or are not UTF-8.
pub fn diff_basis(bytes: &[u8], limit: u64) -> Option<String> {
    if bytes.len() as u64 >= limit || memchr::memchr(0, bytes).is_some() {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    Some(lf_normalize(strip_bom(text).0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sample_nul_only_at_the_front_and_hide_the_bom() {
        assert_eq!(decode_for_read(b"h\x00i"), Err(NotText::Binary));
        assert_eq!(decode_for_read(b"h\xFFi"), Err(NotText::InvalidUtf8));
        let mut late = vec![b'a'; NUL_SAMPLE_BYTES];
        late.push(0);
        assert_eq!(
            decode_for_read(&late).map(|s| s.len()),
            Ok(NUL_SAMPLE_BYTES + 1)
        );
        assert_eq!(
            decode_for_read(b"\xEF\xBB\xBFa\r\n"),
            Ok("a\r\n".to_string())
        );
    }

    #[test]
    fn edits_reject_a_nul_anywhere() {
        let mut late = vec![b'a'; NUL_SAMPLE_BYTES];
        late.push(0);
        assert_eq!(decode_for_edit(&late), Err(NotText::Binary));
        assert_eq!(decode_for_edit(b"\xEF\xBB\xBFx"), Ok(("x", true)));
    }

    #[test]
    fn the_diff_basis_is_bounded_exclusively() {
        assert_eq!(diff_basis(b"a\r\nb", 5), Some("a\nb".to_string()));
        assert_eq!(diff_basis(b"a\r\nb", 4), None);
        assert_eq!(diff_basis(b"a\x00b", 100), None);
        assert_eq!(diff_basis(b"a\xFFb", 100), None);
    }

    /// One pass left to right, with or without a `\r` elsewhere: none at all (the text comes
    /// back whole from the single-byte scan), a lone one (the scan finds it, the search for the
    /// pair nothing), CRLFs, and `\r\r\n`.
    #[test]
    fn normalisation_is_one_pass() {
        assert_eq!(lf_normalize("plain\ntext"), "plain\ntext");
        assert_eq!(lf_normalize("a\rb\n"), "a\rb\n");
        assert_eq!(lf_normalize("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(lf_normalize("a\r\r\nb\rc"), "a\r\nb\rc");
        assert_eq!(lf_normalize("\r\n\r\n"), "\n\n");
        assert_eq!(lf_normalize("\r"), "\r");
        assert_eq!(lf_normalize(""), "");
    }

    proptest::proptest! {
        /// The scan is the rule as the standard library writes it, on texts of `\r`, `\n`,
        /// CRLF, a BOM, ASCII and multi-byte characters.
        #[test]
        fn normalisation_is_the_rule(text in "[\r\n\u{FEFF}aé€😀]{0,40}") {
            proptest::prop_assert_eq!(lf_normalize(&text), text.replace("\r\n", "\n"));
        }
    }
}
