//! Atomic, crash-durable publication, written against directory handles.
//!
//! A mutation stages its content next to the target, where no one else can read it: in an
//! `O_TMPFILE` inode (nameless while it is written and fsynced, then linked under a fresh 0600
//! name `.seam-stage-<nonce>` for the rename), or — where the filesystem has no `O_TMPFILE`, or
//! when configured — in a fresh 0700 directory of that name holding an exclusively created 0600
//! file. A name that already exists is skipped, never clobbered. Publication renames the staged
//! file into place; when nothing may be replaced it uses `renameat2(RENAME_NOREPLACE)` (falling
//! back to `linkat`, which also refuses to replace). Then the directory is fsynced. The writer
//! holds an exclusive `flock` on its staging while it lives, so the sweeper — run by the next
//! writer in that directory — can tell staging left by a killed process (lock free, older than the
//! grace period) from staging in use.
//!
//! Everything that can be undone is undone on drop: an error, a cancellation, or a dropped future
//! removes the staging directory and any parent directories this mutation created.

use crate::config::{Clock, Durability, NonceSource, Staging};
use crate::errors::{fail, os};
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags, RenameFlags, StatxFlags};
use rustix::io::Errno;
use seam::{FsError, FsErrorCode};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// Prefix of every staging directory.
pub(crate) const STAGING_PREFIX: &str = ".seam-stage-";
/// Name of the staged file inside a staging directory.
const STAGED_FILE: &str = "content";

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// Opens an existing directory by absolute path.
pub(crate) fn open_dir(path: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(rustix::fs::CWD, path, dir_flags(), Mode::empty())
}

fn not_a_dir_parent(verb: &str, display: &str) -> FsError {
    fail(
        FsErrorCode::NotFound,
        verb,
        display,
        "a parent path segment is not a directory",
    )
}

/// Directories a mutation created on the way to its target; removed again on drop unless kept.
pub(crate) struct CreatedDirs {
    paths: Vec<String>,
    /// Descriptors of the directories that gained an entry, for fsync.
    gained: Vec<OwnedFd>,
    keep: bool,
}

impl CreatedDirs {
    pub fn keep(&mut self) {
        self.keep = true;
    }

    pub fn sync(&self) -> Result<(), Errno> {
        for fd in &self.gained {
            rustix::fs::fsync(fd)?;
        }
        Ok(())
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for p in self.paths.iter().rev() {
            let _ = rustix::fs::unlinkat(rustix::fs::CWD, p.as_str(), AtFlags::REMOVEDIR);
        }
    }
}

/// Opens `parent` (an absolute path), creating missing directories (mode 0777 less the umask).
/// A component that exists but is not a directory — a file, or a link, dangling or not, that we
/// would have to create through — is `FS_NOT_FOUND`.
pub(crate) fn ensure_parent(
    parent: &str,
    verb: &str,
    display: &str,
) -> Result<(OwnedFd, CreatedDirs), FsError> {
    let mut created = CreatedDirs {
        paths: Vec::new(),
        gained: Vec::new(),
        keep: false,
    };
    match open_dir(parent) {
        Ok(fd) => return Ok((fd, created)),
        Err(Errno::NOENT) => {}
        Err(Errno::NOTDIR) => return Err(not_a_dir_parent(verb, display)),
        Err(e) => return Err(os(e, verb, display)),
    }
    let comps: Vec<&str> = parent.split('/').filter(|c| !c.is_empty()).collect();
    let mut base = None;
    for i in (0..comps.len()).rev() {
        let prefix = format!("/{}", comps[..i].join("/"));
        match open_dir(&prefix) {
            Ok(fd) => {
                base = Some((i, fd, prefix));
                break;
            }
            Err(Errno::NOENT) => continue,
            Err(Errno::NOTDIR) => return Err(not_a_dir_parent(verb, display)),
            Err(e) => return Err(os(e, verb, display)),
        }
    }
    let Some((start, mut fd, mut path)) = base else {
        return Err(fail(
            FsErrorCode::IoError,
            verb,
            display,
            "no existing ancestor",
        ));
    };
    for comp in &comps[start..] {
        match rustix::fs::mkdirat(&fd, *comp, Mode::from_raw_mode(0o777)) {
            Ok(()) => {
                if !path.ends_with('/') {
                    path.push('/');
                }
                path.push_str(comp);
                created.paths.push(path.clone());
            }
            Err(Errno::EXIST) => {
                if !path.ends_with('/') {
                    path.push('/');
                }
                path.push_str(comp);
            }
            Err(e) => return Err(os(e, verb, display)),
        }
        let next =
            match rustix::fs::openat(&fd, *comp, dir_flags() | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::LOOP | Errno::NOTDIR) => return Err(not_a_dir_parent(verb, display)),
                Err(e) => return Err(os(e, verb, display)),
            };
        created.gained.push(fd);
        fd = next;
    }
    Ok((fd, created))
}

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

    /// Renames the staged file to `name` in the parent, replacing whatever file is there.
    pub fn publish_replace(&mut self, name: &str) -> Result<(), Errno> {
        let (dir, from) = self.source();
        rustix::fs::renameat(dir, from, self.parent, name)?;
        self.published = true;
        Ok(())
    }

    /// Publishes the staged file at `name` only if nothing is there (`Err(EEXIST)` otherwise).
    pub fn publish_no_replace(&mut self, name: &str) -> Result<(), Errno> {
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

/// How staging is made (the self-test can make it world-readable).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StagingModes {
    pub dir: u32,
    pub file: u32,
}

impl Default for StagingModes {
    fn default() -> Self {
        Self {
            dir: 0o700,
            file: 0o600,
        }
    }
}

/// Everything `stage` needs besides the content.
pub(crate) struct StageSpec<'a> {
    pub nonce: &'a NonceSource,
    pub durability: Durability,
    pub modes: StagingModes,
    pub staging: Staging,
    /// Cleared the first time the filesystem refuses `O_TMPFILE`.
    pub tmpfile_ok: &'a AtomicBool,
    pub verb: &'a str,
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
        Mode::from_raw_mode(spec.modes.file),
    ) {
        Ok(fd) => fd,
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOSYS) => return Err(None),
        Err(e) => return Err(Some(os(e, spec.verb, spec.display))),
    };
    let mut file = File::from(fd);
    let fill = |file: &mut File| -> Result<(), Errno> {
        rustix::fs::fchmod(&*file, Mode::from_raw_mode(spec.modes.file))?;
        // Held until the staged name is gone: the sweeper leaves locked staging alone.
        rustix::fs::flock(&*file, FlockOperation::NonBlockingLockExclusive)?;
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
    Err(Some(fail(
        FsErrorCode::IoError,
        spec.verb,
        spec.display,
        "could not find an unused staging name",
    )))
}

/// Stages in a fresh private directory holding one exclusively created file.
fn stage_dir<'p>(
    parent: BorrowedFd<'p>,
    parts: &[&[u8]],
    spec: &StageSpec<'_>,
) -> Result<Staged<'p>, FsError> {
    let (verb, display) = (spec.verb, spec.display);
    let mut dir_name = None;
    for _ in 0..16 {
        let name = format!("{STAGING_PREFIX}{:016x}", (spec.nonce)());
        match rustix::fs::mkdirat(parent, name.as_str(), Mode::from_raw_mode(spec.modes.dir)) {
            Ok(()) => {
                dir_name = Some(name);
                break;
            }
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(os(e, verb, display)),
        }
    }
    let Some(name) = dir_name else {
        return Err(fail(
            FsErrorCode::IoError,
            verb,
            display,
            "could not find an unused staging name",
        ));
    };
    let dir = match rustix::fs::openat(
        parent,
        name.as_str(),
        dir_flags() | OFlags::NOFOLLOW,
        Mode::empty(),
    ) {
        Ok(d) => d,
        Err(e) => {
            let _ = rustix::fs::unlinkat(parent, name.as_str(), AtFlags::REMOVEDIR);
            return Err(os(e, verb, display));
        }
    };
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
        rustix::fs::flock(dir, FlockOperation::NonBlockingLockExclusive)?;
        rustix::fs::fchmod(dir, Mode::from_raw_mode(spec.modes.dir))?;
        let fd = rustix::fs::openat(
            dir,
            STAGED_FILE,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(spec.modes.file),
        )?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(spec.modes.file))?;
        let mut file = File::from(fd);
        write_synced(&mut file, parts, spec.durability)?;
        staged.file = Some(file);
        Ok(())
    };
    fill(&mut staged).map_err(|e| os(e, verb, display))?;
    Ok(staged)
}

/// Remembers when each directory was last swept, so a busy directory is scanned at most once
/// per grace period.
#[derive(Default)]
pub(crate) struct Sweeper {
    last: Mutex<HashMap<String, SystemTime>>,
}

impl Sweeper {
    /// Removes staging in `dir` that no live writer holds and that is older than `grace`.
    /// Best effort: a failure to sweep never fails the mutation that triggered it.
    pub fn sweep(
        &self,
        dir: BorrowedFd<'_>,
        dir_path: &str,
        clock: &Clock,
        grace: Duration,
    ) -> usize {
        let now = clock();
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(t) = last.get(dir_path)
                && now.duration_since(*t).unwrap_or_default() < grace
            {
                return 0;
            }
            last.insert(dir_path.to_string(), now);
        }
        let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_bytes();
            if !name.starts_with(STAGING_PREFIX.as_bytes()) {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            if sweep_one(dir, name, now, grace) {
                removed += 1;
            }
        }
        removed
    }
}

fn sweep_one(dir: BorrowedFd<'_>, name: &str, now: SystemTime, grace: Duration) -> bool {
    // Staging is a directory or a file; open either without following a link or blocking.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) else {
        return false;
    };
    if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
        return false;
    }
    let Ok(st) = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS) else {
        return false;
    };
    let changed = SystemTime::UNIX_EPOCH
        + Duration::new(
            u64::try_from(st.stx_ctime.tv_sec).unwrap_or(0),
            st.stx_ctime.tv_nsec,
        );
    if now.duration_since(changed).unwrap_or_default() < grace {
        return false;
    }
    if FileType::from_raw_mode(st.stx_mode.into()) != FileType::Directory {
        return rustix::fs::unlinkat(dir, name, AtFlags::empty()).is_ok();
    }
    if let Ok(inner) = rustix::fs::Dir::read_from(&fd) {
        for e in inner.flatten() {
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                let _ = rustix::fs::unlinkat(&fd, e.file_name(), AtFlags::empty());
            }
        }
    }
    rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).is_ok()
}

/// fsyncs a directory when durability asks for it.
pub(crate) fn sync_dir<Fd: AsFd>(fd: Fd, durability: Durability) -> Result<(), Errno> {
    if durability == Durability::Full {
        rustix::fs::fsync(fd)?;
    }
    Ok(())
}
