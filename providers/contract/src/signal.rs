//! Per-operation cancellation.
//!
//! A harness cancels tool calls (the user pressed stop, a turn timed out). For reads that is
//! simple; for mutations the contract is what makes it safe: a mutation cancelled before its
//! commit point leaves no trace at all, and one that has committed is reported as committed,
//! never as a failure, so the caller's picture of the disk stays true.
//!
//! # What a provider does with a signal
//!
//! * **Every** operation calls [`Signal::check`] with its verb before it does anything: a call
//!   made with an already-cancelled signal fails `FS_ABORTED` (`<verb> aborted`) and has no
//!   effect. This is core contract, not a capability.
//! * Reads and listings may check again between chunks or entries.
//! * A provider that claims [`crate::Capability::CancelPoints`] calls [`Signal::checkpoint`] at
//!   [`CancelPoint::BeforeStage`] (guards checked, nothing touched) and
//!   [`CancelPoint::Staged`] (content staged, the last point where cancelling leaves no trace),
//!   and [`Signal::committed`] right after publication. One that does not claim it never shows
//!   a checkpoint to a probe.
//!
//! # What a provider may hold while it calls `checkpoint`
//!
//! A probe runs inside the call, on the provider's thread: the conformance suite uses it to put a
//! *competitor* at the target (a file, a directory, a dangling link that appears between the
//! guard check and publication) through the backend's out-of-band world, and to inspect staging
//! while it exists. So **a provider must not hold, across `checkpoint` and `committed`, any lock
//! that its storage needs for an outside change** — for an in-memory backend, release the state
//! lock before the checkpoint and take it again after (publication must then re-check that
//! nothing appeared: that is exactly what the competitor tests). If it does hold one, the
//! competitor cannot be placed; the suite waits a bounded time and fails the step with a
//! diagnosis naming the checkpoint, instead of hanging.
//!
//! A test harness can attach a probe that sees every checkpoint (with the staging paths, so it
//! can look at them while they exist) and decides to cancel there: that is how the conformance
//! suite cancels a write "just before it publishes" or "just after".

use crate::{FsError, Verb};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The named points inside a mutation where a provider offers cancellation to a probe.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CancelPoint {
    /// Guards checked, nothing on disk touched yet.
    BeforeStage,
    /// Content staged (written and synced) but not published: the last cancellable point.
    Staged,
    /// Published. Cancelling here must not turn the mutation into a failure.
    Committed,
}

/// What a probe sees at a checkpoint.
#[derive(Debug)]
pub struct Checkpoint<'a> {
    /// Where in the mutation we are.
    pub point: CancelPoint,
    /// Which operation.
    pub verb: Verb,
    /// The display path of the target.
    pub display_path: &'a str,
    /// Absolute paths (in the provider's world) of staging entries that exist right now,
    /// outermost first; empty when the provider stages without names (e.g. O_TMPFILE).
    pub staging: &'a [String],
}

type Probe = dyn Fn(&Checkpoint<'_>) -> bool + Send + Sync;

struct Inner {
    cancelled: AtomicBool,
    probe: Option<Box<Probe>>,
    /// The signal this one was layered over: its cancellation is ours, and it sees every
    /// checkpoint after our probe.
    outer: Option<Signal>,
}

/// A cancellation signal for one operation. Cheap to clone; clones share state.
#[derive(Clone, Default)]
pub struct Signal {
    inner: Option<Arc<Inner>>,
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal")
            .field("cancelled", &self.is_cancelled())
            .field(
                "probe",
                &self.inner.as_ref().is_some_and(|i| i.probe.is_some()),
            )
            .finish()
    }
}

impl Signal {
    /// A signal that is never cancelled.
    pub fn none() -> Self {
        Self { inner: None }
    }

    /// A signal that can be cancelled with [`Signal::cancel`].
    pub fn new() -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                probe: None,
                outer: None,
            })),
        }
    }

    /// A cancellable signal whose probe sees every checkpoint and returns `true` to cancel there.
    /// This is a test hook: production code has no reason to install one.
    pub fn with_probe(probe: impl Fn(&Checkpoint<'_>) -> bool + Send + Sync + 'static) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                probe: Some(Box::new(probe)),
                outer: None,
            })),
        }
    }

    /// A signal for a call a wrapper makes on behalf of this one: it is cancelled whenever this
    /// one is (before or after it was made), and every checkpoint is shown first to `probe` and
    /// then to this signal's own probe. A wrapping provider (a fence over another provider, a
    /// test double) uses it to act at the inner provider's checkpoints without hiding them.
    pub fn layered(&self, probe: impl Fn(&Checkpoint<'_>) -> bool + Send + Sync + 'static) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                probe: Some(Box::new(probe)),
                outer: Some(self.clone()),
            })),
        }
    }

    /// Whether this signal can ever be cancelled or probed ([`Signal::none`] cannot): a backend
    /// that must watch a signal from elsewhere (a wire client) can skip watching one that cannot.
    pub fn is_live(&self) -> bool {
        self.inner.is_some()
    }

    /// Whether a probe sees this signal's checkpoints (its own or one it is layered over). A
    /// backend that carries checkpoints elsewhere — a wire client forwarding them from its
    /// server — does so only then.
    pub fn has_probe(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| i.probe.is_some() || i.outer.as_ref().is_some_and(Signal::has_probe))
    }

    /// Cancels the operation. Has no effect on [`Signal::none`].
    pub fn cancel(&self) {
        if let Some(inner) = &self.inner {
            inner.cancelled.store(true, Ordering::SeqCst);
        }
    }

    /// Whether cancellation was requested (here, or on a signal this one is layered over).
    pub fn is_cancelled(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| {
            i.cancelled.load(Ordering::SeqCst) || i.outer.as_ref().is_some_and(Signal::is_cancelled)
        })
    }

    /// `Err(FS_ABORTED "<verb> aborted")` when cancelled.
    pub fn check(&self, verb: Verb) -> Result<(), FsError> {
        if self.is_cancelled() {
            Err(FsError::aborted(verb))
        } else {
            Ok(())
        }
    }

    /// A cancellable point inside a mutation: shows it to the probe, then checks.
    pub fn checkpoint(&self, checkpoint: &Checkpoint<'_>) -> Result<(), FsError> {
        self.show(checkpoint);
        self.check(checkpoint.verb)
    }

    /// The commit point: shows it to the probe but never fails.
    pub fn committed(&self, checkpoint: &Checkpoint<'_>) {
        self.show(checkpoint);
    }

    fn show(&self, checkpoint: &Checkpoint<'_>) {
        let Some(inner) = &self.inner else {
            return;
        };
        if let Some(probe) = &inner.probe
            && probe(checkpoint)
        {
            inner.cancelled.store(true, Ordering::SeqCst);
        }
        if let Some(outer) = &inner.outer {
            outer.show(checkpoint);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsErrorCode;

    fn cp(point: CancelPoint) -> Checkpoint<'static> {
        Checkpoint {
            point,
            verb: Verb::Write,
            display_path: "/x",
            staging: &[],
        }
    }

    #[test]
    fn none_is_never_cancelled() {
        let s = Signal::none();
        s.cancel();
        assert!(!s.is_cancelled());
        assert!(s.check(Verb::Read).is_ok());
    }

    #[test]
    fn cancel_is_shared_by_clones_and_names_the_verb() {
        let s = Signal::new();
        let t = s.clone();
        t.cancel();
        let err = s.check(Verb::Write).expect_err("cancelled");
        assert_eq!(err.code(), FsErrorCode::Aborted);
        assert_eq!(err.message(), "write aborted");
    }

    #[test]
    fn a_layered_signal_shares_cancellation_and_shows_both_probes_in_order() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (a, b) = (seen.clone(), seen.clone());
        let outer = Signal::with_probe(move |c| {
            a.lock().expect("lock").push(("outer", c.point));
            c.point == CancelPoint::Staged
        });
        let inner = outer.layered(move |c| {
            b.lock().expect("lock").push(("inner", c.point));
            false
        });
        assert!(inner.checkpoint(&cp(CancelPoint::BeforeStage)).is_ok());
        assert!(inner.checkpoint(&cp(CancelPoint::Staged)).is_err());
        assert_eq!(
            *seen.lock().expect("lock"),
            vec![
                ("inner", CancelPoint::BeforeStage),
                ("outer", CancelPoint::BeforeStage),
                ("inner", CancelPoint::Staged),
                ("outer", CancelPoint::Staged),
            ]
        );
        let outer = Signal::new();
        let inner = outer.layered(|_| false);
        assert!(!inner.is_cancelled());
        outer.cancel();
        assert!(inner.is_cancelled());
    }

    #[test]
    fn only_none_is_not_live() {
        assert!(!Signal::none().is_live());
        assert!(Signal::new().is_live());
        assert!(Signal::with_probe(|_| false).is_live());
    }

    #[test]
    fn has_probe_sees_a_probe_here_or_underneath() {
        assert!(!Signal::none().has_probe());
        assert!(!Signal::new().has_probe());
        assert!(Signal::with_probe(|_| false).has_probe());
        assert!(Signal::with_probe(|_| false).layered(|_| false).has_probe());
        assert!(Signal::new().layered(|_| false).has_probe());
    }

    #[test]
    fn a_probe_cancels_at_its_point_and_commit_never_fails() {
        let s = Signal::with_probe(|c| c.point == CancelPoint::Staged);
        assert!(s.checkpoint(&cp(CancelPoint::BeforeStage)).is_ok());
        assert!(s.checkpoint(&cp(CancelPoint::Staged)).is_err());
        let s = Signal::with_probe(|c| c.point == CancelPoint::Committed);
        s.committed(&cp(CancelPoint::Committed));
        assert!(s.is_cancelled());
    }
}
