//! Sweeping staging that a killed writer left behind. The next writer in a directory (at most
//! once per grace period per directory per provider) removes staging whose `flock` is free and
//! that is older than the grace period; younger entries might belong to a writer that has not
//! locked them yet. Best effort: a failed sweep never fails the mutation that triggered it.

use crate::config::Clock;
use crate::stage::STAGING_PREFIX;
use rustix::fd::BorrowedFd;
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags, StatxFlags};
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
