//! The remote provider's test world: what `seam check` needs to gate a backend over the wire
//! protocol — a [`RemoteFactory`] (the shipped `seam serve`, a server someone else started, or
//! an `exec:` adapter in any language), the client side of the protocol's test control
//! (`world/*`: a case's storage changed and read back through the server), and the killable
//! cases of the `crash` property (a process per case, killed and followed by a fresh one).
//!
//! It depends on the suite and on the remote provider; the provider never depends on it, so
//! the client users ship is the one the gate checks (ARCHITECTURE.md, rule 5).

mod factory;
mod world_client;

pub use factory::{RemoteFactory, wait_listening};
pub use world_client::{
    RemoteWorld, killable_at, on_this_disk, recover_at, reopened_exec, serve_stdio_command,
};

use seam_conformance::case_dirs::CaseDir;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A case directory given to an adapter as its `TMPDIR`.
struct AdapterTemp(CaseDir);

impl seam_remote::children::TempDir for AdapterTemp {
    fn path(&self) -> &Path {
        self.0.path()
    }
}

/// From now on every adapter started for an `exec:` address gets a `TMPDIR` of its own in the
/// run directory (`adapter-…`), removed once the adapter is reaped — and with the run directory
/// by an interrupted command — so what an adapter leaves in it (its storage, when `crash`
/// killed it; the probe file of a tempfile library, when it was stopped as it started) is not
/// left in the user's TMPDIR. It is `0711`, as the run directory: the permission property's
/// unprivileged child must pass through it to reach a case the adapter made there.
pub fn give_adapters_temp_dirs() {
    seam_remote::children::give_temp_dirs(|| {
        let dir = CaseDir::new("adapter-")?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711))?;
        let dir: Box<dyn seam_remote::children::TempDir> = Box::new(AdapterTemp(dir));
        Ok(dir)
    });
}
