//! Laws that do not trust the model. The model predicts every outcome, but a rule that the
//! model and a provider both get wrong would be invisible to a comparison of the two. These laws
//! are stated directly on the raw bytes the world holds before and after a step, with their own
//! (third) implementation of the rules:
//!
//! * after an edit, the new bytes are the old bytes with each matched region (found on the
//!   LF-normalised view, a match at a CRLF break taking the whole break) replaced by the new text
//!   in some line-ending style: every byte outside the matched regions is unchanged and in order,
//!   and a BOM is kept iff there was one;
//! * after a write, the bytes at the target are exactly the content, and nothing else changed
//!   but the directories created on the way;
//! * a listing is the directory's children, in byte order of their names.

use crate::failure::{Check, FailureKind, fail};
use seam_model::SnapEntry;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A law to check once the world has been read back after the step.
#[derive(Clone, Debug)]
pub(crate) enum PendingLaw {
    /// A write of `content` to the file at `rel` succeeded.
    Write { rel: String, content: Arc<str> },
    /// An edit of the file at `rel` succeeded.
    Edit {
        rel: String,
        old: String,
        new: String,
        replace_all: bool,
        /// What the edit worked on, where that is not the file before the step: the file as
        /// someone else changed it mid-edit (the edit was made again on it).
        basis: Option<bytes::Bytes>,
    },
    /// A listing of the directory at `rel` returned `names`.
    List { rel: String, names: Vec<String> },
    /// A stale mutation of the file at `rel`: it must be as it was.
    Unchanged { rel: String },
}

fn lf(s: &str) -> String {
    seam_model::lf_normalize(s)
}

/// Whether two snapshot entries are the same. Two files held in the very same buffer (same
/// address, same length) are the same bytes without a pass over them: a snapshot's bytes never
/// change once taken, and a store that hands out the buffers it keeps (the in-memory one) gives
/// every untouched file's buffer again, so a write's "nothing else changed" costs a lookup per
/// file, not a read of the whole tree. Buffers read afresh (a disk) are compared byte for byte.
fn same_entry(a: &SnapEntry, b: &SnapEntry) -> bool {
    match (a, b) {
        (SnapEntry::File { bytes: x, mode: m }, SnapEntry::File { bytes: y, mode: n }) => {
            m == n && (super::verify::place(x) == super::verify::place(y) || x == y)
        }
        _ => a == b,
    }
}

fn file<'a>(snap: &'a BTreeMap<String, SnapEntry>, rel: &str) -> Option<&'a [u8]> {
    match snap.get(rel) {
        Some(SnapEntry::File { bytes, .. }) => Some(bytes),
        _ => None,
    }
}

impl PendingLaw {
    pub fn check(
        &self,
        before: &BTreeMap<String, SnapEntry>,
        after: &BTreeMap<String, SnapEntry>,
    ) -> Check {
        match self {
            PendingLaw::Write { rel, content } => write_law(before, after, rel, content),
            PendingLaw::Edit {
                rel,
                old,
                new,
                replace_all,
                basis,
            } => {
                let was = basis.as_deref().or_else(|| file(before, rel));
                let (Some(was), Some(now)) = (was, file(after, rel)) else {
                    return Err(fail(
                        FailureKind::EditLaw,
                        format!("the edited file {rel:?} is not a file before and after the edit"),
                    ));
                };
                edit_law(was, now, old, new, *replace_all).map_err(|e| {
                    fail(
                        FailureKind::EditLaw,
                        format!(
                            "edit of {rel:?} ({:?} -> {:?}{}): {e}; before {}, after {}",
                            old,
                            new,
                            if *replace_all { ", all" } else { "" },
                            super::show_bytes(was),
                            super::show_bytes(now)
                        ),
                    )
                })
            }
            PendingLaw::List { rel, names } => list_law(after, rel, names),
            PendingLaw::Unchanged { rel } => {
                let unchanged = match (before.get(rel), after.get(rel)) {
                    (Some(a), Some(b)) => same_entry(a, b),
                    (a, b) => a == b,
                };
                if unchanged {
                    Ok(())
                } else {
                    Err(fail(
                        FailureKind::Policy,
                        format!(
                            "a stale tool write or edit changed {rel:?} (it must leave the file as it was)"
                        ),
                    ))
                }
            }
        }
    }
}

fn write_law(
    before: &BTreeMap<String, SnapEntry>,
    after: &BTreeMap<String, SnapEntry>,
    rel: &str,
    content: &str,
) -> Check {
    match file(after, rel) {
        Some(bytes) if bytes == content.as_bytes() => {}
        Some(bytes) => {
            return Err(fail(
                FailureKind::WriteLaw,
                format!(
                    "after writing {} bytes to {rel:?} it holds {} other bytes",
                    content.len(),
                    bytes.len()
                ),
            ));
        }
        None => {
            return Err(fail(
                FailureKind::WriteLaw,
                format!("after a successful write, {rel:?} is not a file"),
            ));
        }
    }
    let parents: Vec<String> = {
        let parts: Vec<&str> = rel.split('/').collect();
        (1..parts.len()).map(|i| parts[..i].join("/")).collect()
    };
    for (path, entry) in after {
        if path == rel {
            continue;
        }
        match before.get(path) {
            Some(was) if same_entry(was, entry) => {}
            None if parents.contains(path) && matches!(entry, SnapEntry::Dir { .. }) => {}
            _ => {
                return Err(fail(
                    FailureKind::WriteLaw,
                    format!("a write of {rel:?} also changed {path:?}"),
                ));
            }
        }
    }
    if let Some(path) = before
        .keys()
        .find(|p| p.as_str() != rel && !after.contains_key(*p))
    {
        return Err(fail(
            FailureKind::WriteLaw,
            format!("a write of {rel:?} removed {path:?}"),
        ));
    }
    Ok(())
}

fn list_law(after: &BTreeMap<String, SnapEntry>, rel: &str, names: &[String]) -> Check {
    let prefix = if rel.is_empty() {
        String::new()
    } else {
        format!("{rel}/")
    };
    let mut children: Vec<&str> = after
        .keys()
        .filter_map(|p| p.strip_prefix(&prefix))
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
        .collect();
    children.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let listed: Vec<&str> = names.iter().map(String::as_str).collect();
    if listed == children {
        Ok(())
    } else {
        Err(fail(
            FailureKind::ListingLaw,
            format!(
                "the listing of {rel:?} is {listed:?}; the directory holds {children:?} in byte order"
            ),
        ))
    }
}

/// The LF view of `raw` (each `\r\n` as `\n`) and where its bytes are in `raw`: the view
/// positions of the `\n`s that stand for a `\r\n`, in order. Nothing the size of the file
/// but the view itself (an array of positions per byte made a large file the law's whole cost).
/// A text without a `\r` (most) is its own view, borrowed, not copied.
struct View<'a> {
    text: Cow<'a, str>,
    crlfs: Vec<usize>,
}

impl<'a> View<'a> {
    fn of(raw: &'a str) -> View<'a> {
        if memchr::memchr(b'\r', raw.as_bytes()).is_none() {
            return View {
                text: Cow::Borrowed(raw),
                crlfs: Vec::new(),
            };
        }
        let mut text = String::with_capacity(raw.len());
        let mut crlfs = Vec::new();
        let mut rest = raw;
        while let Some(i) = memchr::memmem::find(rest.as_bytes(), b"\r\n") {
            text.push_str(&rest[..i]);
            crlfs.push(text.len());
            text.push('\n');
            rest = &rest[i + 2..];
        }
        text.push_str(rest);
        View {
            text: Cow::Owned(text),
            crlfs,
        }
    }

    /// Where the view's byte at `v` (or its end) is in `raw`: a `\n` that stands for a `\r\n`
    /// is at the `\r`, every other byte at itself.
    fn raw(&self, v: usize) -> usize {
        v + self.crlfs.partition_point(|&c| c < v)
    }

    /// The raw position just after the view byte at `v`, whole characters and CRLFs.
    fn raw_end(&self, v: usize, raw: &str) -> usize {
        let at = self.raw(v);
        if self.crlfs.binary_search(&v).is_ok() {
            at + 2
        } else {
            let mut end = at + 1;
            while end < raw.len() && !raw.is_char_boundary(end) {
                end += 1;
            }
            end
        }
    }
}

/// `a == b`, an empty pair not handed to the C library. An edit of every match of a short
/// text compares two short pieces per match (tens of thousands in a large file), and the
/// library's compare of an empty piece — a replacement `""` has a dangling pointer — cost
/// tens of nanoseconds each: that made the law nearly three times the cost of the model's edit
/// of the same file (53,345 matches of a 7-byte text in 533 KB, replaced by nothing: the law
/// 3.6 ms, now 0.84 ms; the model's edit 1.3 ms).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// The literal-edit law on raw bytes.
pub(crate) fn edit_law(
    was: &[u8],
    now: &[u8],
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<(), String> {
    // A BOM the file had is kept. One it did not have is not looked for here: a replacement
    // may begin with U+FEFF at the file's start, or an edit may bring one there; one that
    // neither explains is a changed byte, which the walk below finds.
    let bom = was.starts_with(BOM);
    if bom && !now.starts_with(BOM) {
        return Err("the BOM was dropped".into());
    }
    let skip = if bom { BOM.len() } else { 0 };
    let was_text = std::str::from_utf8(&was[skip..]).map_err(|_| "the old file was not UTF-8")?;
    let now_text = std::str::from_utf8(&now[skip..]).map_err(|_| "the new file is not UTF-8")?;
    let (o, n) = (lf(old), lf(new));
    if o.is_empty() {
        return Err("an empty old text was taken to match".into());
    }
    let view = View::of(was_text);
    // Raw regions of the matches; everything between them must survive byte for byte.
    let mut gaps: Vec<&str> = Vec::new();
    let mut cursor = 0;
    for m in memchr::memmem::find_iter(view.text.as_bytes(), o.as_bytes()).take(if replace_all {
        usize::MAX
    } else {
        1
    }) {
        let start = view.raw(m);
        let end = view.raw_end(m + o.len() - 1, was_text);
        gaps.push(&was_text[cursor..start]);
        cursor = end;
    }
    gaps.push(&was_text[cursor..]);
    let newlines = n.matches('\n').count();
    if !now_text.starts_with(gaps[0]) {
        return Err(format!(
            "bytes outside the matched regions changed (untouched segment 0 of {} differs)",
            gaps.len()
        ));
    }
    let mut pos = gaps[0].len();
    for (i, next) in gaps.iter().enumerate().skip(1) {
        // The replacement, in the new text's own line endings (its LF view as it is) or in
        // CRLF (every `\n` a `\r\n`), and the untouched segment after it. Each segment is
        // compared once on the way to a pass: it may be most of a large file.
        let fits = |len: usize| {
            now_text.get(pos..pos + len).is_some_and(|r| {
                // A region without a `\r` is its own LF view: compared as it is, not copied.
                (same(r.as_bytes(), n.as_bytes()) || (r.contains('\r') && lf(r) == n))
                    && now_text
                        .as_bytes()
                        .get(pos + len..pos + len + next.len())
                        .is_some_and(|s| same(s, next.as_bytes()))
            })
        };
        let len = [n.len(), n.len() + newlines]
            .into_iter()
            .find(|l| fits(*l))
            .ok_or_else(|| {
                format!("replacement {i} is not the new text in some line-ending style")
            })?;
        pos += len + next.len();
    }
    if pos != now_text.len() {
        return Err("the file has bytes after the last untouched segment".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The view and positions as they were first written: an entry per byte.
    fn per_byte(raw: &str) -> (String, Vec<usize>, Vec<bool>) {
        let b = raw.as_bytes();
        let (mut view, mut map, mut from_crlf) = (String::new(), Vec::new(), Vec::new());
        let mut i = 0;
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\r' && b.get(i + 1) == Some(&b'\n') {
                chars.next();
                map.push(i);
                from_crlf.push(true);
                view.push('\n');
                i += 2;
                continue;
            }
            for _ in 0..c.len_utf8() {
                map.push(i);
                from_crlf.push(false);
            }
            view.push(c);
            i += c.len_utf8();
        }
        map.push(raw.len());
        (view, map, from_crlf)
    }

    proptest! {
        #[test]
        fn the_view_maps_every_byte_as_a_map_per_byte_does(
            parts in prop::collection::vec(prop::sample::select(vec!["\r", "\n", "\r\n", "a", "é", "😀", "\u{feff}"]), 0..40)
        ) {
            let raw: String = parts.concat();
            let (text, map, from_crlf) = per_byte(&raw);
            let view = View::of(&raw);
            prop_assert_eq!(&view.text, &text);
            // Where a character starts (a match starts nowhere else): the per-byte map gave a
            // character's later bytes its start.
            for v in (0..=text.len()).filter(|&v| text.is_char_boundary(v)) {
                prop_assert_eq!(view.raw(v), map[v], "raw({})", v);
            }
            for v in 0..text.len() {
                let end = if from_crlf[v] {
                    map[v] + 2
                } else {
                    let mut end = map[v] + 1;
                    while end < raw.len() && !raw.is_char_boundary(end) {
                        end += 1;
                    }
                    end
                };
                prop_assert_eq!(view.raw_end(v, &raw), end, "raw_end({})", v);
            }
        }
    }

    #[test]
    fn an_empty_old_text_never_satisfies_the_edit_law() {
        assert_eq!(
            edit_law(b"abc", b"xabc", "", "x", false),
            Err("an empty old text was taken to match".to_string())
        );
    }

    /// Every edit the model makes passes the law, over every short text of the characters
    /// that matter (`\r`, `\n`, CRLF, U+FEFF) — among them a new text that is CRLF only once
    /// made LF (`\r\r\n`), a replacement that puts U+FEFF at the file's start, and an edit that
    /// brings one there — and a file changed by one more byte anywhere does not.
    #[test]
    fn every_edit_the_model_makes_passes_the_law_and_one_more_byte_does_not() {
        const PIECES: [&str; 5] = ["a", "\n", "\r", "\r\n", "\u{feff}"];
        const OLD: [&str; 6] = ["a", "\n", "\r", "\r\n", "\r\r\n", "a\n"];
        const NEW: [&str; 8] = ["", "b", "\n", "\r", "\r\r\n", "\u{feff}", "x\ny", "\n\r"];
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.chars().count() < 4)
                .flat_map(|t| PIECES.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(longer);
        }
        texts.sort();
        texts.dedup();
        let mut edits = 0;
        for was in &texts {
            for old in OLD {
                for new in NEW {
                    for all in [false, true] {
                        let Ok(made) =
                            seam_model::apply_literal_edit(was.as_bytes(), old, new, all)
                        else {
                            continue;
                        };
                        edits += 1;
                        let now = made.bytes;
                        assert_eq!(
                            edit_law(was.as_bytes(), &now, old, new, all),
                            Ok(()),
                            "{was:?} {old:?} -> {new:?} (all: {all}) made {:?}",
                            String::from_utf8_lossy(&now)
                        );
                        let mut more = now.clone();
                        more.push(b'z');
                        assert!(edit_law(was.as_bytes(), &more, old, new, all).is_err());
                        let mut less = now.clone();
                        if less.pop().is_some() {
                            assert!(edit_law(was.as_bytes(), &less, old, new, all).is_err());
                        }
                    }
                }
            }
        }
        assert!(edits > 10_000, "{edits} edits");
    }

    #[test]
    fn the_edit_law_accepts_byte_faithful_edits_and_catches_the_rest() {
        // Byte-faithful: only the match changes, mixed endings stay.
        assert!(edit_law(b"a\r\nb\nc\r\n", b"a\r\nB\nc\r\n", "b", "B", false).is_ok());
        // A match across a CRLF replaces the whole break.
        assert!(edit_law(b"a\r\nb", b"ac", "\nb", "c", false).is_ok());
        // Inserted breaks in CRLF style.
        assert!(edit_law(b"a\r\nb\r\n", b"x\r\ny\r\nb\r\n", "a", "x\ny", false).is_ok());
        // replace_all, and a BOM kept.
        assert!(edit_law(b"\xEF\xBB\xBFa a", b"\xEF\xBB\xBFb b", "a", "b", true).is_ok());
        // Normalising the whole file breaks the law.
        assert!(edit_law(b"a\r\nb\nc\r\n", b"a\r\nB\r\nc\r\n", "b", "B", false).is_err());
        // Dropping the BOM breaks it.
        assert!(edit_law(b"\xEF\xBB\xBFa", b"b", "a", "b", false).is_err());
        // Interpreting `$&` breaks it.
        assert!(edit_law(b"ab", b"aab", "a", "$&a", false).is_err());
        // Changing another byte breaks it.
        assert!(edit_law(b"ab cd", b"xb ce", "a", "x", false).is_err());
        // A lone CR of the file before an inserted LF makes a CRLF pair: still faithful.
        assert!(edit_law(b"a\rb", b"a\r\n", "b", "\n", false).is_ok());
        assert!(edit_law(b"a\r\r\nb\r", b"a\r\r\nZ\r", "b", "Z", false).is_ok());
        // Replacing the wrong occurrence breaks it.
        assert!(edit_law(b"b a b", b"b a Z", "b", "Z", false).is_err());
        // A new text that is a CRLF only once made LF is written as that view.
        assert!(edit_law(b"x\ny\n", b"x\n\r\n\n", "y", "\r\r\n", false).is_ok());
        // U+FEFF put at the start by the replacement, or brought there by the edit: kept.
        assert!(edit_law(b"ab", b"\xEF\xBB\xBFb", "a", "\u{feff}", false).is_ok());
        assert!(edit_law(b"a\xEF\xBB\xBFb", b"\xEF\xBB\xBFb", "a", "", false).is_ok());
        // A BOM the edit does not explain is a changed byte.
        assert!(edit_law(b"ab", b"\xEF\xBB\xBFac", "b", "c", false).is_err());
        assert!(edit_law(b"ab", b"\xEF\xBB\xBFb", "a", "", false).is_err());
    }

    /// A write's law: the content at the target and nothing else changed. An untouched file
    /// in the very same buffer is vouched for without a pass over it; every other file is
    /// compared, so a changed byte, a shorter view of the same buffer and a changed mode are
    /// caught — by a stale mutation's law too.
    #[test]
    fn the_write_law_wants_the_content_and_nothing_else_changed() {
        use bytes::Bytes;
        let file = |bytes: &Bytes, mode| SnapEntry::File {
            bytes: bytes.clone(),
            mode,
        };
        let snap = |entries: Vec<(&str, SnapEntry)>| -> BTreeMap<String, SnapEntry> {
            let entries = entries.into_iter();
            entries.map(|(p, e)| (p.to_string(), e)).collect()
        };
        let kept = Bytes::from(b"kept\n".to_vec());
        let (copy, changed) = (Bytes::from(kept.to_vec()), Bytes::from(b"KEPT\n".to_vec()));
        let before = snap(vec![("k", file(&kept, Some(0o644)))]);
        let written = Bytes::from(b"new".to_vec());
        let after = |k: Option<SnapEntry>, at_target: &Bytes| {
            let mut after = snap(vec![
                ("d", SnapEntry::Dir { mode: None }),
                ("d/f", file(at_target, None)),
            ]);
            after.extend(k.map(|k| ("k".to_string(), k)));
            write_law(&before, &after, "d/f", "new").map_err(|f| f.message)
        };
        let also = || Err(r#"a write of "d/f" also changed "k""#.to_string());
        let cases = [
            (file(&kept, Some(0o644)), Ok(())),
            (file(&copy, Some(0o644)), Ok(())),
            (file(&changed, Some(0o644)), also()),
            (file(&kept.slice(..4), Some(0o644)), also()),
            (file(&kept, Some(0o600)), also()),
        ];
        for (k, want) in cases {
            assert_eq!(after(Some(k.clone()), &written), want, "{k:?}");
            let unchanged = PendingLaw::Unchanged { rel: "k".into() };
            let kept = unchanged.check(&before, &snap(vec![("k", k.clone())]));
            assert_eq!(kept.is_ok(), want.is_ok(), "unchanged: {k:?}");
        }
        let removed = r#"a write of "d/f" removed "k""#.to_string();
        assert_eq!(after(None, &written), Err(removed));
        let other = r#"after writing 3 bytes to "d/f" it holds 5 other bytes"#.to_string();
        assert_eq!(after(Some(file(&kept, Some(0o644))), &copy), Err(other));
    }

    #[test]
    fn the_listing_law_wants_byte_order() {
        let mut snap = BTreeMap::new();
        for p in ["d", "d/B", "d/a", "d/a/x"] {
            snap.insert(p.to_string(), SnapEntry::Dir { mode: None });
        }
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(list_law(&snap, "d", &names(&["B", "a"])).is_ok());
        assert!(list_law(&snap, "d", &names(&["a", "B"])).is_err());
        assert!(list_law(&snap, "", &names(&["d"])).is_ok());
    }
}
