//! Reading: opening a regular file safely (never blocking on a FIFO), whole-text reads with the
//! decoding rules, capped byte reads, and the bounded diff basis of an overwrite.

use crate::errors::{fail, io as io_err, os};
use crate::version::{Minter, Probe};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use seam::{FsError, FsErrorCode, Signal, Verb};
use std::fs::File;
use std::io::Read;

/// Reads treat a NUL within this many leading bytes as binary.
pub(crate) const NUL_SAMPLE: usize = 8192;

/// Flags for opening something to read without following surprises: no controlling terminal,
/// and no blocking on a FIFO.
pub(crate) fn read_flags(follow: bool) -> OFlags {
    let mut f = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    if !follow {
        f |= OFlags::NOFOLLOW;
    }
    f
}

/// Opens `path` (relative to `dir`) for reading.
pub(crate) fn open_read<Fd: AsFd>(dir: Fd, path: &str, follow: bool) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(dir, path, read_flags(follow), Mode::empty())
}

/// Opens a regular file for a read operation, with the read rules for every failure.
pub(crate) fn open_regular<Fd: AsFd>(
    minter: Minter,
    dir: Fd,
    path: &str,
    display: &str,
) -> Result<(File, Probe), FsError> {
    let fd = match open_read(dir, path, true) {
        Ok(fd) => fd,
        Err(e) if crate::errors::is_absent(e) => {
            return Err(fail(FsErrorCode::NotFound, "read", display, "not found"));
        }
        Err(Errno::NXIO) => {
            return Err(fail(
                FsErrorCode::NotRegularFile,
                "read",
                display,
                "not a regular file",
            ));
        }
        Err(e) => return Err(os(e, "read", display)),
    };
    let probe = minter.probe_fd(&fd).map_err(|e| os(e, "read", display))?;
    if !probe.is_file() {
        return Err(fail(
            FsErrorCode::NotRegularFile,
            "read",
            display,
            "not a regular file",
        ));
    }
    Ok((File::from(fd), probe))
}

/// A reader without std's extra size probes (we already know the size).
struct Plain<'a>(&'a File);

impl Read for Plain<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut f = self.0;
        f.read(buf)
    }
}

/// Reads the rest of `file` into a buffer sized for `size_hint` bytes.
pub(crate) fn read_all(file: &File, size_hint: u64, display: &str) -> Result<Vec<u8>, FsError> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(usize::try_from(size_hint).unwrap_or(0).saturating_add(1))
        .map_err(|_| fail(FsErrorCode::IoError, "read", display, "not enough memory"))?;
    Plain(file)
        .read_to_end(&mut buf)
        .map_err(|e| io_err(e, "read", display))?;
    Ok(buf)
}

/// Applies the read decoding rules: NUL in the first 8192 bytes is binary, strict UTF-8, and a
/// leading BOM is removed.
pub(crate) fn decode_read(mut bytes: Vec<u8>, display: &str) -> Result<String, FsError> {
    if bytes[..bytes.len().min(NUL_SAMPLE)].contains(&0) {
        return Err(fail(FsErrorCode::NotText, "read", display, "binary file"));
    }
    if bytes.starts_with(seam::text::BOM) {
        bytes.drain(..seam::text::BOM.len());
    }
    String::from_utf8(bytes)
        .map_err(|_| fail(FsErrorCode::NotText, "read", display, "invalid UTF-8 text"))
}

/// The whole text of a regular file.
pub(crate) fn read_text<Fd: AsFd>(
    minter: Minter,
    dir: Fd,
    path: &str,
    display: &str,
    signal: &Signal,
) -> Result<String, FsError> {
    let (file, probe) = open_regular(minter, dir, path, display)?;
    let bytes = read_all(&file, probe.size, display)?;
    signal.check(Verb::Read)?;
    decode_read(bytes, display)
}

/// At most `max` raw bytes; more is `FS_TOO_LARGE`, also when the file grew after its stat.
pub(crate) fn read_bytes<Fd: AsFd>(
    minter: Minter,
    dir: Fd,
    path: &str,
    display: &str,
    max: u64,
    signal: &Signal,
) -> Result<Vec<u8>, FsError> {
    let (file, probe) = open_regular(minter, dir, path, display)?;
    if probe.size > max {
        return Err(fail(
            FsErrorCode::TooLarge,
            "read",
            display,
            &format!("{} bytes exceeds the {max}-byte limit", probe.size),
        ));
    }
    let mut buf = Vec::with_capacity(usize::try_from(probe.size).unwrap_or(0));
    Plain(&file)
        .take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| io_err(e, "read", display))?;
    signal.check(Verb::Read)?;
    if buf.len() as u64 > max {
        return Err(fail(
            FsErrorCode::TooLarge,
            "read",
            display,
            &format!("content exceeds the {max}-byte limit"),
        ));
    }
    Ok(buf)
}

/// The LF-normalised text of an open file for a diff, or `None` when it is at or over `limit`,
/// changed size while we read it, contains a NUL anywhere, or is not UTF-8.
pub(crate) fn diff_basis(file: &File, size: u64, limit: u64) -> Option<String> {
    if size >= limit {
        return None;
    }
    let mut buf = Vec::with_capacity(usize::try_from(size).ok()?.saturating_add(1));
    Plain(file)
        .take(size.saturating_add(1))
        .read_to_end(&mut buf)
        .ok()?;
    if buf.len() as u64 != size || buf.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(seam::text::strip_bom(&buf).0).ok()?;
    Some(seam::text::lf_normalize(text).into_owned())
}
