//! The provider's literal edit: fast (no copy of a file without CRLF, substring search by the
//! standard library) and byte-faithful — only the matched regions change. The reference model
//! has its own slow implementation; the conformance suite holds the two to the same bytes.

use seam::text::{BOM, lf_normalize, strip_bom};
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
    pub bytes: Vec<u8>,
    pub before: String,
    pub after: String,
}

/// The LF view of `text` and the view positions of the `\n`s whose `\r` it dropped.
fn lf_view(text: &str) -> (Cow<'_, str>, Vec<usize>) {
    if !text.contains("\r\n") {
        return (Cow::Borrowed(text), Vec::new());
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
    let view = String::from_utf8(view).unwrap_or_default();
    (Cow::Owned(view), dropped)
}

pub(crate) fn literal_edit(
    bytes: &[u8],
    old: &str,
    new: &str,
    replace_all: bool,
    quirks: EditQuirks,
) -> Result<Edited, EditFailure> {
    let scan = if quirks.sample_nul {
        &bytes[..bytes.len().min(NUL_SAMPLE)]
    } else {
        bytes
    };
    if scan.contains(&0) {
        return Err(EditFailure::Binary);
    }
    let (body, bom) = strip_bom(bytes);
    let text = std::str::from_utf8(body).map_err(|_| EditFailure::InvalidUtf8)?;
    let old = lf_normalize(old);
    let new = lf_normalize(new);
    if old.is_empty() {
        return Err(EditFailure::EmptyOld);
    }
    let (view, dropped) = lf_view(text);
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
    let after = lf_normalize(&out).into_owned();
    let mut bytes_out = Vec::with_capacity(out.len() + BOM.len());
    if bom && !quirks.drop_bom {
        bytes_out.extend_from_slice(BOM);
    }
    bytes_out.extend_from_slice(out.as_bytes());
    Ok(Edited {
        bytes: bytes_out,
        before: view.into_owned(),
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bytes: &[u8], old: &str, new: &str, all: bool) -> Vec<u8> {
        literal_edit(bytes, old, new, all, EditQuirks::default())
            .map(|e| e.bytes)
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
            literal_edit(b"a\x00", "a", "b", false, q).err(),
            Some(EditFailure::Binary)
        );
        assert_eq!(
            literal_edit(b"\xFF", "a", "b", false, q).err(),
            Some(EditFailure::InvalidUtf8)
        );
        assert_eq!(
            literal_edit(b"a", "", "b", false, q).err(),
            Some(EditFailure::EmptyOld)
        );
        assert_eq!(
            literal_edit(b"a", "z", "b", false, q).err(),
            Some(EditFailure::NotFound)
        );
        assert_eq!(
            literal_edit(b"a a", "a", "b", false, q).err(),
            Some(EditFailure::Ambiguous(2))
        );
    }
}
