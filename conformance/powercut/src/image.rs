//! The durable image: what a power cut leaves, node by node. Written down here, in one place,
//! and nowhere else:
//!
//! * **A file's data** is what it held at its last `fsync` or `fdatasync` (through any
//!   descriptor). A file never synced since it was created holds nothing: it comes back empty
//!   if an entry that survived names it. Its mode is the mode it had at that sync.
//! * **A directory's entries** are the names it held, and the nodes they named, at its last
//!   `fsync`. Creating, linking, unlinking and renaming (with or without
//!   `RENAME_NOREPLACE` / `RENAME_EXCHANGE`) change what readers see at once and what survives
//!   only when the directory is synced; a rename between two directories needs both synced. A
//!   directory never synced since it was made has no entries. Syncing a file never makes its
//!   own name durable (ext4 often does, POSIX does not promise it, and a backend that leans on
//!   it loses files on other file systems).
//! * **A symbolic link's target** is written with the link: a link whose entry survives has
//!   its target.
//! * Everything under the backing directory when the layer was mounted is durable as it was.
//! * Not kept: extended attributes (they pass through while the mount is live) and timestamps
//!   (the image is written afresh).
//!
//! Nothing here looks at a clock or the disk: the layer hands it what it read, and
//! [`Image::materialize`] writes the survivors into a fresh directory.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

/// The layer's own number for a node (the FUSE inode number it hands the kernel).
pub type NodeId = u64;

/// What survives of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Durable {
    /// A regular file: its data and mode at its last sync, `None` if never synced.
    File(Option<(Arc<[u8]>, u32)>),
    /// A directory: its entries and mode at its last sync (a new directory: none, 0o755 until
    /// its first sync says otherwise).
    Dir {
        /// Name to node, as of the last sync.
        entries: BTreeMap<OsString, NodeId>,
        /// Permission bits as of the last sync.
        mode: u32,
    },
    /// A symbolic link and its target.
    Symlink(OsString),
    /// A FIFO.
    Fifo(u32),
}

/// What a power cut leaves, for every node the layer has seen.
#[derive(Clone, Debug, Default)]
pub struct Image {
    nodes: HashMap<NodeId, Durable>,
}

/// What a materialized image held, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Materialized {
    /// Regular files written (each hard link counted once).
    pub files: u64,
    /// Directories made, the root not counted.
    pub dirs: u64,
    /// Symbolic links made.
    pub symlinks: u64,
}

impl Image {
    /// The durable state of `node`, if the layer has seen it.
    pub fn get(&self, node: NodeId) -> Option<&Durable> {
        self.nodes.get(&node)
    }

    /// Records a node first seen (made through the layer, or found by a lookup): nothing of it
    /// is durable yet but what [`Durable`] says of a new node. A node already known is kept.
    pub fn seen(&mut self, node: NodeId, fresh: Durable) {
        self.nodes.entry(node).or_insert(fresh);
    }

    /// Sets `node`'s durable state outright (at mount, and at a sync).
    pub fn set(&mut self, node: NodeId, durable: Durable) {
        self.nodes.insert(node, durable);
    }

    /// A file synced: its data and mode now survive.
    pub fn file_synced(&mut self, node: NodeId, data: Arc<[u8]>, mode: u32) {
        self.nodes.insert(node, Durable::File(Some((data, mode))));
    }

    /// A directory synced: its entries (as read at the sync) and mode now survive.
    pub fn dir_synced(&mut self, node: NodeId, entries: BTreeMap<OsString, NodeId>, mode: u32) {
        self.nodes.insert(node, Durable::Dir { entries, mode });
    }

    /// Writes what survives under `root` (the node at the top) into `into`, an existing empty
    /// directory: every directory reached through surviving entries, each file with its synced
    /// data and mode (a node named twice becomes one file with two links), each link with its
    /// target.
    pub fn materialize(&self, root: NodeId, into: &Path) -> io::Result<Materialized> {
        let mut made = Materialized::default();
        let mut first_path: HashMap<NodeId, std::path::PathBuf> = HashMap::new();
        let mut on_path: HashSet<NodeId> = HashSet::new();
        self.write_dir(root, into, &mut made, &mut first_path, &mut on_path)?;
        if let Some(Durable::Dir { mode, .. }) = self.nodes.get(&root) {
            std::fs::set_permissions(into, std::fs::Permissions::from_mode(*mode))?;
        }
        Ok(made)
    }

    fn write_dir(
        &self,
        dir: NodeId,
        at: &Path,
        made: &mut Materialized,
        first_path: &mut HashMap<NodeId, std::path::PathBuf>,
        on_path: &mut HashSet<NodeId>,
    ) -> io::Result<()> {
        let Some(Durable::Dir { entries, .. }) = self.nodes.get(&dir) else {
            return Ok(());
        };
        on_path.insert(dir);
        for (name, &node) in entries {
            let path = at.join(name);
            match self.nodes.get(&node) {
                None => {}
                Some(Durable::File(synced)) => {
                    if let Some(first) = first_path.get(&node) {
                        std::fs::hard_link(first, &path)?;
                        continue;
                    }
                    let (data, mode): (&[u8], u32) = match synced {
                        Some((data, mode)) => (data, *mode),
                        None => (&[], 0o600),
                    };
                    std::fs::write(&path, data)?;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
                    first_path.insert(node, path);
                    made.files += 1;
                }
                Some(Durable::Dir { mode, .. }) => {
                    // A directory reached twice (or inside itself) only through entries that
                    // were never true at once: the first one wins.
                    if on_path.contains(&node) || first_path.contains_key(&node) {
                        continue;
                    }
                    std::fs::DirBuilder::new().mode(0o700).create(&path)?;
                    first_path.insert(node, path.clone());
                    made.dirs += 1;
                    self.write_dir(node, &path, made, first_path, on_path)?;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode))?;
                }
                Some(Durable::Symlink(target)) => {
                    std::os::unix::fs::symlink(target, &path)?;
                    made.symlinks += 1;
                }
                Some(Durable::Fifo(mode)) => {
                    rustix::fs::mknodat(
                        rustix::fs::CWD,
                        &path,
                        rustix::fs::FileType::Fifo,
                        rustix::fs::Mode::from_raw_mode(*mode),
                        0,
                    )?;
                }
            }
        }
        on_path.remove(&dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(entries: &[(&str, NodeId)]) -> Durable {
        Durable::Dir {
            entries: entries
                .iter()
                .map(|(n, i)| (OsString::from(n), *i))
                .collect(),
            mode: 0o755,
        }
    }

    #[test]
    fn only_what_was_synced_is_written() {
        let mut image = Image::default();
        image.set(1, dir(&[("a", 2), ("never-synced", 3), ("sub", 4)]));
        image.file_synced(2, Arc::from(&b"synced"[..]), 0o640);
        image.seen(3, Durable::File(None));
        image.seen(4, dir(&[]));
        // Entries of 4 were never synced: 5 is not reached.
        image.file_synced(5, Arc::from(&b"lost"[..]), 0o600);
        let out = tempfile::tempdir().expect("tempdir");
        let made = image.materialize(1, out.path()).expect("materialize");
        assert_eq!(made.files, 2);
        assert_eq!(made.dirs, 1);
        assert_eq!(std::fs::read(out.path().join("a")).expect("a"), b"synced");
        let mode = std::fs::metadata(out.path().join("a"))
            .expect("meta")
            .permissions();
        assert_eq!(mode.mode() & 0o777, 0o640);
        assert_eq!(
            std::fs::read(out.path().join("never-synced")).expect("n"),
            b""
        );
        let sub: Vec<_> = std::fs::read_dir(out.path().join("sub"))
            .expect("sub")
            .collect();
        assert!(sub.is_empty());
    }

    #[test]
    fn a_node_named_twice_is_one_file_with_two_links() {
        let mut image = Image::default();
        image.set(1, dir(&[("x", 2), ("y", 2), ("l", 3)]));
        image.file_synced(2, Arc::from(&b"both"[..]), 0o644);
        image.seen(3, Durable::Symlink(OsString::from("x")));
        let out = tempfile::tempdir().expect("tempdir");
        let made = image.materialize(1, out.path()).expect("materialize");
        assert_eq!((made.files, made.symlinks), (1, 1));
        use std::os::unix::fs::MetadataExt;
        let x = std::fs::metadata(out.path().join("x")).expect("x");
        let y = std::fs::metadata(out.path().join("y")).expect("y");
        assert_eq!((x.ino(), x.nlink()), (y.ino(), 2));
        assert_eq!(
            std::fs::read_link(out.path().join("l")).expect("l"),
            Path::new("x")
        );
    }

    #[test]
    fn a_later_sync_replaces_the_earlier_one() {
        let mut image = Image::default();
        image.set(1, dir(&[("f", 2)]));
        image.file_synced(2, Arc::from(&b"one"[..]), 0o600);
        image.file_synced(2, Arc::from(&b"two"[..]), 0o600);
        image.seen(2, Durable::File(None));
        let out = tempfile::tempdir().expect("tempdir");
        image.materialize(1, out.path()).expect("materialize");
        assert_eq!(std::fs::read(out.path().join("f")).expect("f"), b"two");
    }
}
