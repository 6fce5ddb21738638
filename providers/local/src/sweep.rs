//! Sweeping staging that a killed writer left behind. The next writer in a directory (its first
//! mutation there, then at most once per interval per directory per provider) removes every
//! staging entry of this provider's whose `flock` is free: a regular file carrying the
//! provider's `user.seam-staging` mark, in any mode (an `O_TMPFILE` inode is locked and marked
//! before it ever has a name, so an unlocked one was abandoned — also when its writer had given
//! it its target's mode just before the rename), or a 0700 directory holding nothing but its
//! `content` file. No age is asked: a writer that made a staging directory and has not locked it
//! yet finds it gone or no longer at its name when it locks it, and stages again under a new one
//! ([`crate::stage`]). Anything else with the prefix is someone else's and stays — a user's own
//! file written under such a name among them (unmarked). Where the filesystem keeps no user
//! xattrs, an unmarked 0600 file of the prefix is taken for staging. Best effort: a failed sweep
//! never fails the mutation that triggered it.

use crate::config::Clock;
use crate::stage::{
    STAGED_FILE, STAGING_DIR_MODE, STAGING_FILE_MODE, STAGING_MARK, STAGING_PREFIX,
};
use rustix::fd::BorrowedFd;
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags, StatxFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Remembers when each directory was last swept, so a busy directory is scanned at most once
/// per grace period.
#[derive(Default)]
pub(crate) struct Sweeper {
    last: Mutex<HashMap<String, SystemTime>>,
}

impl Sweeper {
    /// Removes staging in `dir` that no live writer holds (at most once per `interval` for
    /// this directory). Best effort: a failure to sweep never fails the mutation that
    /// triggered it.
    pub fn sweep(
        &self,
        dir: BorrowedFd<'_>,
        dir_path: &str,
        clock: &Clock,
        interval: Duration,
    ) -> usize {
        let now = clock();
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(t) = last.get(dir_path)
                && now.duration_since(*t).unwrap_or_default() < interval
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
            if sweep_one(dir, name) {
                removed += 1;
            }
        }
        removed
    }
}

/// What a staging-named entry turned out to be: this provider's staging file, or its staging
/// directory with the names inside it.
enum Ours {
    File,
    Dir(Vec<Vec<u8>>),
}

/// Opens `name` in `dir` and tells whether it is this provider's staging (marked file, or a
/// 0700 directory holding only its `content`), with the descriptor it looked through.
fn identify(dir: BorrowedFd<'_>, name: &str) -> Option<(rustix::fd::OwnedFd, Ours)> {
    // Staging is a directory or a file; open either without following a link or blocking.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?;
    let st = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS).ok()?;
    let mode = u32::from(st.stx_mode) & 0o7777;
    match FileType::from_raw_mode(st.stx_mode.into()) {
        // Marked as ours before it had a name, whatever its mode now (given its target's mode
        // just before the rename, its writer killed in between). Where the filesystem keeps no
        // user xattrs, the 0600 it was staged with is all there is to go by.
        FileType::RegularFile
            if match rustix::fs::fgetxattr_query(&fd, STAGING_MARK) {
                Ok(_) => true,
                Err(Errno::OPNOTSUPP) => mode == STAGING_FILE_MODE,
                Err(_) => false,
            } =>
        {
            Some((fd, Ours::File))
        }
        FileType::Directory if mode == STAGING_DIR_MODE => {
            // Ours holds at most its staged file; anything else in it is someone else's.
            let names: Vec<Vec<u8>> = rustix::fs::Dir::read_from(&fd)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_bytes().to_vec())
                .filter(|n| n != b"." && n != b"..")
                .collect();
            if names.iter().any(|n| n.as_slice() != STAGED_FILE.as_bytes()) {
                return None;
            }
            Some((fd, Ours::Dir(names)))
        }
        _ => None,
    }
}

/// Whether the entry `name` of `dir` is this provider's staging — in use or left by a killed
/// writer: a listing never shows it (a user's file under such a name is not staging, and is
/// listed).
pub(crate) fn is_staging(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    if !name.starts_with(STAGING_PREFIX.as_bytes()) {
        return false;
    }
    std::str::from_utf8(name).is_ok_and(|name| identify(dir, name).is_some())
}

fn sweep_one(dir: BorrowedFd<'_>, name: &str) -> bool {
    let Some((fd, ours)) = identify(dir, name) else {
        return false;
    };
    // A live writer holds its staging locked.
    if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
        return false;
    }
    match ours {
        Ours::File => rustix::fs::unlinkat(dir, name, AtFlags::empty()).is_ok(),
        Ours::Dir(names) => {
            for n in &names {
                let _ = rustix::fs::unlinkat(&fd, n.as_slice(), AtFlags::empty());
            }
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).is_ok()
        }
    }
}
