//! `edit_text` on the disk: the version check, the read, the literal edit
//! ([`seam::edit::literal_edit`]) and the publication under one lock, so nothing this process
//! does can slip between them; publication replaces the file by rename, keeping its mode.

use crate::core::Core;
use crate::errors::os;
use crate::existing::{Existing, LinkState, existing};
use crate::paths::split_key;
use crate::publish::checkpoint;
use crate::read::read_all;
use crate::root::Root;
use seam::{CancelPoint, EditOutcome, EditRequest, FsError, FsTarget, FsVersion, Signal, Verb};

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
        self.stage_and_publish(
            &parent,
            parent_path,
            &edited.parts(),
            Some(probe.mode & 0o7777),
            verb,
            display,
            signal,
            &mut held,
            |staged| {
                staged
                    .publish_replace(name)
                    .map_err(|e| os(e, verb, display))
            },
        )?;
        let (before, after) = edited.into_before_after();
        Ok(EditOutcome {
            version: self.version_now(root, key),
            before,
            after,
        })
    }
}
