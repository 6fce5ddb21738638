//! `list` and `tree`: what a directory holds, with kinds and sizes — one level, or a tree to a
//! depth with excludes. Both read only the listings the contract gives (`list_dir`: names,
//! kinds, sizes, no content), never follow a link into another directory (a link is shown,
//! marked, not entered), and record nothing with the gate: a listing authorises no write.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ToolError, ToolOutput, ToolResult};
use crate::search::{optional_path, root_of};
use crate::tool::{Tool, ToolEffects};
use seam::{FsDirEntry, FsKind, FsTarget};
use serde_json::{Value, json};

/// `tree` goes at most this deep.
pub const TREE_MAX_DEPTH: usize = 10;

/// `tree` shows at most this many entries.
pub const TREE_MAX_ENTRIES: usize = 2_000;

fn kind_name(kind: FsKind) -> &'static str {
    match kind {
        FsKind::File => "file",
        FsKind::Directory => "directory",
        _ => "other",
    }
}

/// Whether an entry is a link (or another name for something elsewhere): its key is not its
/// directory's key plus its name, or it is a name whose target cannot be seen.
fn is_link(parent: &FsTarget, entry: &FsDirEntry) -> bool {
    let base = parent.key.as_str().trim_end_matches('/');
    withheld(entry) || entry.target.key.as_str() != format!("{base}/{}", entry.name)
}

/// Whether an entry is a link whose target is not shown: the contract lists a link that leads
/// nowhere — dangling, looping, or out of the sandbox's reach — as `other` with no version
/// (everything that exists has one), and a listing says it is a link and withholds the rest.
fn withheld(entry: &FsDirEntry) -> bool {
    entry.kind == FsKind::Other && entry.version.is_none()
}

/// One entry as a row: `name/` for a directory, `name  <size> bytes` for a file, a link marked.
fn row(parent: &FsTarget, e: &FsDirEntry) -> String {
    if withheld(e) {
        return format!("{} (link)  (target not shown)", e.name);
    }
    let link = if is_link(parent, e) { " (link)" } else { "" };
    match (e.kind, e.size) {
        (FsKind::Directory, _) => format!("{}/{link}", e.name),
        (FsKind::File, Some(size)) => format!("{}{link}  {size} bytes", e.name),
        _ => format!("{}{link}  ({})", e.name, kind_name(e.kind)),
    }
}

fn entry_json(parent: &FsTarget, e: &FsDirEntry) -> Value {
    json!({
        "name": e.name,
        "kind": kind_name(e.kind),
        "size": e.size,
        "link": is_link(parent, e),
    })
}

/// `list`.
#[derive(Debug)]
pub struct ListTool {
    schema: Value,
    output: Value,
}

impl Default for ListTool {
    fn default() -> Self {
        Self::new()
    }
}

impl ListTool {
    /// A list tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory to list (default: the working directory)."
                    }
                },
                "additionalProperties": false
            }),
            output: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "entries": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "kind": {"type": "string", "enum": ["file", "directory", "other"]},
                                "size": {"type": ["integer", "null"]},
                                "link": {"type": "boolean"}
                            },
                            "required": ["name", "kind", "size", "link"]
                        }
                    }
                },
                "required": ["path", "entries"]
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ListTool {
    fn name(&self) -> &'static str {
        "list"
    }

    fn description(&self) -> &str {
        "List a directory: each entry with its kind and, for files, its size in bytes, in byte order of the names. Links are marked and not followed."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output)
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects::READ_ONLY
    }

    fn prompt_section(&self) -> Option<crate::tool::PromptSection> {
        None
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = optional_path(&args)?;
        let dir = root_of(exec, path).await?;
        let entries = exec.fs.list_dir(&dir, &exec.signal).await?;
        let mut text = format!(
            "{} ({} {})",
            dir.display_path,
            entries.len(),
            if entries.len() == 1 {
                "entry"
            } else {
                "entries"
            }
        );
        for e in &entries {
            text.push('\n');
            text.push_str(&row(&dir, e));
        }
        Ok(ToolOutput::with_text(
            text,
            json!({
                "path": dir.display_path,
                "entries": entries.iter().map(|e| entry_json(&dir, e)).collect::<Vec<_>>(),
            }),
        ))
    }
}

/// `tree`.
#[derive(Debug)]
pub struct TreeTool {
    schema: Value,
    output: Value,
}

impl Default for TreeTool {
    fn default() -> Self {
        Self::new()
    }
}

impl TreeTool {
    /// A tree tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory at the top (default: the working directory)."
                    },
                    "depth": {
                        "type": "integer",
                        "description": format!("Levels to descend, 1 to {TREE_MAX_DEPTH} (default 3).")
                    },
                    "exclude": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Names to leave out, with their contents: exact names or simple globs (\"*.log\", \"node_modules\", \"build*\")."
                    }
                },
                "additionalProperties": false
            }),
            output: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "entries": {"type": "integer"},
                    "truncated": {"type": "boolean"},
                    "tree": {"type": "array", "items": {"type": "object"}}
                },
                "required": ["path", "entries", "truncated", "tree"]
            }),
        }
    }
}

/// A simple glob on one name: `*` any run, `?` one character, anything else itself.
pub(crate) fn name_matches(glob: &str, name: &str) -> bool {
    fn go(g: &[char], n: &[char]) -> bool {
        match (g.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&g[1..], n) || (!n.is_empty() && go(g, &n[1..])),
            (Some('?'), Some(_)) => go(&g[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&g[1..], &n[1..]),
            _ => false,
        }
    }
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    go(&g, &n)
}

struct Walk<'a> {
    exec: &'a Exec,
    exclude: Vec<String>,
    depth: usize,
    lines: Vec<String>,
    count: usize,
    truncated: bool,
}

impl Walk<'_> {
    /// The entries of `dir` at `level` (1 for its children), as JSON, rows appended to `lines`.
    async fn dir(&mut self, dir: &FsTarget, level: usize) -> Result<Vec<Value>, ToolError> {
        let entries = self.exec.fs.list_dir(dir, &self.exec.signal).await?;
        let mut out = Vec::new();
        for e in entries {
            if self.exclude.iter().any(|g| name_matches(g, &e.name)) {
                continue;
            }
            if self.count == TREE_MAX_ENTRIES {
                self.truncated = true;
                break;
            }
            self.count += 1;
            self.lines
                .push(format!("{}{}", "  ".repeat(level - 1), row(dir, &e)));
            let mut node = entry_json(dir, &e);
            if e.kind == FsKind::Directory && !is_link(dir, &e) && level < self.depth {
                let children = Box::pin(self.dir(&e.target, level + 1)).await?;
                node["children"] = Value::Array(children);
            }
            out.push(node);
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Tool for TreeTool {
    fn name(&self) -> &'static str {
        "tree"
    }

    fn description(&self) -> &str {
        "Show a directory tree to a depth: each entry with its kind and, for files, its size, indented by level. Links are marked and not entered; excluded names are left out with their contents."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output)
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects::READ_ONLY
    }

    fn prompt_section(&self) -> Option<crate::tool::PromptSection> {
        None
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = optional_path(&args)?;
        let depth = match args.optional_positive_integer("depth")? {
            Some(d) if d > TREE_MAX_DEPTH => {
                return Err(ToolError::arguments(format!(
                    "depth must be from 1 to {TREE_MAX_DEPTH}"
                )));
            }
            Some(d) => d,
            None => 3,
        };
        let exclude = match args.get("exclude") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v.as_str() {
                    Some(s) if !s.is_empty() => Ok(s.to_string()),
                    _ => Err(ToolError::arguments(
                        "exclude must be a list of non-empty names or globs",
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(ToolError::arguments(
                    "exclude must be a list of non-empty names or globs",
                ));
            }
        };
        let top = root_of(exec, path).await?;
        let mut walk = Walk {
            exec,
            exclude,
            depth,
            lines: Vec::new(),
            count: 0,
            truncated: false,
        };
        let tree = walk.dir(&top, 1).await?;
        let mut text = format!("{}/", top.display_path.trim_end_matches('/'));
        for line in &walk.lines {
            text.push('\n');
            text.push_str(line);
        }
        if walk.truncated {
            text.push_str(&format!(
                "\n\n(the first {TREE_MAX_ENTRIES} entries; list a subdirectory, lower depth or exclude names to see the rest)"
            ));
        }
        Ok(ToolOutput::with_text(
            text,
            json!({
                "path": top.display_path,
                "entries": walk.count,
                "truncated": walk.truncated,
                "tree": tree,
            }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn simple_globs_match_whole_names() {
        assert!(name_matches("node_modules", "node_modules"));
        assert!(name_matches("*.log", "a.log"));
        assert!(!name_matches("*.log", "a.log.1"));
        assert!(name_matches("build*", "build-out"));
        assert!(name_matches("?.rs", "a.rs"));
        assert!(!name_matches("?.rs", "ab.rs"));
        assert!(name_matches("*", ""));
        assert!(!name_matches("a", "ab"));
    }
}
