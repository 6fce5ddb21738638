//! The decision table, as pure functions of what one owner observed of one file.
//!
//! Kept free of state and locking so that anything that needs the policy's semantics — the
//! reference model, a conformance property, a different store of observations — calls these
//! instead of re-deriving the table.

use seam::{FsError, FsErrorCode, FsTarget, FsVersion, WriteIntent};

/// What one owner last observed of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Observed {
    /// Nothing recorded: the owner never read, wrote or edited this file.
    #[default]
    Unseen,
    /// The owner looked and found nothing at the path.
    Absent,
    /// The owner saw the file at this version (by a read, a write or an edit).
    Present(FsVersion),
}

/// The guard for a write, given what the owner observed.
///
/// * unseen or absent → [`WriteIntent::CreateIfAbsent`]: the write may create the file, but
///   must not replace one the owner has not seen (the provider fails it `FS_NOT_OBSERVED`);
/// * present at V → [`WriteIntent::ReplaceIfVersion`] V: the write may replace exactly the
///   version the owner saw (otherwise `FS_STALE_VERSION`, the file untouched).
pub fn decide_write(observed: &Observed) -> WriteIntent {
    match observed {
        Observed::Unseen | Observed::Absent => WriteIntent::CreateIfAbsent,
        Observed::Present(version) => WriteIntent::ReplaceIfVersion {
            version: version.clone(),
        },
    }
}

/// The version an edit must still find, given what the owner observed, or why the edit is
/// refused before it reaches the provider.
///
/// * unseen → [`EditRefusal::NotObserved`] (`FS_NOT_OBSERVED`): read the file first;
/// * absent → [`EditRefusal::NotFound`] (`FS_NOT_FOUND`): there is nothing to edit;
/// * present at V → `Ok(V)`: the provider checks V before matching.
pub fn decide_edit(observed: &Observed) -> Result<FsVersion, EditRefusal> {
    match observed {
        Observed::Unseen => Err(EditRefusal::NotObserved),
        Observed::Absent => Err(EditRefusal::NotFound),
        Observed::Present(version) => Ok(version.clone()),
    }
}

/// The version a `remove` or a `rename` of a file must still find, given what the owner
/// observed — the edit's table: unseen is refused (read it first), absent is not found, present
/// at V is guarded by V. A file nobody read is never taken away.
pub fn decide_remove(observed: &Observed) -> Result<FsVersion, EditRefusal> {
    decide_edit(observed)
}

/// The version at which a `rename` may replace a destination file, given what the owner
/// observed: only the version it saw; unseen or absent never replaces (an existing
/// destination is then `FS_NOT_OBSERVED`, untouched).
pub fn decide_replace(observed: &Observed) -> Option<FsVersion> {
    match observed {
        Observed::Present(version) => Some(version.clone()),
        Observed::Unseen | Observed::Absent => None,
    }
}

/// Why [`decide_edit`] (or [`decide_remove`]) refused a mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EditRefusal {
    /// The owner never observed the file.
    NotObserved,
    /// The owner last observed the file absent.
    NotFound,
}

impl EditRefusal {
    /// The error code of the refusal.
    pub fn code(self) -> FsErrorCode {
        match self {
            EditRefusal::NotObserved => FsErrorCode::NotObserved,
            EditRefusal::NotFound => FsErrorCode::NotFound,
        }
    }

    /// The coded error for a `verb` (remove, rename) of `target`:
    /// `<verb> requires reading "<path>" first` and `cannot <verb> "<path>": not found`.
    pub fn error_for(self, verb: seam::Verb, target: &FsTarget) -> FsError {
        let path = &target.display_path;
        match self {
            EditRefusal::NotObserved => FsError::requires_read(verb, path),
            EditRefusal::NotFound => FsError::not_found(verb, path),
        }
    }

    /// The coded error for an edit of `target`, with the seed's exact texts:
    /// `edit requires reading "<path>" first` and `cannot edit "<path>": not found`.
    pub fn error(self, target: &FsTarget) -> FsError {
        let path = &target.display_path;
        match self {
            EditRefusal::NotObserved => FsError::edit_requires_read(path),
            EditRefusal::NotFound => FsError::not_found(seam::Verb::Edit, path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::FsTargetKey;

    #[test]
    fn the_write_table() {
        let v = FsVersion::new("v");
        assert_eq!(decide_write(&Observed::Unseen), WriteIntent::CreateIfAbsent);
        assert_eq!(decide_write(&Observed::Absent), WriteIntent::CreateIfAbsent);
        assert_eq!(
            decide_write(&Observed::Present(v.clone())),
            WriteIntent::ReplaceIfVersion { version: v }
        );
    }

    #[test]
    fn the_edit_table() {
        let v = FsVersion::new("v");
        assert_eq!(
            decide_edit(&Observed::Unseen),
            Err(EditRefusal::NotObserved)
        );
        assert_eq!(decide_edit(&Observed::Absent), Err(EditRefusal::NotFound));
        assert_eq!(decide_edit(&Observed::Present(v.clone())), Ok(v));
    }

    #[test]
    fn the_remove_and_replace_tables() {
        let v = FsVersion::new("v");
        assert_eq!(
            decide_remove(&Observed::Unseen),
            Err(EditRefusal::NotObserved)
        );
        assert_eq!(decide_remove(&Observed::Absent), Err(EditRefusal::NotFound));
        assert_eq!(decide_remove(&Observed::Present(v.clone())), Ok(v.clone()));
        assert_eq!(decide_replace(&Observed::Unseen), None);
        assert_eq!(decide_replace(&Observed::Absent), None);
        assert_eq!(decide_replace(&Observed::Present(v.clone())), Some(v));
        let t = FsTarget {
            key: FsTargetKey::new("/k"),
            display_path: "/w/a.txt".into(),
        };
        let e = EditRefusal::NotObserved.error_for(seam::Verb::Remove, &t);
        assert_eq!(e.code(), FsErrorCode::NotObserved);
        assert_eq!(e.message(), "remove requires reading \"/w/a.txt\" first");
        let e = EditRefusal::NotFound.error_for(seam::Verb::Rename, &t);
        assert_eq!(e.message(), "cannot rename \"/w/a.txt\": not found");
    }

    #[test]
    fn refusals_carry_the_seed_texts() {
        let t = FsTarget {
            key: FsTargetKey::new("/k"),
            display_path: "/w/a.txt".into(),
        };
        let e = EditRefusal::NotObserved.error(&t);
        assert_eq!(e.code(), FsErrorCode::NotObserved);
        assert_eq!(e.message(), "edit requires reading \"/w/a.txt\" first");
        let e = EditRefusal::NotFound.error(&t);
        assert_eq!(e.code(), FsErrorCode::NotFound);
        assert_eq!(e.message(), "cannot edit \"/w/a.txt\": not found");
    }
}
