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
    /// The ctime, seconds since the epoch (also in `version`).
    pub ctime: i64,
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

    /// Whether the object changed (its ctime) within the last couple of seconds, or claims a
    /// ctime ahead of this clock: whether a change may still be under way.
    pub fn changed_lately(&self) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        now - self.ctime < 3
    }

    /// The size the contract reports: files and links only.
    pub fn reported_size(&self) -> Option<u64> {
        matches!(self.kind, FileType::RegularFile | FileType::Symlink).then_some(self.size)
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `v` in lower-case hex without leading zeros.
fn hex(out: &mut Vec<u8>, v: u64) {
    let digits = ((64 - v.leading_zeros()).max(1)).div_ceil(4);
    for i in (0..digits).rev() {
        out.push(HEX[((v >> (i * 4)) & 0xf) as usize]);
    }
}

fn push_time(out: &mut Vec<u8>, t: &StatxTimestamp) {
    // Seconds and nanoseconds together: the full time, not the fraction alone.
    hex(out, t.tv_sec as u64);
    out.push(b'.');
    hex(out, u64::from(t.tv_nsec));
}

/// The version token of a `statx` result: device, inode, size, and mtime and ctime in full
/// (seconds and nanoseconds), in hex.
pub fn version_token(st: &Statx) -> FsVersion {
    let mut out = Vec::with_capacity(80);
    hex(&mut out, u64::from(st.stx_dev_major));
    out.push(b'.');
    hex(&mut out, u64::from(st.stx_dev_minor));
    out.push(b':');
    hex(&mut out, st.stx_ino);
    out.push(b':');
    hex(&mut out, st.stx_size);
    out.push(b':');
    push_time(&mut out, &st.stx_mtime);
    out.push(b':');
    push_time(&mut out, &st.stx_ctime);
    FsVersion::new(String::from_utf8_lossy(&out).into_owned())
}

/// What a `statx` result says, with its token.
pub(crate) fn probe(st: &Statx) -> Probe {
    Probe {
        kind: FileType::from_raw_mode(st.stx_mode.into()),
        size: st.stx_size,
        mode: u32::from(st.stx_mode) & 0o7777,
        version: version_token(st),
        ctime: st.stx_ctime.tv_sec,
    }
}

/// `statx` relative to `dir`; absent (ENOENT, ENOTDIR) is `Ok(None)`.
pub(crate) fn probe_at<Fd: AsFd, P: rustix::path::Arg>(
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
        Ok(st) => Ok(Some(probe(&st))),
        Err(e) if crate::errors::is_absent(e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The kind and size of an open descriptor, without minting a token (for reads).
pub(crate) fn kind_size_fd<Fd: AsFd>(fd: Fd) -> Result<(FileType, u64), Errno> {
    rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::TYPE | StatxFlags::SIZE,
    )
    .map(|st| (FileType::from_raw_mode(st.stx_mode.into()), st.stx_size))
}

/// `statx` of an open descriptor.
pub(crate) fn probe_fd<Fd: AsFd>(fd: Fd) -> Result<Probe, Errno> {
    rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS).map(|st| probe(&st))
}
