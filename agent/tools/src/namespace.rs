//! `create_directory`, `move` and `delete`: the namespace operations of a backend that claims
//! them ([`seam::Capability::Namespace`]), for a model.
//!
//! The guards come from the gate, like `write`'s and `edit`'s: under the observation policy a
//! file is deleted or moved only at the version the session last saw of it (never one it did
//! not read), and `move` replaces a destination file only at the version the session saw of
//! that one — otherwise the provider refuses and nothing changes. A directory or a link carries
//! no content of its own that could be lost unseen, so an empty directory or a link is deleted,
//! and either moved, without a guard (removal is never recursive, a link is removed and never
//! what it points to, and a move never replaces a directory). Each tool has a `dry_run` that
//! asks the gate and looks at what is there, refuses what the call would refuse, and changes
//! nothing.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ContentBlock, ToolError, ToolOutput, ToolResult};
use crate::paths::{base_of, resolve};
use crate::remedy::with_remedy;
use crate::sandbox;
use crate::tool::{PromptSection, Tool, ToolEffects};
use seam::{
    CreateDirOptions, FsError, FsObservation, FsPathKind, RemoveOptions, RenameOptions,
    ResolveOptions, Verb,
};
use serde_json::{Value, json};

/// The prompt section of the three tools.
pub const NAMESPACE_PROMPT: &str = "Use create_directory to make a directory (with its parents), move to rename or move a file or directory, and delete to remove a file or an empty directory. Read a file before you delete it or move onto it: the default fs-observation-policy refuses to take away content the session has not seen at its current version.";

fn kind_name(kind: FsPathKind) -> &'static str {
    match kind {
        FsPathKind::File => "file",
        FsPathKind::Directory => "directory",
        FsPathKind::Symlink => "symlink",
        FsPathKind::Other => "other",
    }
}

fn dry_run_field() -> Value {
    json!({
        "type": "boolean",
        "description": "Say what this call would do, refusing where it would be refused, and change nothing."
    })
}

/// What the entry at `path` is now (not following a final link), as the tool's base sees it.
async fn entry_info(exec: &Exec, path: &str) -> Result<Option<seam::FsPathInfo>, FsError> {
    let base = base_of(exec, path, true).await;
    exec.fs
        .lstat(
            path,
            ResolveOptions {
                cwd: base.as_deref(),
            },
            &exec.signal,
        )
        .await
}

/// The display path of `path` as the tool's base spells it, without looking at the storage (a
/// link that loops cannot be resolved, and need not be: it is the entry).
async fn lexical_display(exec: &Exec, path: &str, verb: Verb) -> String {
    let base = base_of(exec, path, true).await;
    let cwd = base
        .or_else(|| exec.cwd.clone())
        .unwrap_or_else(|| "/".into());
    seam::paths::display_path(path, &cwd, verb).unwrap_or_else(|_| path.to_string())
}

/// [`entry_info`]'s kind.
async fn entry_kind(exec: &Exec, path: &str) -> Result<Option<FsPathKind>, FsError> {
    Ok(entry_info(exec, path).await?.map(|i| i.kind))
}

/// `create_directory`.
#[derive(Debug)]
pub struct CreateDirectoryTool {
    schema: Value,
}

impl Default for CreateDirectoryTool {
    fn default() -> Self {
        Self::new()
    }
}

impl CreateDirectoryTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory to create, with any missing parents; an existing directory is fine."},
                    "dry_run": dry_run_field()
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for CreateDirectoryTool {
    fn name(&self) -> &'static str {
        "create_directory"
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::CREATE_DIRECTORY)
    }

    fn description(&self) -> &str {
        "Create a directory and any missing parents; succeeds if it already exists."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects {
            read_only: false,
            destructive: false,
            idempotent: true,
        }
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        Some(PromptSection {
            id: "tool:namespace",
            order: 110,
            text: NAMESPACE_PROMPT,
        })
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = args.path("path")?;
        let stamp = sandbox::stamp(exec, None, None, "create_directory", path).await?;
        if args.optional_bool(crate::dry_run::DRY_RUN)? == Some(true) {
            let target = resolve(exec, path, true).await.map_err(ToolError::fs)?;
            let text = match entry_kind(exec, path).await.map_err(ToolError::fs)? {
                Some(FsPathKind::Directory) => format!(
                    "Dry run: {} is already a directory (nothing was changed).",
                    target.display_path
                ),
                Some(_) => {
                    return Err(ToolError::fs(FsError::not_directory_in_the_way(
                        &target.display_path,
                    )));
                }
                None => format!(
                    "Dry run: create_directory would create {} (nothing was changed; the sandbox is checked when the call runs).",
                    target.display_path
                ),
            };
            return Ok(ToolOutput::with_text(
                text,
                json!({"path": target.display_path, "dry_run": true}),
            ));
        }
        let base = base_of(exec, path, true).await;
        let out = exec
            .fs
            .create_dir(
                path,
                ResolveOptions {
                    cwd: base.as_deref(),
                },
                CreateDirOptions {
                    parents: true,
                    exist_ok: true,
                },
                stamp.policy.as_ref(),
                &exec.signal,
            )
            .await
            .map_err(|e| ToolError::fs(with_remedy(stamp.map_denial(exec, e))))?;
        let display = resolve(exec, path, true)
            .await
            .map(|t| t.display_path)
            .unwrap_or_else(|_| path.to_string());
        let said = if out.created {
            "Created directory"
        } else {
            "Directory already exists"
        };
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(format!(
                "<path>{display}</path>\n<type>directory</type>\n<content>\n{said}\n</content>"
            ))],
            metadata: json!({"path": display, "created": out.created}),
        })
    }
}

/// `delete`.
#[derive(Debug)]
pub struct DeleteTool {
    schema: Value,
}

impl Default for DeleteTool {
    fn default() -> Self {
        Self::new()
    }
}

impl DeleteTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File, link or empty directory to delete (a link is deleted, not what it points to). Read a file first."},
                    "dry_run": dry_run_field()
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for DeleteTool {
    fn name(&self) -> &'static str {
        "delete"
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::DELETE)
    }

    fn description(&self) -> &str {
        "Delete a file the session has read (at its current version), a link, or an empty directory. Never recursive."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects {
            read_only: false,
            destructive: true,
            // Deleting again finds nothing more to delete.
            idempotent: true,
        }
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        None
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = args.path("path")?;
        let dry_run = args.optional_bool(crate::dry_run::DRY_RUN)? == Some(true);
        let stamp = sandbox::stamp(exec, None, None, "delete", path).await?;
        let fail = |e: FsError| ToolError::fs(with_remedy(stamp.map_denial(exec, e)));
        // Only a regular file is guarded (by what the session saw of it) and resolved: a link
        // is the entry itself — also one that loops — and a directory or another entry holds no
        // content of its own that could be lost unseen.
        let kind = entry_kind(exec, path).await.map_err(fail)?;
        let target = match kind {
            Some(FsPathKind::File) => Some(resolve(exec, path, true).await.map_err(fail)?),
            _ => None,
        };
        let display = match &target {
            Some(t) => t.display_path.clone(),
            None => lexical_display(exec, path, Verb::Remove).await,
        };
        let request = match (kind, &target) {
            (None, _) => return Err(fail(FsError::not_found(Verb::Remove, &display))),
            (Some(FsPathKind::Directory), _) => RemoveOptions {
                if_version: None,
                directory: true,
            },
            (Some(_), Some(t)) => RemoveOptions {
                if_version: exec
                    .gate
                    .remove_intent(t, Verb::Remove, exec.actor())
                    .await
                    .map_err(fail)?,
                directory: false,
            },
            (Some(_), None) => RemoveOptions::default(),
        };
        let kind = kind.unwrap_or(FsPathKind::Other);
        if dry_run {
            return Ok(ToolOutput::with_text(
                format!(
                    "Dry run: delete would remove the {} {display} (nothing was changed; the sandbox and the file's version are checked when the call runs).",
                    kind_name(kind),
                ),
                json!({"path": display, "kind": kind_name(kind), "dry_run": true}),
            ));
        }
        let base = base_of(exec, path, true).await;
        let out = exec
            .fs
            .remove(
                path,
                ResolveOptions {
                    cwd: base.as_deref(),
                },
                &request,
                stamp.policy.as_ref(),
                &exec.signal,
            )
            .await
            .map_err(fail)?;
        // A deleted file is seen absent; a link's target is untouched, so nothing is recorded.
        if let Some(t) = &target {
            exec.gate.observed(t, &FsObservation::Absent, exec.actor());
        }
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(format!(
                "<path>{display}</path>\n<type>{}</type>\n<content>\nDeleted\n</content>",
                kind_name(out.kind)
            ))],
            metadata: json!({"path": display, "kind": kind_name(out.kind)}),
        })
    }
}

/// `move`.
#[derive(Debug)]
pub struct MoveTool {
    schema: Value,
}

impl Default for MoveTool {
    fn default() -> Self {
        Self::new()
    }
}

impl MoveTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "source": {"type": "string", "description": "File, link or directory to move."},
                    "destination": {"type": "string", "description": "Where it goes; its directory must exist. An existing file there is replaced only if the session has read it at its current version."},
                    "dry_run": dry_run_field()
                },
                "required": ["source", "destination"],
                "additionalProperties": false
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for MoveTool {
    fn name(&self) -> &'static str {
        "move"
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::MOVE)
    }

    fn description(&self) -> &str {
        "Move or rename a file, link or directory atomically. A file moved must have been read at its current version; an existing destination file is replaced only if it was read too."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects {
            read_only: false,
            destructive: true,
            idempotent: false,
        }
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        None
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let from = args.path("source")?;
        let to = args.path("destination")?;
        let dry_run = args.optional_bool(crate::dry_run::DRY_RUN)? == Some(true);
        let stamp = sandbox::stamp(exec, None, None, "move", from).await?;
        let fail = |e: FsError| ToolError::fs(with_remedy(stamp.map_denial(exec, e)));
        // Only regular files are resolved and guarded: a link is the entry itself (also one
        // that loops), and a directory or another entry holds no content of its own.
        let Some(kind) = entry_kind(exec, from).await.map_err(fail)? else {
            let shown = lexical_display(exec, from, Verb::Rename).await;
            return Err(fail(FsError::not_found(Verb::Rename, &shown)));
        };
        let source = match kind {
            FsPathKind::File => Some(resolve(exec, from, true).await.map_err(fail)?),
            _ => None,
        };
        let source_display = match &source {
            Some(t) => t.display_path.clone(),
            None => lexical_display(exec, from, Verb::Rename).await,
        };
        let if_version = match &source {
            Some(t) => exec
                .gate
                .remove_intent(t, Verb::Rename, exec.actor())
                .await
                .map_err(fail)?,
            None => None,
        };
        let there = entry_info(exec, to).await.map_err(fail)?;
        let dest_display = lexical_display(exec, to, Verb::Rename).await;
        let replace = match &there {
            None => None,
            Some(i) if i.kind == FsPathKind::Directory => {
                return Err(ToolError::arguments(format!(
                    "destination \"{dest_display}\" is a directory: move does not move into it; give the whole new path (\"{dest_display}/<name>\")"
                )));
            }
            // A file is replaced only at the version the session saw of it.
            Some(i) if i.kind == FsPathKind::File => {
                let dest = resolve(exec, to, true).await.map_err(fail)?;
                exec.gate
                    .replace_intent(&dest, exec.actor())
                    .await
                    .map_err(fail)?
            }
            // A link or another entry holds no content: replaced at the version it has now.
            Some(i) => Some(i.version.clone()),
        };
        if there.is_some() && replace.is_none() {
            // Refused here as the provider would refuse it, dry run or not.
            return Err(fail(FsError::destination_exists(&dest_display)));
        }
        if dry_run {
            return Ok(ToolOutput::with_text(
                format!(
                    "Dry run: move would move the {} {} to {}{} (nothing was changed; the sandbox and the versions are checked when the call runs).",
                    kind_name(kind),
                    source_display,
                    dest_display,
                    if replace.is_some() {
                        ", replacing the file there"
                    } else {
                        ""
                    }
                ),
                json!({"source": source_display, "destination": dest_display, "kind": kind_name(kind), "dry_run": true}),
            ));
        }
        let base = base_of(exec, from, true).await;
        let out = exec
            .fs
            .rename(
                from,
                to,
                ResolveOptions {
                    cwd: base.as_deref(),
                },
                &RenameOptions {
                    if_version,
                    replace,
                },
                stamp.policy.as_ref(),
                &exec.signal,
            )
            .await
            .map_err(fail)?;
        // A moved file is seen gone from its place and present at the new one at its new
        // version; moving a link or a directory changes nothing the session saw of a file.
        if let Some(t) = &source {
            exec.gate.observed(t, &FsObservation::Absent, exec.actor());
        }
        if out.kind == FsPathKind::File
            && let Ok(landed) = resolve(exec, to, true).await
        {
            exec.gate.observed(
                &landed,
                &FsObservation::Present {
                    version: out.version.clone(),
                },
                exec.actor(),
            );
        }
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(format!(
                "<path>{}</path>\n<type>{}</type>\n<content>\nMoved from {}{}\n</content>",
                dest_display,
                kind_name(out.kind),
                source_display,
                if out.replaced {
                    " (replaced the file there)"
                } else {
                    ""
                }
            ))],
            metadata: json!({
                "source": source_display,
                "destination": dest_display,
                "kind": kind_name(out.kind),
                "replaced": out.replaced,
            }),
        })
    }
}
