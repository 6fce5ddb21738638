//! A session: an agent's immutable cwd inside a workspace, and the mode the user last chose.

use crate::record::Workspace;
use seam::SandboxMode;
use std::sync::Mutex;

/// One agent session, made by [`crate::Registry::session`] (so its cwd is a real, canonical
/// directory inside `workspace`).
#[derive(Debug)]
pub struct Session {
    cwd: String,
    workspace: Workspace,
    mode: Mutex<Option<SandboxMode>>,
}

impl Session {
    pub(crate) fn new(cwd: String, workspace: Workspace) -> Self {
        Self {
            cwd,
            workspace,
            mode: Mutex::new(None),
        }
    }

    /// The canonical cwd: relative paths resolve against it and, under workspace-write, it is
    /// the root mutations are fenced to. It never changes.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The registered workspace the cwd lies in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The mode the user last chose for this session, if any.
    pub fn mode(&self) -> Option<SandboxMode> {
        *self
            .mode
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the user's choice of mode (`None` returns to the deployment default). This is
    /// the user speaking, not the model: it needs no approval, and it applies to every later
    /// call of the session that asks for nothing else.
    pub fn set_mode(&self, mode: Option<SandboxMode>) {
        *self
            .mode
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = mode;
    }
}
