//! The observation gate of the read-before-write policy, as the model predicts it: per owner
//! (an agent session) and per file key, what the owner last saw — nothing, nothing there, or the
//! file at a version — and the guard that makes every write and edit of the owner's
//! compare-and-swap against exactly that.
//!
//! * a write: unseen or absent → create-if-absent; present at V → replace-if-version V;
//! * an edit: unseen → `FS_NOT_OBSERVED` (read it first); absent → `FS_NOT_FOUND`; present at V →
//!   the edit is guarded by V;
//! * a successful read records present at the version its `stat` saw; a read that finds nothing
//!   records absent; a successful write or edit records present at its new version.
//!
//! Owners never share what they saw.

use crate::model::{Guard, ModelError, Resolved, Version};
use crate::path::Key;
use seam::FsError;
use std::collections::BTreeMap;

/// What one owner last observed of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Nothing at the path.
    Absent,
    /// The file at this version.
    Present(Version),
}

/// What every owner has observed.
#[derive(Clone, Debug, Default)]
pub struct Observations {
    by_owner: BTreeMap<u8, BTreeMap<Key, Seen>>,
}

impl Observations {
    /// What `owner` last observed of `key`; `None` for unseen.
    pub fn seen(&self, owner: u8, key: &Key) -> Option<Seen> {
        self.by_owner.get(&owner)?.get(key).copied()
    }

    /// Whether an owner other than `owner` has observed `key` (as absent or present).
    pub fn seen_by_other(&self, owner: u8, key: &Key) -> bool {
        self.by_owner
            .iter()
            .any(|(o, seen)| *o != owner && seen.contains_key(key))
    }

    /// Records an observation.
    pub fn record(&mut self, owner: u8, key: &Key, seen: Seen) {
        self.by_owner
            .entry(owner)
            .or_default()
            .insert(key.clone(), seen);
    }

    /// The guard the policy puts on a write of `key` by `owner`.
    pub fn write_guard(&self, owner: u8, key: &Key) -> Guard {
        match self.seen(owner, key) {
            None | Some(Seen::Absent) => Guard::CreateIfAbsent,
            Some(Seen::Present(v)) => Guard::ReplaceIfVersion(v),
        }
    }

    /// The version the policy requires an edit of `target` by `owner` to still find, or the
    /// refusal.
    pub fn edit_guard(&self, owner: u8, target: &Resolved) -> Result<Version, ModelError> {
        match self.seen(owner, &target.key) {
            None => Err(FsError::edit_requires_read(&target.display).into()),
            Some(Seen::Absent) => Err(FsError::not_found(seam::Verb::Edit, &target.display).into()),
            Some(Seen::Present(v)) => Ok(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_table_per_owner() {
        let mut o = Observations::default();
        let k = Key(vec!["a".into()]);
        let t = Resolved {
            display: "/r/a".into(),
            key: k.clone(),
        };
        assert_eq!(o.write_guard(0, &k), Guard::CreateIfAbsent);
        assert_eq!(
            o.edit_guard(0, &t).map_err(|e| e.message),
            Err("edit requires reading \"/r/a\" first".to_string())
        );
        o.record(0, &k, Seen::Absent);
        assert_eq!(o.write_guard(0, &k), Guard::CreateIfAbsent);
        assert_eq!(
            o.edit_guard(0, &t).map_err(|e| e.code),
            Err(seam::FsErrorCode::NotFound)
        );
        let v = Version::Object { n: 7 };
        o.record(0, &k, Seen::Present(v));
        assert_eq!(o.write_guard(0, &k), Guard::ReplaceIfVersion(v));
        assert_eq!(o.edit_guard(0, &t), Ok(v));
        // Another owner saw nothing.
        assert_eq!(o.write_guard(1, &k), Guard::CreateIfAbsent);
    }
}
