//! The per-call sandbox policy: which mode, and which root, for this one call.
//!
//! One resolver owns both answers so that the fence (the sandbox provider's `SandboxPolicy`)
//! and the tools' relative paths (`Exec::cwd`) can never disagree about where a call is. The
//! precedence is the seed's: an approved override for this call, else the session's last mode
//! choice, else the deployment default (read-only unless configured). We add one thing: a call
//! may ask for a *narrower* mode without approval (it can only take rights away), and one that
//! asks for a wider mode without an approval is refused, never silently downgraded.

use crate::error::{WorkspaceError, WorkspaceErrorCode};
use crate::record::Workspace;
use crate::session::Session;
use seam::{SandboxMode, SandboxPolicy};

/// A mode asked for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeRequest {
    /// The mode asked for.
    pub mode: SandboxMode,
    /// Whether the user approved it (a harness's approval prompt said yes).
    pub approved: bool,
}

impl ModeRequest {
    /// A mode the user approved for this call.
    pub fn approved(mode: SandboxMode) -> Self {
        Self {
            mode,
            approved: true,
        }
    }

    /// A mode asked for without approval (the model's own request, say).
    pub fn unapproved(mode: SandboxMode) -> Self {
        Self {
            mode,
            approved: false,
        }
    }
}

/// Where a call's mode came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeSource {
    /// An approved override for this call.
    Approved,
    /// An unapproved request for a narrower mode (one for the same mode keeps the source it
    /// would have had).
    Narrowed,
    /// The session's last mode choice.
    Session,
    /// The deployment default.
    Default,
}

/// The policy of one call: what the fence takes and where relative paths start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallPolicy {
    /// The mode and root a confining provider fences the call's mutations to.
    pub policy: SandboxPolicy,
    /// The directory the call's relative paths resolve against — the same canonical
    /// directory as `policy.workspace_root`.
    pub cwd: String,
    /// Which rule chose the mode.
    pub source: ModeSource,
}

/// Resolves the policy of each call.
#[derive(Clone, Debug)]
pub struct PolicyService {
    default_mode: SandboxMode,
    fallback: Option<Workspace>,
}

impl Default for PolicyService {
    /// Read-only by default, with no workspace for calls without a session.
    fn default() -> Self {
        Self::new(SandboxMode::ReadOnly)
    }
}

impl PolicyService {
    /// A resolver whose deployment default is `default_mode`.
    pub fn new(default_mode: SandboxMode) -> Self {
        Self {
            default_mode,
            fallback: None,
        }
    }

    /// The same resolver with a configured workspace, the root of calls made without a
    /// session.
    pub fn with_fallback(mut self, workspace: Workspace) -> Self {
        self.fallback = Some(workspace);
        self
    }

    /// The deployment default mode.
    pub fn default_mode(&self) -> SandboxMode {
        self.default_mode
    }

    /// The policy of one call. The root is the session's cwd, or the configured workspace's
    /// root for a call without a session.
    ///
    /// # Errors
    ///
    /// * `WS_ESCALATION_REFUSED` — `request` asks for a wider mode than the call would
    ///   otherwise get, without approval;
    /// * `WS_NO_ROOT` — no session and no configured workspace.
    pub fn resolve(
        &self,
        session: Option<&Session>,
        request: Option<ModeRequest>,
    ) -> Result<CallPolicy, WorkspaceError> {
        let root = match (session, &self.fallback) {
            (Some(s), _) => s.cwd().to_string(),
            (None, Some(w)) => w.root.clone(),
            (None, None) => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorCode::NoRoot,
                    "a call without a session needs a configured workspace, and none is configured",
                ));
            }
        };
        let (base, base_source) = match session.and_then(Session::mode) {
            Some(mode) => (mode, ModeSource::Session),
            None => (self.default_mode, ModeSource::Default),
        };
        let (mode, source) = match request {
            None => (base, base_source),
            Some(r) if r.approved => (r.mode, ModeSource::Approved),
            Some(r) if r.mode == base => (base, base_source),
            Some(r) if rank(r.mode) < rank(base) => (r.mode, ModeSource::Narrowed),
            Some(r) => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorCode::EscalationRefused,
                    format!(
                        "escalating from \"{}\" to \"{}\" needs the user's approval, and this call has none",
                        base.as_str(),
                        r.mode.as_str()
                    ),
                ));
            }
        };
        Ok(CallPolicy {
            policy: SandboxPolicy {
                mode,
                workspace_root: root.clone(),
            },
            cwd: root,
            source,
        })
    }
}

/// Narrowest first.
fn rank(mode: SandboxMode) -> usize {
    SandboxMode::ALL
        .iter()
        .position(|m| *m == mode)
        .unwrap_or(SandboxMode::ALL.len())
}
