//! The literal edit every backend performs, as a pure function on a file's bytes.
//!
//! The rules (SPEC "byte-faithful edits") are subtle enough that two backends writing them
//! separately would drift: matching happens on the LF-normalised view, but only the matched
//! regions change on disk, a match that starts at a line break the file spells `\r\n` takes the
//! `\r` with it, line breaks inside the replacement take the file's dominant style, a leading BOM
//! is kept, a NUL anywhere makes the file binary, and `$&` is just two characters. So they are
//! written once, here, fast (no copy of a file without CRLF; substring search by the standard
//! library), and every provider calls [`literal_edit`]. The reference model has its own slow
//! implementation, and the conformance suite holds the two to the same bytes.
//!
//! ```
//! use seam::edit::literal_edit;
//! use seam::EditRequest;
//! let req = EditRequest { old_string: "b\n".into(), new_string: "B\nb2\n".into(), replace_all: false };
//! let edited = literal_edit(b"a\r\nb\r\nc\n".to_vec(), &req).unwrap();
//! // Only the matched bytes changed; the new lines took the dominant CRLF style.
//! assert_eq!(edited.bytes(), b"a\r\nB\r\nb2\r\nc\n");
//! ```

use crate::text::{BOM, lf_normalize};
use crate::{EditRequest, FsError, Verb};
use std::borrow::Cow;

/// Characters at the start of a file that decide the style of inserted line breaks.
pub const STYLE_SAMPLE_CHARS: usize = 4096;

/// Why an edit could not be applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditFailure {
    /// A NUL byte anywhere in the file.
    Binary,
    /// The file is not strict UTF-8.
    InvalidUtf8,
    /// The old string is empty.
    EmptyOld,
    /// The old string occurs nowhere.
    NotFound,
    /// The old string occurs this many times and `replace_all` is off.
    Ambiguous(usize),
}

impl EditFailure {
    /// The contract's failure for an edit of `display`.
    pub fn into_error(self, display: &str) -> FsError {
        match self {
            EditFailure::Binary => FsError::binary(Verb::Edit, display),
            EditFailure::InvalidUtf8 => FsError::invalid_utf8(Verb::Edit, display),
            EditFailure::EmptyOld => FsError::empty_old_string(),
            EditFailure::NotFound => FsError::old_string_not_found(display),
            EditFailure::Ambiguous(n) => FsError::ambiguous_edit(display, n),
        }
    }
}

/// An applied edit: the bytes to publish, and the outcome's `before` and `after`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edited {
    bom: bool,
    /// The new text, without the BOM.
    text: String,
    /// The old text, LF-normalised, without the BOM.
    before: String,
    /// The new text LF-normalised, when that differs from `text`.
    after: Option<String>,
}

impl Edited {
    /// The bytes to publish, in order (a BOM, when the file had one, then the text): write them
    /// one after the other without joining them first.
    pub fn parts(&self) -> [&[u8]; 2] {
        [if self.bom { BOM } else { b"" }, self.text.as_bytes()]
    }

    /// The bytes to publish, joined.
    pub fn bytes(&self) -> Vec<u8> {
        self.parts().concat()
    }

    /// The outcome's `before` and `after`: old and new text, LF-normalised, without a BOM.
    pub fn into_before_after(self) -> (String, String) {
        (self.before, self.after.unwrap_or(self.text))
    }
}

/// Whether a text holds a CRLF: files run to megabytes, and most have no `\r` at all, which a
/// scan for one byte tells faster than the search for the pair.
fn has_crlf(text: &str) -> bool {
    memchr::memchr(b'\r', text.as_bytes()).is_some()
        && memchr::memmem::find(text.as_bytes(), b"\r\n").is_some()
}

/// The LF view of `text` (only when it has CRLF) and the view positions of the `\n`s whose `\r`
/// it dropped.
fn lf_view(text: &str) -> Option<(String, Vec<usize>)> {
    if !has_crlf(text) {
        return None;
    }
    let mut view = String::with_capacity(text.len());
    let mut dropped = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("\r\n") {
        view.push_str(&rest[..i]);
        dropped.push(view.len());
        view.push('\n');
        rest = &rest[i + 2..];
    }
    view.push_str(rest);
    Some((view, dropped))
}

/// Whether inserted line breaks should be CRLF: CRLF pairs outnumber bare LFs in the first
/// [`STYLE_SAMPLE_CHARS`] characters (a tie is LF).
fn dominant_crlf(text: &str) -> bool {
    let sample_end = text
        .char_indices()
        .nth(STYLE_SAMPLE_CHARS)
        .map_or(text.len(), |(i, _)| i);
    let sample = &text[..sample_end];
    let crlf = sample.matches("\r\n").count();
    let lf = sample.bytes().filter(|&b| b == b'\n').count();
    crlf > lf - crlf
}

/// Applies a literal edit to a file's bytes (taken by value: the common case copies nothing but
/// the new text).
pub fn literal_edit(bytes: Vec<u8>, request: &EditRequest) -> Result<Edited, EditFailure> {
    if memchr::memchr(0, &bytes).is_some() {
        return Err(EditFailure::Binary);
    }
    let bom = bytes.starts_with(BOM);
    let mut text = String::from_utf8(bytes).map_err(|_| EditFailure::InvalidUtf8)?;
    if bom {
        text.drain(..BOM.len());
    }
    let old = lf_normalize(&request.old_string);
    let new = lf_normalize(&request.new_string);
    if old.is_empty() {
        return Err(EditFailure::EmptyOld);
    }
    let owned_view = lf_view(&text);
    let (view, dropped): (&str, &[usize]) = match &owned_view {
        Some((v, d)) => (v.as_str(), d.as_slice()),
        None => (text.as_str(), &[]),
    };
    // Left to right, not overlapping (`str::match_indices`, by `memmem`); a unique edit wants
    // the first and how many follow it, not where.
    let mut found = memchr::memmem::find_iter(view.as_bytes(), old.as_bytes());
    let starts: Vec<usize> = match (request.replace_all, found.next()) {
        (_, None) => return Err(EditFailure::NotFound),
        (true, Some(first)) => std::iter::once(first).chain(found).collect(),
        (false, Some(first)) => match found.count() {
            0 => vec![first],
            more => return Err(EditFailure::Ambiguous(1 + more)),
        },
    };
    let replacement: Cow<'_, str> = if dominant_crlf(&text) {
        Cow::Owned(new.replace('\n', "\r\n"))
    } else {
        Cow::Borrowed(new.as_ref())
    };
    // View position → text position: every dropped `\r` before it shifts it by one.
    let to_text = |p: usize| p + dropped.partition_point(|&q| q <= p);
    let mut out = String::with_capacity(text.len() + starts.len() * replacement.len());
    let mut cursor = 0;
    for &m in &starts {
        let mut start = to_text(m);
        if dropped.binary_search(&m).is_ok() {
            // The match starts at a `\n` the file spells `\r\n`: take the `\r` too.
            start -= 1;
        }
        let end = to_text(m + old.len() - 1) + 1;
        out.push_str(&text[cursor..start]);
        out.push_str(&replacement);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    let after = has_crlf(&out).then(|| lf_normalize(&out).into_owned());
    let before = match owned_view {
        Some((v, _)) => v,
        None => text,
    };
    Ok(Edited {
        bom,
        text: out,
        before,
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(old: &str, new: &str, all: bool) -> EditRequest {
        EditRequest {
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
        }
    }

    fn run(bytes: &[u8], old: &str, new: &str, all: bool) -> Vec<u8> {
        literal_edit(bytes.to_vec(), &req(old, new, all))
            .map(|e| e.bytes())
            .expect("applies")
    }

    #[test]
    fn only_the_matched_region_changes() {
        assert_eq!(
            run(b"a\r\nb\nc\r\nd\n", "c", "C", false),
            b"a\r\nb\nC\r\nd\n"
        );
        assert_eq!(run(b"a\r\nb", "\nb", "\nc", false), b"a\r\nc");
        assert_eq!(
            run(b"a\r\nb\r\nc\n", "a", "x\ny", false),
            b"x\r\ny\r\nb\r\nc\n"
        );
        assert_eq!(run(b"\xEF\xBB\xBFhi", "hi", "$&", false), b"\xEF\xBB\xBF$&");
        assert_eq!(run(b"aaa", "aa", "x", true), b"xa");
        assert_eq!(run(b"a\r\r\nb", "\r\nb", "Z", false), b"a\rZ");
    }

    #[test]
    fn outcome_texts_are_lf_normalised_without_bom() {
        let e = literal_edit(b"\xEF\xBB\xBFa\r\nb\r\n".to_vec(), &req("b", "c", false))
            .expect("applies");
        assert_eq!(e.bytes(), b"\xEF\xBB\xBFa\r\nc\r\n");
        assert_eq!(
            e.into_before_after(),
            ("a\nb\n".to_string(), "a\nc\n".to_string())
        );
    }

    #[test]
    fn failures_are_classified() {
        let fail = |b: &[u8], old: &str| literal_edit(b.to_vec(), &req(old, "b", false)).err();
        assert_eq!(fail(b"a\x00", "a"), Some(EditFailure::Binary));
        let mut late = vec![b'a'; 9000];
        late.push(0);
        assert_eq!(fail(&late, "a"), Some(EditFailure::Binary));
        assert_eq!(fail(b"\xFF", "a"), Some(EditFailure::InvalidUtf8));
        assert_eq!(fail(b"a", ""), Some(EditFailure::EmptyOld));
        assert_eq!(fail(b"a", "z"), Some(EditFailure::NotFound));
        assert_eq!(fail(b"a a", "a"), Some(EditFailure::Ambiguous(2)));
        assert_eq!(
            EditFailure::Ambiguous(2).into_error("/w/a"),
            FsError::ambiguous_edit("/w/a", 2)
        );
    }
}
