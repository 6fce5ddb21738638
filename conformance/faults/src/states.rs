//! The mistakes only a state the free generator seldom builds can show (the suite aims its
//! openings at each one):
//!
//! * [`Fault::StatThroughFileErrors`] answers `stat` of a target whose parent has become a
//!   regular file with an error, where the contract says nothing is there.
//! * [`Fault::ReusedTargetFollowsNewLink`] re-resolves a target by name before it writes or
//!   edits, so a link that appeared at the target's key since it was resolved is followed.
//! * [`Fault::StagingNameOverflows`] builds its staging name from the target's name and a
//!   22-byte suffix: a name longer than 233 bytes cannot be written or edited.
//! * [`Fault::RefusesListingThroughLink`] refuses to list a directory asked for through a link
//!   to it.
//! * [`Fault::FileUrlLeavesReserved`] leaves `?`, `#` and space unencoded in a file URL.
//! * [`Fault::GuardNotRechecked`] checks a write's or an edit's version guard before staging
//!   and publishes without looking again: a file changed by someone else in between (an
//!   editor's save, the world at a checkpoint) is overwritten by the write; the edit goes on
//!   unguarded (made again on the changed file) where it had to be stale.
//!
//! They look at the local provider's storage (a target's key is its real path there); over a
//! backend whose keys are not local paths they change nothing.

use crate::Fault;
use crate::faulty::Faulty;
use seam::{FsError, FsKind, FsTarget, FsVersion, ResolveOptions, Signal, Verb};
use std::path::Path;

/// The suffix a backend that overflows adds to the target's name for its staging file.
const STAGING_SUFFIX: &str = ".seam-staging-01234567";

impl Faulty {
    /// [`Fault::StatThroughFileErrors`]: the error for a stat that found nothing because a
    /// parent of the key is a regular file.
    pub(crate) fn stat_through_file(&self, target: &FsTarget) -> Option<FsError> {
        if self.fault != Fault::StatThroughFileErrors {
            return None;
        }
        let key = Path::new(target.key.as_str());
        let parent_is_file = key
            .ancestors()
            .skip(1)
            .any(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.is_file()));
        parent_is_file.then(|| FsError::parent_not_directory(Verb::Stat, &target.display_path))
    }

    /// The target a write or an edit works on: for [`Fault::ReusedTargetFollowsNewLink`], the
    /// key resolved again by name (following a link that appeared there); else the target.
    pub(crate) async fn by_name(&self, target: &FsTarget) -> FsTarget {
        if self.fault == Fault::ReusedTargetFollowsNewLink
            && std::fs::symlink_metadata(target.key.as_str()).is_ok_and(|m| m.is_symlink())
            && let Ok(t) = self
                .inner
                .resolve(
                    target.display_path.as_str(),
                    ResolveOptions::default(),
                    &Signal::none(),
                )
                .await
        {
            return t;
        }
        target.clone()
    }

    /// [`Fault::StagingNameOverflows`]: the failure of a write or an edit whose staging name
    /// would pass 255 bytes.
    pub(crate) fn staging_overflow(&self, target: &FsTarget, verb: Verb) -> Option<FsError> {
        if self.fault != Fault::StagingNameOverflows {
            return None;
        }
        let name = target.key.as_str().rsplit('/').next().unwrap_or_default();
        (name.len() + STAGING_SUFFIX.len() > seam::paths::NAME_MAX).then(|| {
            FsError::io(
                verb,
                &target.display_path,
                "File name too long (os error 36)",
            )
        })
    }

    /// [`Fault::RefusesListingThroughLink`]: the refusal of a listing asked through a link.
    pub(crate) fn listing_through_link(&self, target: &FsTarget) -> Option<FsError> {
        (self.fault == Fault::RefusesListingThroughLink
            && std::fs::symlink_metadata(&target.display_path).is_ok_and(|m| m.is_symlink())
            && std::fs::metadata(&target.display_path).is_ok_and(|m| m.is_dir()))
        .then(|| FsError::not_a_directory(&target.display_path))
    }

    /// [`Fault::FileUrlLeavesReserved`]: `url` with `?`, `#` and space decoded again.
    pub(crate) fn url_shown(&self, url: String) -> String {
        if self.fault != Fault::FileUrlLeavesReserved {
            return url;
        }
        url.replace("%3F", "?")
            .replace("%23", "#")
            .replace("%20", " ")
    }

    /// [`Fault::GuardNotRechecked`]: the guard a write or an edit may drop once it is checked
    /// here — `Some(())` when the target is a regular file at `guard` now, so the caller goes on
    /// unguarded (with the caller's own signal: its checkpoints are shown, and whatever happens
    /// at them is overwritten); `None` leaves the call as it was.
    pub(crate) async fn guard_checked_once(
        &self,
        target: &FsTarget,
        guard: Option<&FsVersion>,
    ) -> Option<()> {
        if self.fault != Fault::GuardNotRechecked {
            return None;
        }
        let guard = guard?;
        let now = self.inner.stat(target, &Signal::none()).await.ok()??;
        (now.kind == FsKind::File && &now.version == guard).then_some(())
    }
}
