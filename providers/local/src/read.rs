//! Reading: opening a regular file safely (never blocking on a FIFO), whole-text reads with the
//! decoding rules, capped byte reads, and the bounded diff basis of an overwrite.

use crate::errors::os;
use crate::version::kind_size_fd;
use rustix::buffer::spare_capacity;
use rustix::fd::AsFd;
use rustix::fs::{FileType, OFlags};
use rustix::io::Errno;
use seam::{FsError, Signal, Verb};
use std::fs::File;

/// Flags for opening something to read without following surprises: no controlling terminal,
/// and no blocking on a FIFO.
pub(crate) fn read_flags(follow: bool) -> OFlags {
    let mut f = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    if !follow {
        f |= OFlags::NOFOLLOW;
    }
    f
}

/// Opens the regular file at `key` beneath `root` for a read operation, with the read rules for
/// every failure; returns it with its size. Beneath a confining root, a key that leads out is an
/// error for which [`crate::is_escape`] is true.
pub(crate) fn open_regular(
    root: &crate::root::Root,
    key: &str,
    display: &str,
) -> Result<(File, u64), FsError> {
    let fd = match root.open(key, read_flags(true)) {
        Ok(fd) => fd,
        Err(e) if crate::errors::is_absent(e) => {
            return Err(FsError::not_found(Verb::Read, display));
        }
        Err(Errno::NXIO) => return Err(FsError::not_regular_file(Verb::Read, display)),
        Err(e) => return Err(os(e, Verb::Read, display)),
    };
    let (kind, size) = kind_size_fd(&fd).map_err(|e| os(e, Verb::Read, display))?;
    if kind != FileType::RegularFile {
        return Err(FsError::not_regular_file(Verb::Read, display));
    }
    Ok((File::from(fd), size))
}

/// Reads until end of file (or until `limit` bytes are in `buf`), one `read` per chunk straight
/// into the vector's spare capacity: no zeroing, no adaptive small first reads.
pub(crate) fn read_into<Fd: AsFd>(
    fd: Fd,
    buf: &mut Vec<u8>,
    limit: Option<usize>,
) -> Result<(), Errno> {
    loop {
        if limit.is_some_and(|l| buf.len() >= l) {
            return Ok(());
        }
        if buf.len() == buf.capacity() {
            let grow = buf.capacity().clamp(64 * 1024, 64 * 1024 * 1024);
            let grow = limit.map_or(grow, |l| grow.min(l - buf.len()));
            buf.try_reserve_exact(grow).map_err(|_| Errno::NOMEM)?;
        }
        match rustix::io::read(&fd, spare_capacity(buf)) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Reads the rest of `file` into a buffer sized for `size_hint` bytes.
pub(crate) fn read_all(file: &File, size_hint: u64, display: &str) -> Result<Vec<u8>, FsError> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(usize::try_from(size_hint).unwrap_or(0).saturating_add(1))
        .map_err(|_| FsError::io(Verb::Read, display, "not enough memory"))?;
    read_into(file, &mut buf, None).map_err(|e| os(e, Verb::Read, display))?;
    Ok(buf)
}

/// The whole text of an open regular file of `size` bytes.
pub(crate) fn read_text(
    file: &File,
    size: u64,
    display: &str,
    signal: &Signal,
) -> Result<String, FsError> {
    let bytes = read_all(file, size, display)?;
    signal.check(Verb::Read)?;
    seam::text::decode_for_read(bytes).map_err(|e| e.into_error(Verb::Read, display))
}

/// At most `max` raw bytes of an open regular file of `size` bytes; more is `FS_TOO_LARGE`,
/// also when the file grew after its stat.
pub(crate) fn read_bytes(
    file: &File,
    size: u64,
    display: &str,
    max: u64,
    signal: &Signal,
) -> Result<Vec<u8>, FsError> {
    if size > max {
        return Err(FsError::too_large(display, size, max));
    }
    let cap = usize::try_from(max.saturating_add(1)).unwrap_or(usize::MAX);
    let mut buf = Vec::new();
    buf.try_reserve_exact(
        usize::try_from(size)
            .unwrap_or(0)
            .saturating_add(1)
            .min(cap),
    )
    .map_err(|_| FsError::io(Verb::Read, display, "not enough memory"))?;
    read_into(file, &mut buf, Some(cap)).map_err(|e| os(e, Verb::Read, display))?;
    signal.check(Verb::Read)?;
    if buf.len() as u64 > max {
        return Err(FsError::grew_past_cap(display, max));
    }
    Ok(buf)
}

/// The LF-normalised text of an open file for a diff, or `None` when it is at or over `limit`,
/// changed size while we read it, contains a NUL anywhere, or is not UTF-8.
pub(crate) fn diff_basis(file: &File, size: u64, limit: u64) -> Option<String> {
    if size >= limit {
        return None;
    }
    let cap = usize::try_from(size).ok()?.saturating_add(1);
    let mut buf = Vec::new();
    buf.try_reserve_exact(cap).ok()?;
    read_into(file, &mut buf, Some(cap)).ok()?;
    if buf.len() as u64 != size || buf.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(seam::text::strip_bom(&buf).0).ok()?;
    Some(seam::text::lf_normalize(text).into_owned())
}
