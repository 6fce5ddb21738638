//! Changes made behind the provider's back — by a person, a linter, a competing process — and
//! the model's rules for when such a change applies. The model decides; the suite's `World`
//! only carries out the [`WorldEffect`] the model returns, so the two cannot drift apart.

use crate::tree::{Node, Tree};
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A change behind the provider's back, addressed by a plain relative path (`d/a`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "world", rename_all = "snake_case")]
pub enum WorldOp {
    /// Create or replace (with a new inode) a file; missing parents are created 0755.
    Write {
        /// Relative path.
        path: String,
        /// Raw content (shared: a case and its clones copy no bytes).
        #[serde(with = "crate::tree::bytes_or_text")]
        bytes: Bytes,
        /// Permission bits.
        mode: u32,
    },
    /// Rewrite an existing file in place (same inode) with content of the same size, optionally
    /// putting its mtime back — the case a version token without ctime misses.
    Scribble {
        /// Relative path.
        path: String,
        /// Restore the previous mtime after writing.
        restore_mtime: bool,
    },
    /// Append bytes to an existing file in place.
    Append {
        /// Relative path.
        path: String,
        /// What to append.
        #[serde(with = "crate::tree::bytes_or_text")]
        bytes: Vec<u8>,
    },
    /// Create a directory (0755) where nothing is.
    Mkdir {
        /// Relative path.
        path: String,
    },
    /// Create a symbolic link where nothing is. A target starting with `/` is relative to the
    /// test root; a relative target may only climb with leading `..` and never above the root.
    /// (The model knows nothing above the root: the generator never moves a link to where its
    /// text would climb out either.)
    Symlink {
        /// Relative path of the link.
        path: String,
        /// The link text.
        target: String,
    },
    /// Remove whatever is at the path (directories recursively).
    Remove {
        /// Relative path.
        path: String,
    },
    /// Change a file's permission bits.
    Chmod {
        /// Relative path.
        path: String,
        /// New permission bits.
        mode: u32,
    },
    /// Create a FIFO where nothing is.
    Mkfifo {
        /// Relative path.
        path: String,
    },
}

/// What a competitor puts at a write's target between its guard check and its publication.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Competitor {
    /// A regular file with this content (mode 0644).
    File(String),
    /// A directory.
    Dir,
    /// A dangling symbolic link.
    DanglingLink,
}

/// What someone else does to the file a guarded write or an edit is working on, between its
/// check and its publication.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Rewritten in place to the same size (every letter's case flipped, digits moved on).
    Scribble,
    /// Replaced by a new file with this content (a new inode, mode 0644), as an editor saves.
    Replace(String),
    /// Removed.
    Remove,
}

/// A concrete change for the suite's `World` to carry out, with every byte decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum WorldEffect {
    /// Create missing parents (0755), then create or replace the file with a new inode.
    CreateFile {
        /// Relative path.
        path: String,
        /// Content (shared with the change it came from).
        #[serde(with = "crate::tree::bytes_or_text")]
        bytes: Bytes,
        /// Permission bits.
        mode: u32,
    },
    /// Overwrite the existing inode with exactly these bytes.
    RewriteFile {
        /// Relative path.
        path: String,
        /// New content (shared with the model's file).
        #[serde(with = "crate::tree::bytes_or_text")]
        bytes: Bytes,
        /// Put the previous mtime back afterwards.
        restore_mtime: bool,
    },
    /// Create a directory (0755).
    CreateDir {
        /// Relative path.
        path: String,
    },
    /// Create a symbolic link.
    Symlink {
        /// Relative path.
        path: String,
        /// Link text, written as given: an absolute text names a place in the provider's world,
        /// not the test root (the model spells a root-relative `WorldOp` target with the root's
        /// display path before it becomes an effect: `Model::link_text`).
        target: String,
    },
    /// Remove recursively.
    Remove {
        /// Relative path.
        path: String,
    },
    /// Set permission bits.
    Chmod {
        /// Relative path.
        path: String,
        /// Permission bits.
        mode: u32,
    },
    /// Create a FIFO.
    Mkfifo {
        /// Relative path.
        path: String,
    },
}

/// The text a dangling competitor link points at.
pub(crate) const DANGLING_TARGET: &str = "nowhere";

pub(crate) fn split_rel(path: &str) -> Option<Vec<String>> {
    let comps: Vec<String> = path.split('/').map(str::to_string).collect();
    if comps
        .iter()
        .any(|c| c.is_empty() || c == "." || c == ".." || c.contains('\0'))
    {
        return None;
    }
    Some(comps)
}

/// Whether every proper prefix of `comps` is either a real directory or missing, and the
/// missing ones all come last. Returns how many leading parents exist.
fn parents_plain(tree: &Tree, comps: &[String]) -> Option<usize> {
    let parent = &comps[..comps.len() - 1];
    let mut existing = 0;
    for i in 1..=parent.len() {
        match tree.get(&parent[..i]) {
            Some(Node::Dir { .. }) => existing = i,
            None => break,
            Some(_) => return None,
        }
    }
    if existing < parent.len() && tree.get(&parent[..existing + 1]).is_some() {
        return None;
    }
    Some(existing)
}

fn target_stays_inside(depth: usize, target: &str) -> bool {
    if target.is_empty() || target.contains('\0') {
        return false;
    }
    if let Some(abs) = target.strip_prefix('/') {
        return !abs.split('/').any(|c| c == "..");
    }
    let parts: Vec<&str> = target.split('/').collect();
    let ups = parts.iter().take_while(|c| **c == "..").count();
    ups <= depth && !parts[ups..].iter().any(|c| *c == ".." || c.is_empty())
}

fn scribble(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|b| match b {
            b'a'..=b'z' => b.to_ascii_uppercase(),
            b'A'..=b'Z' => b.to_ascii_lowercase(),
            b'0'..=b'8' => b + 1,
            b'9' => b'0',
            b' ' => b'_',
            b'_' => b' ',
            other => *other,
        })
        .collect()
}

impl Tree {
    /// Applies a world change if its rules allow it, returning the effect to carry out.
    pub(crate) fn apply_world(&mut self, op: &WorldOp) -> Option<WorldEffect> {
        let path = match op {
            WorldOp::Write { path, .. }
            | WorldOp::Scribble { path, .. }
            | WorldOp::Append { path, .. }
            | WorldOp::Mkdir { path }
            | WorldOp::Symlink { path, .. }
            | WorldOp::Remove { path }
            | WorldOp::Chmod { path, .. }
            | WorldOp::Mkfifo { path } => path,
        };
        let comps = split_rel(path)?;
        let existing_parents = parents_plain(self, &comps)?;
        let parents_complete = existing_parents == comps.len() - 1;
        let at = self.get(&comps).cloned();
        match op {
            WorldOp::Write { bytes, mode, .. } => {
                if !matches!(at, None | Some(Node::File { .. })) {
                    return None;
                }
                for i in existing_parents + 1..comps.len() {
                    let dir = self.new_dir(Some(0o755));
                    self.put(&comps[..i], dir);
                }
                let version = self.mint();
                self.put(
                    &comps,
                    Node::File {
                        bytes: bytes.clone(),
                        mode: *mode & 0o777,
                        version,
                    },
                );
                Some(WorldEffect::CreateFile {
                    path: path.clone(),
                    bytes: bytes.clone(),
                    mode: *mode & 0o777,
                })
            }
            WorldOp::Scribble { restore_mtime, .. } => {
                let Some(Node::File { bytes, .. }) = at else {
                    return None;
                };
                let new = Bytes::from(scribble(&bytes));
                self.rewrite_in_place(&comps, new.clone());
                Some(WorldEffect::RewriteFile {
                    path: path.clone(),
                    bytes: new,
                    restore_mtime: *restore_mtime,
                })
            }
            WorldOp::Append { bytes: extra, .. } => {
                let Some(Node::File { bytes, .. }) = at else {
                    return None;
                };
                let mut grown = bytes.to_vec();
                grown.extend_from_slice(extra);
                let bytes = Bytes::from(grown);
                self.rewrite_in_place(&comps, bytes.clone());
                Some(WorldEffect::RewriteFile {
                    path: path.clone(),
                    bytes,
                    restore_mtime: false,
                })
            }
            WorldOp::Mkdir { .. } => {
                if at.is_some() || !parents_complete {
                    return None;
                }
                let dir = self.new_dir(Some(0o755));
                self.put(&comps, dir);
                Some(WorldEffect::CreateDir { path: path.clone() })
            }
            WorldOp::Symlink { target, .. } => {
                if at.is_some()
                    || !parents_complete
                    || !target_stays_inside(comps.len() - 1, target)
                {
                    return None;
                }
                let version = self.mint();
                self.put(
                    &comps,
                    Node::Symlink {
                        target: target.clone(),
                        version,
                    },
                );
                Some(WorldEffect::Symlink {
                    path: path.clone(),
                    target: target.clone(),
                })
            }
            WorldOp::Remove { .. } => {
                at.as_ref()?;
                self.remove(&comps);
                Some(WorldEffect::Remove { path: path.clone() })
            }
            WorldOp::Chmod { mode, .. } => {
                let Some(Node::File { .. }) = at else {
                    return None;
                };
                let v = self.mint();
                if let Some(Node::File {
                    mode: m, version, ..
                }) = self.get_mut(&comps)
                {
                    *m = *mode & 0o777;
                    *version = v;
                }
                Some(WorldEffect::Chmod {
                    path: path.clone(),
                    mode: *mode & 0o777,
                })
            }
            WorldOp::Mkfifo { .. } => {
                if at.is_some() || !parents_complete {
                    return None;
                }
                let version = self.mint();
                self.put(&comps, Node::Other { version });
                Some(WorldEffect::Mkfifo { path: path.clone() })
            }
        }
    }

    fn rewrite_in_place(&mut self, comps: &[String], new: Bytes) {
        let v = self.mint();
        if let Some(Node::File { bytes, version, .. }) = self.get_mut(comps) {
            *bytes = new;
            *version = v;
        }
    }

    /// Changes the regular file at `comps` (a key: a real path) as `change` says; `None` when
    /// no regular file is there.
    pub(crate) fn apply_change(
        &mut self,
        comps: &[String],
        change: &Change,
    ) -> Option<WorldEffect> {
        let Some(Node::File { bytes, .. }) = self.get(comps).cloned() else {
            return None;
        };
        let path = comps.join("/");
        Some(match change {
            Change::Scribble => {
                let new = Bytes::from(scribble(&bytes));
                self.rewrite_in_place(comps, new.clone());
                WorldEffect::RewriteFile {
                    path,
                    bytes: new,
                    restore_mtime: false,
                }
            }
            Change::Replace(content) => self.put_new_file(comps, path, content),
            Change::Remove => {
                self.remove(comps);
                WorldEffect::Remove { path }
            }
        })
    }

    /// A new 0644 file holding `content` at `comps` (whatever was there goes), as someone
    /// else's save or a competitor makes it; the effect that does the same to the world.
    fn put_new_file(&mut self, comps: &[String], path: String, content: &str) -> WorldEffect {
        let version = self.mint();
        let bytes = Bytes::copy_from_slice(content.as_bytes());
        self.put(
            comps,
            Node::File {
                bytes: bytes.clone(),
                mode: 0o644,
                version,
            },
        );
        WorldEffect::CreateFile {
            path,
            bytes,
            mode: 0o644,
        }
    }

    /// Puts a competitor at `comps` when nothing is there and the parent is a real directory.
    pub(crate) fn apply_competitor(
        &mut self,
        comps: &[String],
        competitor: &Competitor,
    ) -> Option<WorldEffect> {
        let (_, parent) = comps.split_last()?;
        if !matches!(self.get(parent), Some(Node::Dir { .. })) || self.get(comps).is_some() {
            return None;
        }
        let path = comps.join("/");
        Some(match competitor {
            Competitor::File(content) => self.put_new_file(comps, path, content),
            Competitor::Dir => {
                let dir = self.new_dir(Some(0o755));
                self.put(comps, dir);
                WorldEffect::CreateDir { path }
            }
            Competitor::DanglingLink => {
                let version = self.mint();
                self.put(
                    comps,
                    Node::Symlink {
                        target: DANGLING_TARGET.to_string(),
                        version,
                    },
                );
                WorldEffect::Symlink {
                    path,
                    target: DANGLING_TARGET.to_string(),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_targets_may_not_climb_out_of_the_root() {
        assert!(target_stays_inside(0, "a"));
        assert!(target_stays_inside(1, "../a"));
        assert!(!target_stays_inside(0, "../a"));
        assert!(!target_stays_inside(2, "d/../a"));
        assert!(target_stays_inside(0, "/d/a"));
        assert!(!target_stays_inside(0, "/d/../.."));
    }

    #[test]
    fn scribbling_keeps_the_size_and_changes_letters() {
        assert_eq!(scribble(b"Hello 9\r\n"), b"hELLO_0\r\n");
    }
}
