//! The shared tail of every mutation: sweep the directory, stage the content beside the target,
//! offer the staged checkpoint, give the staged file its mode, publish it (a rename, or a
//! no-replace publication), report the commit, fsync the directory. Anything staged is removed
//! again on failure or cancellation. After publication only the directory's fsync can fail the
//! mutation: the change is then visible but not durable, and the caller must not be told it is.

use crate::config::Durability;
use crate::core::Core;
use crate::errors::os;
use crate::root::Root;
use crate::stage::{StageSpec, Staged, stage};
use crate::xlock::Held;
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use seam::{CancelPoint, Checkpoint, FsError, FsVersion, Signal, Verb};

/// A checkpoint of `verb` on `display`.
pub(crate) fn checkpoint<'a>(
    point: CancelPoint,
    verb: Verb,
    display: &'a str,
    staging: &'a [String],
) -> Checkpoint<'a> {
    Checkpoint {
        point,
        verb,
        display_path: display,
        staging,
    }
}

/// fsyncs a directory when durability asks for it.
pub(crate) fn sync_dir<Fd: AsFd>(fd: Fd, durability: Durability) -> Result<(), Errno> {
    if durability == Durability::Full {
        rustix::fs::fsync(fd)?;
    }
    Ok(())
}

impl Core {
    fn spec<'a>(&'a self, verb: Verb, display: &'a str) -> StageSpec<'a> {
        StageSpec {
            nonce: &self.config.nonce,
            durability: self.config.durability,
            staging: self.config.staging,
            tmpfile_ok: &self.tmpfile_ok,
            verb,
            display,
        }
    }

    /// The version of what is at `key` now (the one a mutation returns).
    pub fn version_now(&self, root: &Root, key: &str) -> FsVersion {
        match root.probe(key, true) {
            Ok(Some(p)) => p.version,
            _ => FsVersion::new(format!("missing:{key}")),
        }
    }

    /// Stages `parent`, offers the staged checkpoint, sets `mode`, locks the staged file into
    /// `held` (so the next writer elsewhere waits for this mutation's returned version),
    /// publishes with `publish`, reports the commit and syncs the directory.
    #[allow(clippy::too_many_arguments)]
    pub fn stage_and_publish(
        &self,
        parent: &OwnedFd,
        parent_path: &str,
        parts: &[&[u8]],
        mode: Option<u32>,
        verb: Verb,
        display: &str,
        signal: &Signal,
        held: &mut Held,
        publish: impl FnOnce(&mut Staged<'_>) -> Result<(), FsError>,
    ) -> Result<(), FsError> {
        let parent_fd = parent.as_fd();
        self.sweeper.sweep(
            parent_fd,
            parent_path,
            &self.config.clock,
            self.config.sweep_grace,
        );
        let mut staged = stage(parent_fd, parts, &self.spec(verb, display))?;
        let paths = staged.paths(parent_path);
        signal.checkpoint(&checkpoint(CancelPoint::Staged, verb, display, &paths))?;
        if let Some(mode) = mode {
            staged.chmod(mode).map_err(|e| os(e, verb, display))?;
            // Staged as 0600 and synced so: synced again with the mode it is published with,
            // or a power cut could leave the new content under the staging's bits (the
            // `power-loss` property compares modes after a cut).
            if self.config.durability != Durability::None {
                staged.sync().map_err(|e| os(e, verb, display))?;
            }
        }
        if let Some(fd) = staged.lock() {
            held.keep(fd);
        }
        publish(&mut staged)?;
        signal.committed(&checkpoint(CancelPoint::Committed, verb, display, &[]));
        // Committed: a cancel no longer undoes it. A failed directory fsync still fails the
        // call — the file is published but its name may not survive a power cut, and an
        // answer of success would promise that it does (the `power-loss` property cut the
        // power on that fsync and found the answered write gone).
        sync_dir(parent, self.config.durability).map_err(|e| os(e, verb, display))?;
        Ok(())
    }
}
