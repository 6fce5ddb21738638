//! Literal edits, done the obvious way: on the file's bytes, finding the old string's
//! occurrences in the LF-normalised view left to right (`memmem`, never overlapping), then
//! walking the file and its view side by side to find where each match lies in the file's own
//! bytes (UTF-8 makes byte matching character matching: see below).
//! Slow, but not wasteful: no map as large as the file is built (a 1 MiB file made the model's
//! edit allocate 10 MiB), so that the generator, which runs this model, does not pay for it.
//!
//! The rule (SPEC "byte-faithful edits"): matching happens on the LF-normalised view, but only the
//! matched regions change on disk. A matched region that begins at a line break which the file
//! spells `\r\n` takes the `\r` with it. Line breaks inside the replacement take the file's
//! dominant style: CRLF iff CRLF pairs outnumber bare LFs in the first 4096 characters. A leading
//! BOM is kept.

use crate::text::{NotText, STYLE_SAMPLE_CHARS, decode_for_edit, lf_normalize};
use std::borrow::Cow;

/// Why an edit cannot apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditError {
    /// The file is binary or not UTF-8.
    NotText(NotTextReason),
    /// The old string is empty after normalisation.
    EmptyOld,
    /// The old string occurs nowhere.
    NotFound,
    /// The old string occurs this many times and `replace_all` is off.
    Ambiguous(usize),
}

/// Which decoding rule an edit tripped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotTextReason {
    /// A NUL byte somewhere.
    Binary,
    /// Not strict UTF-8.
    InvalidUtf8,
}

/// A successful edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditResult {
    /// The file's new bytes.
    pub bytes: Vec<u8>,
    /// The old text, LF-normalised, without BOM.
    pub before: String,
    /// The new text, LF-normalised, without BOM.
    pub after: String,
    /// How many regions were replaced.
    pub replacements: usize,
}

/// Applies a literal edit to a file's bytes.
pub fn apply_literal_edit(
    bytes: &[u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<EditResult, EditError> {
    let edited = edit_bytes(bytes, old, new, replace_all, usize::MAX)?;
    // Whole characters were cut out and whole characters put in: still UTF-8.
    let new_bytes = edited.bytes;
    let after = match std::str::from_utf8(&new_bytes[edited.bom_len..]) {
        Ok(out_text) => lf_normalize(out_text),
        Err(_) => lf_normalize(&String::from_utf8_lossy(&new_bytes[edited.bom_len..])),
    };
    Ok(EditResult {
        bytes: new_bytes,
        before: edited.view.into_owned(),
        after,
        replacements: edited.replacements,
    })
}

/// A literal edit's new bytes alone: [`apply_literal_edit`] without its texts, for a caller
/// that follows what the file holds and shows nothing (the generator). Making the texts is
/// three more passes over the file (a copy of the old view, the new bytes checked as UTF-8 and
/// normalised). An ambiguous edit's matches are not counted past two ([`EditError::Ambiguous`]
/// holds 2 for two or more): such a caller asks only whether the edit applies, and a short word
/// of a large file can occur tens of thousands of times, each a search of its own.
pub fn literal_edit_bytes(
    bytes: &[u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Vec<u8>, EditError> {
    edit_bytes(bytes, old, new, replace_all, 2).map(|e| e.bytes)
}

/// What an edit makes before its texts are: the new bytes, the old text's LF view (`before`
/// to be), how many regions were replaced, and how long the kept BOM is.
struct Edited<'a> {
    bytes: Vec<u8>,
    view: Cow<'a, str>,
    replacements: usize,
    bom_len: usize,
}

/// `counted_up_to` (at least 2): how far an ambiguous edit's matches are counted.
fn edit_bytes<'a>(
    bytes: &'a [u8],
    old: &str,
    new: &str,
    replace_all: bool,
    counted_up_to: usize,
) -> Result<Edited<'a>, EditError> {
    let (text, bom) = decode_for_edit(bytes).map_err(|e| {
        EditError::NotText(match e {
            NotText::Binary => NotTextReason::Binary,
            NotText::InvalidUtf8 => NotTextReason::InvalidUtf8,
        })
    })?;
    // Bytes, not characters: `\r` and `\n` are single bytes that never occur inside another
    // character's encoding, and a match of valid UTF-8 in valid UTF-8 can only begin where a
    // character begins — so matching bytes is matching characters, without a vector four
    // bytes wide per character (a large file made this the model's whole cost).
    let t: &[u8] = text.as_bytes();

    // The normalised view: every `\r` directly followed by `\n` is dropped. A text without a
    // CRLF (most) is its own view, and is not copied.
    // A scan for the single byte `\r` rules out most texts faster than the search for the pair.
    let view: Cow<'_, str> =
        if memchr::memchr(b'\r', t).is_some() && memchr::memmem::find(t, b"\r\n").is_some() {
            Cow::Owned(lf_normalize(text))
        } else {
            Cow::Borrowed(text)
        };
    let own_view = view.len() == t.len();

    let old_view = lf_normalize(old).into_bytes();
    let new_view = lf_normalize(new).into_bytes();
    if old_view.is_empty() {
        return Err(EditError::EmptyOld);
    }

    // The occurrences left to right, each skipped past whole (matches never overlap). A unique
    // edit needs the first and how many follow it, not where (one letter of a large file can
    // occur hundreds of thousands of times).
    let mut found = memchr::memmem::find_iter(view.as_bytes(), &old_view);
    let matches: Vec<usize> = match (replace_all, found.next()) {
        (_, None) => return Err(EditError::NotFound),
        (true, Some(first)) => std::iter::once(first).chain(found).collect(),
        (false, Some(first)) => match found.take(counted_up_to.max(2) - 1).count() {
            0 => vec![first],
            more => return Err(EditError::Ambiguous(1 + more)),
        },
    };

    // The style sample is the first characters (not bytes) of the file.
    let sample: Vec<char> = text.chars().take(STYLE_SAMPLE_CHARS).collect();
    let mut crlf = 0usize;
    let mut lf = 0usize;
    for k in 0..sample.len() {
        if sample[k] == '\n' {
            lf += 1;
            if k > 0 && sample[k - 1] == '\r' {
                crlf += 1;
            }
        }
    }
    let use_crlf = crlf > lf - crlf;
    let mut replacement: Vec<u8> = Vec::new();
    for &c in &new_view {
        if c == b'\n' && use_crlf {
            replacement.push(b'\r');
        }
        replacement.push(c);
    }

    // Regions in `t`, left to right and disjoint: `t` and the view are walked together, one
    // view byte at a time (two bytes of `t` for a CRLF), up to each match's start and end. A
    // match that starts at a `\n` the file spells `\r\n` starts at its `\r`: it takes it with it.
    let mut regions: Vec<(usize, usize)> = Vec::new();
    let (mut in_t, mut in_view) = (0usize, 0usize);
    let mut walk_to = |target: usize| {
        if own_view {
            // No CRLF: the view is the text, place for place.
            return target;
        }
        while in_view < target {
            let crlf = t[in_t] == b'\r' && in_t + 1 < t.len() && t[in_t + 1] == b'\n';
            in_t += if crlf { 2 } else { 1 };
            in_view += 1;
        }
        in_t
    };
    for &m in &matches {
        let start = walk_to(m);
        let end = walk_to(m + old_view.len());
        regions.push((start, end));
    }
    // The BOM kept, then the file with each region replaced.
    let bom_len = if bom { "\u{FEFF}".len() } else { 0 };
    let grown = regions.len() * replacement.len();
    let mut new_bytes: Vec<u8> = Vec::with_capacity(bom_len + t.len() + grown);
    if bom {
        new_bytes.extend_from_slice("\u{FEFF}".as_bytes());
    }
    let mut cursor = 0;
    for &(start, end) in &regions {
        new_bytes.extend_from_slice(&t[cursor..start]);
        new_bytes.extend_from_slice(&replacement);
        cursor = end;
    }
    new_bytes.extend_from_slice(&t[cursor..]);
    Ok(Edited {
        bytes: new_bytes,
        view,
        replacements: matches.len(),
        bom_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(bytes: &[u8], old: &str, new: &str, all: bool) -> Result<EditResult, EditError> {
        apply_literal_edit(bytes, old, new, all)
    }

    fn bytes_of(r: Result<EditResult, EditError>) -> Vec<u8> {
        r.expect("edit applies").bytes
    }

    // seed-source §3.14 applyLiteralEdit: "replaces a unique match" ('a b c' → 'a X c').
    #[test]
    fn replaces_a_unique_match() {
        let r = edit(b"a b c", "b", "X", false).expect("applies");
        assert_eq!(r.bytes, b"a X c");
        assert_eq!(r.replacements, 1);
    }

    // "rejects zero matches", "rejects an empty oldString", "rejects multiple matches".
    #[test]
    fn rejects_zero_empty_and_ambiguous() {
        assert_eq!(edit(b"abc", "z", "y", false), Err(EditError::NotFound));
        assert_eq!(edit(b"abc", "", "y", false), Err(EditError::EmptyOld));
        assert_eq!(edit(b"abc", "\r\n", "y", false), Err(EditError::NotFound));
        assert_eq!(
            edit(b"a a a", "a", "b", false),
            Err(EditError::Ambiguous(3))
        );
        assert_eq!(edit(b"z", "a", "b", true), Err(EditError::NotFound));
    }

    // "replaces all matches with replaceAll" (3 replacements), non-overlapping from the left.
    #[test]
    fn replace_all_is_non_overlapping() {
        let r = edit(b"a a a", "a", "b", true).expect("applies");
        assert_eq!((r.bytes.as_slice(), r.replacements), (&b"b b b"[..], 3));
        assert_eq!(bytes_of(edit(b"aaa", "aa", "x", true)), b"xa");
    }

    // "matches across normalized line endings" and "round-trips CRLF".
    #[test]
    fn matches_on_lf_and_keeps_crlf_on_disk() {
        let r = edit(b"one\r\ntwo\r\n", "one\ntwo", "1\n2", false).expect("applies");
        assert_eq!(r.bytes, b"1\r\n2\r\n");
        assert_eq!(r.before, "one\ntwo\n");
        assert_eq!(r.after, "1\n2\n");
    }

    // Where we go further: a mixed file stays mixed outside the match.
    #[test]
    fn untouched_lines_keep_their_own_endings() {
        let r = edit(b"a\r\nb\nc\r\nd\n", "c", "C", false).expect("applies");
        assert_eq!(r.bytes, b"a\r\nb\nC\r\nd\n");
        // Dominant LF (2 CRLF vs 2 bare... tie => LF): inserted breaks are LF.
        assert_eq!(
            bytes_of(edit(b"a\r\nb\nc\r\nd\n", "b", "x\ny", false)),
            b"a\r\nx\ny\nc\r\nd\n"
        );
        // Dominant CRLF: inserted breaks are CRLF, the bare LF elsewhere survives.
        assert_eq!(
            bytes_of(edit(b"a\r\nb\r\nc\n", "a", "x\ny", false)),
            b"x\r\ny\r\nb\r\nc\n"
        );
    }

    #[test]
    fn a_match_that_starts_at_a_crlf_break_takes_the_cr() {
        assert_eq!(bytes_of(edit(b"a\r\nb", "\nb", "\nc", false)), b"a\r\nc");
        assert_eq!(bytes_of(edit(b"a\r\nb", "a\n", "", false)), b"b");
        assert_eq!(bytes_of(edit(b"a\r\nb", "a", "z", false)), b"z\r\nb");
    }

    #[test]
    fn replacement_is_literal_and_the_bom_is_kept() {
        assert_eq!(bytes_of(edit(b"x", "x", "$&$$$1", false)), b"$&$$$1");
        let r = edit(b"\xEF\xBB\xBFhello", "hello", "bye", false).expect("applies");
        assert_eq!(r.bytes, b"\xEF\xBB\xBFbye");
        assert_eq!((r.before.as_str(), r.after.as_str()), ("hello", "bye"));
    }

    #[test]
    fn binary_and_invalid_text_are_refused() {
        let mut late = vec![b'a'; 9000];
        late.push(0);
        assert_eq!(
            edit(&late, "a", "b", true),
            Err(EditError::NotText(NotTextReason::Binary))
        );
        assert_eq!(
            edit(b"h\xFFi", "h", "b", false),
            Err(EditError::NotText(NotTextReason::InvalidUtf8))
        );
    }

    #[test]
    fn lone_cr_and_cr_cr_lf_are_kept_byte_for_byte() {
        assert_eq!(
            bytes_of(edit(b"a\rb\r\r\nc", "c", "d", false)),
            b"a\rb\r\r\nd"
        );
        assert_eq!(
            bytes_of(edit("é日🦀".as_bytes(), "日", "x", false)),
            "éx🦀".as_bytes()
        );
    }
}
