//! `info`, `read_many` and `roots`: what a file is without reading it, several files in one call,
//! and where this deployment lets the model look and write.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ContentBlock, ToolError, ToolOutput, ToolResult};
use crate::paths::resolve;
use crate::read::ReadTool;
use crate::tool::{Tool, ToolEffects};
use seam::{Capability, FsKind, FsPathKind, ResolveOptions, SandboxMode};
use serde_json::{Value, json};

/// `read_many` reads at most this many files per call.
pub const READ_MANY_MAX_FILES: usize = 20;

/// `info`: kind, size, version, whether the path is a link, and the real path — from one
/// `stat` and one `lstat`, no content read. It records nothing with the gate: knowing a file's
/// version is not having read it.
#[derive(Debug)]
pub struct InfoTool {
    schema: Value,
    output: Value,
}

impl Default for InfoTool {
    fn default() -> Self {
        Self::new()
    }
}

impl InfoTool {
    /// An info tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "type": "string",
                        "description": "Path to describe, resolved by the filesystem backend."
                    }
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
            output: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "exists": {"type": "boolean"},
                    "kind": {"type": ["string", "null"], "enum": ["file", "directory", "other", null]},
                    "size": {"type": ["integer", "null"]},
                    "version": {"type": ["string", "null"]},
                    "link": {"type": "boolean"},
                    "real_path": {"type": "string"}
                },
                "required": ["path", "exists", "kind", "size", "version", "link", "real_path"]
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for InfoTool {
    fn name(&self) -> &'static str {
        "info"
    }

    fn description(&self) -> &str {
        "Describe a path without reading it: whether something is there, its kind, its size in bytes, its version token, whether the path is a symbolic link, and its real path."
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
        let path = args.file_path()?;
        let target = resolve(exec, path, false).await?;
        let info = exec.fs.stat(&target, &exec.signal).await?;
        let lstat = exec
            .fs
            .lstat(
                &target.display_path,
                ResolveOptions {
                    cwd: exec.cwd.as_deref(),
                },
                &exec.signal,
            )
            .await?;
        let link = lstat.is_some_and(|l| l.kind == FsPathKind::Symlink);
        let real = exec.fs.process_path(&target);
        let kind = info.as_ref().map(|i| match i.kind {
            FsKind::File => "file",
            FsKind::Directory => "directory",
            _ => "other",
        });
        let mut text = format!("{}\n", target.display_path);
        match &info {
            None if link => text.push_str("nothing there: a dangling symbolic link\n"),
            None => text.push_str("nothing there\n"),
            Some(i) => {
                text.push_str(&format!("kind: {}\n", kind.unwrap_or("other")));
                if let Some(size) = i.size {
                    text.push_str(&format!("size: {size} bytes\n"));
                }
                text.push_str(&format!("version: {}\n", i.version.as_str()));
                text.push_str(&format!("link: {}\n", if link { "yes" } else { "no" }));
                text.push_str(&format!("real path: {real}\n"));
            }
        }
        Ok(ToolOutput::with_text(
            text.trim_end().to_string(),
            json!({
                "path": target.display_path,
                "exists": info.is_some(),
                "kind": kind,
                "size": info.as_ref().and_then(|i| i.size),
                "version": info.as_ref().map(|i| i.version.as_str()),
                "link": link,
                "real_path": real,
            }),
        ))
    }
}

/// `read_many`: several files in one call, each read as the `read` tool reads it (the same
/// window, the same observation recorded for each), one after the other; a file that fails says
/// so in its place and the others are read all the same.
#[derive(Debug)]
pub struct ReadManyTool {
    read: ReadTool,
    schema: Value,
    output: Value,
}

impl ReadManyTool {
    /// Reads each file with `read`.
    pub fn new(read: ReadTool) -> Self {
        Self {
            read,
            schema: json!({
                "type": "object",
                "properties": {
                    "file_paths": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": format!("Paths to read (1 to {READ_MANY_MAX_FILES}), each resolved by the filesystem backend.")
                    }
                },
                "required": ["file_paths"],
                "additionalProperties": false
            }),
            output: json!({
                "type": "object",
                "properties": {
                    "files": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "file_path": {"type": "string"},
                                "ok": {"type": "boolean"},
                                "error_code": {"type": ["string", "null"]}
                            },
                            "required": ["file_path", "ok", "error_code"]
                        }
                    }
                },
                "required": ["files"]
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ReadManyTool {
    fn name(&self) -> &'static str {
        "read_many"
    }

    fn description(&self) -> &str {
        "Read several UTF-8 text files in one call, each line-numbered as read returns it, under a `==> path <==` header; a file that cannot be read shows its error in its place."
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
        let paths: Vec<&str> = match args.get("file_paths").and_then(Value::as_array) {
            Some(items) if !items.is_empty() && items.len() <= READ_MANY_MAX_FILES => items
                .iter()
                .map(|v| {
                    v.as_str().filter(|s| !s.trim().is_empty()).ok_or_else(|| {
                        ToolError::arguments("file_paths must hold non-empty strings")
                    })
                })
                .collect::<Result<_, _>>()?,
            _ => {
                return Err(ToolError::arguments(format!(
                    "file_paths must be a list of 1 to {READ_MANY_MAX_FILES} paths"
                )));
            }
        };
        let mut text = String::new();
        let mut files = Vec::new();
        for path in paths {
            exec.signal.check(seam::Verb::Read)?;
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&format!("==> {path} <==\n"));
            match self.read.execute(&json!({ "file_path": path }), exec).await {
                Ok(out) => {
                    text.push_str(&out.text());
                    files.push(json!({"file_path": path, "ok": true, "error_code": null}));
                }
                Err(e) => {
                    text.push_str(&e.render());
                    files.push(json!({
                        "file_path": path,
                        "ok": false,
                        "error_code": e.code().map(|c| c.as_str()),
                    }));
                }
            }
        }
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(text)],
            metadata: json!({ "files": files }),
        })
    }
}

/// `roots`: where this deployment lets the model look and write — its working directory, the
/// sandbox's mode and workspace, and whether reads are confined too.
#[derive(Debug)]
pub struct RootsTool {
    schema: Value,
    output: Value,
}

impl Default for RootsTool {
    fn default() -> Self {
        Self::new()
    }
}

impl RootsTool {
    /// A roots tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }),
            output: json!({
                "type": "object",
                "properties": {
                    "cwd": {"type": ["string", "null"]},
                    "mode": {"type": ["string", "null"]},
                    "writable": {"type": "array", "items": {"type": "string"}},
                    "reads_confined": {"type": "boolean"}
                },
                "required": ["cwd", "mode", "writable", "reads_confined"]
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for RootsTool {
    fn name(&self) -> &'static str {
        "roots"
    }

    fn description(&self) -> &str {
        "Where this deployment lets you work: the working directory relative paths start from, the sandbox mode, the directories that may be changed, and whether reads are confined to them too."
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

    async fn execute(&self, _args: &Value, exec: &Exec) -> ToolResult {
        let mode = exec
            .sandbox
            .as_ref()
            .map(|p| p.mode)
            .or_else(|| exec.fs.sandbox_mode());
        let workspace = exec
            .sandbox
            .as_ref()
            .map(|p| p.workspace_root.clone())
            .or_else(|| exec.cwd.clone());
        let roots: Vec<String> = if exec.roots.is_empty() {
            workspace.iter().cloned().collect()
        } else {
            exec.roots.clone()
        };
        let writable: Vec<String> = match mode {
            Some(SandboxMode::ReadOnly) => Vec::new(),
            Some(SandboxMode::WorkspaceWrite) => roots.clone(),
            Some(SandboxMode::DangerFullAccess) | None => vec!["/".to_string()],
        };
        let confined = exec.fs.capabilities().has(Capability::ReadFence)
            && mode != Some(SandboxMode::DangerFullAccess);
        let mut text = String::new();
        if let Some(cwd) = &exec.cwd {
            text.push_str(&format!("working directory: {cwd}\n"));
        }
        if let Some(m) = mode {
            text.push_str(&format!("sandbox mode: {}\n", crate::sandbox::mode_name(m)));
        }
        if writable.is_empty() {
            text.push_str("writable: nothing (read-only)\n");
        } else {
            text.push_str(&format!("writable: {}\n", writable.join(", ")));
        }
        if confined && !roots.is_empty() {
            text.push_str(&format!("readable: beneath {} only\n", roots.join(", ")));
        } else {
            text.push_str("readable: anywhere this process may read\n");
        }
        Ok(ToolOutput::with_text(
            text.trim_end().to_string(),
            json!({
                "cwd": exec.cwd,
                "mode": mode.map(crate::sandbox::mode_name),
                "writable": writable,
                "reads_confined": confined,
            }),
        ))
    }
}
