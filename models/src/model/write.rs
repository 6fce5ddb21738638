//! `write_text`: the guard matrix, missing parents, the diff basis, no-replace publication
//! against a competitor, and what cancellation leaves behind (nothing).

use super::{
    Guard, Interference, Model, ModelError, MutationResult, Resolved, Version, WriteResult, err,
};
use crate::text::{diff_basis, lf_normalize};
use crate::tree::Node;
use crate::walk::{WalkError, lstat, realpath};
use crate::world::WorldEffect;
use seam::{CancelPoint, FsError, Verb, WriteOperation};

impl Model {
    /// Where a write of `key` lands now: the parent as a walk finds it today (a parent swapped
    /// for a link to a directory after resolution is followed, as a path would be), then the
    /// name. Missing parents are made beneath the deepest one that exists; one that exists but
    /// is not a directory — a file, or a link, dangling or not, that the write would have to
    /// create through — fails.
    pub(crate) fn landing(&self, key: &[String], display: &str) -> Result<Vec<String>, ModelError> {
        let not_dir = || err(FsError::parent_not_directory(Verb::Write, display));
        let Some((name, parent)) = key.split_last() else {
            return Ok(Vec::new());
        };
        let is_dir = |comps: &[String]| matches!(self.tree.get(comps), Some(Node::Dir { .. }));
        let mut base = match realpath(&self.tree, parent) {
            Ok(real) if is_dir(&real) => {
                let mut out = real;
                out.push(name.clone());
                return Ok(out);
            }
            Ok(_) | Err(WalkError::NotDir) => return Err(not_dir()),
            Err(WalkError::Loop) => return Err(Self::loop_error(Verb::Write, display)),
            Err(WalkError::NotFound) => None,
        };
        for i in (0..parent.len()).rev() {
            match realpath(&self.tree, &parent[..i]) {
                Ok(real) if is_dir(&real) => {
                    base = Some((real, i));
                    break;
                }
                Ok(_) | Err(WalkError::NotDir) => return Err(not_dir()),
                Err(WalkError::Loop) => return Err(Self::loop_error(Verb::Write, display)),
                Err(WalkError::NotFound) => continue,
            }
        }
        let Some((mut at, start)) = base else {
            return Err(not_dir());
        };
        for comp in &parent[start..] {
            at.push(comp.clone());
            match self.tree.get(&at) {
                None | Some(Node::Dir { .. }) => {}
                Some(_) => return Err(not_dir()),
            }
        }
        at.push(name.clone());
        Ok(at)
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

    /// How many parent directories a write of `r` would have to create now.
    pub fn missing_parents(&self, r: &Resolved) -> usize {
        let Ok(landing) = self.landing(&r.key.0, &r.display) else {
            return 0;
        };
        let parent = &landing[..landing.len().saturating_sub(1)];
        (1..=parent.len())
            .filter(|i| self.tree.get(&parent[..*i]).is_none())
            .count()
    }

    /// `write_text(resolve(path), content, guard)` under some interference.
    pub fn write_text(
        &mut self,
        path: &str,
        content: &str,
        guard: Option<Guard>,
        interference: &Interference,
    ) -> MutationResult<WriteResult> {
        match self.resolve(path) {
            Ok(r) => self.write_target(&r, content, guard, interference),
            Err(e) => MutationResult {
                outcome: Err(e),
                competitor: None,
            },
        }
    }

    /// `write_text(path, content)` unguarded and undisturbed, for a caller that follows what
    /// the world holds and shows nothing (the generator): the same change of the tree and the
    /// same outcome, but no `before` and an empty `after` — the diff basis decodes and
    /// normalises the file it replaces, and `after` normalises the new text, each a pass over
    /// it that such a caller never reads.
    pub fn write_text_untold(
        &mut self,
        path: &str,
        content: &str,
    ) -> Result<WriteResult, ModelError> {
        let r = self.resolve(path)?;
        self.write_inner(&r, content, None, &Interference::None, &mut None, false)
    }

    /// `write_text(target, content, guard)` under some interference.
    pub fn write_target(
        &mut self,
        r: &Resolved,
        content: &str,
        guard: Option<Guard>,
        interference: &Interference,
    ) -> MutationResult<WriteResult> {
        let mut competitor = None;
        let outcome = self.write_inner(r, content, guard, interference, &mut competitor, true);
        MutationResult {
            outcome,
            competitor: competitor.map(|c| self.world_text(c)),
        }
    }

    fn write_inner(
        &mut self,
        r: &Resolved,
        content: &str,
        guard: Option<Guard>,
        interference: &Interference,
        competitor_effect: &mut Option<WorldEffect>,
        texts: bool,
    ) -> Result<WriteResult, ModelError> {
        let d = r.display.as_str();
        let key = r.key.0.clone();
        let not_regular = || err(FsError::not_regular_file(Verb::Write, d));
        // No diff basis is made for a caller that does not read it (`texts` false).
        let limit = if texts {
            self.config.diff_basis_max_bytes
        } else {
            0
        };
        // What is there: its `before` (taken now, not a copy of its bytes), bits and version.
        let mut existing = match lstat(&self.tree, &key) {
            Err(_) => return Err(Self::loop_error(Verb::Write, d)),
            Ok(None) => None,
            Ok(Some(Node::File {
                bytes,
                mode,
                version,
            })) => Some((
                if (content.len() as u64) < limit {
                    diff_basis(bytes, limit)
                } else {
                    None
                },
                *mode,
                *version,
            )),
            Ok(Some(_)) => return Err(not_regular()),
        };
        match guard {
            Some(Guard::ReplaceIfVersion(v)) => match &existing {
                None => return Err(err(FsError::no_longer_exists(d))),
                Some((_, _, n)) if Version::Object { n: *n } != v => {
                    return Err(err(FsError::changed_since_read(Verb::Write, d)));
                }
                Some(_) => {}
            },
            Some(Guard::CreateIfAbsent) if existing.is_some() => {
                return Err(err(FsError::exists_not_observed(d)));
            }
            _ => {}
        }
        // Someone changes the file between the check and the publication: publication checks
        // the guard again and fails, the change kept (the staging made and removed on the way).
        if let (
            Some(Guard::ReplaceIfVersion(_)),
            Some(_),
            Interference::Change(CancelPoint::BeforeStage | CancelPoint::Staged, change),
        ) = (guard, &existing, interference)
            && let Some(effect) = self.tree.apply_change(&key, change)
        {
            *competitor_effect = Some(effect);
            self.tree.touch_along(&key[..key.len() - 1]);
            return Err(match lstat(&self.tree, &key) {
                Ok(None) => err(FsError::no_longer_exists(d)),
                _ => err(FsError::changed_since_read(Verb::Write, d)),
            });
        }
        let before = existing.as_mut().and_then(|(before, _, _)| before.take());
        match interference {
            Interference::Cancel(CancelPoint::BeforeStage) => {
                return Err(err(FsError::aborted(Verb::Write)));
            }
            Interference::Competitor(c) if existing.is_none() => {
                if let Ok(at) = self.landing(&key, d) {
                    *competitor_effect = self.tree.apply_competitor(&at, c);
                }
            }
            _ => {}
        }
        let key = self.landing(&key, d)?;
        if let Interference::Cancel(CancelPoint::Staged) = interference {
            // Any parents it made are gone again, and so is its staging: the directories on the
            // way may have been touched, none gained or lost an entry.
            let touched = self.deepest_existing_parent(&key);
            self.tree.touch_along(&touched);
            return Err(err(FsError::aborted(Verb::Write)));
        }
        let created = self.make_parents(&key);
        let parent = key[..key.len() - 1].to_vec();
        let no_replace = guard == Some(Guard::CreateIfAbsent) || existing.is_none();
        // A file that appeared since the check, which an unguarded write replaces: the write
        // is then an update of that file (its bits kept, its text the `before`), as if it had
        // come just after whoever made it.
        let mut appeared: Option<(bytes::Bytes, u32)> = None;
        if no_replace && created == 0 {
            match self.tree.get(&key) {
                None => {}
                Some(Node::File { bytes, mode, .. }) if guard != Some(Guard::CreateIfAbsent) => {
                    appeared = Some((bytes.clone(), *mode));
                }
                Some(Node::File { .. }) => {
                    self.tree.touch_along(&parent);
                    return Err(err(FsError::exists_not_observed(d)));
                }
                Some(_) => {
                    self.tree.touch_along(&parent);
                    return Err(not_regular());
                }
            }
        }
        let (before, replaced_mode) = match &appeared {
            Some((bytes, mode)) => (
                if (content.len() as u64) < limit {
                    diff_basis(bytes, limit)
                } else {
                    None
                },
                Some(*mode),
            ),
            None => (before, existing.as_ref().map(|(_, m, _)| *m)),
        };
        let mode = replaced_mode.unwrap_or(0o600);
        let version = self.tree.mint();
        self.tree.touch_along(&parent);
        self.tree.put(
            &key,
            Node::File {
                bytes: bytes::Bytes::copy_from_slice(content.as_bytes()),
                mode,
                version,
            },
        );
        Ok(WriteResult {
            operation: if existing.is_some() || appeared.is_some() {
                WriteOperation::Update
            } else {
                WriteOperation::Create
            },
            version: Version::Object { n: version },
            before,
            after: if texts {
                lf_normalize(content)
            } else {
                String::new()
            },
        })
    }
}
