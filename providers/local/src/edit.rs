//! The provider's literal edit: fast (no copy of a file without CRLF, substring search by the
//! standard library) and byte-faithful — only the matched regions change. The reference model
//! has its own slow implementation; the conformance suite holds the two to the same bytes.

use seam::text::{BOM, lf_normalize};
use std::borrow::Cow;

/// Characters that decide the line-ending style of inserted text.
const STYLE_SAMPLE_CHARS: usize = 4096;
/// Reads look for NUL in this many leading bytes (edits look everywhere).
const NUL_SAMPLE: usize = 8192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EditFailure {
    Binary,
    InvalidUtf8,
    EmptyOld,
    NotFound,
    Ambiguous(usize),
}

/// Switches for the deliberately broken variants.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EditQuirks {
    pub normalise_whole_file: bool,
    pub drop_bom: bool,
    pub sample_nul: bool,
}

pub(crate) struct Edited {
    /// Whether the file starts with a BOM (kept on disk).
    bom: bool,
    /// The new text, without the BOM.
    text: String,
    /// The old text, LF-normalised, without the BOM.
    before: String,
    /// The new text LF-normalised, when that differs from `text`.
    after: Option<String>,
}

impl Edited {
    /// The bytes to publish, in order.
    pub fn parts(&self) -> [&[u8]; 2] {
        [if self.bom { BOM } else { b"" }, self.text.as_bytes()]
    }

    /// The outcome's `before` and `after`: old and new text, LF-normalised.
    pub fn into_before_after(self) -> (String, String) {
        (self.before, self.after.unwrap_or(self.text))
    }
}

/// The LF view of `text` (only when it has CRLF) and the view positions of the `\n`s whose `\r`
/// it dropped.
fn lf_view(text: &str) -> Option<(String, Vec<usize>)> {
    if !text.contains("\r\n") {
        return None;
    }
    let bytes = text.as_bytes();
    let mut view = Vec::with_capacity(bytes.len());
    let mut dropped = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            dropped.push(view.len());
            i += 1;
            continue;
        }
        view.push(bytes[i]);
        i += 1;
    }
    // Only ASCII `\r` bytes were removed, so the view is still UTF-8.
    Some((String::from_utf8(view).unwrap_or_default(), dropped))
}

/// Applies a literal edit to a file's bytes (taken by value: the common case copies nothing but
/// the new text).
pub(crate) fn literal_edit(
    bytes: Vec<u8>,
    old: &str,
    new: &str,
    replace_all: bool,
    quirks: EditQuirks,
) -> Result<Edited, EditFailure> {
    let scan = if quirks.sample_nul {
        &bytes[..bytes.len().min(NUL_SAMPLE)]
    } else {
        &bytes[..]
    };
    if scan.contains(&0) {
        return Err(EditFailure::Binary);
    }
    let bom = bytes.starts_with(BOM);
    let mut text = String::from_utf8(bytes).map_err(|_| EditFailure::InvalidUtf8)?;
    if bom {
        text.drain(..BOM.len());
    }
    let old = lf_normalize(old);
    let new = lf_normalize(new);
    if old.is_empty() {
        return Err(EditFailure::EmptyOld);
    }
    let owned_view = lf_view(&text);
    let (view, dropped): (&str, &[usize]) = match &owned_view {
        Some((v, d)) => (v.as_str(), d.as_slice()),
        None => (text.as_str(), &[]),
    };
    let starts: Vec<usize> = view.match_indices(old.as_ref()).map(|(i, _)| i).collect();
    if starts.is_empty() {
        return Err(EditFailure::NotFound);
    }
    if starts.len() > 1 && !replace_all {
        return Err(EditFailure::Ambiguous(starts.len()));
    }
    let sample_end = text
        .char_indices()
        .nth(STYLE_SAMPLE_CHARS)
        .map_or(text.len(), |(i, _)| i);
    let sample = &text[..sample_end];
    let crlf = sample.matches("\r\n").count();
    let lf = sample.bytes().filter(|&b| b == b'\n').count();
    let use_crlf = crlf > lf - crlf;
    let replacement: Cow<'_, str> = if use_crlf {
        Cow::Owned(new.replace('\n', "\r\n"))
    } else {
        Cow::Borrowed(new.as_ref())
    };

    let out: String = if quirks.normalise_whole_file {
        let replaced = if replace_all {
            view.replace(old.as_ref(), new.as_ref())
        } else {
            view.replacen(old.as_ref(), new.as_ref(), 1)
        };
        if use_crlf {
            replaced.replace('\n', "\r\n")
        } else {
            replaced
        }
    } else {
        let to_text = |p: usize| p + dropped.partition_point(|&q| q <= p);
        let mut out = String::with_capacity(text.len() + starts.len() * replacement.len());
        let mut cursor = 0;
        for &m in &starts {
            let mut start = to_text(m);
            if dropped.binary_search(&m).is_ok() {
                start -= 1;
            }
            let end = to_text(m + old.len() - 1) + 1;
            out.push_str(&text[cursor..start]);
            out.push_str(&replacement);
            cursor = end;
        }
        out.push_str(&text[cursor..]);
        out
    };
    let after = out
        .contains("\r\n")
        .then(|| lf_normalize(&out).into_owned());
    let before = match owned_view {
        Some((v, _)) => v,
        None => text,
    };
    Ok(Edited {
        bom: bom && !quirks.drop_bom,
        text: out,
        before,
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bytes: &[u8], old: &str, new: &str, all: bool) -> Vec<u8> {
        literal_edit(bytes.to_vec(), old, new, all, EditQuirks::default())
            .map(|e| e.parts().concat())
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
    }

    #[test]
    fn failures_are_classified() {
        let q = EditQuirks::default();
        assert_eq!(
            literal_edit(b"a\x00".to_vec(), "a", "b", false, q).err(),
            Some(EditFailure::Binary)
        );
        assert_eq!(
            literal_edit(b"\xFF".to_vec(), "a", "b", false, q).err(),
            Some(EditFailure::InvalidUtf8)
        );
        assert_eq!(
            literal_edit(b"a".to_vec(), "", "b", false, q).err(),
            Some(EditFailure::EmptyOld)
        );
        assert_eq!(
            literal_edit(b"a".to_vec(), "z", "b", false, q).err(),
            Some(EditFailure::NotFound)
        );
        assert_eq!(
            literal_edit(b"a a".to_vec(), "a", "b", false, q).err(),
            Some(EditFailure::Ambiguous(2))
        );
    }
}
