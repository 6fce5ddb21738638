//! Resolution and metadata: `resolve`, `stat`, `lstat`.

use super::{Info, Model, ModelError, PathInfo, Resolved, err, kind_of, size_of, version_of};
use crate::path::{Key, PathProblem, lexical, raw_display};
use crate::tree::Node;
use crate::walk::{WalkError, key_of, lstat, stat_follow};
use seam::{FsError, FsPathKind, Verb};

impl Model {
    /// The components of a spelling, or the contract's refusal of it.
    pub(crate) fn lexical(&self, verb: Verb, path: &str) -> Result<Vec<String>, ModelError> {
        lexical(&self.config.root, path).map_err(|p| {
            let raw = raw_display(&self.config.root, path);
            err(match p {
                PathProblem::Blank => FsError::blank_path(),
                PathProblem::Nul => FsError::nul_in_path(verb, &raw),
                PathProblem::NameTooLong => FsError::name_too_long(verb, &raw),
                PathProblem::Outside => FsError::io(verb, &raw, "outside the modelled root"),
            })
        })
    }

    pub(crate) fn loop_error(verb: Verb, display: &str) -> ModelError {
        err(FsError::symlink_loop(verb, display))
    }

    /// `resolve(path)` with the root as working directory.
    pub fn resolve(&self, path: &str) -> Result<Resolved, ModelError> {
        let comps = self.lexical(Verb::Resolve, path)?;
        let display = self.display(&comps);
        match key_of(&self.tree, &comps) {
            Ok(key) => Ok(Resolved {
                display,
                key: Key(key),
            }),
            Err(WalkError::NotDir) => {
                Err(err(FsError::parent_not_directory(Verb::Resolve, &display)))
            }
            Err(_) => Err(Self::loop_error(Verb::Resolve, &display)),
        }
    }

    /// `stat(resolve(path))`.
    pub fn stat(&self, path: &str) -> Result<Option<Info>, ModelError> {
        let r = self.resolve(path)?;
        self.stat_target(&r)
    }

    /// `stat(target)`: what the target's key leads to now.
    pub fn stat_target(&self, r: &Resolved) -> Result<Option<Info>, ModelError> {
        match stat_follow(&self.tree, &r.key.0) {
            Ok(node) => Ok(node.map(|n| Info {
                version: version_of(n),
                kind: kind_of(n),
                size: size_of(n),
            })),
            Err(_) => Err(Self::loop_error(Verb::Stat, &r.display)),
        }
    }

    /// `lstat(path)`.
    pub fn lstat(&self, path: &str) -> Result<Option<PathInfo>, ModelError> {
        let comps = self.lexical(Verb::Lstat, path)?;
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
                    // The length of the text as the world stores it.
                    Node::Symlink { target, .. } => Some(self.link_text(target).len() as u64),
                    _ => None,
                },
            })),
            Err(_) => Err(Self::loop_error(Verb::Lstat, &self.display(&comps))),
        }
    }

    /// Whether `child` is `parent` or beneath it, by identity (the contract's `contains`).
    pub fn contains(&self, parent: &Resolved, child: &Resolved) -> bool {
        child.key.0.starts_with(&parent.key.0)
    }
}
