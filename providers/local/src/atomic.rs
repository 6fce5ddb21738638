//! Atomic, durable file replacement and a per-file writer lock, for settings and credential
//! stores that live outside any provider's tree.
//!
//! The seed ships these as a small utility (`writeFileAtomic`, `withFileLock`) with its own temp
//! naming and a lock *file* whose existence is the lock: a writer that crashes leaves it behind,
//! and every later writer then times out until an operator removes it. Ours publishes exactly as
//! the providers do (the same staging — an `O_TMPFILE` inode or a private 0700 directory — and a
//! rename, the file and its directory fsynced by default), and its lock is an `flock` on a
//! companion file: the kernel releases it when the holder's descriptor closes, including when the
//! holder is killed, so no crash can orphan it.
//!
//! Deliberate differences from the seed:
//!
//! * durable by default ([`Durability::Full`]); the seed never fsyncs;
//! * the lock file `<file>.lock` stays after release (empty, 0600): removing it would let a
//!   waiter that opened the old inode and a newcomer that created a new one both hold "the"
//!   lock. Its presence means nothing; only the `flock` does;
//! * the seed's Windows `EPERM` retry has no counterpart (an `flock` never fails that way).
//!
//! ```no_run
//! use seam_local::atomic::{write_file_atomic, with_file_lock, AtomicWrite};
//! use std::path::Path;
//! use std::time::Duration;
//! let settings = Path::new("/home/me/.config/agent/settings.json");
//! with_file_lock(settings, Duration::from_secs(2), || {
//!     write_file_atomic(settings, b"{}\n", &AtomicWrite::new(0o600))
//! })??;
//! # Ok::<(), seam_local::atomic::AtomicWriteError>(())
//! ```

use crate::config::{Durability, Staging};
use crate::publish::sync_dir;
use crate::stage::{StageSpec, stage};
use rustix::fd::OwnedFd;
use rustix::fs::{FlockOperation, Mode, OFlags, flock};
use rustix::io::Errno;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Failures of [`write_file_atomic`] and [`with_file_lock`].
#[derive(Debug, thiserror::Error)]
pub enum AtomicWriteError {
    /// The operating system refused a step; nothing was published.
    #[error("atomic-write: {path}: {source}")]
    Io {
        /// The path the step was about.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The writer lock was not free within the caller's limit (the operation did not run).
    #[error("atomic-write: timed out waiting for the writer lock at {}", lock.display())]
    LockTimeout {
        /// The lock file.
        lock: PathBuf,
    },
}

fn io(path: &Path, source: std::io::Error) -> AtomicWriteError {
    AtomicWriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn errno(path: &Path, e: Errno) -> AtomicWriteError {
    io(path, std::io::Error::from_raw_os_error(e.raw_os_error()))
}

/// How [`write_file_atomic`] writes.
#[derive(Clone, Debug)]
pub struct AtomicWrite {
    /// The file's permission bits, exactly (not masked by the umask), also when it replaces a
    /// file with other bits: the decision is the caller's and visible here.
    pub mode: u32,
    /// Bits of parent directories this call creates (existing ones keep theirs); 0700 when
    /// `None`.
    pub dir_mode: Option<u32>,
    /// Whether the file and its directory are fsynced before the call returns.
    pub durability: Durability,
}

impl AtomicWrite {
    /// Durable, with the file at `mode`.
    pub fn new(mode: u32) -> Self {
        Self {
            mode,
            dir_mode: None,
            durability: Durability::Full,
        }
    }
}

/// Replaces `path` with `content` atomically: a reader sees the old file or the new one, a
/// crash leaves one of them, and nothing is left beside it on failure.
///
/// Missing parents are created. A symlink at `path` is replaced by a regular file (its referent
/// is untouched): this is a store's own file, not a path a model chose.
///
/// # Errors
///
/// [`AtomicWriteError::Io`] naming the step's path (the parent is not a directory, permission
/// denied, no space...). The previous file is then untouched.
pub fn write_file_atomic(
    path: &Path,
    content: &[u8],
    options: &AtomicWrite,
) -> Result<(), AtomicWriteError> {
    let name = path
        .file_name()
        .ok_or_else(|| io(path, std::io::Error::other("no file name")))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(options.dir_mode.unwrap_or(0o700))
        .create(&parent)
        .map_err(|e| io(&parent, e))?;
    let dir: OwnedFd = rustix::fs::open(
        &parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| errno(&parent, e))?;
    let nonces = crate::config::random_nonces();
    let tmpfile_ok = AtomicBool::new(true);
    let display = path.to_string_lossy();
    let spec = StageSpec {
        nonce: &nonces,
        durability: options.durability,
        staging: Staging::Auto,
        tmpfile_ok: &tmpfile_ok,
        verb: seam::Verb::Write,
        display: &display,
    };
    let mut staged = stage(rustix::fd::AsFd::as_fd(&dir), &[content], &spec)
        .map_err(|e| io(path, std::io::Error::other(e.message().to_string())))?;
    staged.chmod(options.mode).map_err(|e| errno(path, e))?;
    let name = name
        .to_str()
        .ok_or_else(|| io(path, std::io::Error::other("the file name is not UTF-8")))?;
    staged.publish_replace(name).map_err(|e| errno(path, e))?;
    drop(staged);
    sync_dir(&dir, options.durability).map_err(|e| errno(&parent, e))
}

/// The lock file of `path`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Runs `operation` while holding the writer lock of `path`, waiting at most `wait` for it.
///
/// The lock is an exclusive `flock` on `<path>.lock` (created 0600 if missing). One attempt is
/// always made; then retries start at 20 ms and double up to 200 ms until `wait` has passed. It
/// is released when `operation` returns or panics, and by the kernel if the process dies.
///
/// # Errors
///
/// [`AtomicWriteError::LockTimeout`] when the lock stayed held; [`AtomicWriteError::Io`] when the
/// lock file cannot be opened (a parent that is not a directory, say) — in both cases
/// `operation` did not run.
pub fn with_file_lock<T>(
    path: &Path,
    wait: Duration,
    operation: impl FnOnce() -> T,
) -> Result<T, AtomicWriteError> {
    let lock = lock_path(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock)
        .map_err(|e| io(&lock, e))?;
    let deadline = Instant::now() + wait;
    let mut delay = Duration::from_millis(20);
    loop {
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => break,
            Err(Errno::WOULDBLOCK) | Err(Errno::INTR) => {}
            Err(e) => return Err(errno(&lock, e)),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(AtomicWriteError::LockTimeout { lock });
        }
        std::thread::sleep(delay.min(deadline - now));
        delay = (delay * 2).min(Duration::from_millis(200));
    }
    // Held until `file` is dropped, after the operation (also when it panics).
    let result = operation();
    drop(file);
    Ok(result)
}
