//! Sandbox vocabulary. A fencing provider decides mutations by mode; the policy that picks the
//! mode per call lives with the harness, so the contract carries it as data.

use serde::{Deserialize, Serialize};

/// How far a fencing provider lets mutations reach. Reads are never fenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Every mutation is denied.
    ReadOnly,
    /// Mutations under the workspace root and the temp roots are allowed.
    WorkspaceWrite,
    /// Everything is allowed.
    DangerFullAccess,
}

/// The fence for one mutation: a mode and the workspace root it is relative to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// The mode for this call.
    pub mode: SandboxMode,
    /// The workspace root (a path in the provider's world).
    pub workspace_root: String,
}
