//! The `grep` tool's answers beyond the seed's: the output modes, context lines and a head
//! limit. A call that asks for none of them is answered by the seed's renderer in `grep.rs`,
//! byte for byte; one that does is answered here.
//!
//! * `content`: matches grouped by file, `Line n: <text>` for a match and `Line n- <text>` for
//!   context (as ripgrep marks them), `--` between blocks of one file that do not touch.
//! * `files_with_matches`: the files with at least one match, by path.
//! * `count`: `<file>: <n>` per file with matches, by path.
//!
//! `head_limit` keeps the first N rows, files or counts and says how many there were. Without
//! it, more than [`GREP_MAX_MATCHES`] rows are cut there and the whole answer is spilled, as the
//! seed does for matches.

use crate::args::Args;
use crate::grep_lines::{GREP_MAX_MATCHES, preview};
use crate::output::{ToolError, ToolOutput, ToolResult};
use crate::search::{SpillStore, spill};
use seam::search::GrepFound;
use serde_json::json;

/// Context lines asked for at most, each way.
pub const GREP_MAX_CONTEXT: usize = 100;

/// What a grep call shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Content,
    Files,
    Count,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Content => "content",
            Mode::Files => "files_with_matches",
            Mode::Count => "count",
        }
    }
}

/// The options of one grep call beyond its pattern, path and include.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Options {
    pub mode: Mode,
    pub case_insensitive: bool,
    pub multiline: bool,
    pub before: usize,
    pub after: usize,
    pub file_type: Option<String>,
    pub head_limit: Option<usize>,
}

impl Options {
    pub(crate) fn of(args: &Args<'_>) -> Result<Self, ToolError> {
        let mode = match args.get("output_mode") {
            None => Mode::Content,
            Some(v) => match v.as_str() {
                Some("content") => Mode::Content,
                Some("files_with_matches") => Mode::Files,
                Some("count") => Mode::Count,
                _ => {
                    return Err(ToolError::arguments(
                        "output_mode must be \"content\", \"files_with_matches\" or \"count\"",
                    ));
                }
            },
        };
        let around = args.optional_count("-C", GREP_MAX_CONTEXT)?;
        let before = args.optional_count("-B", GREP_MAX_CONTEXT)?.or(around);
        let after = args.optional_count("-A", GREP_MAX_CONTEXT)?.or(around);
        if mode != Mode::Content && (before.is_some() || after.is_some()) {
            return Err(ToolError::arguments(
                "-A, -B and -C apply to output_mode \"content\" only",
            ));
        }
        let file_type = match args.get("type") {
            None => None,
            Some(v) => match v.as_str().map(str::trim) {
                Some(t) if !t.is_empty() => Some(t.to_string()),
                _ => return Err(ToolError::arguments("type must be a non-empty string")),
            },
        };
        Ok(Self {
            mode,
            case_insensitive: args.optional_bool("-i")?.unwrap_or(false),
            multiline: args.optional_bool("multiline")?.unwrap_or(false),
            before: before.unwrap_or(0),
            after: after.unwrap_or(0),
            file_type,
            head_limit: args.optional_positive_integer("head_limit")?,
        })
    }

    /// Whether the answer is rendered here rather than by the seed's renderer.
    pub(crate) fn is_extended(&self) -> bool {
        self.mode != Mode::Content || self.before > 0 || self.after > 0 || self.head_limit.is_some()
    }
}

/// The rows of `content` mode: a file's name (after a blank row between files), then its
/// matches and context, `--` between blocks that do not touch. Only match and context rows are
/// rows for the count and the head limit (`true`).
fn content_rows(found: &GrepFound, name: &(dyn Fn(&str) -> String + Sync)) -> Vec<(String, bool)> {
    let mut rows = Vec::new();
    let mut current: Option<(&str, u64)> = None;
    for m in &found.matches {
        match current {
            Some((path, last)) if path == m.path => {
                if m.line > last + 1 {
                    rows.push(("--".to_string(), false));
                }
            }
            other => {
                if other.is_some() {
                    rows.push((String::new(), false));
                }
                rows.push((name(&m.path), false));
            }
        }
        let mark = if m.context { '-' } else { ':' };
        rows.push((
            format!("Line {}{mark} {}", m.line, preview(&m.text, m.cut)),
            true,
        ));
        current = Some((m.path.as_str(), m.line));
    }
    rows
}

/// Files with matches and how many, by path.
fn per_file(found: &GrepFound) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for m in found.matches.iter().filter(|m| !m.context) {
        match out.last_mut() {
            Some((path, n)) if *path == m.path => *n += 1,
            _ => out.push((m.path.as_str(), 1)),
        }
    }
    out
}

pub(crate) async fn render(
    options: &Options,
    found: &GrepFound,
    name: &(dyn Fn(&str) -> String + Sync),
    spill_store: Option<&dyn SpillStore>,
    root: String,
) -> ToolResult {
    let files = per_file(found);
    let matches: usize = files.iter().map(|(_, n)| n).sum();
    let at_least = if found.complete { "" } else { "at least " };
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            one.to_string()
        } else {
            many.to_string()
        }
    };
    if matches == 0 {
        return Ok(ToolOutput::with_text(
            "No matches found".to_string(),
            json!({ "root": root, "mode": options.mode.name(), "matches": 0, "files": 0, "complete": found.complete }),
        ));
    }
    let (header, rows) = match options.mode {
        Mode::Content => (
            format!(
                "Found {at_least}{matches} {} in {} {}",
                plural(matches, "match", "matches"),
                files.len(),
                plural(files.len(), "file", "files")
            ),
            content_rows(found, name),
        ),
        Mode::Files => (
            format!(
                "Found {at_least}{} {}",
                files.len(),
                plural(files.len(), "file", "files")
            ),
            files.iter().map(|(p, _)| (name(p), true)).collect(),
        ),
        Mode::Count => (
            format!(
                "Found {at_least}{matches} {} in {} {}",
                plural(matches, "match", "matches"),
                files.len(),
                plural(files.len(), "file", "files")
            ),
            files
                .iter()
                .map(|(p, n)| (format!("{}: {n}", name(p)), true))
                .collect(),
        ),
    };
    let cap = options.head_limit.unwrap_or(GREP_MAX_MATCHES);
    let counted = rows.iter().filter(|(_, counts)| *counts).count();
    // Up to the cap-th counted row (names and separators before it come along).
    let mut shown = 0;
    let mut end = 0;
    for (i, (_, counts)) in rows.iter().enumerate() {
        if *counts {
            if shown == cap {
                break;
            }
            shown += 1;
        }
        end = i + 1;
    }
    let all = |rows: &[(String, bool)]| {
        rows.iter()
            .map(|(r, _)| r.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut text = format!("{header}\n\n{}", all(&rows[..end]).trim_end());
    if shown < counted {
        let what = match options.mode {
            Mode::Content => "rows",
            Mode::Files => "files",
            Mode::Count => "counts",
        };
        let note = if options.head_limit.is_some() {
            format!(
                "showing the first {shown} of {counted} {what} (head_limit); raise it or narrow the search to see more"
            )
        } else {
            spill(
                spill_store,
                "grep-results.txt",
                format!("{header}\n\n{}", all(&rows)),
                "Full grep result stored at:",
                "The complete result could not be saved; narrow pattern, path, or include to see more.",
            )
            .await
        };
        text.push_str(&format!("\n\n({note})"));
    }
    Ok(ToolOutput::with_text(
        text,
        json!({
            "root": root,
            "mode": options.mode.name(),
            "matches": matches,
            "files": files.len(),
            "complete": found.complete,
            "shown": shown,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::search::GrepMatch;
    use serde_json::Value;

    fn m(path: &str, line: u64, text: &str, context: bool) -> GrepMatch {
        GrepMatch {
            path: path.into(),
            line,
            text: text.as_bytes().to_vec(),
            cut: false,
            context,
        }
    }

    fn options(v: Value) -> Result<Options, String> {
        Options::of(&Args::new(&v)).map_err(|e| e.message().to_string())
    }

    #[test]
    fn options_are_checked_before_any_search() {
        assert!(!options(json!({})).expect("ok").is_extended());
        assert!(
            !options(json!({"-i": true, "type": "rust", "multiline": true}))
                .expect("ok")
                .is_extended()
        );
        let o = options(json!({"-C": 2, "-A": 5})).expect("ok");
        assert_eq!((o.before, o.after), (2, 5));
        assert!(options(json!({"output_mode": "lines"})).is_err_and(|e| e.contains("output_mode")));
        assert!(
            options(json!({"output_mode": "count", "-A": 1})).is_err_and(|e| e.contains("content"))
        );
        assert!(options(json!({"-A": 101})).is_err_and(|e| e.contains("from 0 to 100")));
        assert!(options(json!({"head_limit": 0})).is_err_and(|e| e.contains("positive integer")));
        assert!(options(json!({"type": " "})).is_err_and(|e| e.contains("type")));
    }

    #[tokio::test]
    async fn every_mode_renders_by_path_with_context_and_a_head_limit() {
        let found = GrepFound {
            matches: vec![
                m("a.rs", 1, "before", true),
                m("a.rs", 2, "fn one", false),
                m("a.rs", 9, "fn two", false),
                m("b.rs", 3, "fn three", false),
            ],
            complete: true,
        };
        let name = |p: &str| format!("/w/{p}");
        let text = |o: Value| {
            let o = options(o).expect("options");
            let found = found.clone();
            async move {
                render(&o, &found, &name, None, "/w".into())
                    .await
                    .expect("rendered")
                    .text()
            }
        };
        assert_eq!(
            text(json!({"-B": 1})).await,
            "Found 3 matches in 2 files\n\n/w/a.rs\nLine 1- before\nLine 2: fn one\n--\nLine 9: fn two\n\n/w/b.rs\nLine 3: fn three"
        );
        assert_eq!(
            text(json!({"output_mode": "files_with_matches"})).await,
            "Found 2 files\n\n/w/a.rs\n/w/b.rs"
        );
        assert_eq!(
            text(json!({"output_mode": "count"})).await,
            "Found 3 matches in 2 files\n\n/w/a.rs: 2\n/w/b.rs: 1"
        );
        assert_eq!(
            text(json!({"output_mode": "files_with_matches", "head_limit": 1})).await,
            "Found 2 files\n\n/w/a.rs\n\n(showing the first 1 of 2 files (head_limit); raise it or narrow the search to see more)"
        );
    }
}
