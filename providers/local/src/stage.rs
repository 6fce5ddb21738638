//! Staging: a mutation writes its content next to the target where no one else can read it,
//! in an `O_TMPFILE` inode (nameless while it is written and fsynced, then linked under a fresh
//! 0600 name `.seam-stage-<nonce>` for the rename), or — where the filesystem has no
//! `O_TMPFILE`, or when configured — in a fresh 0700 directory of that name holding an
//! exclusively created 0600 file. A name that already exists is skipped, never clobbered. The
//! writer holds an exclusive `flock` on its staging while it lives, so the sweeper can tell
//! staging left by a killed process from staging in use. Dropping a [`Staged`] that was not
//! published removes it.

use crate::config::{Durability, NonceSource, Staging};
use crate::errors::os;
use crate::root::dir_flags;
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use seam::{FsError, Verb};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Prefix of every staging entry.
pub(crate) const STAGING_PREFIX: &str = ".seam-stage-";
/// The extended attribute that marks a staged file as this provider's, whatever its mode.
pub(crate) const STAGING_MARK: &str = "user.seam-staging";
/// Name of the staged file inside a staging directory.
pub(crate) const STAGED_FILE: &str = "content";

/// Staged content, removed on drop if it was not published.
pub(crate) struct Staged<'p> {
    parent: BorrowedFd<'p>,
    /// The staging entry's name in the parent: a directory, or the linked temporary file.
    pub name: String,
    /// The staging directory, when staging is a directory.
    dir: Option<OwnedFd>,
    file: Option<File>,
    published: bool,
}

impl Staged<'_> {
    /// Absolute paths of the staging entries that exist now, outermost first.
    pub fn paths(&self, parent_path: &str) -> Vec<String> {
        let outer = if parent_path == "/" {
            format!("/{}", self.name)
        } else {
            format!("{parent_path}/{}", self.name)
        };
        match self.dir {
            Some(_) => vec![outer.clone(), format!("{outer}/{STAGED_FILE}")],
            None => vec![outer],
        }
    }

    fn source(&self) -> (BorrowedFd<'_>, &str) {
        match &self.dir {
            Some(d) => (d.as_fd(), STAGED_FILE),
            None => (self.parent, self.name.as_str()),
        }
    }

    /// Sets the staged file's permission bits (the target's, when it replaces one).
    pub fn chmod(&self, mode: u32) -> Result<(), Errno> {
        match &self.file {
            Some(f) => rustix::fs::fchmod(f, Mode::from_raw_mode(mode)),
            None => Ok(()),
        }
    }

    /// fsyncs the staged file again: after [`Staged::chmod`], so that its mode survives a power
    /// cut as its content does (the mode is the inode's metadata; the fsync before it did not
    /// cover it).
    pub fn sync(&self) -> Result<(), Errno> {
        match &self.file {
            Some(f) => rustix::fs::fsync(f),
            None => Ok(()),
        }
    }

    /// Locks the staged file for other processes before it is published (see
    /// [`crate::xlock`]); the descriptor returned holds the lock.
    pub fn lock(&self) -> Option<OwnedFd> {
        self.file.as_ref().and_then(crate::xlock::lock_staged)
    }

    /// Takes the staging mark off a file about to be published under a name of the staging
    /// prefix (a user's file named like staging): the sweeper must never take it for staging.
    /// Only then, and before the rename: anything done to the inode after it is published
    /// changes its ctime, so a reader could see the published file at a version the writer
    /// never returns (removing the mark after the rename did exactly that — a `stat` racing an
    /// edit saw the new content at a token that was gone a moment later). A file published
    /// under any other name keeps the mark: the sweeper only looks at names of the prefix, so
    /// there it marks nothing. (A writer killed between this and its rename leaves an
    /// unmarked staging-shaped file, as a user's would be: left for its owner.)
    fn unmark_for(&self, name: &str) {
        if !name.starts_with(STAGING_PREFIX) {
            return;
        }
        if let (None, Some(f)) = (&self.dir, &self.file) {
            let _ = rustix::fs::fremovexattr(f, STAGING_MARK);
        }
    }

    /// Renames the staged file to `name` in the parent, replacing whatever file is there.
    pub fn publish_replace(&mut self, name: &str) -> Result<(), Errno> {
        self.unmark_for(name);
        let (dir, from) = self.source();
        rustix::fs::renameat(dir, from, self.parent, name)?;
        self.published = true;
        Ok(())
    }

    /// Publishes the staged file at `name` only if nothing is there (`Err(EEXIST)` otherwise).
    pub fn publish_no_replace(&mut self, name: &str) -> Result<(), Errno> {
        self.unmark_for(name);
        let (dir, from) = self.source();
        match rustix::fs::renameat_with(dir, from, self.parent, name, RenameFlags::NOREPLACE) {
            Ok(()) => {}
            Err(Errno::INVAL | Errno::NOSYS) => {
                // No renameat2 here: a hard link refuses to replace too; then drop the staged name.
                rustix::fs::linkat(dir, from, self.parent, name, AtFlags::empty())?;
                let _ = rustix::fs::unlinkat(dir, from, AtFlags::empty());
            }
            Err(e) => return Err(e),
        }
        self.published = true;
        Ok(())
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        self.file.take();
        match &self.dir {
            Some(dir) => {
                let _ = rustix::fs::unlinkat(dir, STAGED_FILE, AtFlags::empty());
                let _ = rustix::fs::unlinkat(self.parent, self.name.as_str(), AtFlags::REMOVEDIR);
            }
            None if !self.published => {
                let _ = rustix::fs::unlinkat(self.parent, self.name.as_str(), AtFlags::empty());
            }
            None => {}
        }
    }
}

/// Mode of a staging directory: private to the writer.
pub(crate) const STAGING_DIR_MODE: u32 = 0o700;
/// Mode of a staged file while it is staged.
pub(crate) const STAGING_FILE_MODE: u32 = 0o600;

/// Everything `stage` needs besides the content.
pub(crate) struct StageSpec<'a> {
    pub nonce: &'a NonceSource,
    pub durability: Durability,
    pub staging: Staging,
    /// Cleared the first time the filesystem refuses `O_TMPFILE`.
    pub tmpfile_ok: &'a AtomicBool,
    pub verb: Verb,
    pub display: &'a str,
}

fn write_synced(file: &mut File, parts: &[&[u8]], durability: Durability) -> Result<(), Errno> {
    for part in parts {
        file.write_all(part)
            .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error))?;
    }
    if durability != Durability::None {
        rustix::fs::fsync(&*file)?;
    }
    Ok(())
}

/// Writes `parts` into fresh staging in `parent`, fsynced unless durability is `None`.
pub(crate) fn stage<'p>(
    parent: BorrowedFd<'p>,
    parts: &[&[u8]],
    spec: &StageSpec<'_>,
) -> Result<Staged<'p>, FsError> {
    if spec.staging == Staging::Auto && spec.tmpfile_ok.load(Ordering::Relaxed) {
        match stage_tmpfile(parent, parts, spec) {
            Ok(staged) => return Ok(staged),
            Err(None) => spec.tmpfile_ok.store(false, Ordering::Relaxed),
            Err(Some(e)) => return Err(e),
        }
    }
    stage_dir(parent, parts, spec)
}

/// Links an `O_TMPFILE` inode under `name` in `parent` (never replacing).
fn link_tmpfile(file: &File, parent: BorrowedFd<'_>, name: &str) -> Result<(), Errno> {
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    match rustix::fs::linkat(
        rustix::fs::CWD,
        proc_path.as_str(),
        parent,
        name,
        AtFlags::SYMLINK_FOLLOW,
    ) {
        Err(Errno::NOENT) => rustix::fs::linkat(file, "", parent, name, AtFlags::EMPTY_PATH),
        other => other,
    }
}

/// Stages in an `O_TMPFILE` inode: nameless while it is written and synced, then linked under a
/// fresh 0600 name for the rename. `Err(None)`: the filesystem has no `O_TMPFILE`.
fn stage_tmpfile<'p>(
    parent: BorrowedFd<'p>,
    parts: &[&[u8]],
    spec: &StageSpec<'_>,
) -> Result<Staged<'p>, Option<FsError>> {
    let fd = match rustix::fs::openat(
        parent,
        ".",
        OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC,
        Mode::from_raw_mode(STAGING_FILE_MODE),
    ) {
        Ok(fd) => fd,
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOSYS) => return Err(None),
        Err(e) => return Err(Some(os(e, spec.verb, spec.display))),
    };
    let mut file = File::from(fd);
    let fill = |file: &mut File| -> Result<(), Errno> {
        rustix::fs::fchmod(&*file, Mode::from_raw_mode(STAGING_FILE_MODE))?;
        // Held until the staged name is gone: the sweeper leaves locked staging alone.
        rustix::fs::flock(&*file, FlockOperation::NonBlockingLockExclusive)?;
        // Marked as ours before it has a name: given its target's mode just before the rename,
        // and its writer killed then, it is still known for staging and swept. Best effort (a
        // filesystem without user xattrs leaves such a file for its owner to remove).
        let _ = rustix::fs::fsetxattr(&*file, STAGING_MARK, b"1", rustix::fs::XattrFlags::empty());
        write_synced(file, parts, spec.durability)
    };
    fill(&mut file).map_err(|e| Some(os(e, spec.verb, spec.display)))?;
    for _ in 0..16 {
        let name = format!("{STAGING_PREFIX}{:016x}", (spec.nonce)());
        match link_tmpfile(&file, parent, &name) {
            Ok(()) => {
                return Ok(Staged {
                    parent,
                    name,
                    dir: None,
                    file: Some(file),
                    published: false,
                });
            }
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(Some(os(e, spec.verb, spec.display))),
        }
    }
    Err(Some(FsError::io(
        spec.verb,
        spec.display,
        "could not find an unused staging name",
    )))
}

/// Stages in a fresh private directory holding one exclusively created file.
///
/// A directory cannot be locked before it has a name, so between `mkdir` and the lock a
/// sweeper may take it for a dead writer's ([`crate::sweep`] removes only what it could lock).
/// So the directory is locked first, then checked to still be the one at its name; one that
/// was taken meanwhile is left to the sweeper, and staging starts again under a new name.
fn stage_dir<'p>(
    parent: BorrowedFd<'p>,
    parts: &[&[u8]],
    spec: &StageSpec<'_>,
) -> Result<Staged<'p>, FsError> {
    let (verb, display) = (spec.verb, spec.display);
    for _ in 0..16 {
        let name = format!("{STAGING_PREFIX}{:016x}", (spec.nonce)());
        match rustix::fs::mkdirat(parent, name.as_str(), Mode::from_raw_mode(STAGING_DIR_MODE)) {
            Ok(()) => {}
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(os(e, verb, display)),
        }
        let dir = match rustix::fs::openat(
            parent,
            name.as_str(),
            dir_flags() | OFlags::NOFOLLOW,
            Mode::empty(),
        ) {
            Ok(d) => d,
            // Swept before it could be opened.
            Err(Errno::NOENT) => continue,
            Err(e) => {
                let _ = rustix::fs::unlinkat(parent, name.as_str(), AtFlags::REMOVEDIR);
                return Err(os(e, verb, display));
            }
        };
        match rustix::fs::flock(&dir, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            // A sweeper holds it: it is being removed.
            Err(Errno::WOULDBLOCK) => continue,
            Err(e) => {
                let _ = rustix::fs::unlinkat(parent, name.as_str(), AtFlags::REMOVEDIR);
                return Err(os(e, verb, display));
            }
        }
        if !still_at(parent, &name, &dir) {
            continue;
        }
        let mut staged = Staged {
            parent,
            name,
            dir: Some(dir),
            file: None,
            published: false,
        };
        let fill = |staged: &mut Staged<'p>| -> Result<(), Errno> {
            let Some(dir) = &staged.dir else {
                return Err(Errno::INVAL);
            };
            rustix::fs::fchmod(dir, Mode::from_raw_mode(STAGING_DIR_MODE))?;
            let fd = rustix::fs::openat(
                dir,
                STAGED_FILE,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(STAGING_FILE_MODE),
            )?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(STAGING_FILE_MODE))?;
            let mut file = File::from(fd);
            write_synced(&mut file, parts, spec.durability)?;
            staged.file = Some(file);
            Ok(())
        };
        fill(&mut staged).map_err(|e| os(e, verb, display))?;
        return Ok(staged);
    }
    Err(FsError::io(
        verb,
        display,
        "could not find an unused staging name",
    ))
}

/// Whether the directory held open as `dir` is still the one at `name` in `parent`.
fn still_at(parent: BorrowedFd<'_>, name: &str, dir: &OwnedFd) -> bool {
    let flags = rustix::fs::StatxFlags::INO;
    match (
        rustix::fs::statx(parent, name, AtFlags::SYMLINK_NOFOLLOW, flags),
        rustix::fs::statx(dir, "", AtFlags::EMPTY_PATH, flags),
    ) {
        (Ok(at), Ok(held)) => {
            at.stx_ino == held.stx_ino
                && at.stx_dev_major == held.stx_dev_major
                && at.stx_dev_minor == held.stx_dev_minor
        }
        _ => false,
    }
}
