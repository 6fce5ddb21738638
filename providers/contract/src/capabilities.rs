//! What a backend claims to support beyond the core contract.
//!
//! The core (resolve, stat, lstat, read_text, stream_text, list_dir, write_text, edit_text,
//! process_path, file_url, contains, entry cancellation, the error codes) is not optional. The
//! claims below are. The conformance suite tests every claim in both directions: a claimed
//! feature must behave as specified, and an unclaimed one must not be offered half-way (an
//! unclaimed `read_bytes` must fail with a code, an unclaimed cancel point must never be shown to
//! a probe). What is not claimed is reported as "not claimed", never as passed.
//!
//! The struct is `#[non_exhaustive]` so that adding a claim does not break a backend: build it
//! with [`Capabilities::none`] and [`Capabilities::with`].
//!
//! ```
//! use seam::{Capabilities, Capability};
//! let caps = Capabilities::none()
//!     .with(Capability::Symlinks)
//!     .with(Capability::ReadBytes);
//! assert!(caps.has(Capability::Symlinks));
//! assert!(!caps.permissions);
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

/// One optional feature a backend may claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Capability {
    /// Symbolic links exist in this world and resolve as on POSIX: written through, never
    /// replaced, dangling ones refused.
    Symlinks,
    /// POSIX permission bits are enforced for this user: what the OS refuses (EACCES/EPERM)
    /// is `FS_PERMISSION_DENIED`, naming the path, changing nothing. Keeping the bits is
    /// [`Capability::Modes`], a claim of its own.
    Permissions,
    /// POSIX permission bits are stored and kept: a new file is 0600, a replaced or edited file
    /// keeps its bits, and a change of them by anyone (chmod) is a new version. A store with no
    /// users can keep modes without enforcing them.
    Modes,
    /// [`crate::FileSystem::read_bytes`] is supported.
    ReadBytes,
    /// Mutations show the named [`crate::CancelPoint`]s to a [`crate::Signal`] probe, and
    /// cancel there when asked.
    CancelPoints,
    /// Checkpoints report the staging entries that exist at that moment (absolute paths in the
    /// provider's world), so they can be inspected from outside.
    StagingProbe,
    /// The provider fences mutations by [`crate::SandboxMode`] and reports its default mode from
    /// [`crate::FileSystem::sandbox_mode`].
    SandboxModes,
    /// Several provider instances over one storage (other processes, other connections, other
    /// hosts) are linearizable together: a guard checked by one instance holds against a
    /// publication by another, so two agents that share a tree but not a provider object still
    /// cannot both win a compare-and-swap. Without it, the guarantees hold within one instance
    /// only.
    SharedStorage,
    /// The provider's fence covers reads too: under its deployment's `read-only` and
    /// `workspace-write` modes, `stat`, `lstat`, `read_text`, `stream_text`, `read_bytes`,
    /// `list_dir` and search see only what lies beneath the deployment's roots (the workspace
    /// and its temp roots), decided on the object reached by a walk that cannot leave them — no
    /// `..`, link, sibling whose name extends a root's, or directory swapped for a link takes a
    /// read outside. A read that would is [`crate::FsError::read_denied`]
    /// (`FS_SANDBOX_DENIED`) and returns nothing of the outside. A `danger-full-access`
    /// deployment reads anywhere and does not claim the fence. `resolve` is not a read: it
    /// names a path, it does not open it. Only with
    /// [`Capability::SandboxModes`]: reads have no per-call policy, so the fence that applies
    /// is the deployment's own.
    ReadFence,
    /// [`crate::FileSystem::create_dir`], [`crate::FileSystem::remove`] and
    /// [`crate::FileSystem::rename`] are supported, with their guards, atomically. Without it
    /// they fail `FS_IO_ERROR` ([`crate::FsError::not_supported`]) and change nothing.
    Namespace,
    /// A mutation that answered survives a power cut: before it answers, the file's data and
    /// the directory entries it changed are synced (`fsync` of the staged file before it is
    /// published, of the directory after). After a cut the next instance finds every answered
    /// write, edit, removal, rename and new directory whole, every file its old or its new
    /// content, and nothing of a publication cut half-way that the next writer cannot sweep.
    /// The `power-loss` property cuts the power under a backend whose storage the gate can put
    /// in a directory and checks this. Without the claim it still runs, and reports what was
    /// lost as what the backend does not promise, not as a failure.
    Durable,
}

impl Capability {
    /// Every capability, in declaration order.
    pub const ALL: [Capability; 11] = [
        Capability::Symlinks,
        Capability::Permissions,
        Capability::Modes,
        Capability::ReadBytes,
        Capability::CancelPoints,
        Capability::StagingProbe,
        Capability::SandboxModes,
        Capability::SharedStorage,
        Capability::ReadFence,
        Capability::Namespace,
        Capability::Durable,
    ];

    /// A stable snake_case name (`cancel_points`).
    pub fn name(self) -> &'static str {
        match self {
            Capability::Symlinks => "symlinks",
            Capability::Permissions => "permissions",
            Capability::Modes => "modes",
            Capability::ReadBytes => "read_bytes",
            Capability::CancelPoints => "cancel_points",
            Capability::StagingProbe => "staging_probe",
            Capability::SandboxModes => "sandbox_modes",
            Capability::SharedStorage => "shared_storage",
            Capability::ReadFence => "read_fence",
            Capability::Namespace => "namespace",
            Capability::Durable => "durable",
        }
    }

    /// Parses a name given by [`Capability::name`].
    pub fn from_name(name: &str) -> Option<Capability> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend's claims. Read the fields; build it with [`Capabilities::none`] and
/// [`Capabilities::with`] (the struct is `#[non_exhaustive]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Capabilities {
    /// See [`Capability::Symlinks`].
    pub symlinks: bool,
    /// See [`Capability::Permissions`].
    pub permissions: bool,
    /// See [`Capability::Modes`].
    #[serde(default)]
    pub modes: bool,
    /// See [`Capability::ReadBytes`].
    pub read_bytes: bool,
    /// See [`Capability::CancelPoints`].
    pub cancel_points: bool,
    /// See [`Capability::StagingProbe`].
    pub staging_probe: bool,
    /// See [`Capability::SandboxModes`].
    pub sandbox_modes: bool,
    /// See [`Capability::SharedStorage`].
    pub shared_storage: bool,
    /// See [`Capability::ReadFence`].
    #[serde(default)]
    pub read_fence: bool,
    /// See [`Capability::Namespace`].
    #[serde(default)]
    pub namespace: bool,
    /// See [`Capability::Durable`].
    #[serde(default)]
    pub durable: bool,
}

impl Capabilities {
    /// No claims: the core contract only.
    pub const fn none() -> Self {
        Self {
            symlinks: false,
            permissions: false,
            modes: false,
            read_bytes: false,
            cancel_points: false,
            staging_probe: false,
            sandbox_modes: false,
            shared_storage: false,
            read_fence: false,
            namespace: false,
            durable: false,
        }
    }

    /// The same claims plus `capability`.
    #[must_use]
    pub fn with(mut self, capability: Capability) -> Self {
        *self.slot(capability) = true;
        self
    }

    /// The same claims without `capability`.
    #[must_use]
    pub fn without(mut self, capability: Capability) -> Self {
        *self.slot(capability) = false;
        self
    }

    /// Whether `capability` is claimed.
    pub fn has(&self, capability: Capability) -> bool {
        let mut copy = *self;
        *copy.slot(capability)
    }

    /// The claimed capabilities, in declaration order.
    pub fn claimed(&self) -> Vec<Capability> {
        Capability::ALL
            .into_iter()
            .filter(|c| self.has(*c))
            .collect()
    }

    fn slot(&mut self, capability: Capability) -> &mut bool {
        match capability {
            Capability::Symlinks => &mut self.symlinks,
            Capability::Permissions => &mut self.permissions,
            Capability::Modes => &mut self.modes,
            Capability::ReadBytes => &mut self.read_bytes,
            Capability::CancelPoints => &mut self.cancel_points,
            Capability::StagingProbe => &mut self.staging_probe,
            Capability::SandboxModes => &mut self.sandbox_modes,
            Capability::SharedStorage => &mut self.shared_storage,
            Capability::ReadFence => &mut self.read_fence,
            Capability::Namespace => &mut self.namespace,
            Capability::Durable => &mut self.durable,
        }
    }
}

impl FromIterator<Capability> for Capabilities {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Self {
        iter.into_iter()
            .fold(Capabilities::none(), Capabilities::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_built_and_read_one_by_one() {
        for c in Capability::ALL {
            let caps = Capabilities::none().with(c);
            assert_eq!(caps.claimed(), vec![c]);
            assert!(caps.has(c));
            assert_eq!(caps.without(c), Capabilities::none());
            assert_eq!(Capability::from_name(c.name()), Some(c));
        }
        let all: Capabilities = Capability::ALL.into_iter().collect();
        assert_eq!(all.claimed().len(), Capability::ALL.len());
        assert_eq!(Capabilities::default(), Capabilities::none());
    }
}
