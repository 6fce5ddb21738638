//! The observations a policy holds: per owner id, then per target key. Below both the policy,
//! which reads and records them, and the [`crate::Owner`] handle, which tells every table that
//! holds something for it to forget it when the session ends.

use crate::decide::Observed;
use seam::FsTargetKey;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Observations per owner id, then per target key.
#[derive(Default)]
pub(crate) struct Table {
    owners: Mutex<HashMap<u64, HashMap<FsTargetKey, Observed>>>,
}

impl Table {
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<u64, HashMap<FsTargetKey, Observed>>> {
        // A panic elsewhere while holding the lock leaves a consistent map (every update is
        // one insert), so a poisoned lock is still usable.
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn forget(&self, owner: u64) {
        self.lock().remove(&owner);
    }
}
