//! How the `grep` tool shows a matched line, and how many it shows: shared by the seed's
//! renderer (`grep.rs`) and the output modes (`grep_output.rs`), so neither reaches into the
//! other.

/// At most this many matches are shown; the complete result is spilled.
pub const GREP_MAX_MATCHES: usize = 250;

/// A preview is cut at this many bytes (on a UTF-8 boundary).
pub const GREP_MAX_LINE_BYTES: usize = 2000;

/// A line as the model sees it: cut at the byte cap on a UTF-8 boundary (`cut`: the provider
/// already kept only its beginning).
pub(crate) fn preview(text: &[u8], cut: bool) -> String {
    let Ok(line) = std::str::from_utf8(text) else {
        return "(line is not valid UTF-8)".to_string();
    };
    if line.len() <= GREP_MAX_LINE_BYTES {
        return if cut {
            format!("{line} (line truncated)")
        } else {
            line.to_string()
        };
    }
    let mut cut = GREP_MAX_LINE_BYTES;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{} (line truncated)", &line[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_cut_on_a_character_boundary() {
        let long = "aé".repeat(1000); // 3,000 bytes
        let p = preview(long.as_bytes(), false);
        assert!(p.ends_with(" (line truncated)"));
        let kept = p.trim_end_matches(" (line truncated)");
        assert!(kept.len() <= GREP_MAX_LINE_BYTES && kept.len() >= GREP_MAX_LINE_BYTES - 1);
        assert!(long.starts_with(kept));
        assert_eq!(preview(b"short", false), "short");
        assert_eq!(preview(b"short", true), "short (line truncated)");
        assert_eq!(preview(b"\xff\xfe", false), "(line is not valid UTF-8)");
    }
}
