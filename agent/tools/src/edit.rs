//! The `edit` tool: replace literal text in an existing file.
//!
//! The gate's edit-intent runs inside the same error path as the edit itself, so a refusal
//! ("read it first") gets the same remedy text as a provider failure. The provider checks the
//! version before matching, matches literally on the LF-normalised text and changes only the
//! matched bytes. A successful edit is reported as observed at the new version.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ContentBlock, ToolError, ToolOutput, ToolResult};
use crate::paths::resolve;
use crate::remedy::with_remedy;
use crate::sandbox::{self, Approver};
use crate::tool::{PromptSection, Tool, ToolEffects};
use seam::{EditOutcome, EditRequest, FsError, FsObservation, FsTarget};
use serde_json::{Value, json};
use std::sync::Arc;

/// The edit tool's system-prompt guidance.
pub const EDIT_PROMPT: &str = "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a more specific old_string or set replace_all to true. Read the file first (the default fs-observation-policy requires it), unless you just created or edited it in this session.";

/// `edit`.
pub struct EditTool {
    schema: Value,
    approver: Option<Arc<dyn Approver>>,
    dry_run: bool,
}

impl std::fmt::Debug for EditTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditTool")
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl EditTool {
    /// An edit tool. `confining` with an `approver` adds the escalation fields to the schema
    /// (what an escalation asks); without an approver nothing is offered that could only be
    /// refused, and escalations fail closed.
    pub fn new(confining: bool, approver: Option<Arc<dyn Approver>>) -> Self {
        let mut properties = json!({
            "file_path": {
                "type": "string",
                "description": "Path to edit, resolved by the filesystem backend."
            },
            "old_string": {
                "type": "string",
                "description": "Literal text to replace. Must match exactly."
            },
            "new_string": {
                "type": "string",
                "description": "Literal replacement text. Use an empty string to delete the match."
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace all matches. Defaults to false; when false, old_string must appear exactly once."
            }
        });
        if confining
            && approver.is_some()
            && let Some(map) = properties.as_object_mut()
        {
            for (name, field) in sandbox::schema_fields() {
                map.insert(name.to_string(), field);
            }
        }
        Self {
            schema: json!({
                "type": "object",
                "properties": properties,
                "required": ["file_path", "old_string", "new_string"],
                "additionalProperties": false
            }),
            approver,
            dry_run: false,
        }
    }

    /// The same tool with a `dry_run` argument (the diff of what the call would change; nothing
    /// changed).
    pub fn with_dry_run(mut self, offered: bool) -> Self {
        self.dry_run = offered;
        if offered && let Some(properties) = self.schema["properties"].as_object_mut() {
            properties.insert(
                crate::dry_run::DRY_RUN.to_string(),
                crate::dry_run::schema_field(),
            );
        }
        self
    }
}

#[async_trait::async_trait]
impl Tool for EditTool {
    fn name(&self) -> &'static str {
        "edit"
    }

    fn description(&self) -> &str {
        "Edit an existing UTF-8 text file by replacing literal text."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::MUTATION)
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects {
            read_only: false,
            destructive: true,
            // A replacement whose new text contains the old one applies again.
            idempotent: false,
        }
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        Some(PromptSection {
            id: "tool:edit",
            order: 102,
            text: EDIT_PROMPT,
        })
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = args.file_path()?;
        let old_string = match args.get("old_string").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s,
            _ => {
                return Err(ToolError::arguments(
                    "old_string must be a non-empty string",
                ));
            }
        };
        let new_string = args.string("new_string")?;
        // Compared as given, before any line-ending normalisation (as in the seed).
        if old_string == new_string {
            return Err(ToolError::arguments(
                "old_string and new_string must differ",
            ));
        }
        let replace_all = args.optional_bool("replace_all")?.unwrap_or(false);
        let request = EditRequest {
            old_string: old_string.to_string(),
            new_string: new_string.to_string(),
            replace_all,
        };
        if self.dry_run && args.optional_bool(crate::dry_run::DRY_RUN)? == Some(true) {
            return crate::dry_run::edit(exec, path, &request).await;
        }
        let escalation = sandbox::parse(&args, exec.fs.sandbox_mode().is_some())?;
        let stamp =
            sandbox::stamp(exec, escalation, self.approver.as_deref(), "edit", path).await?;

        let attempt = async {
            let target = resolve(exec, path, true).await?;
            let expected = exec.gate.edit_intent(&target, exec.actor()).await?;
            let outcome = exec
                .fs
                .edit_text(
                    &target,
                    &request,
                    expected.as_ref(),
                    stamp.policy.as_ref(),
                    &exec.signal,
                )
                .await?;
            Ok::<(FsTarget, EditOutcome), FsError>((target, outcome))
        };
        let (target, outcome) = attempt
            .await
            .map_err(|e| ToolError::fs(with_remedy(stamp.map_denial(exec, e))))?;

        exec.gate.observed(
            &target,
            &FsObservation::Present {
                version: outcome.version.clone(),
            },
            exec.actor(),
        );
        let display = &target.display_path;
        let text = if replace_all {
            format!(
                "The file {display} has been updated. All occurrences were successfully replaced."
            )
        } else {
            format!("The file {display} has been updated successfully.")
        };
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(text)],
            metadata: crate::diff::mutation_metadata(
                display,
                "update",
                &outcome.version,
                Some(&crate::diff::bounded(Some(&outcome.before), &outcome.after)),
            ),
        })
    }
}
