//! Running permission cases as another user: the cases and their outcomes as they travel to
//! and from that user's process, and the runner a composition root provides ([`Unprivileged`]).
//! Below the properties and the suite's settings, which both name them.

use seam::FsErrorCode;
use serde::{Deserialize, Serialize};

/// The operation of a permission case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOp {
    /// `resolve`.
    Resolve,
    /// `lstat`.
    Lstat,
    /// `read_text`.
    ReadText,
    /// `stream_text`.
    StreamText,
    /// `read_bytes`.
    ReadBytes,
    /// `list_dir`.
    ListDir,
    /// `write_text` (unguarded).
    Write,
    /// `edit_text` (unguarded).
    Edit,
}

/// One case: an operation on a path relative to the root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionCase {
    /// The operation.
    pub op: PermissionOp,
    /// Path relative to the root.
    pub path: String,
}

/// What a case did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseOutcome {
    /// The error code, `None` for success.
    pub code: Option<FsErrorCode>,
    /// The error message (empty for success).
    pub message: String,
}

/// Runs cases as an unprivileged user against a provider rooted at `root`.
pub trait Unprivileged: Send + Sync {
    /// Runs `cases` and returns one outcome per case, in order.
    fn run(
        &self,
        root: &str,
        cases: &[PermissionCase],
    ) -> Result<Vec<CaseOutcome>, UnprivilegedError>;
}

/// Why cases could not be run as the unprivileged user.
#[derive(Clone, Debug, thiserror::Error)]
pub enum UnprivilegedError {
    /// The cases cannot be run as that user at all — the backend's command cannot be executed
    /// by them (an interpreter under root's home, a script only root may read), or the case is
    /// below a directory they may not pass through: a fact of this machine, not of what the
    /// backend refuses. The property is reported as not run, with this text, which gives the
    /// reason and the remedy.
    #[error("{0}")]
    CannotStart(String),
    /// Anything else went wrong running them: the property fails its setup.
    #[error("{0}")]
    Failed(String),
}
