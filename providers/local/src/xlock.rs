//! The lock that makes a guard hold across processes.
//!
//! The per-key table in [`crate::locks`] serialises the mutations of one provider instance. Two
//! agents rarely share an instance: they share the directory. Without a lock they both can see,
//! two instances check the same version and both publish (the suite's cross-instance races find
//! exactly that). So every mutation also holds an advisory `flock` from its check to the moment
//! its returned version is read:
//!
//! * when a regular file is at the key, on **that file** (its inode), re-checked after the lock
//!   is granted: if the file was replaced meanwhile, the lock is on a dead inode and is taken
//!   again on the new one;
//! * nothing when no file is there: a create publishes without replacing, so a file that
//!   appears meanwhile is never lost — a create-if-absent then fails `FS_NOT_OBSERVED`, and an
//!   unguarded write takes *that* file's lock and replaces it as the update it has become,
//!   saying what it replaced (`crate::write`). (A directory lock here would make every create in
//!   a directory wait for every other, and a probe that writes a sibling from inside a
//!   checkpoint wait for itself.)
//! * and, before publication, on the **staged file**: the new inode is locked before anyone can
//!   see it, so the next writer in another process waits until this one has read the version it
//!   returns.
//!
//! No lock file is created (nothing to litter or orphan), and the kernel drops a `flock` when its
//! holder's descriptors close — on return, on a panic, and when the process is killed. A lock
//! that cannot be taken (a file this user cannot open) is left out: the mutation then runs under
//! the in-process lock only and fails or succeeds exactly as it would have.

use crate::read::read_flags;
use crate::root::Root;
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{FileType, FlockOperation, flock, fstat};
use rustix::io::Errno;

/// Locks held by one mutation; dropped (and so released) when it returns.
#[derive(Default)]
pub(crate) struct Held {
    fds: Vec<OwnedFd>,
}

impl Held {
    /// Also holds `fd`'s lock until the mutation returns.
    pub fn keep(&mut self, fd: OwnedFd) {
        self.fds.push(fd);
    }

    /// How many locks are held (for tests).
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.fds.len()
    }
}

/// How many times a lock is taken again after the object under it changed before the
/// mutation goes on under the last one it got (each retry needs another writer's publication).
const TRIES: usize = 64;

fn identity<Fd: AsFd>(fd: Fd) -> Result<(u64, u64), Errno> {
    let st = fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

/// The regular file at `key`, opened without following a final link.
fn open_file(root: &Root, key: &str) -> Option<OwnedFd> {
    let fd = root.open(key, read_flags(false)).ok()?;
    let st = fstat(&fd).ok()?;
    (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then_some(fd)
}

/// Takes the cross-process lock for a mutation of `key` (see the module docs): on the regular
/// file there, or nothing. Blocks until it is granted: call it on a blocking thread.
pub(crate) fn lock_target(root: &Root, key: &str) -> Held {
    lock_target_beside(root, key, &[])
}

/// Takes the cross-process locks of several files at once (a rename's source and the
/// destination it replaces): one lock per file, in the order of the files' identities, so two
/// mutations that lock the same two files in opposite roles (a swap, in two processes) never
/// wait for each other; a file reached twice (a hard link of the other) is locked once — a
/// second `flock` on it through another descriptor would wait for this very mutation.
pub(crate) fn lock_targets(root: &Root, keys: &[&str]) -> Held {
    let mut found: Vec<((u64, u64), &str)> = keys
        .iter()
        .filter_map(|k| {
            let fd = open_file(root, k)?;
            Some((identity(&fd).ok()?, *k))
        })
        .collect();
    found.sort();
    found.dedup_by_key(|(id, _)| *id);
    let mut held = Held::default();
    let mut ids: Vec<(u64, u64)> = Vec::new();
    for (_, key) in found {
        for fd in lock_target_beside(root, key, &ids).fds {
            if let Ok(id) = identity(&fd) {
                ids.push(id);
            }
            held.keep(fd);
        }
    }
    held
}

/// [`lock_target`], taking nothing on a file whose identity is among `held` (already locked by
/// this mutation).
fn lock_target_beside(root: &Root, key: &str, held: &[(u64, u64)]) -> Held {
    let mut last = None;
    for _ in 0..TRIES {
        // Release the lock a failed check left us holding before taking the next one: the next
        // may be on the same file (another descriptor), and we would wait for ourselves.
        drop(last.take());
        let Some(fd) = open_file(root, key) else {
            return Held::default();
        };
        if identity(&fd).is_ok_and(|id| held.contains(&id)) {
            return Held::default();
        }
        if flock(&fd, FlockOperation::LockExclusive).is_err() {
            return Held::default();
        }
        let still = match (open_file(root, key), identity(&fd)) {
            (Some(now), Ok(locked)) => identity(&now).is_ok_and(|n| n == locked),
            _ => false,
        };
        if still {
            return Held { fds: vec![fd] };
        }
        last = Some(fd);
    }
    Held {
        fds: last.into_iter().collect(),
    }
}

/// Locks a freshly staged file before it is published (nobody else can hold it yet, so this
/// never waits); the returned descriptor holds the lock.
pub(crate) fn lock_staged<Fd: AsFd>(file: Fd) -> Option<OwnedFd> {
    // Close-on-exec: a child the harness spawns meanwhile must not inherit (and keep) the lock.
    let fd = rustix::io::fcntl_dupfd_cloexec(file, 0).ok()?;
    flock(&fd, FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(dir: &std::path::Path, name: &str) -> String {
        format!("{}/{name}", dir.display())
    }

    #[test]
    fn a_file_is_locked_on_its_inode_and_a_missing_one_not_at_all() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = std::fs::canonicalize(dir.path()).expect("real");
        std::fs::write(real.join("f"), b"x").expect("write");
        let root = Root::host();
        let held = lock_target(&root, &key(&real, "f"));
        assert_eq!(held.count(), 1);
        // Another open file description cannot take it while it is held...
        let other = std::fs::File::open(real.join("f")).expect("open");
        assert_eq!(
            flock(&other, FlockOperation::NonBlockingLockExclusive),
            Err(Errno::WOULDBLOCK)
        );
        drop(held);
        // ...and can once it is dropped.
        assert_eq!(
            flock(&other, FlockOperation::NonBlockingLockExclusive),
            Ok(())
        );
        drop(other);

        let held = lock_target(&root, &key(&real, "missing/deeper/g"));
        assert_eq!(
            held.count(),
            0,
            "nothing is locked for a file that is not there"
        );
    }
}
