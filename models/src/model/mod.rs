//! The model's operations: what every call of the contract must return, and how the world
//! changes. One file per job: path resolution and metadata (`resolve`), reads and listings
//! (`read`), writes (`write`), edits (`edit_op`), the sandbox fence (`fence`).
//!
//! Every operation comes in two shapes: on a path (resolve, then the operation) and on a
//! [`Resolved`] target obtained earlier — the contract says a target stays usable after the world
//! changed under it, and the operation sees whatever is at its key *now*.

mod edit_op;
mod fence;
mod namespace;
mod read;
mod resolve;
mod write;

use crate::path::{Key, display};
use crate::tree::{Node, SnapEntry, Tree};
use crate::world::{WorldEffect, WorldOp};
use seam::{CancelPoint, FsError, FsErrorCode, FsKind, FsPathKind, WriteOperation};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use edit_op::EditOutcomeModel;
pub use fence::{CallFence, FenceCase, FenceVerdict};
pub use namespace::{CreateDirResult, EntryAt, RenameResult};

/// How the model is set up for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    /// The display path of the test root in the provider's world (no trailing slash).
    pub root: String,
    /// The provider's exclusive byte limit on each side of an overwrite's diff basis.
    pub diff_basis_max_bytes: u64,
    /// The deployment's default sandbox mode, for a backend that fences; `None` for one that
    /// does not.
    pub fence: Option<seam::SandboxMode>,
    /// The deployment's default workspace, relative to the test root (empty: the test root);
    /// no other writable root lies inside the test root.
    pub fence_workspace: String,
}

impl ModelConfig {
    /// A configuration with the seed's default diff-basis limit, unfenced.
    pub fn new(root: impl Into<String>) -> Self {
        Self {
            root: root.into(),
            diff_basis_max_bytes: crate::text::DIFF_BASIS_DEFAULT,
            fence: None,
            fence_workspace: String::new(),
        }
    }
}

/// An expected failure: a code and the contract's message text (built with the contract's
/// constructors, [`seam::FsError`]'s `messages`, so a provider and the model cannot drift).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelError {
    /// The expected code.
    pub code: FsErrorCode,
    /// The expected message.
    pub message: String,
}

impl From<FsError> for ModelError {
    fn from(e: FsError) -> Self {
        Self {
            code: e.code(),
            message: e.message().to_string(),
        }
    }
}

/// A model version. Files, links and other objects get a fresh number on every change;
/// directories carry their identity and two counters (see the crate docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Version {
    /// A file, symlink or other object at this change number.
    Object {
        /// The change number.
        n: u64,
    },
    /// A directory.
    Dir {
        /// Which directory (a new one gets a new id).
        id: u64,
        /// Last change of its set of entries: a different value means the token must differ.
        entries: u64,
        /// Last mutation that may have touched it: the same value means the token must not
        /// differ.
        touch: u64,
    },
}

/// Shown in the words of failure messages (`change #2`, `directory #0 as of change #5`), since a
/// model version appears wherever an expected outcome is printed (replays, traces).
impl std::fmt::Debug for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Version::Object { n } => write!(f, "change #{n}"),
            Version::Dir { id, entries, .. } => {
                write!(f, "directory #{id} as of change #{entries}")
            }
        }
    }
}

/// A resolved target.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Resolved {
    /// The lexical display path.
    pub display: String,
    /// The identity.
    pub key: Key,
}

/// Expected `stat` metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// Version.
    pub version: Version,
    /// Kind after following links.
    pub kind: FsKind,
    /// Size of a regular file.
    pub size: Option<u64>,
}

/// Expected `lstat` metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// Version of the entry itself.
    pub version: Version,
    /// Kind without following the final link.
    pub kind: FsPathKind,
    /// Size of a file, or length of a link's text.
    pub size: Option<u64>,
}

/// One expected listing entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Name.
    pub name: String,
    /// Kind after following links; a broken link is `Other`.
    pub kind: FsKind,
    /// Display path of the child.
    pub display: String,
    /// Identity of the child.
    pub key: Key,
    /// Version, absent for a broken link.
    pub version: Option<Version>,
    /// Size of a regular file.
    pub size: Option<u64>,
}

/// A write's guard, with model versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Create only if nothing is there.
    CreateIfAbsent,
    /// Replace only at this version.
    ReplaceIfVersion(Version),
}

/// What happens to a mutation while it runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Interference {
    /// Nothing.
    #[default]
    None,
    /// Cancelled when it reaches this point.
    Cancel(CancelPoint),
    /// Something appears at the target after the guard check (at `BeforeStage`).
    Competitor(crate::world::Competitor),
    /// The file at the target is changed by someone else at this point (`BeforeStage` or
    /// `Staged`) of a version-guarded write or an edit, after its check and before its
    /// publication. Publication checks again: a guarded mutation fails `FS_STALE_VERSION`, an
    /// unguarded edit is made again on what is there now; the change is kept.
    Change(seam::CancelPoint, crate::world::Change),
}

/// An expected successful write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteResult {
    /// Create or update.
    pub operation: WriteOperation,
    /// The new version.
    pub version: Version,
    /// LF-normalised prior text, when the basis is available.
    pub before: Option<String>,
    /// LF-normalised content.
    pub after: String,
}

/// An expected mutation outcome, with the competitor (if one applied) to play at `BeforeStage`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutationResult<T> {
    /// Success or the expected failure.
    pub outcome: Result<T, ModelError>,
    /// The change a competitor makes, when it applies.
    pub competitor: Option<WorldEffect>,
}

/// The reference model.
#[derive(Clone, Debug)]
pub struct Model {
    config: ModelConfig,
    tree: Tree,
}

pub(crate) fn version_of(node: &Node) -> Version {
    match node {
        Node::File { version, .. } | Node::Symlink { version, .. } | Node::Other { version } => {
            Version::Object { n: *version }
        }
        Node::Dir {
            id,
            entries_v,
            touch_v,
            ..
        } => Version::Dir {
            id: *id,
            entries: *entries_v,
            touch: *touch_v,
        },
    }
}

pub(crate) fn kind_of(node: &Node) -> FsKind {
    match node {
        Node::File { .. } => FsKind::File,
        Node::Dir { .. } => FsKind::Directory,
        _ => FsKind::Other,
    }
}

pub(crate) fn size_of(node: &Node) -> Option<u64> {
    match node {
        Node::File { bytes, .. } => Some(bytes.len() as u64),
        _ => None,
    }
}

fn err(e: FsError) -> ModelError {
    ModelError::from(e)
}

impl Model {
    /// An empty world under `config.root`.
    pub fn new(config: ModelConfig) -> Self {
        Self {
            config,
            tree: Tree::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    fn display(&self, comps: &[String]) -> String {
        display(&self.config.root, comps)
    }

    /// The display path of a key.
    pub fn key_display(&self, key: &Key) -> String {
        self.display(&key.0)
    }

    /// The text a link stored with `target` has in the provider's world: a root-relative target
    /// (`/d/a`) spells the root's display path, as any absolute link to a path under the root
    /// must; a relative one is stored as given.
    pub fn link_text(&self, target: &str) -> String {
        match target.strip_prefix('/') {
            Some("") => self.config.root.clone(),
            Some(rest) => format!("{}/{rest}", self.config.root),
            None => target.to_string(),
        }
    }

    /// Applies a change behind the provider's back, if its rules allow; returns what to do.
    pub fn world(&mut self, op: &WorldOp) -> Option<WorldEffect> {
        let effect = self.tree.apply_world(op)?;
        Some(self.world_text(effect))
    }

    /// An effect with its link text as the world stores it.
    fn world_text(&self, effect: WorldEffect) -> WorldEffect {
        match effect {
            WorldEffect::Symlink { path, target } => WorldEffect::Symlink {
                path,
                target: self.link_text(&target),
            },
            other => other,
        }
    }

    /// How many versions this model has handed out. Every change of the tree hands one out, so
    /// a model whose count has not moved has not changed since: what a generator drew from it
    /// still holds. (Two copies of one model that went different ways may have handed out as
    /// many: the count tells a model from its own past, not from another model.)
    pub fn minted(&self) -> u64 {
        self.tree.minted()
    }

    /// Every entry under the root, by relative path, without a copy of any file's content:
    /// each file's size and first `head` bytes (what a generator aims with).
    pub fn outline(&self, head: usize) -> BTreeMap<String, crate::tree::Outline> {
        self.tree.outline(head)
    }

    /// Every entry under the root, by relative path, as the world must hold it now (link texts
    /// as the world stores them).
    pub fn snapshot(&self) -> BTreeMap<String, SnapEntry> {
        let mut snap = self.tree.snapshot();
        for entry in snap.values_mut() {
            if let SnapEntry::Symlink { target } = entry {
                *target = self.link_text(target);
            }
        }
        snap
    }

    /// What a key names now, without following a final link (for the suite's rule checks).
    pub fn entry_at(&self, key: &Key) -> Option<SnapEntry> {
        crate::walk::lstat(&self.tree, &key.0)
            .ok()
            .flatten()
            .map(|n| self.snap_of(n))
    }

    /// What a key leads to now, following every link; `None` when absent or looping.
    pub fn followed_entry(&self, key: &Key) -> Option<SnapEntry> {
        crate::walk::stat_follow(&self.tree, &key.0)
            .ok()
            .flatten()
            .map(|n| self.snap_of(n))
    }

    /// The real path of what a key leads to now, following every link.
    pub fn real_key(&self, key: &Key) -> Option<Key> {
        crate::walk::realpath(&self.tree, &key.0).ok().map(Key)
    }

    fn snap_of(&self, n: &Node) -> SnapEntry {
        match n {
            Node::File { bytes, mode, .. } => SnapEntry::File {
                bytes: bytes.clone(),
                mode: Some(*mode),
            },
            Node::Dir { mode, .. } => SnapEntry::Dir { mode: *mode },
            Node::Symlink { target, .. } => SnapEntry::Symlink {
                target: self.link_text(target),
            },
            Node::Other { .. } => SnapEntry::Other,
        }
    }
}
