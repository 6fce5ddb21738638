//! Sandbox vocabulary. A fencing provider decides mutations by mode; the policy that picks the
//! mode per call lives with the harness, so the contract carries it as data.
//!
//! The rules a fencing provider follows (and claims with [`crate::Capability::SandboxModes`]):
//! `read-only` denies every mutation; `workspace-write` allows a mutation only when its target
//! (after following links) lies beneath the workspace root or a temp root; `danger-full-access`
//! allows everything. A denial is [`crate::FsError::sandbox_denied`] and changes nothing. Reads
//! are never fenced. The per-call [`SandboxPolicy`] wins over the provider's default mode.

use serde::{Deserialize, Serialize};

/// How far a fencing provider lets mutations reach. Reads are never fenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Every mutation is denied.
    ReadOnly,
    /// Mutations under the workspace root and the temp roots are allowed.
    WorkspaceWrite,
    /// Everything is allowed.
    DangerFullAccess,
}

impl SandboxMode {
    /// Every mode, narrowest first.
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess,
    ];

    /// The mode's name as it appears in messages and on the command line (`read-only`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// Parses a name given by [`SandboxMode::as_str`].
    pub fn from_name(name: &str) -> Option<SandboxMode> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }
}

/// The fence for one mutation: a mode and the workspace root it is relative to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SandboxPolicy {
    /// The mode for this call.
    pub mode: SandboxMode,
    /// The workspace root: an absolute path in the provider's world, taken by its real path
    /// (links followed, `..` applied to the real directory reached, as `realpath(3)` does). A
    /// relative path, or one that does not exist, matches nothing.
    pub workspace_root: String,
}
