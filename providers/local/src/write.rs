//! `write_text` on the disk: the guard matrix, then staging and a publication that replaces only
//! what the guard allows — so a competitor that appears between the check and the publication
//! (a file, a directory, a link) is never silently overwritten, and a version guard is checked
//! again just before the rename, so a file changed meanwhile is not either.

use crate::config::Durability;
use crate::core::Core;
use crate::errors::os;
use crate::existing::{Existing, existing};
use crate::parents::ensure_parent;
use crate::paths::split_key;
use crate::publish::checkpoint;
use crate::read::diff_basis;
use crate::root::Root;
use crate::version::probe_at;
use rustix::io::Errno;
use seam::{
    CancelPoint, FsError, FsTarget, Signal, Verb, WriteIntent, WriteOperation, WriteOutcome,
};

/// How many times an unguarded create that finds a file appeared at its name, and then gone
/// again, tries once more before it gives up (each round is lost only to another writer).
const LATE_ROUNDS: usize = 64;

impl Core {
    /// Runs under the key's lock, on the blocking pool, every path operation beneath `root`.
    pub fn write(
        &self,
        root: &Root,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        let key = target.key.as_str();
        let display = target.display_path.as_str();
        let verb = Verb::Write;
        // Held until the returned version is read: see `crate::xlock`.
        let mut held = crate::xlock::lock_target(root, key);
        let existing = match existing(root, key, verb, display)? {
            // A write never creates through a link and never replaces one.
            Existing::Link(_) => return Err(FsError::not_regular_file(verb, display)),
            Existing::Absent => None,
            Existing::File { file, probe } => Some((file, probe)),
        };

        match expected {
            Some(WriteIntent::ReplaceIfVersion { version }) => match &existing {
                None => return Err(FsError::no_longer_exists(display)),
                Some((_, probe)) if &probe.version != version => {
                    return Err(FsError::changed_since_read(verb, display));
                }
                Some(_) => {}
            },
            Some(WriteIntent::CreateIfAbsent) if existing.is_some() => {
                return Err(FsError::exists_not_observed(display));
            }
            _ => {}
        }

        let limit = self.config.diff_basis_max_bytes;
        let before = match &existing {
            Some((Some(file), probe)) if (content.len() as u64) < limit => {
                diff_basis(file, probe.size, limit)
            }
            _ => None,
        };
        let prior_mode = existing.as_ref().map(|(_, p)| p.mode & 0o7777);
        let existed = existing.is_some();
        drop(existing);

        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, verb, display, &[]))?;
        let (parent_path, name) = split_key(key);
        let (parent, mut created) = ensure_parent(root, parent_path, verb, display)?;
        let create_if_absent = matches!(expected, Some(WriteIntent::CreateIfAbsent));
        let no_replace = create_if_absent || !existed;
        // Set when a file appeared before an unguarded create published: its lock and the text
        // it replaced.
        let mut late: Option<(crate::xlock::Held, Option<String>)> = None;
        self.stage_and_publish(
            &parent,
            parent_path,
            &[content.as_bytes()],
            prior_mode,
            verb,
            display,
            signal,
            &mut held,
            |staged| {
                if !no_replace {
                    if let Some(WriteIntent::ReplaceIfVersion { version }) = expected {
                        // The guard again, at publication: someone outside this process (an
                        // editor, the world) may have changed or removed the file since the
                        // check. What is left is the window between this look and the rename,
                        // which POSIX cannot close (there is no compare-and-rename).
                        match probe_at(&parent, name, false).map_err(|e| os(e, verb, display))? {
                            None => return Err(FsError::no_longer_exists(display)),
                            Some(p) if &p.version != version => {
                                return Err(FsError::changed_since_read(verb, display));
                            }
                            Some(_) => {}
                        }
                    }
                    return staged
                        .publish_replace(name)
                        .map_err(|e| os(e, verb, display));
                }
                // Something may appear at the name after the check, and go again before we
                // look at it (another instance removing or moving it away): each round either
                // publishes, or finds what is there now and decides on that. A round is lost
                // only to another writer's publication, so the rounds are bounded.
                for _ in 0..LATE_ROUNDS {
                    match staged.publish_no_replace(name) {
                        Ok(()) => return Ok(()),
                        Err(Errno::EXIST) => {}
                        Err(e) => return Err(os(e, verb, display)),
                    }
                    let now = probe_at(&parent, name, false).map_err(|e| os(e, verb, display))?;
                    match now {
                        // Gone again already: publish as the create this is.
                        None if !create_if_absent => continue,
                        // A create-if-absent saw a file there when it published: refused.
                        None => return Err(FsError::exists_not_observed(display)),
                        Some(p) if !p.is_file() => {
                            return Err(FsError::not_regular_file(verb, display));
                        }
                        Some(_) if create_if_absent => {
                            return Err(FsError::exists_not_observed(display));
                        }
                        Some(_) => {}
                    }
                    // Someone created it meanwhile (another process, or the world: in this
                    // process the key lock keeps our own writers out). Replace it as the update
                    // it now is, under that file's lock, keeping its bits and saying what it
                    // replaced.
                    let lock = crate::xlock::lock_target(root, key);
                    let (before, mode) = match crate::existing::existing(root, key, verb, display)?
                    {
                        Existing::File {
                            file: Some(file),
                            probe,
                        } if (content.len() as u64) < limit => {
                            (diff_basis(&file, probe.size, limit), probe.mode)
                        }
                        Existing::File { probe, .. } => (None, probe.mode),
                        // Removed or moved away while we waited for its lock: a create again.
                        Existing::Absent => continue,
                        Existing::Link(_) => return Err(FsError::not_regular_file(verb, display)),
                    };
                    // A replaced file keeps its permission bits.
                    staged
                        .chmod(mode & 0o7777)
                        .map_err(|e| os(e, verb, display))?;
                    staged
                        .publish_replace(name)
                        .map_err(|e| os(e, verb, display))?;
                    late = Some((lock, before));
                    return Ok(());
                }
                Err(FsError::io(
                    verb,
                    display,
                    "the entry kept being created and removed by others while the write published",
                ))
            },
        )?;
        created.keep();
        if self.config.durability == Durability::Full {
            // The directories this write made are entries of their parents: synced before the
            // answer, and a failed sync fails it (the file is published; its path may not
            // survive a power cut — `power-loss` found the new directory and the file gone
            // after an answered write when this error was ignored).
            created.sync().map_err(|e| os(e, verb, display))?;
        }
        // The late lock (if any) is held until the version is read, like `held`.
        let (operation, before, _late_lock) = match late {
            Some((lock, replaced)) => (WriteOperation::Update, replaced, Some(lock)),
            None if existed => (WriteOperation::Update, before, None),
            None => (WriteOperation::Create, before, None),
        };
        let version = self.version_now(root, key);
        Ok(WriteOutcome {
            operation,
            version,
            before,
            after: seam::text::lf_normalize(content).into_owned(),
        })
    }
}
