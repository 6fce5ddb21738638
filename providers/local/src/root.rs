//! The directory handle every path operation of the provider runs beneath.
//!
//! Keys are absolute real paths, but the provider never hands one to the kernel from the
//! process's working directory: it opens the root once, holds the descriptor, and resolves each
//! key as a path relative to it (`openat`, `statx`, `unlinkat` on the held handle). Staging,
//! publication and sweeping then work on the parent directory's descriptor with
//! single-component names.
//!
//! For the local provider the root is `/`, so a relative path beneath the held handle is
//! resolved exactly as the absolute path would be (links, `..` and all) at the same cost: one
//! system call, the same as before. The handle is the seam a confining provider uses: the same
//! mechanics beneath a writable root's handle, with resolution that may not leave it.

use crate::version::{Probe, probe_at};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// The held root directory.
pub(crate) struct Root {
    /// `None` only if `/` could not be opened at all (a seccomp jail, say); absolute paths from
    /// the working directory then resolve exactly as paths beneath `/` would.
    fd: Option<OwnedFd>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("held", &self.fd.is_some())
            .finish()
    }
}

impl Root {
    /// The host's root, `/`, opened as a path handle.
    pub fn host() -> Self {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Self {
            fd: rustix::fs::openat(rustix::fs::CWD, "/", flags, Mode::empty()).ok(),
        }
    }

    /// Where the kernel should resolve `key` (an absolute path): the held handle and the path
    /// relative to it (`.` for the root itself).
    pub fn at<'k>(&self, key: &'k str) -> (BorrowedFd<'_>, &'k str) {
        match &self.fd {
            Some(fd) => {
                let rel = key.trim_start_matches('/');
                (fd.as_fd(), if rel.is_empty() { "." } else { rel })
            }
            None => (rustix::fs::CWD, key),
        }
    }

    /// Opens `key` with `flags`.
    pub fn open(&self, key: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
        let (dir, rel) = self.at(key);
        rustix::fs::openat(dir, rel, flags, Mode::empty())
    }

    /// Opens the directory at `key` (following links on the way and at the end).
    pub fn open_dir(&self, key: &str) -> Result<OwnedFd, Errno> {
        self.open(key, crate::parents::dir_flags())
    }

    /// `statx` of `key`; absent is `Ok(None)`.
    pub fn probe(&self, key: &str, follow: bool) -> Result<Option<Probe>, Errno> {
        let (dir, rel) = self.at(key);
        probe_at(dir, rel, follow)
    }

    /// Removes the empty directory at `key`.
    pub fn remove_dir(&self, key: &str) -> Result<(), Errno> {
        let (dir, rel) = self.at(key);
        rustix::fs::unlinkat(dir, rel, AtFlags::REMOVEDIR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_resolve_beneath_the_held_root() {
        let root = Root::host();
        assert!(root.fd.is_some(), "/ opens as a path handle");
        assert_eq!(root.at("/a/b").1, "a/b");
        assert_eq!(root.at("/").1, ".");
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("f").to_string_lossy().into_owned();
        std::fs::write(&key, b"x").expect("write");
        let probe = root.probe(&key, true).expect("probe").expect("exists");
        assert!(probe.is_file());
        assert_eq!(probe.size, 1);
        assert!(
            root.probe(&format!("{key}/under"), true)
                .expect("probe")
                .is_none()
        );
        let sub = dir.path().join("d").to_string_lossy().into_owned();
        std::fs::create_dir(&sub).expect("mkdir");
        assert!(root.open_dir(&sub).is_ok());
        root.remove_dir(&sub).expect("rmdir");
        assert!(!std::path::Path::new(&sub).exists());
    }
}
