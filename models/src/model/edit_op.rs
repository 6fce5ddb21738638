//! `edit_text`: missing is stale, the version before the match, the literal edit
//! ([`crate::apply_literal_edit`]), and what cancellation leaves behind (nothing).

use super::{Interference, Model, ModelError, Resolved, Version, err};
use crate::edit::{EditError, NotTextReason, apply_literal_edit, literal_edit_bytes};
use crate::tree::Node;
use crate::walk::{WalkError, lstat, realpath, stat_follow};
use seam::{CancelPoint, FsError, Verb};

/// The expected result of a successful edit: the new version, `before` and `after`.
pub type EditOutcomeModel = (Version, String, String);

impl Model {
    /// `edit_text(resolve(path), old → new, guard)` under some interference (a competitor that
    /// appears where nothing was does not apply to edits; a change of the file does).
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
        self.edit_target(&r, old, new, replace_all, guard, interference)
    }

    /// `edit_text(resolve(path), old → new)` unguarded and undisturbed, for a caller that
    /// follows what the world holds and shows nothing (the generator): the same change of the
    /// tree and the same outcome, but `before` and `after` are left empty — making them copies
    /// the old text's view and checks and normalises the new text, three more passes over it —
    /// and an ambiguous edit's matches are counted only up to two (its error says 2 for two or
    /// more).
    pub fn edit_text_untold(
        &mut self,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<EditOutcomeModel, ModelError> {
        let r = self.resolve(path)?;
        self.edit_inner(
            &r,
            Edit {
                old,
                new,
                replace_all,
                texts: false,
            },
            None,
            &Interference::None,
            &mut None,
        )
    }

    /// `edit_text(target, old → new, guard)` under some interference.
    pub fn edit_target(
        &mut self,
        r: &Resolved,
        old: &str,
        new: &str,
        replace_all: bool,
        guard: Option<Version>,
        interference: &Interference,
    ) -> Result<EditOutcomeModel, ModelError> {
        self.edit_changed(r, old, new, replace_all, guard, interference)
            .outcome
    }

    /// `edit_text(target, old → new, guard)` under some interference, with the change someone
    /// else makes to the file ([`Interference::Change`]) when it applies: a guarded edit is then
    /// stale, an unguarded one is made again on what is there now.
    pub fn edit_changed(
        &mut self,
        r: &Resolved,
        old: &str,
        new: &str,
        replace_all: bool,
        guard: Option<Version>,
        interference: &Interference,
    ) -> super::MutationResult<EditOutcomeModel> {
        let mut effect = None;
        let edit = Edit {
            old,
            new,
            replace_all,
            texts: true,
        };
        let outcome = self.edit_inner(r, edit, guard, interference, &mut effect);
        super::MutationResult {
            outcome,
            competitor: effect,
        }
    }

    fn edit_inner(
        &mut self,
        r: &Resolved,
        edit: Edit<'_>,
        guard: Option<Version>,
        interference: &Interference,
        effect: &mut Option<crate::world::WorldEffect>,
    ) -> Result<EditOutcomeModel, ModelError> {
        let d = r.display.as_str();
        let stale = || err(FsError::changed_since_read(Verb::Edit, d));
        // A link at the key appeared after resolution (a fresh key is a real path): an edit
        // never follows it — a live one is not a regular file, a dangling one is nothing.
        match lstat(&self.tree, &r.key.0) {
            Err(_) => return Err(Self::loop_error(Verb::Edit, d)),
            Ok(Some(Node::Symlink { .. })) => {
                return match stat_follow(&self.tree, &r.key.0) {
                    Ok(Some(_)) => Err(err(FsError::not_regular_file(Verb::Edit, d))),
                    Ok(None) => Err(stale()),
                    Err(_) => Err(Self::loop_error(Verb::Edit, d)),
                };
            }
            _ => {}
        }
        let real = match realpath(&self.tree, &r.key.0) {
            Ok(real) => real,
            Err(WalkError::Loop) => return Err(Self::loop_error(Verb::Edit, d)),
            Err(_) => return Err(stale()),
        };
        let (bytes, version) = match self.tree.get(&real) {
            None => return Err(stale()),
            Some(Node::File { bytes, version, .. }) => (bytes.clone(), *version),
            Some(_) => return Err(err(FsError::not_regular_file(Verb::Edit, d))),
        };
        if let Some(expected) = guard
            && expected != (Version::Object { n: version })
        {
            return Err(stale());
        }
        let Edit {
            old,
            new,
            replace_all,
            texts,
        } = edit;
        let result = if texts {
            apply_literal_edit(&bytes, old, new, replace_all).map(|r| (r.bytes, r.before, r.after))
        } else {
            literal_edit_bytes(&bytes, old, new, replace_all)
                .map(|b| (b, String::new(), String::new()))
        };
        let (new_bytes, before, after) = result.map_err(|e| {
            err(match e {
                EditError::NotText(NotTextReason::Binary) => FsError::binary(Verb::Edit, d),
                EditError::NotText(NotTextReason::InvalidUtf8) => {
                    FsError::invalid_utf8(Verb::Edit, d)
                }
                EditError::EmptyOld => FsError::empty_old_string(),
                EditError::NotFound => FsError::old_string_not_found(d),
                EditError::Ambiguous(n) => FsError::ambiguous_edit(d, n),
            })
        })?;
        let parent = real[..real.len() - 1].to_vec();
        if let Interference::Change(CancelPoint::BeforeStage | CancelPoint::Staged, change) =
            interference
            && let Some(e) = self.tree.apply_change(&real, change)
        {
            *effect = Some(e);
            self.tree.touch_along(&parent);
            if guard.is_some() {
                return Err(stale());
            }
            // Made again on what is there now (the change is not made twice).
            return self.edit_inner(r, edit, None, &Interference::None, &mut None);
        }
        match interference {
            Interference::Cancel(CancelPoint::BeforeStage) => {
                return Err(err(FsError::aborted(Verb::Edit)));
            }
            Interference::Cancel(CancelPoint::Staged) => {
                self.tree.touch_along(&parent);
                return Err(err(FsError::aborted(Verb::Edit)));
            }
            _ => {}
        }
        let v = self.tree.mint();
        if let Some(Node::File { bytes, version, .. }) = self.tree.get_mut(&real) {
            *bytes = new_bytes.into();
            *version = v;
        }
        self.tree.touch_along(&parent);
        Ok((Version::Object { n: v }, before, after))
    }
}

/// An edit's text and whether its `before` and `after` are wanted.
#[derive(Clone, Copy)]
struct Edit<'a> {
    old: &'a str,
    new: &'a str,
    replace_all: bool,
    texts: bool,
}
