//! Diff hunks of a mutation, for a UI to show what changed (never sent to the model).
//!
//! Line-based, with three lines of context around each change, one hunk per cluster of
//! changes, in unified-diff numbering. Computed from the provider's LF-normalised `before` and
//! `after`, so a CRLF file does not diff as "every line changed".

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

/// Lines of unchanged context around each change.
pub const DIFF_CONTEXT: usize = 3;

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
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
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

/// The hunks as a JSON array.
pub fn hunks_json(before: Option<&str>, after: &str) -> Value {
    Value::Array(hunks(before, after).iter().map(Hunk::to_json).collect())
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
    fn a_missing_final_newline_leaves_no_marker_line() {
        let h = hunks(Some("a\nb"), "a\nc");
        assert_eq!(h[0].lines, [" a", "-b", "+c"]);
    }
}
