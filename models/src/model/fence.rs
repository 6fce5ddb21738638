//! The sandbox fence of a backend that claims sandbox modes: which mode a mutation runs under,
//! whether its key lies beneath the writable root, and whether looking at the key leads out.
//!
//! The rules, in the order a fencing backend applies them (after an already-cancelled signal,
//! before anything else the mutation does):
//!
//! 1. the call's policy wins over the deployment default (`ModelConfig::fence` and
//!    `ModelConfig::fence_workspace`);
//! 2. `read-only` denies; `danger-full-access` lets the mutation through unfenced;
//! 3. `workspace-write`: the workspace's real path is the writable root — an absolute path,
//!    `..` applied to the real directory reached, as `realpath(3)` does (a relative path, or one
//!    that does not exist or is not a directory, matches nothing); a key that is not beneath it
//!    is denied;
//! 4. the mutation then looks at its key beneath the root ([`crate::beneath`]): a walk that
//!    would leave it — `..` above it, a link whose text leads out, a dangling link at the key
//!    that points out — is denied; nothing is followed out.
//!
//! Every denial is the contract's `FS_SANDBOX_DENIED` text with the mode that decided it, and
//! changes nothing. The model knows one writable root per call: a suite factory configures no
//! other writable root inside the test root (`/tmp` roots would hold it all).

use super::{Model, ModelError, Resolved, err};
use crate::beneath::mutation_leaves;
use crate::path::Key;
use crate::tree::Node;
use crate::walk::realpath;
use seam::{FsError, SandboxMode};

/// The per-call policy of one mutation, as the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallFence {
    /// The call's mode.
    pub mode: SandboxMode,
    /// The call's workspace root, spelled as a path in the provider's world.
    pub workspace: String,
}

/// Why the fence decided as it did (the suite counts rules by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceCase {
    /// The backend does not fence.
    Unfenced,
    /// `danger-full-access`.
    Anywhere,
    /// `workspace-write`, the key beneath the root and the walk staying in. `case_root` says
    /// whether the root is the test root itself.
    Beneath {
        /// The writable root is the test root.
        case_root: bool,
    },
    /// `read-only`.
    DeniedReadOnly,
    /// The workspace does not exist (or is not a directory).
    DeniedNoRoot,
    /// The key is not beneath the workspace's real path.
    DeniedOutside,
    /// The key is beneath it, but looking at it leads out (a link swapped in after
    /// resolution, a dangling link at the key that points out).
    DeniedLeaves,
}

impl FenceCase {
    /// Whether the mutation was denied.
    pub fn denied(self) -> bool {
        matches!(
            self,
            FenceCase::DeniedReadOnly
                | FenceCase::DeniedNoRoot
                | FenceCase::DeniedOutside
                | FenceCase::DeniedLeaves
        )
    }
}

/// The fence's verdict on one mutation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenceVerdict {
    /// Why.
    pub case: FenceCase,
    /// The mode that decided.
    pub mode: Option<SandboxMode>,
    /// The policy the deployment default gave (for the suite's "narrowed" and "widened" rules).
    pub default_mode: Option<SandboxMode>,
    /// The expected denial, when denied.
    pub denial: Option<ModelError>,
    /// The writable root the decision was about (its real path), when there was one: under a
    /// denial, a change anywhere else is an escape.
    pub root: Option<Key>,
}

impl Model {
    /// A workspace root's components beneath the test root, `..` kept so the walk applies it
    /// to the real directory reached (as `realpath` does); `None` for a relative path (a
    /// workspace root is absolute) or one outside the test root.
    fn workspace_components(&self, w: &str) -> Option<Vec<String>> {
        if !w.starts_with('/') {
            return None;
        }
        let root = self.config.root.trim_end_matches('/');
        let rest = if w == root {
            ""
        } else {
            w.strip_prefix(root)?.strip_prefix('/')?
        };
        Some(
            rest.split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .map(str::to_string)
                .collect(),
        )
    }

    /// The fence's verdict on a mutation of `r` under `call` (or the deployment default). A
    /// backend that does not fence (`ModelConfig::fence` is `None`) lets everything through
    /// and ignores the call's policy.
    pub fn fence(&self, r: &Resolved, call: Option<&CallFence>) -> FenceVerdict {
        let Some(default_mode) = self.config.fence else {
            return FenceVerdict {
                case: FenceCase::Unfenced,
                mode: None,
                default_mode: None,
                denial: None,
                root: None,
            };
        };
        let (mode, workspace) = match call {
            Some(c) => (c.mode, Some(c.workspace.as_str())),
            None => (default_mode, None),
        };
        let (case, root) = self.fence_case(r, mode, workspace);
        FenceVerdict {
            case,
            mode: Some(mode),
            default_mode: Some(default_mode),
            denial: case
                .denied()
                .then(|| err(FsError::sandbox_denied(&r.display, mode))),
            root: root.map(Key),
        }
    }

    fn fence_case(
        &self,
        r: &Resolved,
        mode: SandboxMode,
        workspace: Option<&str>,
    ) -> (FenceCase, Option<Vec<String>>) {
        match mode {
            SandboxMode::ReadOnly => return (FenceCase::DeniedReadOnly, None),
            SandboxMode::DangerFullAccess => return (FenceCase::Anywhere, None),
            SandboxMode::WorkspaceWrite => {}
        }
        let spelled = match workspace {
            None => self
                .config
                .fence_workspace
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .map(str::to_string)
                .collect(),
            Some(w) => match self.workspace_components(w) {
                Some(c) => c,
                None => return (FenceCase::DeniedNoRoot, None),
            },
        };
        let Ok(root) = realpath(&self.tree, &spelled) else {
            return (FenceCase::DeniedNoRoot, None);
        };
        if !matches!(self.tree.get(&root), Some(Node::Dir { .. })) {
            return (FenceCase::DeniedNoRoot, None);
        }
        let case = if !r.key.0.starts_with(&root) {
            FenceCase::DeniedOutside
        } else if mutation_leaves(&self.tree, &root, &r.key.0) {
            FenceCase::DeniedLeaves
        } else {
            FenceCase::Beneath {
                case_root: root.is_empty(),
            }
        };
        (case, Some(root))
    }
}
