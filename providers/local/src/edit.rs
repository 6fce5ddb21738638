//! `edit_text` on the disk: the version check, the read, the literal edit
//! ([`seam::edit::literal_edit`]) and the publication under one lock, so nothing this process
//! does can slip between them; publication replaces the file by rename, keeping its mode. What
//! another process does is caught by a second look just before the rename: a guarded edit is
//! then stale, an unguarded one is made again on what is there now.

use crate::core::Core;
use crate::errors::os;
use crate::existing::{Existing, LinkState, existing};
use crate::paths::split_key;
use crate::publish::checkpoint;
use crate::read::read_all;
use crate::root::Root;
use crate::version::probe_at;
use seam::{CancelPoint, EditOutcome, EditRequest, FsError, FsTarget, FsVersion, Signal, Verb};
use std::cell::Cell;

impl Core {
    /// Runs under the key's lock, on the blocking pool, every path operation beneath `root`.
    pub fn edit(
        &self,
        root: &Root,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        let key = target.key.as_str();
        let display = target.display_path.as_str();
        let verb = Verb::Edit;
        // Held until the returned version is read: see `crate::xlock`.
        let mut held = crate::xlock::lock_target(root, key);
        let stale = || FsError::changed_since_read(verb, display);
        let mut attempt = 0;
        let edited = loop {
            attempt += 1;
            match self.edit_once(root, key, display, edit, expected, signal, &mut held)? {
                Attempt::Published(edited) => break edited,
                // Changed by someone outside this process between the read and the rename: a
                // guarded edit is stale; an unguarded one is made again on what is there now
                // (a few times, then it gives up as stale rather than spin).
                Attempt::Changed if expected.is_none() && attempt < MAX_ATTEMPTS => {}
                Attempt::Changed => return Err(stale()),
            }
        };
        let (before, after) = edited.into_before_after();
        Ok(EditOutcome {
            version: self.version_now(root, key),
            before,
            after,
        })
    }

    /// One look, match and publication; `Changed` when the file is not the one read by the
    /// time it would be replaced (checked again just before the rename: what is left is the
    /// window between that look and the rename, which POSIX cannot close).
    #[allow(clippy::too_many_arguments)]
    fn edit_once(
        &self,
        root: &Root,
        key: &str,
        display: &str,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        signal: &Signal,
        held: &mut crate::xlock::Held,
    ) -> Result<Attempt, FsError> {
        let verb = Verb::Edit;
        let stale = || FsError::changed_since_read(verb, display);
        let (file, probe) = match existing(root, key, verb, display)? {
            // An edit never creates: nothing there (or a dangling link) is a stale view.
            Existing::Absent | Existing::Link(LinkState::Dangling) => return Err(stale()),
            Existing::Link(LinkState::Live) => {
                return Err(FsError::not_regular_file(verb, display));
            }
            Existing::Link(LinkState::Looping) => {
                return Err(FsError::symlink_loop(verb, display));
            }
            Existing::File { file: None, .. } => {
                return Err(FsError::permission_denied(verb, display));
            }
            Existing::File {
                file: Some(f),
                probe,
            } => (f, probe),
        };
        if let Some(v) = expected
            && v != &probe.version
        {
            return Err(stale());
        }
        signal.check(verb)?;
        let bytes = read_all(&file, probe.size, display)?;
        drop(file);
        signal.check(verb)?;
        let edited = seam::edit::literal_edit(bytes, edit).map_err(|e| e.into_error(display))?;

        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, verb, display, &[]))?;
        let (parent_path, name) = split_key(key);
        let parent = root
            .open_dir(parent_path)
            .map_err(|e| os(e, verb, display))?;
        let changed = Cell::new(false);
        let published = self.stage_and_publish(
            &parent,
            parent_path,
            &edited.parts(),
            Some(probe.mode & 0o7777),
            verb,
            display,
            signal,
            held,
            |staged| {
                match probe_at(&parent, name, false).map_err(|e| os(e, verb, display))? {
                    Some(now) if now.version == probe.version => {}
                    _ => {
                        changed.set(true);
                        return Err(stale());
                    }
                }
                staged
                    .publish_replace(name)
                    .map_err(|e| os(e, verb, display))
            },
        );
        match published {
            Ok(()) => Ok(Attempt::Published(edited)),
            Err(_) if changed.get() => Ok(Attempt::Changed),
            Err(e) => Err(e),
        }
    }
}

/// How many times an unguarded edit is made again on a file that keeps changing under it.
const MAX_ATTEMPTS: u32 = 8;

/// What one attempt at an edit came to.
enum Attempt {
    Published(seam::edit::Edited),
    Changed,
}
