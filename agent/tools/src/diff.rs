//! Diff hunks of a mutation, for a UI to show what changed (never sent to the model).
//!
//! Line-based, with three lines of context around each change, one hunk per cluster of
//! changes, in unified-diff numbering. Computed from the provider's LF-normalised `before` and
//! `after`, so a CRLF file does not diff as "every line changed".
//!
//! A mutation's answer carries a [`BoundedDiff`], never the texts: a one-line edit of a 30 MiB
//! file answers with a few hundred bytes, and a rewrite of it with at most [`DIFF_MAX_BYTES`] of
//! hunks, the counts of every changed line, and the line where the part not shown starts (the
//! client reads it there). The whole `before` and `after` stay in the provider's outcome, for a
//! Rust caller and for the conformance suite.

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};
use std::time::Duration;

/// Lines of unchanged context around each change.
pub const DIFF_CONTEXT: usize = 3;

/// The most bytes of hunk lines a mutation's answer carries (line texts, as shown).
pub const DIFF_MAX_BYTES: usize = 8 * 1024;

/// The most hunk lines a mutation's answer carries.
pub const DIFF_MAX_LINES: usize = 200;

/// A shown hunk line keeps at most this many characters (after its sign), then
/// [`DIFF_LINE_CUT`].
pub const DIFF_MAX_LINE_CHARS: usize = 400;

/// What ends a hunk line that was cut at [`DIFF_MAX_LINE_CHARS`].
pub const DIFF_LINE_CUT: &str = " … (line cut)";

/// How long the line diff may look for the smallest diff before it settles for a larger one
/// (still exact: it only marks more lines changed). A rewrite of a big file whose every line
/// differs would otherwise cost seconds.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// One hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based first line of the hunk in the old text (the line before it for an empty side).
    pub old_start: usize,
    /// Lines of the old text the hunk covers.
    pub old_lines: usize,
    /// 1-based first line of the hunk in the new text.
    pub new_start: usize,
    /// Lines of the new text the hunk covers.
    pub new_lines: usize,
    /// The lines, each prefixed with `' '` (context), `'-'` (removed) or `'+'` (added), without
    /// their line breaks.
    pub lines: Vec<String>,
}

impl Hunk {
    /// The hunk as JSON metadata.
    pub fn to_json(&self) -> Value {
        json!({
            "old_start": self.old_start,
            "old_lines": self.old_lines,
            "new_start": self.new_start,
            "new_lines": self.new_lines,
            "lines": self.lines,
        })
    }
}

fn start(range: &std::ops::Range<usize>) -> usize {
    if range.is_empty() {
        range.start
    } else {
        range.start + 1
    }
}

/// A change's mark in a hunk line: `' '` context, `'-'` removed, `'+'` added.
fn sign(tag: ChangeTag) -> char {
    match tag {
        ChangeTag::Equal => ' ',
        ChangeTag::Delete => '-',
        ChangeTag::Insert => '+',
    }
}

/// The hunks turning `before` into `after`; none when `before` is unknown (`None`: a create,
/// or a prior file the provider gave no diff basis for) or the texts are equal.
pub fn hunks(before: Option<&str>, after: &str) -> Vec<Hunk> {
    let Some(before) = before else {
        return Vec::new();
    };
    if before == after {
        return Vec::new();
    }
    let diff = TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for group in diff.grouped_ops(DIFF_CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = sign(change.tag());
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                lines.push(format!("{sign}{text}"));
            }
        }
        out.push(Hunk {
            old_start: start(&old),
            old_lines: old.len(),
            new_start: start(&new),
            new_lines: new.len(),
            lines,
        });
    }
    out
}

/// A mutation's diff as its answer carries it: the first hunks, up to [`DIFF_MAX_LINES`] lines
/// and [`DIFF_MAX_BYTES`] bytes, and the counts of the whole change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundedDiff {
    /// The hunks shown, whole (a hunk that would pass a bound is left out, with all after it;
    /// the first is cut to fit rather than dropped).
    pub hunks: Vec<Hunk>,
    /// Lines added by the whole change.
    pub added: usize,
    /// Lines removed by the whole change.
    pub removed: usize,
    /// Whether every hunk is shown.
    pub complete: bool,
    /// When not: the first line of the new text that the shown hunks do not cover (1-based),
    /// where a reader goes on.
    pub rest_from_line: Option<usize>,
}

impl BoundedDiff {
    /// No diff: a create, or a prior file the provider gave no text of.
    pub fn none() -> Self {
        Self {
            hunks: Vec::new(),
            added: 0,
            removed: 0,
            complete: true,
            rest_from_line: None,
        }
    }

    /// The hunks as a JSON array (the `diffs` of a mutation's answer).
    pub fn hunks_json(&self) -> Value {
        Value::Array(self.hunks.iter().map(Hunk::to_json).collect())
    }

    /// The fields a mutation's answer carries beside its `diffs`.
    pub fn summary_json(&self) -> Value {
        json!({
            "added": self.added,
            "removed": self.removed,
            "complete": self.complete,
            "rest_from_line": self.rest_from_line,
        })
    }
}

/// What a `write` or `edit` answers beside its text: the path, the operation, the new version,
/// the bounded hunks (`diffs`) and the counts of the whole change (`changes`) — both empty
/// (`[]`, `null`) when there was no prior text to diff against: a create, or a prior file the
/// provider gave no text of (binary, or past its diff bound).
pub(crate) fn mutation_metadata(
    path: &str,
    operation: &str,
    version: &seam::FsVersion,
    diff: Option<&BoundedDiff>,
) -> Value {
    json!({
        "path": path,
        "operation": operation,
        "version": version.as_str(),
        "diffs": diff.map_or_else(|| json!([]), BoundedDiff::hunks_json),
        "changes": diff.map_or(Value::Null, BoundedDiff::summary_json),
    })
}

/// One shown line: its sign and at most [`DIFF_MAX_LINE_CHARS`] of its text.
fn shown_line(sign: char, text: &str) -> String {
    match text.char_indices().nth(DIFF_MAX_LINE_CHARS) {
        None => format!("{sign}{text}"),
        Some((cut, _)) => format!("{sign}{}{DIFF_LINE_CUT}", &text[..cut]),
    }
}

/// How many bytes `a` and `b` start with alike (compared a block at a time: this runs over the
/// whole of a big file).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many bytes `a` and `b` end with alike.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    while i < n && a[n - i - 1] == b[n - i - 1] {
        i += 1;
    }
    i
}

/// The part of two texts the line diff has to look at, and how many lines come before it: the
/// lines both texts start with and end with are cut, but for [`DIFF_CONTEXT`] lines kept on each
/// side, so the hunks of the part change and count the same lines as those of the whole, moved
/// down by that many lines. (Where a change sits in a run of identical lines, the diff of the
/// part may place it, and so its context, elsewhere in the run than the diff of the whole: a
/// randomized comparison of 200,000 small texts found 6.4 % so placed, every count equal and
/// every hunk applying.) A one-line edit of a 30 MiB file then diffs a few lines, not half a
/// million.
fn trimmed<'a>(before: &'a str, after: &'a str) -> (usize, &'a str, &'a str) {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let line_start = |text: &[u8], at: usize| {
        text[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1)
    };
    let common = common_prefix(b, a);
    let mut from = line_start(b, common);
    for _ in 0..DIFF_CONTEXT {
        if from == 0 {
            break;
        }
        from = line_start(b, from - 1);
    }
    let skipped = b[..from].iter().filter(|&&c| c == b'\n').count();
    // The common end, short of what the start took, cut at a line start (the byte before it is
    // a line break in both texts, since the common end is the same bytes in both) and then
    // DIFF_CONTEXT lines later.
    let room = b.len().min(a.len()) - from;
    let tail = common_suffix(&b[b.len() - room..], &a[a.len() - room..]);
    let region = &b[b.len() - tail..];
    let mut kept = 0;
    for _ in 0..=DIFF_CONTEXT {
        match region[kept..].iter().position(|&c| c == b'\n') {
            Some(i) => kept += i + 1,
            None => {
                kept = tail;
                break;
            }
        }
    }
    let cut = tail - kept;
    (
        skipped,
        &before[from..before.len() - cut],
        &after[from..after.len() - cut],
    )
}

/// The diff turning `before` into `after`, bounded; [`BoundedDiff::none`] when `before` is
/// unknown or equal. The line diff gives up looking for the smallest diff after a while (a
/// larger one is still exact), so a big rewrite costs what reading it costs.
pub fn bounded(before: Option<&str>, after: &str) -> BoundedDiff {
    let Some(before) = before else {
        return BoundedDiff::none();
    };
    if before == after {
        return BoundedDiff::none();
    }
    let (skipped, before, after) = trimmed(before, after);
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after);
    let mut out = BoundedDiff::none();
    for op in diff.ops() {
        if !matches!(op, similar::DiffOp::Equal { .. }) {
            out.removed += op.old_range().len();
            out.added += op.new_range().len();
        }
    }
    let (mut lines_left, mut bytes_left) = (DIFF_MAX_LINES, DIFF_MAX_BYTES);
    for group in diff.grouped_ops(DIFF_CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let mut hunk = Hunk {
            old_start: start(&old) + skipped,
            old_lines: 0,
            new_start: start(&new) + skipped,
            new_lines: 0,
            lines: Vec::new(),
        };
        // 0-based index in the new text of the next line not shown.
        let mut next_new = new.start;
        let mut cut = false;
        'ops: for op in &group {
            for change in diff.iter_changes(op) {
                let sign = sign(change.tag());
                let text = change.value();
                let line = shown_line(sign, text.strip_suffix('\n').unwrap_or(text));
                if hunk.lines.len() == lines_left || line.len() > bytes_left {
                    cut = true;
                    break 'ops;
                }
                bytes_left -= line.len();
                if sign != '+' {
                    hunk.old_lines += 1;
                }
                if sign != '-' {
                    hunk.new_lines += 1;
                    next_new += 1;
                }
                hunk.lines.push(line);
            }
        }
        lines_left -= hunk.lines.len();
        if cut {
            out.complete = false;
            if out.hunks.is_empty() && !hunk.lines.is_empty() {
                // The first hunk alone passes a bound: it is shown as far as it fits (its
                // counts are those of the lines shown, so it is still a valid hunk).
                out.rest_from_line = Some(next_new + 1 + skipped);
                out.hunks.push(hunk);
            } else {
                out.rest_from_line = Some(new.start + 1 + skipped);
            }
            break;
        }
        out.hunks.push(hunk);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn one_change_mid_file_is_one_hunk_with_three_lines_of_context_each_side() {
        let before = numbered(20);
        let after = before.replace("line 10\n", "LINE TEN\n");
        let h = hunks(Some(&before), &after);
        assert_eq!(h.len(), 1);
        assert_eq!(
            (
                h[0].old_start,
                h[0].old_lines,
                h[0].new_start,
                h[0].new_lines
            ),
            (7, 7, 7, 7)
        );
        assert_eq!(
            h[0].lines,
            [
                "line 7",
                "line 8",
                "line 9",
                "-line 10",
                "+LINE TEN",
                "line 11",
                "line 12",
                "line 13"
            ]
            .iter()
            .map(|l| if l.starts_with(['-', '+']) {
                l.to_string()
            } else {
                format!(" {l}")
            })
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn scattered_changes_are_one_hunk_each() {
        let before = numbered(40);
        let after = before
            .replace("line 5\n", "five\n")
            .replace("line 30\n", "thirty\n");
        assert_eq!(hunks(Some(&before), &after).len(), 2);
    }

    #[test]
    fn identical_or_unknown_before_has_no_hunks() {
        assert!(hunks(Some("a\n"), "a\n").is_empty());
        assert!(hunks(None, "a\n").is_empty());
    }

    #[test]
    fn insertion_into_empty_and_whole_deletion() {
        let h = hunks(Some(""), "a\nb\n");
        assert_eq!(
            (
                h[0].old_start,
                h[0].old_lines,
                h[0].new_start,
                h[0].new_lines
            ),
            (0, 0, 1, 2)
        );
        assert_eq!(h[0].lines, ["+a", "+b"]);
        let h = hunks(Some("a\nb\n"), "");
        assert_eq!(
            (
                h[0].old_start,
                h[0].old_lines,
                h[0].new_start,
                h[0].new_lines
            ),
            (1, 2, 0, 0)
        );
        assert_eq!(h[0].lines, ["-a", "-b"]);
    }

    #[test]
    fn a_one_line_change_in_a_big_file_is_one_small_hunk_and_its_counts() {
        let before = numbered(100_000);
        let after = before.replace("line 50000\n", "LINE 50000\n");
        let d = bounded(Some(&before), &after);
        assert_eq!(
            (d.added, d.removed, d.complete, d.rest_from_line),
            (1, 1, true, None)
        );
        assert_eq!(d.hunks, hunks(Some(&before), &after));
        assert_eq!(d.hunks[0].lines.len(), 8);
        assert_eq!(d.hunks[0].lines[3], "-line 50000");
    }

    fn shown_bytes(d: &BoundedDiff) -> usize {
        d.hunks.iter().flat_map(|h| &h.lines).map(String::len).sum()
    }

    #[test]
    fn a_rewrite_shows_the_first_lines_within_the_bounds_and_counts_every_line() {
        let before = numbered(10_000);
        let after: String = (1..=10_000).map(|i| format!("row {i}\n")).collect();
        let d = bounded(Some(&before), &after);
        assert_eq!((d.added, d.removed, d.complete), (10_000, 10_000, false));
        let shown: usize = d.hunks.iter().map(|h| h.lines.len()).sum();
        assert_eq!(shown, DIFF_MAX_LINES);
        assert!(shown_bytes(&d) <= DIFF_MAX_BYTES);
        // One hunk, cut: its counts are those of the lines it shows, so it applies as it is.
        let h = &d.hunks[0];
        let signs = |c: char| h.lines.iter().filter(|l| l.starts_with(c)).count();
        assert_eq!(h.old_lines, signs('-') + signs(' '));
        assert_eq!(h.new_lines, signs('+') + signs(' '));
        assert_eq!(d.rest_from_line, Some(h.new_lines + 1));
        assert_eq!(h.lines[0], "-line 1");
    }

    #[test]
    fn scattered_changes_past_the_bound_stop_at_a_whole_hunk_and_say_where_the_rest_is() {
        let before = numbered(20_000);
        let mut after = before.clone();
        for i in (10..20_000).step_by(100) {
            after = after.replace(&format!("\nline {i}\n"), &format!("\nchanged {i}\n"));
        }
        let d = bounded(Some(&before), &after);
        assert_eq!((d.added, d.removed, d.complete), (200, 200, false));
        let all = hunks(Some(&before), &after);
        assert!(d.hunks.len() < all.len());
        assert_eq!(
            d.hunks[..],
            all[..d.hunks.len()],
            "whole hunks, as the full diff has them"
        );
        let next = &all[d.hunks.len()];
        assert_eq!(d.rest_from_line, Some(next.new_start));
        assert!(d.hunks.iter().map(|h| h.lines.len()).sum::<usize>() <= DIFF_MAX_LINES);
    }

    #[test]
    fn a_giant_line_is_cut_in_what_is_shown() {
        let before = format!("{}\n", "a".repeat(1 << 20));
        let after = format!("{}b\n", "a".repeat(1 << 20));
        let d = bounded(Some(&before), &after);
        assert_eq!((d.added, d.removed, d.complete), (1, 1, true));
        assert_eq!(
            d.hunks[0].lines,
            [
                format!("-{}{DIFF_LINE_CUT}", "a".repeat(DIFF_MAX_LINE_CHARS)),
                format!("+{}{DIFF_LINE_CUT}", "a".repeat(DIFF_MAX_LINE_CHARS))
            ]
        );
        assert!(shown_bytes(&d) < 1_000);
    }

    /// The trimmed diff is the whole one: same hunks, same counts, on edits at the start, the
    /// end, the middle, with and without a final line break, and of lines near each other.
    #[test]
    fn diffing_only_what_differs_gives_the_hunks_of_the_whole() {
        let base = numbered(40);
        let cases: Vec<(String, String)> = vec![
            (base.clone(), base.replace("line 1\n", "one\n")),
            (base.clone(), base.replace("line 40\n", "forty\n")),
            (base.clone(), base.replace("line 20\n", "")),
            (base.clone(), base.replace("line 20\n", "line 20\nnew\n")),
            (
                base.clone(),
                base.replace("line 3\n", "x\n").replace("line 9\n", "y\n"),
            ),
            (base.clone(), format!("{}tail", base)),
            (format!("{base}end"), format!("{base}END")),
            (base.clone(), format!("head\n{base}")),
            (base.clone(), String::new()),
            (String::new(), base.clone()),
            ("a\nb\n".to_string(), "a\nc\nb\n".to_string()),
            (
                "same\nline\n".repeat(10),
                format!("{}x\n", "same\nline\n".repeat(10)),
            ),
        ];
        for (before, after) in cases {
            let d = bounded(Some(&before), &after);
            let whole = hunks(Some(&before), &after);
            assert_eq!(d.hunks, whole, "{before:?} -> {after:?}");
            let count = |sign: char| {
                whole
                    .iter()
                    .flat_map(|h| &h.lines)
                    .filter(|l| l.starts_with(sign))
                    .count()
            };
            assert_eq!(
                (d.added, d.removed),
                (count('+'), count('-')),
                "{before:?} -> {after:?}"
            );
        }
    }

    #[test]
    fn common_ends_are_counted_to_the_byte_across_blocks() {
        let a: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        for at in [0, 1, 255, 256, 257, 511, 999] {
            let mut b = a.clone();
            b[at] ^= 1;
            assert_eq!(common_prefix(&a, &b), at);
            assert_eq!(common_suffix(&a, &b), 999 - at);
        }
        assert_eq!(common_prefix(&a, &a[..300]), 300);
        assert_eq!(common_suffix(&a, &a[700..]), 300);
        assert_eq!((common_prefix(&a, &a), common_suffix(&a, &a)), (1000, 1000));
    }

    #[test]
    fn no_basis_or_no_change_is_no_diff() {
        assert_eq!(bounded(None, "a\n"), BoundedDiff::none());
        assert_eq!(bounded(Some("a\n"), "a\n"), BoundedDiff::none());
    }

    #[test]
    fn a_missing_final_newline_leaves_no_marker_line() {
        let h = hunks(Some("a\nb"), "a\nc");
        assert_eq!(h[0].lines, [" a", "-b", "+c"]);
    }
}
