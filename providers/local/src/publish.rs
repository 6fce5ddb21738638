//! Atomic, crash-durable publication, written against directory handles.
//!
//! A mutation stages its content in a private directory next to the target
//! (`.seam-stage-<nonce>`, created 0700 and never reused: an existing name is skipped, never
//! clobbered), as an exclusively created 0600 file, fsyncs it, and renames it into place. When
//! nothing may be replaced it publishes with `renameat2(RENAME_NOREPLACE)` (falling back to
//! `linkat`, which also refuses to replace). Then it fsyncs the directory and removes the staging
//! directory. The writer holds an exclusive `flock` on its staging directory while it lives, so
//! the sweeper — run by the next writer in that directory — can tell staging left by a killed
//! process (lock free, older than the grace period) from staging in use.
//!
//! Everything that can be undone is undone on drop: an error, a cancellation, or a dropped future
//! removes the staging directory and any parent directories this mutation created.

use crate::config::{Clock, Durability, NonceSource};
use crate::errors::{fail, os};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags, RenameFlags, StatxFlags};
use rustix::io::Errno;
use seam::{FsError, FsErrorCode};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;
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
    pub dir_name: String,
    dir: OwnedFd,
    file: Option<File>,
}

impl Staged<'_> {
    /// Sets the staged file's permission bits (the target's, when it replaces one).
    pub fn chmod(&self, mode: u32) -> Result<(), Errno> {
        match &self.file {
            Some(f) => rustix::fs::fchmod(f, Mode::from_raw_mode(mode)),
            None => Ok(()),
        }
    }

    /// Renames the staged file to `name` in the parent, replacing whatever file is there.
    pub fn publish_replace(&mut self, name: &str) -> Result<(), Errno> {
        rustix::fs::renameat(&self.dir, STAGED_FILE, self.parent, name)
    }

    /// Publishes the staged file at `name` only if nothing is there (`Err(EEXIST)` otherwise).
    pub fn publish_no_replace(&mut self, name: &str) -> Result<(), Errno> {
        match rustix::fs::renameat_with(
            &self.dir,
            STAGED_FILE,
            self.parent,
            name,
            RenameFlags::NOREPLACE,
        ) {
            Ok(()) => Ok(()),
            Err(Errno::INVAL | Errno::NOSYS) => {
                rustix::fs::linkat(&self.dir, STAGED_FILE, self.parent, name, AtFlags::empty())
            }
            Err(e) => Err(e),
        }
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        self.file.take();
        let _ = rustix::fs::unlinkat(&self.dir, STAGED_FILE, AtFlags::empty());
        let _ = rustix::fs::unlinkat(self.parent, self.dir_name.as_str(), AtFlags::REMOVEDIR);
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

/// Writes `content` into a fresh staging directory in `parent`, fsynced unless durability is
/// `None`.
pub(crate) fn stage<'p>(
    parent: BorrowedFd<'p>,
    content: &[u8],
    nonce: &NonceSource,
    durability: Durability,
    modes: StagingModes,
    verb: &str,
    display: &str,
) -> Result<Staged<'p>, FsError> {
    let mut dir_name = None;
    for _ in 0..16 {
        let name = format!("{STAGING_PREFIX}{:016x}", nonce());
        match rustix::fs::mkdirat(parent, name.as_str(), Mode::from_raw_mode(modes.dir)) {
            Ok(()) => {
                dir_name = Some(name);
                break;
            }
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(os(e, verb, display)),
        }
    }
    let Some(dir_name) = dir_name else {
        return Err(fail(
            FsErrorCode::IoError,
            verb,
            display,
            "could not create a unique staging directory",
        ));
    };
    let dir = match rustix::fs::openat(
        parent,
        dir_name.as_str(),
        dir_flags() | OFlags::NOFOLLOW,
        Mode::empty(),
    ) {
        Ok(d) => d,
        Err(e) => {
            let _ = rustix::fs::unlinkat(parent, dir_name.as_str(), AtFlags::REMOVEDIR);
            return Err(os(e, verb, display));
        }
    };
    let mut staged = Staged {
        parent,
        dir_name,
        dir,
        file: None,
    };
    let fill = |staged: &mut Staged<'p>| -> Result<(), Errno> {
        rustix::fs::flock(&staged.dir, FlockOperation::NonBlockingLockExclusive)?;
        rustix::fs::fchmod(&staged.dir, Mode::from_raw_mode(modes.dir))?;
        let fd = rustix::fs::openat(
            &staged.dir,
            STAGED_FILE,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(modes.file),
        )?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(modes.file))?;
        let mut file = File::from(fd);
        file.write_all(content)
            .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error))?;
        if durability != Durability::None {
            rustix::fs::fsync(&file)?;
        }
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
    let Ok(fd) = rustix::fs::openat(dir, name, dir_flags() | OFlags::NOFOLLOW, Mode::empty())
    else {
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
