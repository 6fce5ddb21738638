//! The FUSE file system: every operation passed through to the backing directory with the
//! `*at` calls on the nodes' descriptors, every `fsync` and `fsyncdir` recorded in the image
//! (the backing directory itself is never synced: it only has to hold what readers see). Once
//! the power is cut every operation fails with `EIO`, as a disk that is gone would.
//!
//! One lock serializes the operations, so a cut falls between two of them, never inside one.
//! Attributes and entries are given to the kernel with no time to live: it asks again rather
//! than trusting a cache.

use crate::nodes::{Nodes, attr};
use fuser::{
    AccessFlags, Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow,
    WriteFlags,
};
use rustix::fs::{AtFlags, Mode, OFlags, Timespec, Timestamps};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const TTL: Duration = Duration::ZERO;
const GENERATION: Generation = Generation(0);

/// What the layer counted, for reports and tests.
#[derive(Debug, Default)]
pub struct Counters {
    /// Operations served before the cut.
    pub ops: AtomicU64,
    /// `fsync`/`fdatasync` of files.
    pub file_syncs: AtomicU64,
    /// `fsync` of directories.
    pub dir_syncs: AtomicU64,
    /// Operations refused because the power was cut.
    pub refused: AtomicU64,
}

/// The layer's state behind its one lock.
pub(crate) struct Inner {
    pub nodes: Nodes,
    files: HashMap<u64, OwnedFd>,
    dirs: HashMap<u64, Vec<(OsString, u64, FileType)>>,
    next_fh: u64,
    /// Set once: the power is cut.
    pub cut: bool,
    /// The power goes when the operations served reach this many (the operation that would
    /// be this one is refused).
    pub cut_at: u64,
    /// The power goes right after this many more syncs (the sync itself is kept).
    pub syncs_left: Option<u64>,
}

impl Inner {
    /// A sync was recorded: the power goes now if it was to go after this one.
    fn count_sync(&mut self) {
        match self.syncs_left {
            Some(n) if n <= 1 => {
                self.syncs_left = None;
                self.cut = true;
            }
            Some(n) => self.syncs_left = Some(n - 1),
            None => {}
        }
    }
}

/// The file system the kernel talks to.
pub(crate) struct Layer {
    pub inner: Arc<Mutex<Inner>>,
    pub counters: Arc<Counters>,
}

/// What a `setattr` asks to change.
struct SetAttr {
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
    size: Option<u64>,
    atime: Option<TimeOrNow>,
    mtime: Option<TimeOrNow>,
    fh: Option<FileHandle>,
}

fn errno(e: rustix::io::Errno) -> Errno {
    Errno::from_i32(e.raw_os_error())
}

fn io_errno(e: std::io::Error) -> Errno {
    Errno::from(e)
}

fn stamp(t: Option<TimeOrNow>) -> Timespec {
    match t {
        None => Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        Some(TimeOrNow::Now) => Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        },
        Some(TimeOrNow::SpecificTime(t)) => {
            let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
            Timespec {
                tv_sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(d.subsec_nanos()),
            }
        }
    }
}

impl Layer {
    pub fn new(nodes: Nodes, counters: Arc<Counters>) -> Self {
        Layer {
            inner: Arc::new(Mutex::new(Inner {
                nodes,
                files: HashMap::new(),
                dirs: HashMap::new(),
                next_fh: 1,
                cut: false,
                cut_at: u64::MAX,
                syncs_left: None,
            })),
            counters,
        }
    }

    /// The state, or `EIO` once the power is cut.
    fn live(&self) -> Result<MutexGuard<'_, Inner>, Errno> {
        let mut guard = self.inner.lock().map_err(|_| Errno::EIO)?;
        if !guard.cut && self.counters.ops.load(Ordering::Relaxed) >= guard.cut_at {
            guard.cut = true;
        }
        if guard.cut {
            self.counters.refused.fetch_add(1, Ordering::Relaxed);
            return Err(Errno::EIO);
        }
        self.counters.ops.fetch_add(1, Ordering::Relaxed);
        Ok(guard)
    }

    fn entry(
        &self,
        inner: &mut Inner,
        parent: INodeNo,
        name: &OsStr,
    ) -> Result<fuser::FileAttr, Errno> {
        let (id, stat) = inner.nodes.child(parent.0, name).map_err(errno)?;
        Ok(attr(id, &stat))
    }

    fn parent_fd(inner: &Inner, parent: INodeNo) -> Result<&OwnedFd, Errno> {
        inner
            .nodes
            .get(parent.0)
            .map(|n| &n.fd)
            .ok_or(Errno::ENOENT)
    }

    fn proc_path(inner: &Inner, ino: INodeNo) -> Result<String, Errno> {
        inner
            .nodes
            .get(ino.0)
            .map(|n| n.proc_path())
            .ok_or(Errno::ENOENT)
    }

    fn do_setattr(&self, ino: INodeNo, set: SetAttr) -> Result<fuser::FileAttr, Errno> {
        let SetAttr {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
            fh,
        } = set;
        let inner = self.live()?;
        let node = inner.nodes.get(ino.0).ok_or(Errno::ENOENT)?;
        let path = node.proc_path();
        if let Some(mode) = mode {
            if node.kind == FileType::Symlink {
                return Err(Errno::EOPNOTSUPP);
            }
            rustix::fs::chmod(&path, Mode::from_raw_mode(mode & 0o7777)).map_err(errno)?;
        }
        if uid.is_some() || gid.is_some() {
            rustix::fs::chownat(
                &node.fd,
                "",
                uid.map(rustix::fs::Uid::from_raw),
                gid.map(rustix::fs::Gid::from_raw),
                AtFlags::EMPTY_PATH,
            )
            .map_err(errno)?;
        }
        if let Some(size) = size {
            match fh.and_then(|fh| inner.files.get(&fh.0)) {
                Some(fd) => rustix::fs::ftruncate(fd, size).map_err(errno)?,
                None => {
                    let fd =
                        rustix::fs::open(&path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())
                            .map_err(errno)?;
                    rustix::fs::ftruncate(&fd, size).map_err(errno)?;
                }
            }
        }
        if atime.is_some() || mtime.is_some() {
            let times = Timestamps {
                last_access: stamp(atime),
                last_modification: stamp(mtime),
            };
            if node.kind == FileType::Symlink {
                rustix::fs::utimensat(&node.fd, "", &times, AtFlags::EMPTY_PATH).map_err(errno)?;
            } else {
                rustix::fs::utimensat(rustix::fs::CWD, path.as_str(), &times, AtFlags::empty())
                    .map_err(errno)?;
            }
        }
        let stat = inner.nodes.stat(ino.0).map_err(errno)?;
        Ok(attr(ino.0, &stat))
    }

    /// A sync of `ino` (a file's `fsync`/`fdatasync`, a directory's `fsync`): recorded in the
    /// image, counted in `counter`, and the power goes after it if it was to.
    fn sync(&self, ino: INodeNo, counter: &AtomicU64) -> Result<(), Errno> {
        let mut inner = self.live()?;
        inner.nodes.synced(ino.0).map_err(io_errno)?;
        counter.fetch_add(1, Ordering::Relaxed);
        inner.count_sync();
        Ok(())
    }

    fn open_handle(inner: &mut Inner, fd: OwnedFd) -> FileHandle {
        let fh = inner.next_fh;
        inner.next_fh += 1;
        inner.files.insert(fh, fd);
        FileHandle(fh)
    }

    /// The flags a reopened descriptor gets: the caller's, less what the kernel already did
    /// (creation), `O_APPEND` (the kernel gives every write its offset) and `O_NOFOLLOW` (the
    /// kernel resolved the name; the magic link that reopens the object is a link).
    fn reopen_flags(flags: i32) -> OFlags {
        let mut f = OFlags::from_bits_retain(flags as u32);
        f.remove(
            OFlags::CREATE
                | OFlags::EXCL
                | OFlags::NOCTTY
                | OFlags::APPEND
                | OFlags::TRUNC
                | OFlags::NOFOLLOW,
        );
        f | OFlags::CLOEXEC
    }
}

impl Filesystem for Layer {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let r = self
            .live()
            .and_then(|mut inner| self.entry(&mut inner, parent, name));
        match r {
            Ok(a) => reply.entry(&TTL, &a, GENERATION),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let r = self
            .live()
            .and_then(|inner| inner.nodes.stat(ino.0).map_err(errno));
        match r {
            Ok(stat) => reply.attr(&TTL, &attr(ino.0, &stat)),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let set = SetAttr {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
            fh,
        };
        match self.do_setattr(ino, set) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let r = self.live().and_then(|inner| {
            let node = inner.nodes.get(ino.0).ok_or(Errno::ENOENT)?;
            rustix::fs::readlinkat(&node.fd, "", Vec::new()).map_err(errno)
        });
        match r {
            Ok(target) => reply.data(target.as_bytes()),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let r = self.live().and_then(|mut inner| {
            let fd = Self::parent_fd(&inner, parent)?;
            let kind = rustix::fs::FileType::from_raw_mode(mode);
            rustix::fs::mknodat(
                fd,
                name,
                kind,
                Mode::from_raw_mode(mode & !umask & 0o7777),
                u64::from(rdev),
            )
            .map_err(errno)?;
            self.entry(&mut inner, parent, name)
        });
        match r {
            Ok(a) => reply.entry(&TTL, &a, GENERATION),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let r = self.live().and_then(|mut inner| {
            let fd = Self::parent_fd(&inner, parent)?;
            rustix::fs::mkdirat(fd, name, Mode::from_raw_mode(mode & !umask & 0o7777))
                .map_err(errno)?;
            self.entry(&mut inner, parent, name)
        });
        match r {
            Ok(a) => reply.entry(&TTL, &a, GENERATION),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = self.live().and_then(|inner| {
            let fd = Self::parent_fd(&inner, parent)?;
            rustix::fs::unlinkat(fd, name, AtFlags::empty()).map_err(errno)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = self.live().and_then(|inner| {
            let fd = Self::parent_fd(&inner, parent)?;
            rustix::fs::unlinkat(fd, name, AtFlags::REMOVEDIR).map_err(errno)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(
        &self,
        _req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let r = self.live().and_then(|mut inner| {
            let fd = Self::parent_fd(&inner, parent)?;
            rustix::fs::symlinkat(target, fd, link_name).map_err(errno)?;
            self.entry(&mut inner, parent, link_name)
        });
        match r {
            Ok(a) => reply.entry(&TTL, &a, GENERATION),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let r = self.live().and_then(|inner| {
            let from = Self::parent_fd(&inner, parent)?;
            let to = Self::parent_fd(&inner, newparent)?;
            rustix::fs::renameat_with(
                from,
                name,
                to,
                newname,
                rustix::fs::RenameFlags::from_bits_retain(flags.bits()),
            )
            .map_err(errno)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let r = self.live().and_then(|mut inner| {
            let node = inner.nodes.get(ino.0).ok_or(Errno::ENOENT)?;
            let to = Self::parent_fd(&inner, newparent)?;
            rustix::fs::linkat(&node.fd, "", to, newname, AtFlags::EMPTY_PATH).map_err(errno)?;
            self.entry(&mut inner, newparent, newname)
        });
        match r {
            Ok(a) => reply.entry(&TTL, &a, GENERATION),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let r = self.live().and_then(|mut inner| {
            let path = Self::proc_path(&inner, ino)?;
            let fd = rustix::fs::open(&path, Self::reopen_flags(flags.0), Mode::empty())
                .map_err(errno)?;
            Ok(Self::open_handle(&mut inner, fd))
        });
        match r {
            Ok(fh) => reply.opened(fh, FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let r = self.live().and_then(|inner| {
            let fd = inner.files.get(&fh.0).ok_or(Errno::EBADF)?;
            let mut buf = vec![0u8; size as usize];
            let mut got = 0;
            while got < buf.len() {
                let n =
                    rustix::io::pread(fd, &mut buf[got..], offset + got as u64).map_err(errno)?;
                if n == 0 {
                    break;
                }
                got += n;
            }
            buf.truncate(got);
            Ok(buf)
        });
        match r {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let r = self.live().and_then(|inner| {
            let fd = inner.files.get(&fh.0).ok_or(Errno::EBADF)?;
            let mut done = 0;
            while done < data.len() {
                let n =
                    rustix::io::pwrite(fd, &data[done..], offset + done as u64).map_err(errno)?;
                done += n;
            }
            u32::try_from(done).map_err(|_| Errno::EIO)
        });
        match r {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        match self.live() {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        // A descriptor is closed even after the cut (nothing of it reaches the image).
        if let Ok(mut inner) = self.inner.lock() {
            inner.files.remove(&fh.0);
        }
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.sync(ino, &self.counters.file_syncs) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let r = self.live().and_then(|mut inner| {
            let path = Self::proc_path(&inner, ino)?;
            let mut listing = vec![
                (OsString::from("."), ino.0, FileType::Directory),
                (OsString::from(".."), 1, FileType::Directory),
            ];
            for entry in std::fs::read_dir(path).map_err(io_errno)? {
                let entry = entry.map_err(io_errno)?;
                let name = entry.file_name();
                // The entry's number is the layer's, as `stat` gives it (a backend may match
                // the two); an entry gone since the listing is skipped.
                let Ok((id, stat)) = inner.nodes.child(ino.0, &name) else {
                    continue;
                };
                listing.push((name, id, crate::nodes::kind_of(&stat)));
            }
            let fh = inner.next_fh;
            inner.next_fh += 1;
            inner.dirs.insert(fh, listing);
            Ok(FileHandle(fh))
        });
        match r {
            Ok(fh) => reply.opened(fh, FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let inner = match self.live() {
            Ok(inner) => inner,
            Err(e) => return reply.error(e),
        };
        let Some(listing) = inner.dirs.get(&fh.0) else {
            return reply.error(Errno::EBADF);
        };
        for (i, (name, ino, kind)) in listing.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), i as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.dirs.remove(&fh.0);
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.sync(ino, &self.counters.dir_syncs) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let r = self.live().and_then(|inner| {
            let root = inner.nodes.get(1).ok_or(Errno::ENOENT)?;
            rustix::fs::fstatvfs(&root.fd).map_err(errno)
        });
        match r {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                u32::try_from(s.f_bsize).unwrap_or(4096),
                u32::try_from(s.f_namemax).unwrap_or(255),
                u32::try_from(s.f_frsize).unwrap_or(4096),
            ),
            Err(e) => reply.error(e),
        }
    }

    fn setxattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        let r = self.live().and_then(|inner| {
            let path = Self::proc_path(&inner, ino)?;
            rustix::fs::setxattr(
                path.as_str(),
                name,
                value,
                rustix::fs::XattrFlags::from_bits_retain(flags as u32),
            )
            .map_err(errno)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        let r = self.live().and_then(|inner| {
            let path = Self::proc_path(&inner, ino)?;
            let mut buf = vec![0u8; size as usize];
            let n = rustix::fs::getxattr(path.as_str(), name, &mut buf[..]).map_err(errno)?;
            buf.truncate(n);
            Ok((n, buf))
        });
        match r {
            Ok((n, _)) if size == 0 => reply.size(u32::try_from(n).unwrap_or(u32::MAX)),
            Ok((_, buf)) => reply.data(&buf),
            Err(e) => reply.error(e),
        }
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let r = self.live().and_then(|inner| {
            let path = Self::proc_path(&inner, ino)?;
            let mut buf = vec![0u8; size as usize];
            let n = rustix::fs::listxattr(path.as_str(), &mut buf[..]).map_err(errno)?;
            buf.truncate(n);
            Ok((n, buf))
        });
        match r {
            Ok((n, _)) if size == 0 => reply.size(u32::try_from(n).unwrap_or(u32::MAX)),
            Ok((_, buf)) => reply.data(&buf),
            Err(e) => reply.error(e),
        }
    }

    fn removexattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = self.live().and_then(|inner| {
            let path = Self::proc_path(&inner, ino)?;
            rustix::fs::removexattr(path.as_str(), name).map_err(errno)
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        match self.live() {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let r = self.live().and_then(|mut inner| {
            let dir = Self::parent_fd(&inner, parent)?;
            let mut oflags =
                OFlags::from_bits_retain(flags as u32) | OFlags::CREATE | OFlags::CLOEXEC;
            oflags.remove(OFlags::APPEND);
            let fd = rustix::fs::openat(
                dir,
                name,
                oflags,
                Mode::from_raw_mode(mode & !umask & 0o7777),
            )
            .map_err(errno)?;
            let a = self.entry(&mut inner, parent, name)?;
            Ok((a, Self::open_handle(&mut inner, fd)))
        });
        match r {
            Ok((a, fh)) => reply.created(&TTL, &a, GENERATION, fh, FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }
}
