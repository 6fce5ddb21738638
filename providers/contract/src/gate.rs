//! The gate hooks: how a policy reaches the tools without either knowing the other.
//!
//! A tool asks the gate what guard to put on a mutation (`write_intent`, `edit_intent`) and
//! tells it what it saw (`observed`). The read-before-write policy is one gate; [`BareGate`]
//! is the default that decides nothing, leaving the provider an unconstrained store. The hooks
//! carry only the contract's vocabulary and an opaque actor, so a policy never needs a provider
//! and a provider never needs a policy.

use crate::{FsError, FsErrorCode, FsObservation, FsTarget, FsVersion, Verb, WriteIntent};
use std::any::Any;

/// Whoever is acting: opaque to the contract. A policy downcasts it to find its owner.
pub type Actor = dyn Any + Send + Sync;

/// The decision hooks a policy implements. Every method has a default that decides nothing.
#[async_trait::async_trait]
pub trait Gate: Send + Sync {
    /// The guard for a write of `target`; `Ok(None)` writes unconditionally.
    async fn write_intent(
        &self,
        target: &FsTarget,
        actor: Option<&Actor>,
    ) -> Result<Option<WriteIntent>, FsError> {
        let _ = (target, actor);
        Ok(None)
    }

    /// The version an edit of `target` must still find; `Ok(None)` edits unconditionally,
    /// and an error refuses the edit before it reaches the provider.
    async fn edit_intent(
        &self,
        target: &FsTarget,
        actor: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        let _ = (target, actor);
        Ok(None)
    }

    /// The version the file at `target` must still have for a `remove` or a `rename` (`verb`)
    /// to take it away; `Ok(None)` takes it unconditionally, and an error refuses the call
    /// before it reaches the provider.
    async fn remove_intent(
        &self,
        target: &FsTarget,
        verb: Verb,
        actor: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        let _ = (target, verb, actor);
        Ok(None)
    }

    /// The version at which a `rename` may replace the file at `target` (its destination);
    /// `Ok(None)` never replaces (an existing destination is then `FS_NOT_OBSERVED`).
    async fn replace_intent(
        &self,
        target: &FsTarget,
        actor: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        let _ = (target, actor);
        Ok(None)
    }

    /// Records what a caller saw. Must be a quick, synchronous recorder.
    fn observed(&self, target: &FsTarget, observation: &FsObservation, actor: Option<&Actor>) {
        let _ = (target, observation, actor);
    }
}

/// The gate that decides nothing: writes and edits go through unguarded.
#[derive(Clone, Copy, Debug, Default)]
pub struct BareGate;

impl Gate for BareGate {}

/// Checks the identities a gate event carries: both must be non-empty.
pub fn check_event_target(target: &FsTarget) -> Result<(), FsError> {
    if target.key.as_str().is_empty() {
        return Err(FsError::new(
            FsErrorCode::IoError,
            "filesystem event targetKey must be non-empty",
        ));
    }
    if target.display_path.is_empty() {
        return Err(FsError::new(
            FsErrorCode::IoError,
            "filesystem event displayPath must be non-empty",
        ));
    }
    Ok(())
}

/// Checks an observation event: a present version must be non-empty.
pub fn check_observation(target: &FsTarget, observation: &FsObservation) -> Result<(), FsError> {
    check_event_target(target)?;
    match observation {
        FsObservation::Present { version } if version.as_str().is_empty() => Err(FsError::new(
            FsErrorCode::IoError,
            "fs/observed present version must be non-empty",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsTargetKey;

    fn target(key: &str, display: &str) -> FsTarget {
        FsTarget {
            key: FsTargetKey::new(key),
            display_path: display.to_string(),
        }
    }

    #[tokio::test]
    async fn the_bare_gate_decides_nothing() {
        let g = BareGate;
        let t = target("/k", "/k");
        assert_eq!(g.write_intent(&t, None).await, Ok(None));
        assert_eq!(g.edit_intent(&t, Some(&42u32)).await, Ok(None));
        g.observed(&t, &FsObservation::Absent, None);
    }

    #[test]
    fn event_identities_must_be_non_empty() {
        let ok = target("/k", "/d");
        assert!(check_event_target(&ok).is_ok());
        let err = check_event_target(&target("", "/d")).expect_err("empty key");
        assert_eq!(
            err.message(),
            "filesystem event targetKey must be non-empty"
        );
        let err = check_event_target(&target("/k", "")).expect_err("empty display");
        assert_eq!(
            err.message(),
            "filesystem event displayPath must be non-empty"
        );
        let err = check_observation(
            &ok,
            &FsObservation::Present {
                version: FsVersion::new(""),
            },
        )
        .expect_err("empty version");
        assert_eq!(
            err.message(),
            "fs/observed present version must be non-empty"
        );
        assert!(check_observation(&ok, &FsObservation::Absent).is_ok());
    }
}
