//! The namespace operations on the disk: `create_dir`, guarded `remove`, atomic guarded
//! `rename`.
//!
//! Each works on an entry: the real path of its parent (links on the way followed) plus its
//! final name (a final link is the entry). The parent is opened as a directory handle beneath
//! the provider's root, and every change is one syscall on that handle with a single-component
//! name — `mkdirat`, `unlinkat`, `renameat2` — so nothing can redirect it after the check. The
//! guard holds the way a write's does: the in-process key lock (taken by the caller) and an
//! `flock` on the regular file being removed, moved or replaced ([`crate::xlock`]), which every
//! other writer in any process takes before its own check. A rename that may not replace
//! publishes with `RENAME_NOREPLACE`, so a destination that appears after the check is never
//! lost. With full durability the directories that changed are fsynced after the change, the
//! crash-consistency order: the entry is moved, then the move is made durable.

use crate::beneath::Confinement;
use crate::core::Core;
use crate::errors::os;
use crate::paths::{key_of, split_key};
use crate::publish::{checkpoint, sync_dir};
use crate::root::Root;
use crate::version::{Probe, probe_at, probe_fd};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use seam::{
    CancelPoint, CreateDirOptions, FsError, FsErrorCode, FsPathKind, FsVersion, RemoveOptions,
    RenameOptions, Signal, Verb,
};
use std::sync::Arc;

/// An entry a namespace operation works on: its display path, the real path of its parent and
/// its name.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub display: String,
    pub parent: String,
    pub name: String,
    /// A regular file is on the way to the parent.
    pub through_file: bool,
}

impl Entry {
    /// The entry's key: the parent's real path and the name.
    pub fn key(&self) -> String {
        if self.parent == "/" {
            format!("/{}", self.name)
        } else {
            format!("{}/{}", self.parent, self.name)
        }
    }
}

/// The entry `display` names (the root refused: it is nobody's entry). The parent's key is the
/// real path of what exists of it plus the missing rest, as for any key.
pub(crate) fn entry_of(display: &str, verb: Verb) -> Result<Entry, FsError> {
    let (parent, name) = split_key(display);
    if name.is_empty() {
        return Err(FsError::io(
            verb,
            display,
            "the root of the tree is not an entry",
        ));
    }
    // A file on the way leaves the parent as spelled: opening it then says what the operation
    // makes of that (nothing to remove, no place to put something), and a fence judges it by
    // the spelling of its roots.
    let (parent, through_file) = match key_of(parent) {
        Ok(k) => (k, false),
        Err(e) if e.code() == FsErrorCode::NotFound => (parent.to_string(), true),
        Err(e) if e.message().ends_with(seam::LOOP_DETAIL) => {
            return Err(FsError::symlink_loop(verb, display));
        }
        Err(e) => return Err(e),
    };
    Ok(Entry {
        display: display.to_string(),
        parent,
        name: name.to_string(),
        through_file,
    })
}

/// The key of the directory that holds the entry `display` names — what a fence decides a
/// namespace operation on (see [`seam::FileSystem::remove`]).
pub fn entry_parent(display: &str, verb: Verb) -> Result<String, FsError> {
    entry_of(display, verb).map(|e| e.parent)
}

/// The key of the entry `display` names, its final component not followed: the parent's real
/// path and the name (the root's own real path for the root) — what a fence decides a read of
/// the entry itself (`lstat`) on, and what a confined walk follows.
pub fn entry_key(display: &str, verb: Verb) -> Result<String, FsError> {
    if split_key(display).1.is_empty() {
        return key_of(display);
    }
    entry_of(display, verb).map(|e| e.key())
}

/// Whether the directory `name` in `parent` holds any entry. A directory that cannot be opened
/// or read (no read permission, gone meanwhile) counts as empty here: the removal itself then
/// says what is true, as `rmdir` needs no read permission.
fn has_entries(parent: &OwnedFd, name: &str) -> bool {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(parent, name, flags, Mode::empty()) else {
        return false;
    };
    let Ok(mut dir) = rustix::fs::Dir::read_from(&fd) else {
        return false;
    };
    dir.any(|entry| entry.is_ok_and(|e| !matches!(e.file_name().to_bytes(), b"." | b"..")))
}

fn path_kind(p: &Probe) -> FsPathKind {
    p.path_kind()
}

impl Core {
    /// The parent directory of an entry, opened: `Ok(None)` when it is missing or not a
    /// directory.
    fn open_parent(&self, root: &Root, e: &Entry, verb: Verb) -> Result<Option<OwnedFd>, FsError> {
        match root.open_dir(&e.parent) {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
            Err(err) => Err(os(err, verb, &e.display)),
        }
    }

    /// `create_dir`, under the entry's key lock.
    pub fn create_dir(
        &self,
        root: &Root,
        e: &Entry,
        request: CreateDirOptions,
        signal: &Signal,
    ) -> Result<(bool, FsVersion), FsError> {
        let verb = Verb::Mkdir;
        let d = e.display.as_str();
        let not_dir = || FsError::parent_not_directory(verb, d);
        // The parent: there and a directory, or made with `parents` beneath the deepest
        // ancestor that exists (looked at upward, so a confined root never looks above itself).
        if e.through_file {
            return Err(not_dir());
        }
        let mut missing: Vec<String> = Vec::new();
        let mut at = e.parent.clone();
        loop {
            match root.probe(&at, false).map_err(|err| os(err, verb, d))? {
                Some(p) if p.kind == FileType::Directory => break,
                Some(_) => return Err(not_dir()),
                None if at == "/" => return Err(not_dir()),
                None => {
                    let up = split_key(&at).0.to_string();
                    missing.push(std::mem::replace(&mut at, up));
                }
            }
        }
        if !missing.is_empty() && !request.parents {
            return Err(FsError::parent_missing(verb, d));
        }
        // Everything checked: the last moment a cancel leaves nothing made.
        let before = || signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, verb, d, &[]));
        if !missing.is_empty() {
            before()?;
        }
        for dir in missing.iter().rev() {
            let (up, name) = split_key(dir);
            let holder = root.open_dir(up).map_err(|err| os(err, verb, d))?;
            match rustix::fs::mkdirat(&holder, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(err) => return Err(os(err, verb, d)),
            }
            sync_dir(&holder, self.config.durability).map_err(|err| os(err, verb, d))?;
        }
        let parent = self
            .open_parent(root, e, verb)?
            .ok_or_else(|| FsError::parent_missing(verb, d))?;
        let existing = || probe_at(&parent, e.name.as_str(), false).map_err(|err| os(err, verb, d));
        if let Some(p) = existing()? {
            return match p.kind {
                FileType::Directory if request.exist_ok => Ok((false, p.version)),
                FileType::Directory => Err(FsError::directory_exists(d)),
                _ => Err(FsError::not_directory_in_the_way(d)),
            };
        }
        if missing.is_empty() {
            before()?;
        }
        match rustix::fs::mkdirat(&parent, e.name.as_str(), Mode::from_raw_mode(0o777)) {
            Ok(()) => {}
            // Someone made it between the look and the call: say what is there now.
            Err(Errno::EXIST) => {
                return match existing()? {
                    Some(p) if p.kind == FileType::Directory && request.exist_ok => {
                        Ok((false, p.version))
                    }
                    Some(p) if p.kind == FileType::Directory => Err(FsError::directory_exists(d)),
                    _ => Err(FsError::not_directory_in_the_way(d)),
                };
            }
            Err(Errno::NOENT) => return Err(FsError::parent_missing(verb, d)),
            Err(err) => return Err(os(err, verb, d)),
        }
        sync_dir(&parent, self.config.durability).map_err(|err| os(err, verb, d))?;
        let version = existing()?
            .map(|p| p.version)
            .unwrap_or_else(|| FsVersion::new(format!("missing:{}", e.key())));
        signal.committed(&checkpoint(CancelPoint::Committed, verb, d, &[]));
        Ok((true, version))
    }

    /// `remove`, under the entry's key lock.
    pub fn remove(
        &self,
        root: &Root,
        e: &Entry,
        request: &RemoveOptions,
        signal: &Signal,
    ) -> Result<FsPathKind, FsError> {
        let verb = Verb::Remove;
        let d = e.display.as_str();
        // Nothing there: not found — or stale, for a caller who saw something at a version.
        let absent = || match request.if_version {
            Some(_) => FsError::changed_since_read(verb, d),
            None => FsError::not_found(verb, d),
        };
        let Some(parent) = self.open_parent(root, e, verb)? else {
            return Err(absent());
        };
        let look = || probe_at(&parent, e.name.as_str(), false).map_err(|err| os(err, verb, d));
        // A regular file is locked across processes before it is checked (`crate::xlock`).
        let _held = match look()? {
            Some(p) if p.is_file() => crate::xlock::lock_target(root, &e.key()),
            _ => crate::xlock::Held::default(),
        };
        let Some(now) = look()? else {
            return Err(absent());
        };
        if let Some(v) = &request.if_version
            && *v != now.version
        {
            return Err(FsError::changed_since_read(verb, d));
        }
        let flags = if now.kind == FileType::Directory {
            if !request.directory {
                return Err(FsError::is_a_directory(verb, d));
            }
            // Emptiness is one of the checks, so it is looked at before `before_stage`: a
            // cancel there must not hide that the remove could never have happened. An entry
            // made after this look is still refused by `unlinkat` itself, below.
            if has_entries(&parent, e.name.as_str()) {
                return Err(FsError::directory_not_empty(d));
            }
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, verb, d, &[]))?;
        match rustix::fs::unlinkat(&parent, e.name.as_str(), flags) {
            Ok(()) => {}
            Err(Errno::NOTEMPTY | Errno::EXIST) => return Err(FsError::directory_not_empty(d)),
            Err(Errno::NOENT) => return Err(absent()),
            Err(Errno::ISDIR) => return Err(FsError::is_a_directory(verb, d)),
            Err(err) => return Err(os(err, verb, d)),
        }
        sync_dir(&parent, self.config.durability).map_err(|err| os(err, verb, d))?;
        signal.committed(&checkpoint(CancelPoint::Committed, verb, d, &[]));
        Ok(path_kind(&now))
    }

    /// `rename`, under both entries' key locks.
    pub fn rename(
        &self,
        root: &Root,
        from: &Entry,
        to: &Result<Entry, FsError>,
        request: &RenameOptions,
        signal: &Signal,
    ) -> Result<(FsPathKind, bool, FsVersion), FsError> {
        let verb = Verb::Rename;
        let f = from.display.as_str();
        let absent = || match request.if_version {
            Some(_) => FsError::changed_since_read(verb, f),
            None => FsError::not_found(verb, f),
        };
        let Some(src_dir) = self.open_parent(root, from, verb)? else {
            return Err(absent());
        };
        let look_src =
            || probe_at(&src_dir, from.name.as_str(), false).map_err(|err| os(err, verb, f));
        // The files this call may take away — the source, and a destination it may replace —
        // locked across processes before anything is checked, together, in one order
        // (`crate::xlock::lock_targets`). The object to move is then held by a path-only
        // descriptor and looked at through it: its version after the move is read from it
        // too, not from the destination's name, which a writer elsewhere may already have
        // replaced (an unguarded write racing the move would otherwise lend the rename its
        // version). A source that was no file at the first look but is one at the second (moved
        // there by another instance meanwhile) is locked before the move goes on: unlocked, a
        // move of it elsewhere could run between this move and the look at its version, and
        // both moves would answer one version.
        let mut tries = 0;
        let (held, moved, source) = loop {
            tries += 1;
            let source_locked = look_src()?.is_some_and(|p| p.is_file());
            let mut keys = Vec::new();
            if source_locked {
                keys.push(from.key());
            }
            if let (Ok(t), Some(_)) = (to, &request.replace) {
                keys.push(t.key());
            }
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            let held = crate::xlock::lock_targets(root, &keys);
            let moved = match rustix::fs::openat(
                &src_dir,
                from.name.as_str(),
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(err) if crate::errors::is_absent(err) => return Err(absent()),
                Err(err) => return Err(os(err, verb, f)),
            };
            let source = probe_fd(&moved).map_err(|err| os(err, verb, f))?;
            if source.is_file() && !source_locked && tries < 16 {
                continue;
            }
            break (held, moved, source);
        };
        if let Some(v) = &request.if_version
            && *v != source.version
        {
            return Err(FsError::changed_since_read(verb, f));
        }
        let to = to.as_ref().map_err(Clone::clone)?;
        let t = to.display.as_str();
        let dst_dir = match root.open_dir(&to.parent) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(FsError::parent_missing(verb, t)),
            Err(Errno::NOTDIR) => return Err(FsError::parent_not_directory(verb, t)),
            Err(err) => return Err(os(err, verb, t)),
        };
        if seam::paths::is_within(&from.key(), &to.key()) {
            return Err(FsError::rename_into_itself(f, t));
        }
        let look_dst =
            || probe_at(&dst_dir, to.name.as_str(), false).map_err(|err| os(err, verb, t));
        let existing = look_dst()?;
        let replaced = existing.is_some();
        let source_is_dir = source.kind == FileType::Directory;
        match (&existing, &request.replace) {
            (Some(_), None) => return Err(FsError::destination_exists(t)),
            (Some(p), Some(_)) if p.kind == FileType::Directory => {
                return Err(FsError::is_a_directory(verb, t));
            }
            (Some(_), Some(_)) if source_is_dir => return Err(FsError::is_a_directory(verb, f)),
            (Some(p), Some(v)) if p.version != *v => {
                return Err(FsError::changed_since_read(verb, t));
            }
            (None, Some(_)) => return Err(FsError::changed_since_read(verb, t)),
            _ => {}
        }
        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, verb, f, &[]))?;
        if let Some(p) = &existing
            && p.version == source.version
        {
            // Two names of one file (hard links): rename(2) would leave both. The destination
            // already is the file, so the move is the source's name taken away.
            match rustix::fs::unlinkat(&src_dir, from.name.as_str(), AtFlags::empty()) {
                Ok(()) => {}
                Err(err) => return Err(os(err, verb, f)),
            }
            sync_dir(&src_dir, self.config.durability).map_err(|err| os(err, verb, f))?;
            let version = look_dst()?
                .map(|p| p.version)
                .unwrap_or_else(|| FsVersion::new(format!("missing:{}", to.key())));
            drop(held);
            signal.committed(&checkpoint(CancelPoint::Committed, verb, f, &[]));
            return Ok((path_kind(&source), true, version));
        }
        let flags = if replaced {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        match rustix::fs::renameat_with(
            &src_dir,
            from.name.as_str(),
            &dst_dir,
            to.name.as_str(),
            flags,
        ) {
            Ok(()) => {}
            Err(Errno::EXIST | Errno::NOTEMPTY) => return Err(FsError::destination_exists(t)),
            Err(Errno::NOENT) => return Err(absent()),
            Err(Errno::INVAL) => return Err(FsError::rename_into_itself(f, t)),
            Err(Errno::ISDIR) => return Err(FsError::is_a_directory(verb, t)),
            Err(Errno::NOTDIR) => return Err(FsError::is_a_directory(verb, f)),
            Err(err) => return Err(os(err, verb, f)),
        }
        // Durable in the order a crash needs: the destination's directory, then the source's.
        sync_dir(&dst_dir, self.config.durability).map_err(|err| os(err, verb, t))?;
        sync_dir(&src_dir, self.config.durability).map_err(|err| os(err, verb, f))?;
        let version = probe_fd(&moved).map_err(|err| os(err, verb, t))?.version;
        drop(held);
        signal.committed(&checkpoint(CancelPoint::Committed, verb, f, &[]));
        Ok((path_kind(&source), replaced, version))
    }
}

/// Where a namespace operation's paths are resolved: beneath the host root, or beneath a
/// confinement (the sandbox).
pub enum Within {
    /// The host, beneath `/`.
    Host,
    /// Beneath a confinement: nothing leaves it.
    Confined(Arc<Confinement>),
}

impl Within {
    pub(crate) fn owned(&self) -> Option<Arc<Confinement>> {
        match self {
            Within::Host => None,
            Within::Confined(c) => Some(c.clone()),
        }
    }
}
