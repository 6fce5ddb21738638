//! What a backend claims to support. The conformance suite tests every claim, in both
//! directions, and reports an unclaimed feature as "not claimed", never as passed.

use serde::{Deserialize, Serialize};

/// A backend's claims.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Symbolic links exist in this world and resolve as on POSIX.
    pub symlinks: bool,
    /// POSIX permission bits are kept (new files 0600, existing bits preserved) and enforced.
    pub permissions: bool,
    /// `read_bytes` is supported.
    pub read_bytes: bool,
    /// Mutations offer the named [`crate::CancelPoint`]s to a [`crate::Signal`] probe.
    pub cancel_points: bool,
    /// Checkpoints report the staging entries that exist at that moment.
    pub staging_probe: bool,
    /// The provider fences mutations by [`crate::SandboxMode`].
    pub sandbox_modes: bool,
}
