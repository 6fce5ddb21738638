//! The `grep` tool: which lines match a regular expression, grouped by file.
//!
//! As in the seed: `Found N matches`, groups by file with `Line n: <text>` rows, previews cut at
//! 2,000 bytes on a UTF-8 boundary, a line that is not UTF-8 shown as such, a trailing `\r\n`
//! stripped, at most 250 matches shown with the complete result spilled. Deliberate changes:
//! the order is by path, then line (the seed's was ripgrep's thread order, different run to
//! run), and hidden files are searched only on request — the same ignore policy as `glob`.
//!
//! Beyond the seed, what agents expect of a grep (Claude Code's has each): `output_mode`
//! (`content`, the default; `files_with_matches`; `count`), context lines (`-A`, `-B`, `-C`:
//! `Line n- <text>` rows, `--` between blocks that do not touch), `-i`, `multiline`, a file
//! `type` (ripgrep's names) and `head_limit` (the first N rows, files or counts). Rendering is
//! in [`crate::grep_output`]; how a line is shown, and how many, in [`crate::grep_lines`].

use crate::args::Args;
use crate::exec::Exec;
use crate::grep_lines::{GREP_MAX_LINE_BYTES, GREP_MAX_MATCHES, preview};
use crate::output::{ToolError, ToolOutput, ToolResult};
use crate::search::{SpillStore, optional_path, root_of, search_error, search_of, shown, spill};
use crate::tool::{PromptSection, Tool, ToolEffects};
use seam::search::{GrepMatch, GrepQuery};
use serde_json::{Value, json};
use std::sync::Arc;

/// The grep tool's system-prompt guidance.
pub const GREP_PROMPT: &str = "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need surrounding context.";

/// The search stops after this many matches (the spill says so).
pub const GREP_SEARCH_LIMIT: usize = 100_000;

/// `grep`.
pub struct GrepTool {
    schema: Value,
    spill: Option<Arc<dyn SpillStore>>,
}

impl std::fmt::Debug for GrepTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrepTool")
            .field("spill", &self.spill.is_some())
            .finish_non_exhaustive()
    }
}

impl GrepTool {
    /// A grep tool; `spill` keeps the complete result of an over-cap search.
    pub fn new(spill: Option<Arc<dyn SpillStore>>) -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": "Regular expression (Rust regex syntax), matched per line."
                    },
                    "path": {
                        "type": "string",
                        "description": "File or directory to search (default: the working directory)."
                    },
                    "include": {
                        "type": "string",
                        "description": "Only files matching this glob (\"*.rs\", \"src/**/*.{ts,tsx}\")."
                    },
                    "hidden": {
                        "type": "boolean",
                        "description": "Also search hidden files and directories (names starting with \".\")."
                    },
                    "output_mode": {
                        "type": "string",
                        "enum": ["content", "files_with_matches", "count"],
                        "description": "content (default): matching lines grouped by file; files_with_matches: the files only; count: matches per file."
                    },
                    "-i": {
                        "type": "boolean",
                        "description": "Case-insensitive."
                    },
                    "-A": {
                        "type": "integer",
                        "description": "Lines of context after each match (content mode)."
                    },
                    "-B": {
                        "type": "integer",
                        "description": "Lines of context before each match (content mode)."
                    },
                    "-C": {
                        "type": "integer",
                        "description": "Lines of context before and after each match (content mode)."
                    },
                    "multiline": {
                        "type": "boolean",
                        "description": "Let the pattern match across lines (. then matches a newline)."
                    },
                    "type": {
                        "type": "string",
                        "description": "Only files of this type, by ripgrep's names (rust, py, js, ts, go, java, md, ...)."
                    },
                    "head_limit": {
                        "type": "integer",
                        "description": "Show only the first N rows (content), files or counts."
                    }
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            spill,
        }
    }
}

/// `include`, when given: one positive glob.
fn include_of<'a>(args: &Args<'a>) -> Result<Option<&'a str>, ToolError> {
    let Some(v) = args.get("include") else {
        return Ok(None);
    };
    let Some(glob) = v.as_str().filter(|s| !s.trim().is_empty()) else {
        return Err(ToolError::arguments(
            "include must be a non-empty glob when given",
        ));
    };
    if glob.starts_with('!') {
        return Err(ToolError::arguments(
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
        ));
    }
    let mut depth = 0usize;
    for c in glob.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                return Err(ToolError::arguments(
                    "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
                ));
            }
            _ => {}
        }
    }
    Ok(Some(glob))
}

/// Matches grouped by file in order: `<path>` then `Line n: <preview>` rows, groups separated
/// by a blank line.
fn groups(matches: &[GrepMatch], name: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut current: Option<&str> = None;
    for m in matches {
        if current != Some(m.path.as_str()) {
            if current.is_some() {
                out.push_str("\n\n");
            }
            out.push_str(&name(&m.path));
            current = Some(m.path.as_str());
        }
        out.push_str(&format!("\nLine {}: {}", m.line, preview(&m.text, m.cut)));
    }
    out
}

#[async_trait::async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &'static str {
        "grep"
    }

    fn description(&self) -> &str {
        "Search file contents with a regular expression; matches grouped by file, by path then line. Ignore files inside the searched directory are honoured, version-control metadata and binary files are skipped, hidden files only with hidden: true (a file named as path is searched as given); links inside it are not followed."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::GREP)
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects::READ_ONLY
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        Some(PromptSection {
            id: "tool:grep",
            order: 104,
            text: GREP_PROMPT,
        })
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        // Whitespace is a legal regular expression; only the empty pattern is refused.
        let pattern = match args.get("pattern").and_then(Value::as_str) {
            Some(p) if !p.is_empty() => p,
            _ => return Err(ToolError::arguments("pattern must be a non-empty string")),
        };
        let path = optional_path(&args)?;
        let include = include_of(&args)?;
        let hidden = args.optional_bool("hidden")?.unwrap_or(false);
        let options = crate::grep_output::Options::of(&args)?;
        let search = search_of(exec, "grep")?;
        let root = root_of(exec, path).await?;
        let query = GrepQuery {
            include: include.map(str::to_string),
            hidden,
            limit: GREP_SEARCH_LIMIT,
            max_line_bytes: GREP_MAX_LINE_BYTES,
            case_insensitive: options.case_insensitive,
            multiline: options.multiline,
            context_before: options.before,
            context_after: options.after,
            types: options.file_type.iter().cloned().collect(),
            ..GrepQuery::new(pattern)
        };
        let found = search
            .grep(&root, &query, &exec.signal)
            .await
            .map_err(|e| search_error("grep", e))?;
        let cwd = exec.cwd.as_deref();
        let name = |rel: &str| shown(cwd, &root, rel);
        if options.is_extended() {
            return crate::grep_output::render(
                &options,
                &found,
                &name,
                self.spill.as_deref(),
                shown(cwd, &root, ""),
            )
            .await;
        }
        let seen = found.matches.len();
        let seen_text = if found.complete {
            seen.to_string()
        } else {
            format!("at least {seen}")
        };
        let text = if seen == 0 {
            "No matches found".to_string()
        } else if seen <= GREP_MAX_MATCHES && found.complete {
            format!(
                "Found {seen} {}\n\n{}",
                if seen == 1 { "match" } else { "matches" },
                groups(&found.matches, name)
            )
        } else {
            let kept = seen.min(GREP_MAX_MATCHES);
            let recovery = spill(
                self.spill.as_deref(),
                "grep-results.txt",
                groups(&found.matches, name),
                "Full grep result stored at:",
                "The complete result could not be saved; narrow pattern, path, or include to see more.",
            )
            .await;
            format!(
                "Found {kept} of {seen_text} matches\n\n{}\n\n({recovery})",
                groups(&found.matches[..kept], name)
            )
        };
        Ok(ToolOutput::with_text(
            text,
            json!({ "root": shown(cwd, &root, ""), "matches": seen, "complete": found.complete }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_is_one_positive_glob() {
        let check = |v: Value| {
            include_of(&Args::new(&v))
                .map(|g| g.map(str::to_string))
                .map_err(|e| e.message().to_string())
        };
        assert_eq!(
            check(json!({"include": "*.{rs,ts}"})),
            Ok(Some("*.{rs,ts}".to_string()))
        );
        assert_eq!(check(json!({})), Ok(None));
        assert!(check(json!({"include": " "})).is_err_and(|m| m.contains("non-empty glob")));
        assert!(check(json!({"include": "!*.rs"})).is_err_and(|m| m.contains("positive glob")));
        assert!(check(json!({"include": "*.rs,*.ts"})).is_err_and(|m| m.contains("comma")));
    }
}
