//! The namespace operations: `create_dir`, guarded `remove`, atomic guarded `rename`. Each works
//! on the entry a path names — links on the way to its parent followed, a final link not — and
//! checks what the contract lists in the order it lists it, so that the first failure is the one
//! a backend must report.

use super::{Model, ModelError, Resolved, Version, err, version_of};
use crate::path::Key;
use crate::tree::Node;
use crate::walk::{WalkError, key_of, realpath};
use seam::{CancelPoint, FsError, FsPathKind, Verb};

/// An expected successful `create_dir`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateDirResult {
    /// Whether the call made it.
    pub created: bool,
    /// The directory's version now.
    pub version: Version,
}

/// An expected successful `rename`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameResult {
    /// What moved.
    pub kind: FsPathKind,
    /// Whether a destination entry was replaced.
    pub replaced: bool,
    /// The moved entry's version at its new place.
    pub version: Version,
}

/// Where an entry lives: its display path and the real location of its parent plus its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryAt {
    /// The lexical display path.
    pub display: String,
    /// The real parent plus the final name.
    pub key: Key,
}

impl EntryAt {
    /// The entry's parent, as a target the fence decides on (its display is the entry's, the
    /// message a denial names).
    pub fn parent(&self) -> Resolved {
        Resolved {
            display: self.display.clone(),
            key: Key(self.key.0[..self.key.0.len().saturating_sub(1)].to_vec()),
        }
    }
}

fn path_kind(n: &Node) -> FsPathKind {
    match n {
        Node::File { .. } => FsPathKind::File,
        Node::Dir { .. } => FsPathKind::Directory,
        Node::Symlink { .. } => FsPathKind::Symlink,
        Node::Other { .. } => FsPathKind::Other,
    }
}

impl Model {
    /// The lexical components and display path of `path` for `verb`, refusing the root itself
    /// (it has no parent to hold it).
    fn named(&self, verb: Verb, path: &str) -> Result<(Vec<String>, String), ModelError> {
        let comps = self.lexical(verb, path)?;
        let display = self.display(&comps);
        if comps.is_empty() {
            return Err(err(FsError::io(
                verb,
                &display,
                "the root of the tree is not an entry",
            )));
        }
        Ok((comps, display))
    }

    /// Whether the contract refuses the spelling `path` itself (blank, a NUL, an over-long name):
    /// that refusal comes before anything is decided.
    pub fn refuses(&self, verb: Verb, path: &str) -> bool {
        self.lexical(verb, path).is_err()
    }

    /// What a fencing backend decides a namespace operation on `path` by: the key of the
    /// entry's parent (its real path, the missing rest appended; the parent as spelled when a
    /// file is on the way), shown as the entry's display path. `None` when the path is refused
    /// or a loop is on the way: that failure comes first.
    pub fn fence_parent(&self, verb: Verb, path: &str) -> Option<Resolved> {
        let (comps, display) = self.named(verb, path).ok()?;
        let parent = &comps[..comps.len() - 1];
        let key = match key_of(&self.tree, parent) {
            Ok(k) => k,
            Err(WalkError::NotDir) => parent.to_vec(),
            Err(_) => return None,
        };
        Some(Resolved {
            display,
            key: Key(key),
        })
    }

    /// The entry `path` names, for an operation on something that must exist: a parent that
    /// is missing or not a directory means nothing is there.
    pub fn entry(&self, verb: Verb, path: &str) -> Result<Option<EntryAt>, ModelError> {
        let (comps, display) = self.named(verb, path)?;
        let (name, parent) = comps.split_last().expect("named refuses the root");
        match realpath(&self.tree, parent) {
            Ok(mut real) if matches!(self.tree.get(&real), Some(Node::Dir { .. })) => {
                real.push(name.clone());
                Ok(Some(EntryAt {
                    display,
                    key: Key(real),
                }))
            }
            Ok(_) | Err(WalkError::NotFound) | Err(WalkError::NotDir) => Ok(None),
            Err(WalkError::Loop) => Err(Self::loop_error(verb, &display)),
        }
    }

    /// The place `path` names for something to be put there: its parent must be a directory
    /// that exists (missing: `FS_NOT_FOUND`, the parent is missing; a file: a parent segment
    /// is not a directory).
    pub fn place(&self, verb: Verb, path: &str) -> Result<EntryAt, ModelError> {
        let (comps, display) = self.named(verb, path)?;
        let (name, parent) = comps.split_last().expect("named refuses the root");
        match realpath(&self.tree, parent) {
            Ok(mut real) if matches!(self.tree.get(&real), Some(Node::Dir { .. })) => {
                real.push(name.clone());
                Ok(EntryAt {
                    display,
                    key: Key(real),
                })
            }
            Ok(_) | Err(WalkError::NotDir) => {
                Err(err(FsError::parent_not_directory(verb, &display)))
            }
            Err(WalkError::NotFound) => Err(err(FsError::parent_missing(verb, &display))),
            Err(WalkError::Loop) => Err(Self::loop_error(verb, &display)),
        }
    }

    /// Where `create_dir(path)` would put the directory, making missing parents with
    /// `parents`: the location, and the missing parents (outermost first) it would make.
    pub fn mkdir_place(
        &self,
        path: &str,
        parents: bool,
    ) -> Result<(EntryAt, Vec<Vec<String>>), ModelError> {
        let verb = Verb::Mkdir;
        let (comps, display) = self.named(verb, path)?;
        let (name, parent) = comps.split_last().expect("named refuses the root");
        let not_dir = || err(FsError::parent_not_directory(verb, &display));
        let parent_key = match key_of(&self.tree, parent) {
            Ok(k) => k,
            Err(WalkError::NotDir) => return Err(not_dir()),
            Err(WalkError::Loop) => return Err(Self::loop_error(verb, &display)),
            Err(WalkError::NotFound) => return Err(err(FsError::parent_missing(verb, &display))),
        };
        let mut missing = Vec::new();
        for i in 1..=parent_key.len() {
            match self.tree.get(&parent_key[..i]) {
                None => missing.push(parent_key[..i].to_vec()),
                Some(Node::Dir { .. }) if missing.is_empty() => {}
                // A file, a link that did not lead anywhere (dangling), anything else.
                Some(_) => return Err(not_dir()),
            }
        }
        if !missing.is_empty() && !parents {
            return Err(err(FsError::parent_missing(verb, &display)));
        }
        let mut key = parent_key;
        key.push(name.clone());
        Ok((
            EntryAt {
                display,
                key: Key(key),
            },
            missing,
        ))
    }

    /// `create_dir(path, {parents, exist_ok})`, made (the fence, if any, already let it
    /// through).
    pub fn create_dir(
        &mut self,
        path: &str,
        parents: bool,
        exist_ok: bool,
    ) -> Result<CreateDirResult, ModelError> {
        self.create_dir_cut(path, parents, exist_ok, None)
    }

    /// [`Model::create_dir`], cancelled at `cancel` (a backend with cancel points shows
    /// `before_stage` once everything is checked and before anything is made, `committed`
    /// after): cancelled before, it fails `FS_ABORTED` and makes nothing.
    pub fn create_dir_cut(
        &mut self,
        path: &str,
        parents: bool,
        exist_ok: bool,
        cancel: Option<CancelPoint>,
    ) -> Result<CreateDirResult, ModelError> {
        let (at, missing) = self.mkdir_place(path, parents)?;
        match self.tree.get(&at.key.0) {
            Some(n @ Node::Dir { .. }) if exist_ok => {
                return Ok(CreateDirResult {
                    created: false,
                    version: version_of(n),
                });
            }
            Some(Node::Dir { .. }) => return Err(err(FsError::directory_exists(&at.display))),
            Some(_) => return Err(err(FsError::not_directory_in_the_way(&at.display))),
            None => {}
        }
        if cancel == Some(CancelPoint::BeforeStage) {
            return Err(err(FsError::aborted(Verb::Mkdir)));
        }
        for dir in missing {
            let node = self.tree.new_dir(None);
            self.tree.put(&dir, node);
        }
        let node = self.tree.new_dir(None);
        self.tree.put(&at.key.0, node);
        let version = self.tree.get(&at.key.0).map(version_of).ok_or_else(|| {
            err(FsError::io(
                Verb::Mkdir,
                &at.display,
                "model lost the directory",
            ))
        })?;
        Ok(CreateDirResult {
            created: true,
            version,
        })
    }

    /// `remove(path, {if_version, directory})`.
    pub fn remove(
        &mut self,
        path: &str,
        if_version: Option<Version>,
        directory: bool,
    ) -> Result<FsPathKind, ModelError> {
        self.remove_cut(path, if_version, directory, None)
    }

    /// [`Model::remove`], cancelled at `cancel` (see [`Model::create_dir_cut`]).
    pub fn remove_cut(
        &mut self,
        path: &str,
        if_version: Option<Version>,
        directory: bool,
        cancel: Option<CancelPoint>,
    ) -> Result<FsPathKind, ModelError> {
        let verb = Verb::Remove;
        let at = self.entry(verb, path)?;
        let display = match &at {
            Some(a) => a.display.clone(),
            None => self.display(&self.lexical(verb, path)?),
        };
        // Nothing there: not found — or stale, for a caller who saw something at a version.
        let absent = || match if_version {
            Some(_) => err(FsError::changed_since_read(verb, &display)),
            None => err(FsError::not_found(verb, &display)),
        };
        let Some(at) = at else {
            return Err(absent());
        };
        let Some(node) = self.tree.get(&at.key.0) else {
            return Err(absent());
        };
        if let Some(v) = if_version
            && v != version_of(node)
        {
            return Err(err(FsError::changed_since_read(verb, &display)));
        }
        if let Node::Dir { entries, .. } = node {
            if !directory {
                return Err(err(FsError::is_a_directory(verb, &display)));
            }
            if !entries.is_empty() {
                return Err(err(FsError::directory_not_empty(&display)));
            }
        }
        let kind = path_kind(node);
        if cancel == Some(CancelPoint::BeforeStage) {
            return Err(err(FsError::aborted(verb)));
        }
        self.tree.remove(&at.key.0);
        Ok(kind)
    }

    /// `rename(from, to, {if_version, replace})`.
    pub fn rename(
        &mut self,
        from: &str,
        to: &str,
        if_version: Option<Version>,
        replace: Option<Version>,
    ) -> Result<RenameResult, ModelError> {
        self.rename_cut(from, to, if_version, replace, None)
    }

    /// [`Model::rename`], cancelled at `cancel` (see [`Model::create_dir_cut`]).
    pub fn rename_cut(
        &mut self,
        from: &str,
        to: &str,
        if_version: Option<Version>,
        replace: Option<Version>,
        cancel: Option<CancelPoint>,
    ) -> Result<RenameResult, ModelError> {
        let (source, dest) = self.rename_ends(from, to, if_version.is_some())?;
        let verb = Verb::Rename;
        let Some(node) = self.tree.get(&source.key.0) else {
            return Err(err(FsError::not_found(verb, &source.display)));
        };
        if let Some(v) = if_version
            && v != version_of(node)
        {
            return Err(err(FsError::changed_since_read(verb, &source.display)));
        }
        let source_is_dir = matches!(node, Node::Dir { .. });
        let dest = dest?;
        if dest.key.0.starts_with(&source.key.0) {
            return Err(err(FsError::rename_into_itself(
                &source.display,
                &dest.display,
            )));
        }
        let existing = self.tree.get(&dest.key.0);
        let replaced = existing.is_some();
        match (existing, replace) {
            (Some(_), None) => return Err(err(FsError::destination_exists(&dest.display))),
            (Some(Node::Dir { .. }), Some(_)) => {
                return Err(err(FsError::is_a_directory(verb, &dest.display)));
            }
            (Some(_), Some(_)) if source_is_dir => {
                return Err(err(FsError::is_a_directory(verb, &source.display)));
            }
            (Some(n), Some(v)) if version_of(n) != v => {
                return Err(err(FsError::changed_since_read(verb, &dest.display)));
            }
            (None, Some(_)) => {
                return Err(err(FsError::changed_since_read(verb, &dest.display)));
            }
            _ => {}
        }
        let kind = path_kind(node);
        if cancel == Some(CancelPoint::BeforeStage) {
            return Err(err(FsError::aborted(verb)));
        }
        let mut moved = node.clone();
        let fresh = self.tree.mint();
        match &mut moved {
            Node::File { version, .. }
            | Node::Symlink { version, .. }
            | Node::Other { version } => {
                *version = fresh;
            }
            Node::Dir { touch_v, .. } => *touch_v = fresh,
        }
        self.tree.remove(&source.key.0);
        self.tree.put(&dest.key.0, moved);
        let version = self
            .tree
            .get(&dest.key.0)
            .map(version_of)
            .ok_or_else(|| err(FsError::io(verb, &dest.display, "model lost the entry")))?;
        Ok(RenameResult {
            kind,
            replaced,
            version,
        })
    }

    /// The two ends of a rename: the source entry (absent: `FS_NOT_FOUND`, or `FS_STALE_VERSION`
    /// when `guarded`), and the
    /// destination place or why there is none (checked after the source's guard).
    #[allow(clippy::type_complexity)]
    pub fn rename_ends(
        &self,
        from: &str,
        to: &str,
        guarded: bool,
    ) -> Result<(EntryAt, Result<EntryAt, ModelError>), ModelError> {
        let verb = Verb::Rename;
        let display = self.display(&self.lexical(verb, from)?);
        let dest = self.place(verb, to);
        // A bad spelling of either path is refused before anything is looked at — the
        // destination's too, before a loop on the source's way is found.
        if let Err(e) = &dest
            && self.lexical(verb, to).is_err()
        {
            return Err(e.clone());
        }
        let source = self.entry(verb, from)?;
        match source {
            Some(s) if self.tree.get(&s.key.0).is_some() => Ok((s, dest)),
            _ if guarded => Err(err(FsError::changed_since_read(verb, &display))),
            _ => Err(err(FsError::not_found(verb, &display))),
        }
    }
}
