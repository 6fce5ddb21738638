//! Out-of-band access to a store.
//!
//! A test suite must change the world behind a provider's back (the person or linter who edits
//! a file meanwhile, the competitor that appears mid-write) and read every byte back without
//! asking the provider. On disk that is `std::fs`; here it is this handle, which takes the same
//! lock as the providers and follows the same walking rules as the operating system: links on
//! the way are followed, a final link is acted on itself (except by [`MemoryWorld::rewrite_file`]
//! and [`MemoryWorld::chmod`], which follow it like `open(2)` and `chmod(2)` do).
//!
//! Every change mints fresh versions exactly as a provider's changes do, so a provider can
//! never miss one: rewriting a file in place with the same bytes still changes its version.

use crate::store::MemoryStore;
use crate::sync::Arc;
use crate::tree::{DIR_MODE, Node, Tree, WalkError, components, join};
use std::collections::BTreeMap;
use std::io;

/// Permission bits of a FIFO stand-in.
const OTHER_MODE: u32 = 0o644;

/// Permission bits a link reports (as on Linux, where they mean nothing).
const LINK_MODE: u32 = 0o777;

/// A file's content in the store, lent to a snapshot without a copy.
struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// What a snapshot holds at one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemoryEntry {
    /// A regular file: its bytes and permission bits.
    File {
        /// The content: the store's own buffer, shared (a snapshot copies no file's bytes).
        bytes: bytes::Bytes,
        /// Permission bits.
        mode: u32,
    },
    /// A directory and its permission bits.
    Dir {
        /// Permission bits.
        mode: u32,
    },
    /// A symbolic link and its text, exactly as stored.
    Symlink {
        /// The link's text.
        text: String,
    },
    /// A FIFO stand-in.
    Other,
}

/// The kind of an entry, without following a final link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO stand-in.
    Other,
}

/// Kind and permission bits of one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    /// What it is.
    pub kind: MemoryKind,
    /// Permission bits (0777 for a link).
    pub mode: u32,
}

impl MemoryStore {
    /// The out-of-band handle to this store: changes made through it bypass every provider
    /// (and every provider sees them at once).
    pub fn world(&self) -> MemoryWorld {
        MemoryWorld::new(self.clone())
    }
}

/// The out-of-band handle to a [`MemoryStore`]. Paths are absolute in the store's namespace.
#[derive(Clone, Debug)]
pub struct MemoryWorld {
    store: MemoryStore,
}

fn error(kind: io::ErrorKind, what: &str, path: &str) -> io::Error {
    io::Error::new(kind, format!("{path}: {what}"))
}

fn walk_error(e: WalkError, path: &str) -> io::Error {
    match e {
        WalkError::NotFound => error(io::ErrorKind::NotFound, "no such file or directory", path),
        WalkError::NotDir => error(io::ErrorKind::NotADirectory, "not a directory", path),
        WalkError::Loop => io::Error::other(format!("{path}: {}", seam::LOOP_DETAIL)),
    }
}

/// The components of an absolute path whose final component names an entry.
fn entry_path(path: &str) -> io::Result<Vec<String>> {
    if !path.starts_with('/') {
        return Err(error(
            io::ErrorKind::InvalidInput,
            "not an absolute path",
            path,
        ));
    }
    let comps = components(path);
    match comps.last().map(String::as_str) {
        None => Err(error(
            io::ErrorKind::InvalidInput,
            "the root is not an entry",
            path,
        )),
        Some("." | "..") => Err(error(io::ErrorKind::InvalidInput, "names no entry", path)),
        Some(_) => Ok(comps),
    }
}

/// Where the entry `comps` lives: the real path of its parent (which must be a directory, links
/// on the way followed) plus its name.
fn located(tree: &Tree, comps: &[String], path: &str) -> io::Result<Vec<String>> {
    match tree.parent_of(comps) {
        Ok(Some((mut real, name))) => {
            real.push(name.clone());
            Ok(real)
        }
        Ok(None) => {
            let parent = &comps[..comps.len().saturating_sub(1)];
            Err(match tree.realpath(parent) {
                Err(e) => walk_error(e, path),
                Ok(_) => walk_error(WalkError::NotDir, path),
            })
        }
        Err(e) => Err(walk_error(e, path)),
    }
}

/// Where `comps` leads when its final link is followed too; the entry must exist.
fn followed(tree: &Tree, comps: &[String], path: &str) -> io::Result<Vec<String>> {
    let real = tree.realpath(comps).map_err(|e| walk_error(e, path))?;
    if real.is_empty() {
        return Err(error(
            io::ErrorKind::InvalidInput,
            "the root is not an entry",
            path,
        ));
    }
    Ok(real)
}

fn put(tree: &mut Tree, at: &[String], node: Node, path: &str) -> io::Result<()> {
    tree.put(at, node)
        .map(|_| ())
        .map_err(|()| walk_error(WalkError::NotDir, path))
}

impl MemoryWorld {
    /// A handle to `store`.
    pub fn new(store: MemoryStore) -> Self {
        Self { store }
    }

    /// The store this handle changes.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// Makes missing directories on the way to `path` (0755), `path` included; links on the
    /// way are followed. Something other than a directory on the way is `NotADirectory`.
    pub fn create_dir_all(&self, path: &str) -> io::Result<()> {
        if !path.starts_with('/') {
            return Err(error(
                io::ErrorKind::InvalidInput,
                "not an absolute path",
                path,
            ));
        }
        let mut tree = self.store.lock();
        Self::dirs_to(&mut tree, &components(path), path)
    }

    fn dirs_to(tree: &mut Tree, comps: &[String], path: &str) -> io::Result<()> {
        let mut at: Vec<String> = Vec::new();
        for comp in comps {
            at.push(comp.clone());
            match tree.realpath(&at) {
                Ok(real) => {
                    if !matches!(tree.get(&real), Some(Node::Dir { .. })) {
                        return Err(walk_error(WalkError::NotDir, path));
                    }
                    at = real;
                }
                Err(WalkError::NotFound) if tree.lstat(&at).ok().flatten().is_none() => {
                    let dir = tree.new_dir(DIR_MODE);
                    let spot = located(tree, &at, path)?;
                    put(tree, &spot, dir, path)?;
                    at = spot;
                }
                Err(e) => return Err(walk_error(e, path)),
            }
        }
        Ok(())
    }

    /// Creates or replaces the file at `path` with `bytes` and `mode` (a new identity: a file,
    /// link or FIFO stand-in that was there is removed first; a directory is `IsADirectory`).
    /// Missing parents are made 0755.
    pub fn create_file(&self, path: &str, bytes: Vec<u8>, mode: u32) -> io::Result<()> {
        let comps = entry_path(path)?;
        let mut tree = self.store.lock();
        Self::dirs_to(&mut tree, &comps[..comps.len() - 1], path)?;
        let at = located(&tree, &comps, path)?;
        if let Some(Node::Dir { .. }) = tree.get(&at) {
            return Err(error(io::ErrorKind::IsADirectory, "is a directory", path));
        }
        // Whatever else was there is replaced by a new node: a new identity.
        let version = tree.mint();
        let file = Node::File {
            bytes: Arc::new(bytes),
            mode: mode & 0o7777,
            version,
        };
        put(&mut tree, &at, file, path)
    }

    /// Rewrites the file at `path` in place with `bytes`: the same identity and mode, a new
    /// version (always, even for the same bytes — the store has no clock to put back).
    pub fn rewrite_file(&self, path: &str, bytes: Vec<u8>) -> io::Result<()> {
        let comps = entry_path(path)?;
        let mut tree = self.store.lock();
        let at = followed(&tree, &comps, path)?;
        let v = tree.mint();
        match tree.get_mut(&at) {
            Some(Node::File {
                bytes: content,
                version,
                ..
            }) => {
                *content = Arc::new(bytes);
                *version = v;
                Ok(())
            }
            Some(Node::Dir { .. }) => {
                Err(error(io::ErrorKind::IsADirectory, "is a directory", path))
            }
            Some(_) => Err(error(
                io::ErrorKind::InvalidInput,
                "not a regular file",
                path,
            )),
            None => Err(walk_error(WalkError::NotFound, path)),
        }
    }

    fn create_new(&self, path: &str, make: impl FnOnce(&mut Tree) -> Node) -> io::Result<()> {
        let comps = entry_path(path)?;
        let mut tree = self.store.lock();
        let at = located(&tree, &comps, path)?;
        if tree.get(&at).is_some() {
            return Err(error(io::ErrorKind::AlreadyExists, "file exists", path));
        }
        let node = make(&mut tree);
        put(&mut tree, &at, node, path)
    }

    /// Makes the directory `path` (0755); its parent must exist, nothing may be there.
    pub fn create_dir(&self, path: &str) -> io::Result<()> {
        self.create_new(path, |tree| tree.new_dir(DIR_MODE))
    }

    /// Makes a symbolic link at `path` with `text`, stored exactly as given (an absolute text
    /// names a place in this store's namespace). Its parent must exist, nothing may be there.
    pub fn symlink(&self, path: &str, text: &str) -> io::Result<()> {
        self.create_new(path, |tree| Node::Symlink {
            text: text.to_string(),
            version: tree.mint(),
        })
    }

    /// Makes a FIFO stand-in at `path`: an entry that is neither file, directory nor link, and
    /// that providers refuse to read or write. Its parent must exist, nothing may be there.
    pub fn create_other(&self, path: &str) -> io::Result<()> {
        self.create_new(path, |tree| Node::Other {
            mode: OTHER_MODE,
            version: tree.mint(),
        })
    }

    /// Removes the entry at `path` (a final link itself, not what it points at) and everything
    /// beneath it. Nothing there is `NotFound`.
    pub fn remove(&self, path: &str) -> io::Result<()> {
        let comps = entry_path(path)?;
        let mut tree = self.store.lock();
        let at = located(&tree, &comps, path)?;
        match tree.remove(&at) {
            Some(_) => Ok(()),
            None => Err(walk_error(WalkError::NotFound, path)),
        }
    }

    /// Sets the permission bits of what `path` leads to (a final link followed). A file's or a
    /// FIFO stand-in's version changes; a directory's does not (its entries did not change).
    pub fn chmod(&self, path: &str, mode: u32) -> io::Result<()> {
        let comps = entry_path(path)?;
        let mut tree = self.store.lock();
        let at = followed(&tree, &comps, path)?;
        let v = tree.mint();
        match tree.get_mut(&at) {
            Some(Node::File {
                mode: m, version, ..
            })
            | Some(Node::Other {
                mode: m, version, ..
            }) => {
                *m = mode & 0o7777;
                *version = v;
                Ok(())
            }
            Some(Node::Dir { mode: m, .. }) => {
                *m = mode & 0o7777;
                Ok(())
            }
            Some(Node::Symlink { .. }) | None => Err(walk_error(WalkError::NotFound, path)),
        }
    }

    /// Every entry beneath the directory `root` (links on the way to it followed), by path
    /// relative to it, without following any link beneath it.
    pub fn snapshot(&self, root: &str) -> io::Result<BTreeMap<String, MemoryEntry>> {
        let tree = self.store.lock();
        let real = tree
            .realpath(&components(root))
            .map_err(|e| walk_error(e, root))?;
        let Some(Node::Dir { entries, .. }) = tree.get(&real) else {
            return Err(walk_error(WalkError::NotDir, root));
        };
        let mut out = BTreeMap::new();
        let mut stack = vec![(String::new(), entries)];
        while let Some((prefix, entries)) = stack.pop() {
            for (name, node) in entries {
                let rel = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}/{name}")
                };
                let entry = match node {
                    Node::File { bytes, mode, .. } => MemoryEntry::File {
                        bytes: bytes::Bytes::from_owner(Shared(bytes.clone())),
                        mode: *mode,
                    },
                    Node::Dir { entries, mode, .. } => {
                        stack.push((rel.clone(), entries));
                        MemoryEntry::Dir { mode: *mode }
                    }
                    Node::Symlink { text, .. } => MemoryEntry::Symlink { text: text.clone() },
                    Node::Other { .. } => MemoryEntry::Other,
                };
                out.insert(rel, entry);
            }
        }
        Ok(out)
    }

    /// Kind and permission bits of the entry at the absolute `path`, without following a final
    /// link; `None` when nothing is there (also when a parent is missing or not a directory).
    pub fn entry(&self, path: &str) -> io::Result<Option<EntryInfo>> {
        let tree = self.store.lock();
        let node = tree
            .lstat(&components(path))
            .map_err(|e| walk_error(e, path))?;
        Ok(node.map(|n| match n {
            Node::File { mode, .. } => EntryInfo {
                kind: MemoryKind::File,
                mode: *mode,
            },
            Node::Dir { mode, .. } => EntryInfo {
                kind: MemoryKind::Dir,
                mode: *mode,
            },
            Node::Symlink { .. } => EntryInfo {
                kind: MemoryKind::Symlink,
                mode: LINK_MODE,
            },
            Node::Other { mode, .. } => EntryInfo {
                kind: MemoryKind::Other,
                mode: *mode,
            },
        }))
    }

    /// The absolute path `rel` names beneath `root` (a convenience for callers that keep paths
    /// relative to a case root).
    pub fn join(root: &str, rel: &str) -> String {
        let mut comps = components(root);
        comps.extend(components(rel));
        join(&comps)
    }
}
