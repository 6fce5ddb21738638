//! [`ObservationPolicy`]: the decision table wired to the gate hooks, with the per-owner store.

use crate::decide::{Observed, decide_edit, decide_remove, decide_replace, decide_write};
use crate::owner::Owner;
use crate::table::Table;
use seam::{
    Actor, FsError, FsObservation, FsTarget, FsTargetKey, FsVersion, Gate, Verb, WriteIntent,
    check_event_target, check_observation,
};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

/// The read-before-write / read-before-edit gate.
///
/// Install it as the [`Gate`] of a tool composition and pass each session's [`Owner`] as the
/// actor. Dropping the policy drops every observation it holds; a new policy starts empty.
#[derive(Clone, Default)]
pub struct ObservationPolicy {
    table: Arc<Table>,
}

impl std::fmt::Debug for ObservationPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObservationPolicy")
            .field("owners", &self.owner_count())
            .finish()
    }
}

fn owner_of(actor: Option<&Actor>) -> Option<&Owner> {
    actor.and_then(|a| a.downcast_ref::<Owner>())
}

impl ObservationPolicy {
    /// An empty policy.
    pub fn new() -> Self {
        Self::default()
    }

    /// What `owner` last observed of the file with this key.
    pub fn observation(&self, owner: &Owner, key: &FsTargetKey) -> Observed {
        self.table
            .lock()
            .get(&owner.id())
            .and_then(|files| files.get(key))
            .cloned()
            .unwrap_or_default()
    }

    /// How many owners have observations recorded here (owners whose handles were all dropped
    /// are gone from this count).
    pub fn owner_count(&self) -> usize {
        self.table.lock().len()
    }

    fn state(&self, target: &FsTarget, actor: Option<&Actor>) -> Observed {
        match owner_of(actor) {
            Some(owner) => self.observation(owner, &target.key),
            None => Observed::Unseen,
        }
    }

    fn record(&self, owner: &Owner, key: &FsTargetKey, observed: Observed) {
        let mut owners = self.table.lock();
        match owners.entry(owner.id()) {
            Entry::Occupied(files) => {
                files.into_mut().insert(key.clone(), observed);
            }
            Entry::Vacant(slot) => {
                slot.insert(HashMap::from([(key.clone(), observed)]));
                owner.attach(Arc::downgrade(&self.table));
            }
        }
    }
}

#[async_trait::async_trait]
impl Gate for ObservationPolicy {
    /// Always decides (never leaves the write unguarded): see [`decide_write`].
    async fn write_intent(
        &self,
        target: &FsTarget,
        actor: Option<&Actor>,
    ) -> Result<Option<WriteIntent>, FsError> {
        check_event_target(target)?;
        Ok(Some(decide_write(&self.state(target, actor))))
    }

    /// Always decides: a version, or a refusal (see [`decide_edit`]).
    async fn edit_intent(
        &self,
        target: &FsTarget,
        actor: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        check_event_target(target)?;
        decide_edit(&self.state(target, actor))
            .map(Some)
            .map_err(|refusal| refusal.error(target))
    }

    /// Always decides: a version, or a refusal (see [`decide_remove`]).
    async fn remove_intent(
        &self,
        target: &FsTarget,
        verb: Verb,
        actor: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        check_event_target(target)?;
        decide_remove(&self.state(target, actor))
            .map(Some)
            .map_err(|refusal| refusal.error_for(verb, target))
    }

    /// The version the owner saw, or never replace (see [`decide_replace`]).
    async fn replace_intent(
        &self,
        target: &FsTarget,
        actor: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        check_event_target(target)?;
        Ok(decide_replace(&self.state(target, actor)))
    }

    /// Records for an owner; drops the observation of an actor that is not one, and an
    /// observation with an empty identity or version (nothing can later match it).
    fn observed(&self, target: &FsTarget, observation: &FsObservation, actor: Option<&Actor>) {
        let Some(owner) = owner_of(actor) else {
            return;
        };
        if check_observation(target, observation).is_err() {
            return;
        }
        let observed = match observation {
            FsObservation::Present { version } => Observed::Present(version.clone()),
            FsObservation::Absent => Observed::Absent,
        };
        self.record(owner, &target.key, observed);
    }
}
