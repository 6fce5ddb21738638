//! The `glob` tool: which files match a path pattern, newest first.
//!
//! Deliberate changes from the seed (which ran `rg --files --sort=modified --no-ignore
//! --hidden`): the order is **newest first** (a model looking for "the file I just touched"
//! finds it at the top; the seed's oldest-first put it last); ignore files are **honoured** and
//! hidden files are included **only on request** (`hidden: true`) — the same policy as `grep`,
//! where the seed had two; an over-cap result shows the first page in that order rather than a
//! sample across top-level entries. VCS metadata is never listed, as in the seed.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ToolOutput, ToolResult};
use crate::search::{SpillStore, optional_path, root_of, search_error, search_of, shown, spill};
use crate::tool::{PromptSection, Tool, ToolEffects};
use seam::search::GlobQuery;
use serde_json::{Value, json};
use std::sync::Arc;

/// The glob tool's system-prompt guidance.
pub const GLOB_PROMPT: &str = "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches file names at any depth, so \"*.rs\" finds every Rust file in the tree; one with \"/\" matches the path from the search root (\"src/**/*.rs\"). Results are files only, newest first; ignored files (.gitignore, .ignore) and version-control metadata are left out, and hidden files only appear when you pass hidden: true.";

/// At most this many paths are shown; the complete list is spilled.
pub const GLOB_MAX_RESULTS: usize = 100;

/// `glob`.
pub struct GlobTool {
    schema: Value,
    spill: Option<Arc<dyn SpillStore>>,
}

impl std::fmt::Debug for GlobTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobTool")
            .field("spill", &self.spill.is_some())
            .finish_non_exhaustive()
    }
}

impl GlobTool {
    /// A glob tool; `spill` keeps the complete result of an over-cap search.
    pub fn new(spill: Option<Arc<dyn SpillStore>>) -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": "Glob: without \"/\" it matches file names at any depth (\"*.rs\"), with \"/\" the path from the search root (\"src/**/*.rs\")."
                    },
                    "path": {
                        "type": "string",
                        "description": "Directory to search (default: the working directory)."
                    },
                    "hidden": {
                        "type": "boolean",
                        "description": "Also list hidden files and directories (names starting with \".\")."
                    }
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            spill,
        }
    }
}

#[async_trait::async_trait]
impl Tool for GlobTool {
    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &str {
        "Find files by glob pattern, newest first. Ignore files inside the searched directory are honoured, version-control metadata is never listed, hidden files only with hidden: true; links inside it are not followed."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::GLOB)
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects::READ_ONLY
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        Some(PromptSection {
            id: "tool:glob",
            order: 103,
            text: GLOB_PROMPT,
        })
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let pattern = args.non_empty_string("pattern")?;
        let path = optional_path(&args)?;
        let hidden = args.optional_bool("hidden")?.unwrap_or(false);
        let search = search_of(exec, "glob")?;
        let root = root_of(exec, path).await?;
        let query = GlobQuery {
            pattern: pattern.to_string(),
            hidden,
        };
        let found = search
            .glob(&root, &query, &exec.signal)
            .await
            .map_err(|e| search_error("glob", e))?;
        let cwd = exec.cwd.as_deref();
        let paths: Vec<String> = found.iter().map(|f| shown(cwd, &root, &f.path)).collect();
        let text = if paths.is_empty() {
            "No files found".to_string()
        } else if paths.len() <= GLOB_MAX_RESULTS {
            paths.join("\n")
        } else {
            let recovery = spill(
                self.spill.as_deref(),
                "glob-results.txt",
                paths.join("\n"),
                "Full sorted result stored at:",
                "The complete result could not be saved; narrow pattern or path to see more.",
            )
            .await;
            format!(
                "{}\n\n(Showing {GLOB_MAX_RESULTS} of {} paths. {recovery})",
                paths[..GLOB_MAX_RESULTS].join("\n"),
                paths.len()
            )
        };
        Ok(ToolOutput::with_text(
            text,
            json!({ "root": shown(cwd, &root, ""), "total": paths.len() }),
        ))
    }
}
