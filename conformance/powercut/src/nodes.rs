//! The layer's nodes: each one an `O_PATH` descriptor of the backing object it stands for, so
//! an operation reaches the object itself however it was renamed or linked since, and the
//! backing inode cannot be freed and its number reused while the layer still answers for it
//! (nodes live until the layer is unmounted; the kernel's `forget` is not needed for a run of
//! minutes over a small tree).

use crate::image::{Durable, Image, NodeId};
use fuser::{FileAttr, FileType, INodeNo};
use rustix::fs::{Mode, OFlags, Stat};
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One node.
pub(crate) struct Node {
    /// `O_PATH | O_NOFOLLOW` on the backing object.
    pub fd: OwnedFd,
    /// What it is.
    pub kind: FileType,
}

impl Node {
    /// The path that reopens the object (a magic link: it reaches the object itself).
    pub fn proc_path(&self) -> String {
        format!("/proc/self/fd/{}", self.fd.as_raw_fd())
    }
}

/// Every node the layer answers for, and what of each survives a cut.
#[derive(Default)]
pub(crate) struct Nodes {
    nodes: HashMap<NodeId, Node>,
    by_backing: HashMap<(u64, u64), NodeId>,
    next: NodeId,
    /// What a power cut leaves.
    pub image: Image,
}

pub(crate) fn kind_of(stat: &Stat) -> FileType {
    match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
        rustix::fs::FileType::Directory => FileType::Directory,
        rustix::fs::FileType::Symlink => FileType::Symlink,
        rustix::fs::FileType::Fifo => FileType::NamedPipe,
        rustix::fs::FileType::Socket => FileType::Socket,
        rustix::fs::FileType::CharacterDevice => FileType::CharDevice,
        rustix::fs::FileType::BlockDevice => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

fn time(secs: i64, nanos: i64) -> SystemTime {
    let nanos = Duration::from_nanos(u64::try_from(nanos).unwrap_or(0));
    match u64::try_from(secs) {
        Ok(s) => UNIX_EPOCH + Duration::from_secs(s) + nanos,
        Err(_) => UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()) + nanos,
    }
}

/// The attributes the kernel is given for `node`, from a `stat` of its backing object.
pub(crate) fn attr(node: NodeId, stat: &Stat) -> FileAttr {
    FileAttr {
        ino: INodeNo(node),
        size: u64::try_from(stat.st_size).unwrap_or(0),
        blocks: u64::try_from(stat.st_blocks).unwrap_or(0),
        atime: time(stat.st_atime, stat.st_atime_nsec as i64),
        mtime: time(stat.st_mtime, stat.st_mtime_nsec as i64),
        ctime: time(stat.st_ctime, stat.st_ctime_nsec as i64),
        crtime: UNIX_EPOCH,
        kind: kind_of(stat),
        perm: (stat.st_mode & 0o7777) as u16,
        nlink: u32::try_from(stat.st_nlink).unwrap_or(u32::MAX),
        uid: stat.st_uid,
        gid: stat.st_gid,
        rdev: u32::try_from(stat.st_rdev).unwrap_or(0),
        blksize: 4096,
        flags: 0,
    }
}

impl Nodes {
    /// The table over `backing`, everything in it durable as it is now.
    pub fn new(backing: &std::path::Path) -> std::io::Result<Self> {
        let mut nodes = Nodes {
            next: 1,
            ..Nodes::default()
        };
        let fd = rustix::fs::open(
            backing,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let stat = rustix::fs::fstat(&fd)?;
        let root = nodes.insert(fd, &stat);
        debug_assert_eq!(root, 1);
        nodes.settle(root)?;
        Ok(nodes)
    }

    /// Makes everything under `dir` durable as it is now (the state at mount).
    fn settle(&mut self, dir: NodeId) -> std::io::Result<()> {
        let entries = self.entries(dir)?;
        let mut children = Vec::new();
        for id in entries.values() {
            children.push(*id);
        }
        for child in children {
            let Some(node) = self.nodes.get(&child) else {
                continue;
            };
            match node.kind {
                FileType::Directory => self.settle(child)?,
                FileType::RegularFile => {
                    let (data, mode) = self.contents(child)?;
                    self.image.file_synced(child, data, mode);
                }
                _ => {}
            }
        }
        let mode = self.mode(dir)?;
        self.image.dir_synced(dir, entries, mode);
        Ok(())
    }

    /// The node for a backing object just opened `O_PATH`: the one already standing for it,
    /// or a new one (recorded in the image as new: nothing of it synced).
    pub fn insert(&mut self, fd: OwnedFd, stat: &Stat) -> NodeId {
        let key = (stat.st_dev, stat.st_ino);
        if let Some(&id) = self.by_backing.get(&key) {
            return id;
        }
        let id = self.next;
        self.next += 1;
        let kind = kind_of(stat);
        let fresh = match kind {
            FileType::Directory => Durable::Dir {
                entries: Default::default(),
                mode: stat.st_mode & 0o7777,
            },
            FileType::Symlink => Durable::Symlink(
                rustix::fs::readlinkat(&fd, "", Vec::new())
                    .map(|t| OsString::from_vec(t.into_bytes()))
                    .unwrap_or_default(),
            ),
            FileType::NamedPipe => Durable::Fifo(stat.st_mode & 0o7777),
            _ => Durable::File(None),
        };
        self.image.seen(id, fresh);
        self.by_backing.insert(key, id);
        self.nodes.insert(id, Node { fd, kind });
        id
    }

    /// A node by number.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(&id)
    }

    /// Looks `name` up in `parent`: its node and a fresh `stat`.
    pub fn child(&mut self, parent: NodeId, name: &OsStr) -> rustix::io::Result<(NodeId, Stat)> {
        let dir = self.nodes.get(&parent).ok_or(rustix::io::Errno::NOENT)?;
        let fd = rustix::fs::openat(
            &dir.fd,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let stat = rustix::fs::fstat(&fd)?;
        Ok((self.insert(fd, &stat), stat))
    }

    /// A fresh `stat` of `id`.
    pub fn stat(&self, id: NodeId) -> rustix::io::Result<Stat> {
        let node = self.nodes.get(&id).ok_or(rustix::io::Errno::NOENT)?;
        rustix::fs::fstat(&node.fd)
    }

    fn mode(&self, id: NodeId) -> std::io::Result<u32> {
        Ok(self.stat(id)?.st_mode & 0o7777)
    }

    /// What a file holds now, and its mode.
    pub fn contents(&self, id: NodeId) -> std::io::Result<(std::sync::Arc<[u8]>, u32)> {
        let node = self.nodes.get(&id).ok_or(std::io::ErrorKind::NotFound)?;
        let data = std::fs::read(node.proc_path())?;
        Ok((data.into(), self.mode(id)?))
    }

    /// What a directory holds now: every name and its node.
    pub fn entries(
        &mut self,
        dir: NodeId,
    ) -> std::io::Result<std::collections::BTreeMap<OsString, NodeId>> {
        let path = self
            .nodes
            .get(&dir)
            .ok_or(std::io::ErrorKind::NotFound)?
            .proc_path();
        let mut out = std::collections::BTreeMap::new();
        for entry in std::fs::read_dir(path)? {
            let name = entry?.file_name();
            match self.child(dir, &name) {
                Ok((id, _)) => {
                    out.insert(name, id);
                }
                // Gone between the listing and the look: not there.
                Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(out)
    }

    /// Records a sync of `id` (a file's data, or a directory's entries).
    pub fn synced(&mut self, id: NodeId) -> std::io::Result<()> {
        let kind = self
            .nodes
            .get(&id)
            .ok_or(std::io::ErrorKind::NotFound)?
            .kind;
        match kind {
            FileType::Directory => {
                let entries = self.entries(id)?;
                let mode = self.mode(id)?;
                self.image.dir_synced(id, entries, mode);
            }
            FileType::RegularFile => {
                let (data, mode) = self.contents(id)?;
                self.image.file_synced(id, data, mode);
            }
            _ => {}
        }
        Ok(())
    }
}
