//! What a tool is to a harness: a name, a description and a JSON schema for the model, a
//! section of the system prompt, and `execute`.

use crate::exec::Exec;
use crate::output::ToolResult;
use serde_json::Value;

/// Guidance for the model about one tool, placed in the system prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PromptSection {
    /// A stable id, `tool:<name>`.
    pub id: &'static str,
    /// Sort key among sections (the seed's: read 100, write 101, edit 102).
    pub order: u32,
    /// The text.
    pub text: &'static str,
}

/// What a call can do to the world, for a harness to show its user or to decide on
/// confirmation (MCP's tool annotations carry exactly these). Facts about the tool, not
/// guarantees a client should trust from an unknown server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolEffects {
    /// It never changes the filesystem (it may still record what the session has seen).
    pub read_only: bool,
    /// It can replace or remove existing content (only meaningful when not read-only).
    pub destructive: bool,
    /// Calling it again with the same arguments changes nothing more (only meaningful when not
    /// read-only).
    pub idempotent: bool,
}

impl ToolEffects {
    /// A tool that only looks.
    pub const READ_ONLY: ToolEffects = ToolEffects {
        read_only: true,
        destructive: false,
        idempotent: true,
    };
}

/// A model-facing tool.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &'static str;

    /// What it does, for the model.
    fn description(&self) -> &str;

    /// The JSON schema of its arguments.
    fn schema(&self) -> &Value;

    /// The JSON schema of a successful call's [`crate::ToolOutput::metadata`], which a client
    /// may then read as structured content (MCP's `outputSchema` and `structuredContent`).
    /// `None`: the metadata has no promised shape.
    fn output_schema(&self) -> Option<&Value> {
        None
    }

    /// Whether calls may run concurrently with other calls (reads) or must run alone
    /// (mutations).
    fn parallel_safe(&self) -> bool;

    /// What a call can do to the world.
    fn effects(&self) -> ToolEffects;

    /// Its section of the system prompt, if it has one.
    fn prompt_section(&self) -> Option<PromptSection>;

    /// Runs one call.
    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult;
}
