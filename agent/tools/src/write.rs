//! The `write` tool: create or fully replace a text file.
//!
//! The tool never stats: the gate's write-intent decides the guard (under the observation
//! policy: create-if-absent for a file the session has not seen, replace-if-version for one it
//! has), and the provider enforces it atomically. A successful write is reported to the gate as
//! observed at the new version, so the session can edit it next without re-reading.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ContentBlock, ToolError, ToolOutput, ToolResult};
use crate::paths::resolve;
use crate::remedy::with_remedy;
use crate::sandbox::{self, Approver};
use crate::tool::{PromptSection, Tool, ToolEffects};
use seam::{FsError, FsObservation, FsTarget, WriteOperation, WriteOutcome};
use serde_json::{Value, json};
use std::sync::Arc;

/// The write tool's system-prompt guidance.
pub const WRITE_PROMPT: &str = "Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default fs-observation-policy requires it) and prefer edit for targeted changes.";

/// `write`.
pub struct WriteTool {
    schema: Value,
    approver: Option<Arc<dyn Approver>>,
    dry_run: bool,
}

impl std::fmt::Debug for WriteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTool")
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

impl WriteTool {
    /// A write tool. `confining` with an `approver` adds the escalation fields to the schema
    /// (what an escalation asks); without an approver nothing is offered that could only be
    /// refused, and escalations fail closed.
    pub fn new(confining: bool, approver: Option<Arc<dyn Approver>>) -> Self {
        let mut properties = json!({
            "file_path": {
                "type": "string",
                "description": "Path to write, resolved by the filesystem backend."
            },
            "content": {
                "type": "string",
                "description": "Full UTF-8 text content to write."
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
                "required": ["file_path", "content"],
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

/// `create` / `update`.
pub(crate) fn operation_name(op: WriteOperation) -> &'static str {
    if op == WriteOperation::Create {
        "create"
    } else {
        "update"
    }
}

#[async_trait::async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &'static str {
        "write"
    }

    fn description(&self) -> &str {
        "Create or fully replace a UTF-8 text file."
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
            // The same content again leaves the same file.
            idempotent: true,
        }
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        Some(PromptSection {
            id: "tool:write",
            order: 101,
            text: WRITE_PROMPT,
        })
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = args.file_path()?;
        let content = args.string("content")?;
        if self.dry_run && args.optional_bool(crate::dry_run::DRY_RUN)? == Some(true) {
            return crate::dry_run::write(exec, path, content).await;
        }
        let escalation = sandbox::parse(&args, exec.fs.sandbox_mode().is_some())?;
        let stamp =
            sandbox::stamp(exec, escalation, self.approver.as_deref(), "write", path).await?;

        let attempt = async {
            let target = resolve(exec, path, true).await?;
            let intent = exec.gate.write_intent(&target, exec.actor()).await?;
            let outcome = exec
                .fs
                .write_text(
                    &target,
                    content,
                    intent.as_ref(),
                    stamp.policy.as_ref(),
                    &exec.signal,
                )
                .await?;
            Ok::<(FsTarget, WriteOutcome), FsError>((target, outcome))
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
        let created = outcome.operation == WriteOperation::Create;
        let text = format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n{}\n</content>",
            target.display_path,
            if created {
                "Created file"
            } else {
                "Updated file"
            }
        );
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(text)],
            metadata: crate::diff::mutation_metadata(
                &target.display_path,
                operation_name(outcome.operation),
                &outcome.version,
                outcome
                    .before
                    .as_deref()
                    .map(|before| crate::diff::bounded(Some(before), &outcome.after))
                    .as_ref(),
            ),
        })
    }
}
