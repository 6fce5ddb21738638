//! The store's tree and how paths walk it.
//!
//! Walking follows the kernel's rules rather than string rules, because that is what the
//! contract's keys mean on every other backend: one component at a time, a link's text spliced
//! in front of what remains, `..` applied to the real directory reached so far, at most
//! [`MAX_LINKS`] links per walk. Every version comes from one counter ([`Tree::mint`]), so a
//! number is never handed out twice, whichever node or instance asks for it.

use crate::sync::Arc;
use std::collections::{BTreeMap, VecDeque};

/// A node's version as the token callers see (`m` and the number).
pub(crate) fn token(version: u64) -> seam::FsVersion {
    seam::FsVersion::new(format!("m{version}"))
}

/// How many links one walk may follow before it is a loop (Linux `MAXSYMLINKS`).
pub(crate) const MAX_LINKS: usize = 40;

/// Permission bits of a directory made without being asked for specific ones.
pub(crate) const DIR_MODE: u32 = 0o755;

/// Permission bits of a file a write creates.
pub(crate) const NEW_FILE_MODE: u32 = 0o600;

/// One object of the tree.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A directory; `version` changes when its set of entries (names or kinds) changes.
    Dir {
        entries: BTreeMap<String, Node>,
        mode: u32,
        version: u64,
    },
    /// A regular file. The bytes are shared so that a read or a stream can take them out of
    /// the lock without copying; a change always installs new bytes.
    File {
        bytes: Arc<Vec<u8>>,
        mode: u32,
        version: u64,
    },
    /// A symbolic link and its text, exactly as it was given.
    Symlink { text: String, version: u64 },
    /// Anything else (the stand-in for a FIFO): never read, never written.
    Other { mode: u32, version: u64 },
}

impl Node {
    /// The node's version number.
    pub(crate) fn version(&self) -> u64 {
        match self {
            Node::Dir { version, .. }
            | Node::File { version, .. }
            | Node::Symlink { version, .. }
            | Node::Other { version, .. } => *version,
        }
    }

    fn same_kind(&self, other: &Node) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

/// Why a walk stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WalkError {
    /// A component does not exist (ENOENT).
    NotFound,
    /// A non-directory was used as a directory (ENOTDIR).
    NotDir,
    /// Too many links (ELOOP).
    Loop,
}

/// The components of an absolute path (empty ones dropped; `.` and `..` kept for the walk).
pub(crate) fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// The absolute path of components.
pub(crate) fn join(comps: &[String]) -> String {
    if comps.is_empty() {
        return "/".to_string();
    }
    let mut out = String::new();
    for c in comps {
        out.push('/');
        out.push_str(c);
    }
    out
}

/// The whole namespace, and the counter that mints every version in it.
#[derive(Debug)]
pub(crate) struct Tree {
    root: Node,
    counter: u64,
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

impl Tree {
    /// A namespace holding only its root directory.
    pub(crate) fn new() -> Self {
        Self {
            root: Node::Dir {
                entries: BTreeMap::new(),
                mode: DIR_MODE,
                version: 1,
            },
            counter: 1,
        }
    }

    /// A version number never handed out before.
    pub(crate) fn mint(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// The node at exactly these components (no link followed).
    pub(crate) fn get(&self, comps: &[String]) -> Option<&Node> {
        let mut node = &self.root;
        for c in comps {
            match node {
                Node::Dir { entries, .. } => node = entries.get(c)?,
                _ => return None,
            }
        }
        Some(node)
    }

    /// The mutable node at exactly these components (no link followed).
    pub(crate) fn get_mut(&mut self, comps: &[String]) -> Option<&mut Node> {
        let mut node = &mut self.root;
        for c in comps {
            match node {
                Node::Dir { entries, .. } => node = entries.get_mut(c)?,
                _ => return None,
            }
        }
        Some(node)
    }

    /// The canonical components of `comps`, following every link including a final one.
    pub(crate) fn realpath(&self, comps: &[String]) -> Result<Vec<String>, WalkError> {
        let mut stack: Vec<String> = Vec::new();
        let mut queue: VecDeque<String> = comps.iter().cloned().collect();
        let mut links = 0usize;
        while let Some(c) = queue.pop_front() {
            if c == "." {
                continue;
            }
            if c == ".." {
                stack.pop();
                continue;
            }
            let Some(Node::Dir { entries, .. }) = self.get(&stack) else {
                return Err(WalkError::NotDir);
            };
            match entries.get(&c) {
                None => return Err(WalkError::NotFound),
                Some(Node::Dir { .. }) => stack.push(c),
                Some(Node::File { .. } | Node::Other { .. }) => {
                    if !queue.is_empty() {
                        return Err(WalkError::NotDir);
                    }
                    stack.push(c);
                }
                Some(Node::Symlink { text, .. }) => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(WalkError::Loop);
                    }
                    if text.starts_with('/') {
                        stack.clear();
                    }
                    for part in text.split('/').filter(|p| !p.is_empty()).rev() {
                        queue.push_front(part.to_string());
                    }
                }
            }
        }
        Ok(stack)
    }

    /// What `comps` leads to, following every link (stat(2)): `Ok(None)` when nothing is
    /// there, also for a dangling link and a path through a regular file; `Err` for a loop.
    pub(crate) fn stat_follow(&self, comps: &[String]) -> Result<Option<&Node>, WalkError> {
        match self.realpath(comps) {
            Ok(real) => Ok(self.get(&real)),
            Err(WalkError::NotFound | WalkError::NotDir) => Ok(None),
            Err(WalkError::Loop) => Err(WalkError::Loop),
        }
    }

    /// The real path of the parent of `comps` and its final name, when that parent is a
    /// directory; `Ok(None)` when the parent is missing or not a directory.
    pub(crate) fn parent_of<'c>(
        &self,
        comps: &'c [String],
    ) -> Result<Option<(Vec<String>, &'c String)>, WalkError> {
        let Some((name, parent)) = comps.split_last() else {
            return Ok(None);
        };
        match self.realpath(parent) {
            Ok(real) if matches!(self.get(&real), Some(Node::Dir { .. })) => Ok(Some((real, name))),
            Ok(_) | Err(WalkError::NotFound | WalkError::NotDir) => Ok(None),
            Err(WalkError::Loop) => Err(WalkError::Loop),
        }
    }

    /// What `comps` names without following its final link (lstat(2)).
    pub(crate) fn lstat(&self, comps: &[String]) -> Result<Option<&Node>, WalkError> {
        if comps.is_empty() {
            return Ok(Some(&self.root));
        }
        let Some((real, name)) = self.parent_of(comps)? else {
            return Ok(None);
        };
        if name == "." || name == ".." {
            // Not a name an entry can have: walk it like any other path.
            return self.stat_follow(comps);
        }
        match self.get(&real) {
            Some(Node::Dir { entries, .. }) => Ok(entries.get(name)),
            _ => Ok(None),
        }
    }

    /// The key of a lexical path: its real path, or — when something is missing — the real
    /// path of its nearest existing ancestor followed by the rest of the spelling, so that the
    /// key of a missing path does not change when it is created. `Err` is `NotDir` or `Loop`.
    pub(crate) fn key_of(&self, display: &[String]) -> Result<Vec<String>, WalkError> {
        match self.realpath(display) {
            Ok(real) => Ok(real),
            Err(WalkError::NotFound) => {
                for i in (0..display.len()).rev() {
                    if let Ok(mut base) = self.realpath(&display[..i]) {
                        base.extend_from_slice(&display[i..]);
                        return Ok(base);
                    }
                }
                Ok(display.to_vec())
            }
            Err(e) => Err(e),
        }
    }

    /// Where a write of `key` lands now: the parent as a walk finds it today (a parent swapped
    /// for a link to a directory after resolution is followed, as a path would be), then the
    /// name. Missing parents are to be made beneath the deepest one that exists; one that exists
    /// but is not a directory — a file, or a link the write would have to create through —
    /// is `NotDir`. A loop on the way is `Loop`. The result is a path whose every existing
    /// component is a real directory, so [`Tree::get`] answers for it without following links.
    pub(crate) fn landing(&self, key: &[String]) -> Result<Vec<String>, WalkError> {
        let Some((name, parent)) = key.split_last() else {
            return Ok(Vec::new());
        };
        let is_dir = |comps: &[String]| matches!(self.get(comps), Some(Node::Dir { .. }));
        match self.realpath(parent) {
            Ok(real) if is_dir(&real) => {
                let mut out = real;
                out.push(name.clone());
                return Ok(out);
            }
            Ok(_) | Err(WalkError::NotDir) => return Err(WalkError::NotDir),
            Err(WalkError::Loop) => return Err(WalkError::Loop),
            Err(WalkError::NotFound) => {}
        }
        let mut base = None;
        for i in (0..parent.len()).rev() {
            match self.realpath(&parent[..i]) {
                Ok(real) if is_dir(&real) => {
                    base = Some((real, i));
                    break;
                }
                Ok(_) | Err(WalkError::NotDir) => return Err(WalkError::NotDir),
                Err(WalkError::Loop) => return Err(WalkError::Loop),
                Err(WalkError::NotFound) => {}
            }
        }
        let Some((mut at, start)) = base else {
            return Err(WalkError::NotDir);
        };
        for comp in &parent[start..] {
            if comp == "." || comp == ".." {
                // A walk would have collapsed these; a landing never contains them.
                return Err(WalkError::NotDir);
            }
            at.push(comp.clone());
            match self.get(&at) {
                None | Some(Node::Dir { .. }) => {}
                Some(_) => return Err(WalkError::NotDir),
            }
        }
        at.push(name.clone());
        Ok(at)
    }

    /// Puts `node` at `comps`, whose parent must be a directory (no link followed), replacing
    /// what was there. The parent's version changes when its set of entries does (a new name,
    /// or a different kind under an old one). Returns the node replaced; `Err(())` when the
    /// parent is not a directory.
    pub(crate) fn put(&mut self, comps: &[String], node: Node) -> Result<Option<Node>, ()> {
        let Some((name, parent)) = comps.split_last() else {
            return Err(());
        };
        let v = self.mint();
        let Some(Node::Dir {
            entries, version, ..
        }) = self.get_mut(parent)
        else {
            return Err(());
        };
        let kind_changes = entries.get(name).is_none_or(|old| !old.same_kind(&node));
        let old = entries.insert(name.clone(), node);
        if kind_changes {
            *version = v;
        }
        Ok(old)
    }

    /// Removes what is at `comps` (no link followed) and everything beneath it.
    pub(crate) fn remove(&mut self, comps: &[String]) -> Option<Node> {
        let (name, parent) = comps.split_last()?;
        let v = self.mint();
        let Some(Node::Dir {
            entries, version, ..
        }) = self.get_mut(parent)
        else {
            return None;
        };
        let old = entries.remove(name)?;
        *version = v;
        Some(old)
    }

    /// A new, empty directory with `mode`.
    pub(crate) fn new_dir(&mut self, mode: u32) -> Node {
        Node::Dir {
            entries: BTreeMap::new(),
            mode,
            version: self.mint(),
        }
    }

    /// Makes every missing directory on the way to `landing`'s parent (a path from
    /// [`Tree::landing`], so what exists on the way is a directory).
    pub(crate) fn make_parents(&mut self, landing: &[String]) -> Result<(), ()> {
        let parent = &landing[..landing.len().saturating_sub(1)];
        for i in 1..=parent.len() {
            match self.get(&parent[..i]) {
                Some(Node::Dir { .. }) => {}
                Some(_) => return Err(()),
                None => {
                    let dir = self.new_dir(DIR_MODE);
                    self.put(&parent[..i], dir)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(path: &str) -> Vec<String> {
        components(path)
    }

    fn file(tree: &mut Tree, path: &str, text: &str) {
        let version = tree.mint();
        let node = Node::File {
            bytes: Arc::new(text.as_bytes().to_vec()),
            mode: 0o644,
            version,
        };
        assert!(tree.put(&c(path), node).is_ok(), "put {path}");
    }

    fn dir(tree: &mut Tree, path: &str) {
        let d = tree.new_dir(DIR_MODE);
        assert!(tree.put(&c(path), d).is_ok(), "mkdir {path}");
    }

    fn link(tree: &mut Tree, path: &str, text: &str) {
        let version = tree.mint();
        let node = Node::Symlink {
            text: text.into(),
            version,
        };
        assert!(tree.put(&c(path), node).is_ok(), "link {path}");
    }

    #[test]
    fn walks_follow_links_and_apply_dotdot_to_the_real_directory() {
        let mut t = Tree::new();
        dir(&mut t, "/w");
        dir(&mut t, "/w/d");
        dir(&mut t, "/w/x");
        file(&mut t, "/w/d/a", "a");
        link(&mut t, "/w/x/l", "../d");
        assert_eq!(t.realpath(&c("/w/x/l/a")), Ok(c("/w/d/a")));
        // `..` after a link climbs from where the link led, not from where it was spelled.
        assert_eq!(t.realpath(&c("/w/x/l/../x")), Ok(c("/w/x")));
        link(&mut t, "/w/abs", "/w/d/a");
        assert_eq!(t.realpath(&c("/w/abs")), Ok(c("/w/d/a")));
        assert_eq!(t.realpath(&c("/w/d/a/b")), Err(WalkError::NotDir));
        assert_eq!(t.realpath(&c("/w/nope/b")), Err(WalkError::NotFound));
    }

    #[test]
    fn forty_links_resolve_and_the_forty_first_is_a_loop() {
        let mut t = Tree::new();
        file(&mut t, "/f", "x");
        link(&mut t, "/l0", "f");
        for i in 1..=40 {
            link(&mut t, &format!("/l{i}"), &format!("l{}", i - 1));
        }
        assert_eq!(t.realpath(&c("/l39")), Ok(c("/f")));
        assert_eq!(t.realpath(&c("/l40")), Err(WalkError::Loop));
        link(&mut t, "/me", "me");
        assert_eq!(t.stat_follow(&c("/me")).err(), Some(WalkError::Loop));
        assert!(matches!(t.lstat(&c("/me")), Ok(Some(Node::Symlink { .. }))));
    }

    #[test]
    fn keys_of_missing_paths_hang_off_the_nearest_real_ancestor() {
        let mut t = Tree::new();
        dir(&mut t, "/w");
        dir(&mut t, "/w/d");
        link(&mut t, "/w/l", "d");
        link(&mut t, "/w/dangling", "nowhere");
        file(&mut t, "/w/f", "x");
        assert_eq!(t.key_of(&c("/w/l/new/deeper")), Ok(c("/w/d/new/deeper")));
        // A dangling link's key is the link's own path: nothing it points at exists.
        assert_eq!(t.key_of(&c("/w/dangling")), Ok(c("/w/dangling")));
        assert_eq!(t.key_of(&c("/w/f/x")), Err(WalkError::NotDir));
    }

    #[test]
    fn a_landing_never_creates_through_a_file_or_a_link() {
        let mut t = Tree::new();
        dir(&mut t, "/w");
        link(&mut t, "/w/dangling", "nowhere");
        file(&mut t, "/w/f", "x");
        assert_eq!(t.landing(&c("/w/a/b/c")), Ok(c("/w/a/b/c")));
        assert_eq!(t.landing(&c("/w/dangling/x")), Err(WalkError::NotDir));
        assert_eq!(t.landing(&c("/w/f/x")), Err(WalkError::NotDir));
        let landing = c("/w/a/b/c");
        assert!(t.make_parents(&landing).is_ok());
        assert!(matches!(t.get(&c("/w/a/b")), Some(Node::Dir { .. })));
    }

    #[test]
    fn a_directory_version_moves_with_its_entries_only() {
        let mut t = Tree::new();
        dir(&mut t, "/w");
        let v0 = t.get(&c("/w")).map(Node::version);
        file(&mut t, "/w/a", "1");
        let v1 = t.get(&c("/w")).map(Node::version);
        assert_ne!(v0, v1, "a new entry");
        file(&mut t, "/w/a", "2");
        assert_eq!(
            t.get(&c("/w")).map(Node::version),
            v1,
            "same name, same kind"
        );
        assert!(t.remove(&c("/w/a")).is_some());
        let v2 = t.get(&c("/w")).map(Node::version);
        assert_ne!(v1, v2, "an entry gone");
        assert_ne!(v0, v2, "never reused");
    }
}
