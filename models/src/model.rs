//! The model's operations: what every call of the contract must return, and how the world
//! changes.

use crate::edit::{EditError, NotTextReason, apply_literal_edit};
use crate::path::{Key, PathProblem, display, lexical, raw_display};
use crate::text::{DIFF_BASIS_DEFAULT, NotText, decode_for_read, diff_basis, lf_normalize};
use crate::tree::{Node, SnapEntry, Tree};
use crate::walk::{WalkError, key_of, lstat, realpath, stat_follow};
use crate::world::{Competitor, WorldEffect, WorldOp};
use seam::{CancelPoint, FsErrorCode, FsKind, FsPathKind, WriteOperation};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the model is set up for one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    /// The display path of the test root in the provider's world (no trailing slash).
    pub root: String,
    /// The provider's exclusive byte limit on each side of an overwrite's diff basis.
    pub diff_basis_max_bytes: u64,
}

impl ModelConfig {
    /// A configuration with the seed's default diff-basis limit.
    pub fn new(root: impl Into<String>) -> Self {
        Self {
            root: root.into(),
            diff_basis_max_bytes: DIFF_BASIS_DEFAULT,
        }
    }
}

/// An expected failure: the code is the contract, the message is what the local provider says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelError {
    /// The expected code.
    pub code: FsErrorCode,
    /// The expected message.
    pub message: String,
}

impl ModelError {
    fn new(code: FsErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// A model version. Files, links and other objects get a fresh number on every change;
/// directories carry their identity and two counters (see the crate docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Version {
    /// A file, symlink or other object at this change number.
    Object {
        /// The change number.
        n: u64,
    },
    /// A directory.
    Dir {
        /// Which directory (a new one gets a new id).
        id: u64,
        /// Last change of its set of entries: a different value means the token must differ.
        entries: u64,
        /// Last mutation that may have touched it: the same value means the token must not
        /// differ.
        touch: u64,
    },
}

/// A resolved target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The lexical display path.
    pub display: String,
    /// The identity.
    pub key: Key,
}

/// Expected `stat` metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// Version.
    pub version: Version,
    /// Kind after following links.
    pub kind: FsKind,
    /// Size of a regular file.
    pub size: Option<u64>,
}

/// Expected `lstat` metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// Version of the entry itself.
    pub version: Version,
    /// Kind without following the final link.
    pub kind: FsPathKind,
    /// Size of a file, or length of a link's text.
    pub size: Option<u64>,
}

/// One expected listing entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Name.
    pub name: String,
    /// Kind after following links; a broken link is `Other`.
    pub kind: FsKind,
    /// Display path of the child.
    pub display: String,
    /// Identity of the child.
    pub key: Key,
    /// Version, absent for a broken link.
    pub version: Option<Version>,
    /// Size of a regular file.
    pub size: Option<u64>,
}

/// A write's guard, with model versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Create only if nothing is there.
    CreateIfAbsent,
    /// Replace only at this version.
    ReplaceIfVersion(Version),
}

/// What happens to a mutation while it runs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Interference {
    /// Nothing.
    #[default]
    None,
    /// Cancelled when it reaches this point.
    Cancel(CancelPoint),
    /// Something appears at the target after the guard check (at `BeforeStage`).
    Competitor(Competitor),
}

/// An expected successful write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteResult {
    /// Create or update.
    pub operation: WriteOperation,
    /// The new version.
    pub version: Version,
    /// LF-normalised prior text, when the basis is available.
    pub before: Option<String>,
    /// LF-normalised content.
    pub after: String,
}

/// An expected mutation outcome, with the competitor (if one applied) to play at `BeforeStage`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutationResult<T> {
    /// Success or the expected failure.
    pub outcome: Result<T, ModelError>,
    /// The change a competitor makes, when it applies.
    pub competitor: Option<WorldEffect>,
}

/// The expected result of a successful edit.
pub type EditOutcomeModel = (Version, String, String);

/// The reference model.
#[derive(Clone, Debug)]
pub struct Model {
    config: ModelConfig,
    tree: Tree,
}

const LOOP_TEXT: &str = "too many levels of symbolic links";

fn version_of(node: &Node) -> Version {
    match node {
        Node::File { version, .. } | Node::Symlink { version, .. } | Node::Other { version } => {
            Version::Object { n: *version }
        }
        Node::Dir {
            id,
            entries_v,
            touch_v,
            ..
        } => Version::Dir {
            id: *id,
            entries: *entries_v,
            touch: *touch_v,
        },
    }
}

fn kind_of(node: &Node) -> FsKind {
    match node {
        Node::File { .. } => FsKind::File,
        Node::Dir { .. } => FsKind::Directory,
        _ => FsKind::Other,
    }
}

fn size_of(node: &Node) -> Option<u64> {
    match node {
        Node::File { bytes, .. } => Some(bytes.len() as u64),
        _ => None,
    }
}

impl Model {
    /// An empty world under `config.root`.
    pub fn new(config: ModelConfig) -> Self {
        Self {
            config,
            tree: Tree::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    fn display(&self, comps: &[String]) -> String {
        display(&self.config.root, comps)
    }

    fn lexical(&self, verb: &str, path: &str) -> Result<Vec<String>, ModelError> {
        lexical(&self.config.root, path).map_err(|p| {
            let raw = raw_display(&self.config.root, path);
            match p {
                PathProblem::Blank => ModelError::new(
                    FsErrorCode::NotFound,
                    "file_path must be a non-empty string",
                ),
                PathProblem::Nul => ModelError::new(
                    FsErrorCode::NotFound,
                    format!("cannot {verb} \"{raw}\": the path contains a NUL byte"),
                ),
                PathProblem::NameTooLong => ModelError::new(
                    FsErrorCode::NotFound,
                    format!("cannot {verb} \"{raw}\": a path component is longer than 255 bytes"),
                ),
                PathProblem::Outside => ModelError::new(
                    FsErrorCode::IoError,
                    format!("cannot {verb} \"{raw}\": outside the modelled root"),
                ),
            }
        })
    }

    fn loop_error(verb: &str, display: &str) -> ModelError {
        ModelError::new(
            FsErrorCode::IoError,
            format!("cannot {verb} \"{display}\": {LOOP_TEXT}"),
        )
    }

    /// `resolve(path)` with the root as working directory.
    pub fn resolve(&self, path: &str) -> Result<Resolved, ModelError> {
        let comps = self.lexical("resolve", path)?;
        let display = self.display(&comps);
        match key_of(&self.tree, &comps) {
            Ok(key) => Ok(Resolved {
                display,
                key: Key(key),
            }),
            Err(WalkError::NotDir) => Err(ModelError::new(
                FsErrorCode::NotFound,
                format!("cannot resolve \"{display}\": a parent path segment is not a directory"),
            )),
            Err(_) => Err(Self::loop_error("resolve", &display)),
        }
    }

    /// The display path of a key.
    pub fn key_display(&self, key: &Key) -> String {
        self.display(&key.0)
    }

    /// `stat(resolve(path))`.
    pub fn stat(&self, path: &str) -> Result<Option<Info>, ModelError> {
        let r = self.resolve(path)?;
        self.stat_key(&r)
    }

    fn stat_key(&self, r: &Resolved) -> Result<Option<Info>, ModelError> {
        match stat_follow(&self.tree, &r.key.0) {
            Ok(node) => Ok(node.map(|n| Info {
                version: version_of(n),
                kind: kind_of(n),
                size: size_of(n),
            })),
            Err(_) => Err(Self::loop_error("stat", &r.display)),
        }
    }

    /// `lstat(path)`.
    pub fn lstat(&self, path: &str) -> Result<Option<PathInfo>, ModelError> {
        let comps = self.lexical("lstat", path)?;
        match lstat(&self.tree, &comps) {
            Ok(node) => Ok(node.map(|n| PathInfo {
                version: version_of(n),
                kind: match n {
                    Node::File { .. } => FsPathKind::File,
                    Node::Dir { .. } => FsPathKind::Directory,
                    Node::Symlink { .. } => FsPathKind::Symlink,
                    Node::Other { .. } => FsPathKind::Other,
                },
                size: match n {
                    Node::File { bytes, .. } => Some(bytes.len() as u64),
                    // A root-absolute link text is stored under the real root.
                    Node::Symlink { target, .. } if target.starts_with('/') => {
                        Some((self.config.root.len() + target.len()) as u64)
                    }
                    Node::Symlink { target, .. } => Some(target.len() as u64),
                    _ => None,
                },
            })),
            Err(_) => Err(Self::loop_error("lstat", &self.display(&comps))),
        }
    }

    fn regular_file(&self, path: &str) -> Result<(Resolved, Vec<u8>), ModelError> {
        let r = self.resolve(path)?;
        let node =
            stat_follow(&self.tree, &r.key.0).map_err(|_| Self::loop_error("read", &r.display))?;
        match node {
            None => Err(ModelError::new(
                FsErrorCode::NotFound,
                format!("cannot read \"{}\": not found", r.display),
            )),
            Some(Node::File { bytes, .. }) => {
                let bytes = bytes.clone();
                Ok((r, bytes))
            }
            Some(_) => Err(ModelError::new(
                FsErrorCode::NotRegularFile,
                format!("cannot read \"{}\": not a regular file", r.display),
            )),
        }
    }

    /// `read_text(resolve(path))` (and what `stream_text` must concatenate to).
    pub fn read_text(&self, path: &str) -> Result<String, ModelError> {
        let (r, bytes) = self.regular_file(path)?;
        decode_for_read(&bytes).map_err(|e| {
            let why = match e {
                NotText::Binary => "binary file",
                NotText::InvalidUtf8 => "invalid UTF-8 text",
            };
            ModelError::new(
                FsErrorCode::NotText,
                format!("cannot read \"{}\": {why}", r.display),
            )
        })
    }

    /// `read_bytes(resolve(path), max)`.
    pub fn read_bytes(&self, path: &str, max: u64) -> Result<Vec<u8>, ModelError> {
        let (r, bytes) = self.regular_file(path)?;
        if bytes.len() as u64 > max {
            return Err(ModelError::new(
                FsErrorCode::TooLarge,
                format!(
                    "cannot read \"{}\": {} bytes exceeds the {max}-byte limit",
                    r.display,
                    bytes.len()
                ),
            ));
        }
        Ok(bytes)
    }

    /// `list_dir(resolve(path))`.
    pub fn list_dir(&self, path: &str) -> Result<Vec<Entry>, ModelError> {
        let r = self.resolve(path)?;
        let node =
            stat_follow(&self.tree, &r.key.0).map_err(|_| Self::loop_error("list", &r.display))?;
        let entries = match node {
            None => {
                return Err(ModelError::new(
                    FsErrorCode::NotFound,
                    format!("cannot list \"{}\": not found", r.display),
                ));
            }
            Some(Node::Dir { entries, .. }) => entries,
            Some(_) => {
                return Err(ModelError::new(
                    FsErrorCode::NotDirectory,
                    format!("cannot list \"{}\": not a directory", r.display),
                ));
            }
        };
        let real =
            realpath(&self.tree, &r.key.0).map_err(|_| Self::loop_error("list", &r.display))?;
        let mut out = Vec::new();
        for name in entries.keys() {
            let mut child = real.clone();
            child.push(name.clone());
            let key = key_of(&self.tree, &child).unwrap_or_else(|_| child.clone());
            let followed = stat_follow(&self.tree, &child).ok().flatten();
            out.push(Entry {
                name: name.clone(),
                kind: followed.map_or(FsKind::Other, kind_of),
                display: format!("{}/{}", r.display, name),
                key: Key(key),
                version: followed.map(version_of),
                size: followed.and_then(size_of),
            });
        }
        Ok(out)
    }

    /// Fails when a parent of `key` exists but is not a directory (a file, or a dangling link
    /// that a write must not create through).
    fn check_parents(&self, key: &[String], display: &str) -> Result<(), ModelError> {
        let parent = &key[..key.len().saturating_sub(1)];
        for i in 1..=parent.len() {
            match self.tree.get(&parent[..i]) {
                Some(Node::Dir { .. }) => {}
                None => return Ok(()),
                Some(_) => {
                    return Err(ModelError::new(
                        FsErrorCode::NotFound,
                        format!(
                            "cannot write \"{display}\": a parent path segment is not a directory"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Makes the missing parents of `key` (mode unspecified). Returns how many it made.
    fn make_parents(&mut self, key: &[String]) -> usize {
        let parent = &key[..key.len().saturating_sub(1)];
        let mut created = 0;
        for i in 1..=parent.len() {
            if self.tree.get(&parent[..i]).is_none() {
                let dir = self.tree.new_dir(None);
                self.tree.put(&parent[..i], dir);
                created += 1;
            }
        }
        created
    }

    /// The deepest existing directory on the way to `key`'s parent.
    fn deepest_existing_parent(&self, key: &[String]) -> Vec<String> {
        let parent = &key[..key.len().saturating_sub(1)];
        let mut deepest = Vec::new();
        for i in 1..=parent.len() {
            match self.tree.get(&parent[..i]) {
                Some(Node::Dir { .. }) => deepest = parent[..i].to_vec(),
                _ => break,
            }
        }
        deepest
    }

    /// `write_text(resolve(path), content, guard)` under some interference.
    pub fn write_text(
        &mut self,
        path: &str,
        content: &str,
        guard: Option<Guard>,
        interference: &Interference,
    ) -> MutationResult<WriteResult> {
        let mut competitor = None;
        let outcome = self.write_inner(path, content, guard, interference, &mut competitor);
        MutationResult {
            outcome,
            competitor,
        }
    }

    fn write_inner(
        &mut self,
        path: &str,
        content: &str,
        guard: Option<Guard>,
        interference: &Interference,
        competitor_effect: &mut Option<WorldEffect>,
    ) -> Result<WriteResult, ModelError> {
        let r = self.resolve(path)?;
        let d = r.display.clone();
        let key = r.key.0.clone();
        let not_regular = || {
            ModelError::new(
                FsErrorCode::NotRegularFile,
                format!("cannot write \"{d}\": not a regular file"),
            )
        };
        let existing = match lstat(&self.tree, &key) {
            Err(_) => return Err(Self::loop_error("write", &d)),
            Ok(None) => None,
            Ok(Some(Node::File {
                bytes,
                mode,
                version,
            })) => Some((bytes.clone(), *mode, *version)),
            Ok(Some(_)) => return Err(not_regular()),
        };
        match guard {
            Some(Guard::ReplaceIfVersion(v)) => match &existing {
                None => {
                    return Err(ModelError::new(
                        FsErrorCode::StaleVersion,
                        format!("cannot write \"{d}\": file no longer exists"),
                    ));
                }
                Some((_, _, n)) if Version::Object { n: *n } != v => {
                    return Err(ModelError::new(
                        FsErrorCode::StaleVersion,
                        format!("cannot write \"{d}\": file changed since it was read"),
                    ));
                }
                Some(_) => {}
            },
            Some(Guard::CreateIfAbsent) if existing.is_some() => {
                return Err(ModelError::new(
                    FsErrorCode::NotObserved,
                    format!("cannot overwrite existing \"{d}\" without reading it first"),
                ));
            }
            _ => {}
        }
        let limit = self.config.diff_basis_max_bytes;
        let before = match &existing {
            Some((bytes, _, _)) if (content.len() as u64) < limit => diff_basis(bytes, limit),
            _ => None,
        };
        match interference {
            Interference::Cancel(CancelPoint::BeforeStage) => return Err(aborted("write")),
            Interference::Competitor(c) if existing.is_none() => {
                *competitor_effect = self.tree.apply_competitor(&key, c);
            }
            _ => {}
        }
        self.check_parents(&key, &d)?;
        if let Interference::Cancel(CancelPoint::Staged) = interference {
            // Any parents it made are gone again, and so is its staging; both touched the
            // deepest directory that already existed, without changing its entries.
            let touched = self.deepest_existing_parent(&key);
            self.tree.touch(&touched, false);
            return Err(aborted("write"));
        }
        let created = self.make_parents(&key);
        let parent = key[..key.len() - 1].to_vec();
        let no_replace = guard == Some(Guard::CreateIfAbsent) || existing.is_none();
        if no_replace && created > 0 {
            // Freshly made parents cannot hold a competitor.
        } else if no_replace {
            match self.tree.get(&key) {
                None => {}
                Some(Node::File { .. }) if guard != Some(Guard::CreateIfAbsent) => {}
                Some(Node::File { .. }) => {
                    self.tree.touch(&parent, false);
                    return Err(ModelError::new(
                        FsErrorCode::NotObserved,
                        format!("cannot overwrite existing \"{d}\" without reading it first"),
                    ));
                }
                Some(_) => {
                    self.tree.touch(&parent, false);
                    return Err(not_regular());
                }
            }
        }
        let mode = existing.as_ref().map_or(0o600, |(_, m, _)| *m);
        let version = self.tree.mint();
        self.tree.put(
            &key,
            Node::File {
                bytes: content.as_bytes().to_vec(),
                mode,
                version,
            },
        );
        Ok(WriteResult {
            operation: if existing.is_some() {
                WriteOperation::Update
            } else {
                WriteOperation::Create
            },
            version: Version::Object { n: version },
            before,
            after: lf_normalize(content),
        })
    }

    /// `edit_text(resolve(path), old → new, guard)` under some interference (competitors do not
    /// apply to edits).
    pub fn edit_text(
        &mut self,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
        guard: Option<Version>,
        interference: &Interference,
    ) -> Result<EditOutcomeModel, ModelError> {
        let r = self.resolve(path)?;
        let d = r.display.clone();
        let stale = || {
            ModelError::new(
                FsErrorCode::StaleVersion,
                format!("cannot edit \"{d}\": file changed since it was read"),
            )
        };
        let real = match realpath(&self.tree, &r.key.0) {
            Ok(real) => real,
            Err(WalkError::Loop) => return Err(Self::loop_error("edit", &d)),
            Err(_) => return Err(stale()),
        };
        let (bytes, version) = match self.tree.get(&real) {
            None => return Err(stale()),
            Some(Node::File { bytes, version, .. }) => (bytes.clone(), *version),
            Some(_) => {
                return Err(ModelError::new(
                    FsErrorCode::NotRegularFile,
                    format!("cannot edit \"{d}\": not a regular file"),
                ));
            }
        };
        if let Some(expected) = guard
            && expected != (Version::Object { n: version })
        {
            return Err(stale());
        }
        let result = apply_literal_edit(&bytes, old, new, replace_all).map_err(|e| match e {
            EditError::NotText(NotTextReason::Binary) => ModelError::new(
                FsErrorCode::NotText,
                format!("cannot edit \"{d}\": binary file"),
            ),
            EditError::NotText(NotTextReason::InvalidUtf8) => ModelError::new(
                FsErrorCode::NotText,
                format!("cannot edit \"{d}\": invalid UTF-8 text"),
            ),
            EditError::EmptyOld => ModelError::new(
                FsErrorCode::EditNotFound,
                "old_string must be a non-empty string",
            ),
            EditError::NotFound => ModelError::new(
                FsErrorCode::EditNotFound,
                format!("old_string was not found in \"{d}\""),
            ),
            EditError::Ambiguous(n) => ModelError::new(
                FsErrorCode::AmbiguousEdit,
                format!(
                    "old_string matched {n} times in \"{d}\"; provide a more specific old_string or set replace_all to true"
                ),
            ),
        })?;
        let parent = real[..real.len() - 1].to_vec();
        match interference {
            Interference::Cancel(CancelPoint::BeforeStage) => return Err(aborted("edit")),
            Interference::Cancel(CancelPoint::Staged) => {
                self.tree.touch(&parent, false);
                return Err(aborted("edit"));
            }
            _ => {}
        }
        let v = self.tree.mint();
        if let Some(Node::File { bytes, version, .. }) = self.tree.get_mut(&real) {
            *bytes = result.bytes;
            *version = v;
        }
        self.tree.touch(&parent, false);
        Ok((Version::Object { n: v }, result.before, result.after))
    }

    /// Applies a change behind the provider's back, if its rules allow; returns what to do.
    pub fn world(&mut self, op: &WorldOp) -> Option<WorldEffect> {
        self.tree.apply_world(op)
    }

    /// Every entry under the root, by relative path, as the world must hold it now.
    pub fn snapshot(&self) -> BTreeMap<String, SnapEntry> {
        self.tree.snapshot()
    }
}

fn aborted(verb: &str) -> ModelError {
    ModelError::new(FsErrorCode::Aborted, format!("{verb} aborted"))
}
