//! The agent side, as the suite sees it: the model-facing tools and the read-before-write policy
//! behind them, over a provider, with numbered sessions (owners). The composition builds it from
//! the real tools and policy (`seam check` does); the suite never names them — it only drives
//! `read`, `write` and `edit` as a model would and checks the outcomes against the reference
//! model's observation gate ([`seam_model::Observations`]) and the bytes on disk.

use seam::{FileSystem, FsErrorCode};
use std::sync::Arc;

/// A failed tool call: its code and what the tool said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentError {
    /// The `FS_*` code the tool kept.
    pub code: FsErrorCode,
    /// The tool's text (with its remedy, if any); not compared, only shown.
    pub message: String,
}

/// The tools and the policy over one provider. Owners are small numbers; an agent creates the
/// session of an owner the first time it is used, and sessions never share what they observed.
#[async_trait::async_trait]
pub trait Agent: Send + Sync {
    /// The `read` tool: `file_path`, and an optional window (`offset`, `limit`, 1-based lines).
    async fn read(
        &self,
        owner: u8,
        path: &str,
        window: Option<(u64, u64)>,
    ) -> Result<(), AgentError>;

    /// The `write` tool.
    async fn write(&self, owner: u8, path: &str, content: &str) -> Result<(), AgentError>;

    /// The `edit` tool.
    async fn edit(
        &self,
        owner: u8,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<(), AgentError>;
}

/// Makes an agent over a provider, fresh for one case.
pub trait AgentFactory: Send + Sync {
    /// What it is, for reports.
    fn name(&self) -> String;

    /// Tools and a fresh policy over `fs`, relative paths resolved against `cwd`.
    fn agent(&self, fs: Arc<dyn FileSystem>, cwd: &str) -> Box<dyn Agent>;
}
