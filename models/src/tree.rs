//! The model's world: nested maps of nodes, and a counter that mints versions.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One object in the model's tree.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    File {
        /// Shared: a snapshot or a clone of the model holds the same buffer.
        bytes: Bytes,
        mode: u32,
        version: u64,
    },
    Dir {
        entries: BTreeMap<String, Node>,
        /// `None` when the provider created it (its mode depends on the umask).
        mode: Option<u32>,
        id: u64,
        /// Bumped when the set of entries (names or kinds) changes.
        entries_v: u64,
        /// Bumped by every mutation that may have touched the directory.
        touch_v: u64,
    },
    Symlink {
        target: String,
        version: u64,
    },
    Other {
        version: u64,
    },
}

/// What is at one relative path, without a file's content (for a generator's hints).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outline {
    /// A regular file: its size and its first bytes.
    File {
        /// Its size in bytes.
        size: u64,
        /// Its first bytes (as many as asked for), a view of the file's own buffer: an outline
        /// copies no content.
        head: Bytes,
        /// Its version (within one model, one version is one content).
        version: u64,
    },
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else.
    Other,
}

/// What a snapshot of the world holds at one relative path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SnapEntry {
    /// A regular file with its bytes and permission bits (`None`: not compared).
    File {
        /// Raw content, shared with whatever the snapshot was taken of where it can be (cloning
        /// a snapshot copies no file's bytes).
        #[serde(with = "crate::tree::bytes_or_text")]
        bytes: Bytes,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A directory (`mode` `None`: not compared).
    Dir {
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A symbolic link with its text (root-absolute targets start with `/`).
    Symlink {
        /// The link text.
        target: String,
    },
    /// Anything else (a FIFO).
    Other,
}

impl SnapEntry {
    /// Whether an observed entry satisfies this expected one (`None` modes match anything).
    pub fn admits(&self, observed: &SnapEntry) -> bool {
        match (self, observed) {
            (SnapEntry::File { bytes: a, mode: ma }, SnapEntry::File { bytes: b, mode: mb }) => {
                a == b && (ma.is_none() || mb.is_none() || ma == mb)
            }
            (SnapEntry::Dir { mode: ma }, SnapEntry::Dir { mode: mb }) => {
                ma.is_none() || mb.is_none() || ma == mb
            }
            (a, b) => a == b,
        }
    }

    /// The same entry with its mode forgotten (for backends that do not claim permissions).
    pub fn without_mode(&self) -> SnapEntry {
        match self {
            SnapEntry::File { bytes, .. } => SnapEntry::File {
                bytes: bytes.clone(),
                mode: None,
            },
            SnapEntry::Dir { .. } => SnapEntry::Dir { mode: None },
            other => other.clone(),
        }
    }
}

/// Serialises bytes as a string when they are UTF-8, else as an array, so traces stay readable.
pub(crate) mod bytes_or_text {
    #[cfg(doc)]
    use bytes::Bytes;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Text(String),
        Bytes(Vec<u8>),
    }

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(bytes) {
            Ok(t) => Repr::Text(t.to_string()).serialize(s),
            Err(_) => Repr::Bytes(bytes.to_vec()).serialize(s),
        }
    }

    /// Into a `Vec<u8>` or a [`Bytes`] (which takes the vector without a copy).
    pub fn deserialize<'de, D: Deserializer<'de>, T: From<Vec<u8>>>(d: D) -> Result<T, D::Error> {
        Ok(T::from(match Repr::deserialize(d)? {
            Repr::Text(t) => t.into_bytes(),
            Repr::Bytes(b) => b,
        }))
    }
}

/// The tree and its version counter.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    pub root: Node,
    counter: u64,
}

impl Tree {
    pub fn new() -> Self {
        Tree {
            root: Node::Dir {
                entries: BTreeMap::new(),
                mode: None,
                id: 0,
                entries_v: 1,
                touch_v: 1,
            },
            counter: 1,
        }
    }

    /// How many version numbers have been handed out: every change hands one out.
    pub fn minted(&self) -> u64 {
        self.counter
    }

    /// A version number never handed out before.
    pub fn mint(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// The node at exactly these components (no link is followed).
    pub fn get(&self, comps: &[String]) -> Option<&Node> {
        let mut node = &self.root;
        for c in comps {
            match node {
                Node::Dir { entries, .. } => node = entries.get(c)?,
                _ => return None,
            }
        }
        Some(node)
    }

    /// The mutable node at exactly these components.
    pub fn get_mut(&mut self, comps: &[String]) -> Option<&mut Node> {
        let mut node = &mut self.root;
        for c in comps {
            match node {
                Node::Dir { entries, .. } => node = entries.get_mut(c)?,
                _ => return None,
            }
        }
        Some(node)
    }

    /// Marks a directory as touched by a mutation (and, when `entries` is set, as having
    /// changed its set of entries).
    pub fn touch(&mut self, dir: &[String], entries: bool) {
        let v = self.mint();
        if let Some(Node::Dir {
            entries_v, touch_v, ..
        }) = self.get_mut(dir)
        {
            *touch_v = v;
            if entries {
                *entries_v = v;
            }
        }
    }

    /// Marks every existing directory from the root down to `dir` as touched by a mutation: a
    /// backend may stage, create and remove entries anywhere on the way to its target, so any of
    /// them may legitimately get a new version (none of them must lose or gain an entry).
    pub fn touch_along(&mut self, dir: &[String]) {
        let v = self.mint();
        for i in 0..=dir.len() {
            if let Some(Node::Dir { touch_v, .. }) = self.get_mut(&dir[..i]) {
                *touch_v = v;
            }
        }
    }

    /// Puts `node` at `comps` (the parent must be a directory), replacing what was there.
    /// Returns false when the parent is not a directory.
    pub fn put(&mut self, comps: &[String], node: Node) -> bool {
        let Some((name, parent)) = comps.split_last() else {
            return false;
        };
        let replaced_kind_same = matches!(
            (self.get(comps), &node),
            (Some(Node::File { .. }), Node::File { .. })
        );
        match self.get_mut(parent) {
            Some(Node::Dir { entries, .. }) => {
                entries.insert(name.clone(), node);
            }
            _ => return false,
        }
        self.touch(parent, !replaced_kind_same);
        true
    }

    /// Removes whatever is at `comps`.
    pub fn remove(&mut self, comps: &[String]) -> bool {
        let Some((name, parent)) = comps.split_last() else {
            return false;
        };
        let removed = match self.get_mut(parent) {
            Some(Node::Dir { entries, .. }) => entries.remove(name).is_some(),
            _ => false,
        };
        if removed {
            self.touch(parent, true);
        }
        removed
    }

    /// A new, empty directory node.
    pub fn new_dir(&mut self, mode: Option<u32>) -> Node {
        let v = self.mint();
        Node::Dir {
            entries: BTreeMap::new(),
            mode,
            id: v,
            entries_v: v,
            touch_v: v,
        }
    }

    /// Every entry under the root, by relative path.
    pub fn snapshot(&self) -> BTreeMap<String, SnapEntry> {
        self.walk(&|node| match node {
            Node::File { bytes, mode, .. } => SnapEntry::File {
                bytes: bytes.clone(),
                mode: Some(*mode),
            },
            Node::Dir { mode, .. } => SnapEntry::Dir { mode: *mode },
            Node::Symlink { target, .. } => SnapEntry::Symlink {
                target: target.clone(),
            },
            Node::Other { .. } => SnapEntry::Other,
        })
    }

    /// Every entry under the root, by relative path, without a copy of any file's content:
    /// sizes and the first `head` bytes.
    pub fn outline(&self, head: usize) -> BTreeMap<String, Outline> {
        self.walk(&|node| match node {
            Node::File { bytes, version, .. } => Outline::File {
                size: bytes.len() as u64,
                head: bytes.slice(..bytes.len().min(head)),
                version: *version,
            },
            Node::Dir { .. } => Outline::Dir,
            Node::Symlink { .. } => Outline::Symlink,
            Node::Other { .. } => Outline::Other,
        })
    }

    /// Every entry under the root as `entry` makes it, by relative path.
    fn walk<E>(&self, entry: &dyn Fn(&Node) -> E) -> BTreeMap<String, E> {
        fn go<E>(
            prefix: &str,
            node: &Node,
            entry: &dyn Fn(&Node) -> E,
            out: &mut BTreeMap<String, E>,
        ) {
            if let Node::Dir { entries, .. } = node {
                for (name, child) in entries {
                    let path = if prefix.is_empty() {
                        name.clone()
                    } else {
                        format!("{prefix}/{name}")
                    };
                    out.insert(path.clone(), entry(child));
                    go(&path, child, entry, out);
                }
            }
        }
        let mut out = BTreeMap::new();
        go("", &self.root, entry, &mut out);
        out
    }
}
