//! Version tokens and probes.
//!
//! The token is `dev:ino:size:mtime_ns:ctime_ns` with both times in full nanoseconds since the
//! epoch. Every publication makes a new inode and every change bumps ctime (which no user call
//! can set back), so a same-size rewrite whose mtime was restored still changes the token. On
//! kernels with multigrain timestamps (6.13+) a change after a stat always gets a fresh
//! fine-grained time.

use rustix::fd::AsFd;
use rustix::fs::{AtFlags, FileType, Statx, StatxFlags, StatxTimestamp};
use rustix::io::Errno;
use seam::{FsKind, FsPathKind, FsVersion};

/// What a probe learned about one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Probe {
    pub kind: FileType,
    pub size: u64,
    pub mode: u32,
    pub version: FsVersion,
}

impl Probe {
    pub fn fs_kind(&self) -> FsKind {
        match self.kind {
            FileType::RegularFile => FsKind::File,
            FileType::Directory => FsKind::Directory,
            _ => FsKind::Other,
        }
    }

    pub fn path_kind(&self) -> FsPathKind {
        match self.kind {
            FileType::RegularFile => FsPathKind::File,
            FileType::Directory => FsPathKind::Directory,
            FileType::Symlink => FsPathKind::Symlink,
            _ => FsPathKind::Other,
        }
    }

    pub fn is_file(&self) -> bool {
        self.kind == FileType::RegularFile
    }

    /// The size the contract reports: files and links only.
    pub fn reported_size(&self) -> Option<u64> {
        matches!(self.kind, FileType::RegularFile | FileType::Symlink).then_some(self.size)
    }
}

fn nanos(t: &StatxTimestamp) -> i128 {
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

/// The version token of a `statx` result.
pub fn version_token(st: &Statx) -> FsVersion {
    FsVersion::new(format!(
        "{}.{}:{}:{}:{}:{}",
        st.stx_dev_major,
        st.stx_dev_minor,
        st.stx_ino,
        st.stx_size,
        nanos(&st.stx_mtime),
        nanos(&st.stx_ctime)
    ))
}

fn token_without_ctime(st: &Statx) -> FsVersion {
    FsVersion::new(format!(
        "{}.{}:{}:{}:{}",
        st.stx_dev_major,
        st.stx_dev_minor,
        st.stx_ino,
        st.stx_size,
        nanos(&st.stx_mtime)
    ))
}

/// How tokens are minted (the self-test can break it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Minter {
    pub without_ctime: bool,
}

impl Minter {
    pub fn probe(self, st: &Statx) -> Probe {
        let version = if self.without_ctime {
            token_without_ctime(st)
        } else {
            version_token(st)
        };
        Probe {
            kind: FileType::from_raw_mode(st.stx_mode.into()),
            size: st.stx_size,
            mode: u32::from(st.stx_mode) & 0o7777,
            version,
        }
    }

    /// `statx` relative to `dir`; absent (ENOENT, ENOTDIR) is `Ok(None)`.
    pub fn probe_at<Fd: AsFd, P: rustix::path::Arg>(
        self,
        dir: Fd,
        path: P,
        follow: bool,
    ) -> Result<Option<Probe>, Errno> {
        let flags = if follow {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        match rustix::fs::statx(dir, path, flags, StatxFlags::BASIC_STATS) {
            Ok(st) => Ok(Some(self.probe(&st))),
            Err(e) if crate::errors::is_absent(e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `statx` of an open descriptor.
    pub fn probe_fd<Fd: AsFd>(self, fd: Fd) -> Result<Probe, Errno> {
        rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS)
            .map(|st| self.probe(&st))
    }
}
