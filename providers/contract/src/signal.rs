//! Per-operation cancellation.
//!
//! A harness cancels tool calls (the user pressed stop, a turn timed out). For reads that is
//! simple; for mutations the contract is what makes it safe: a mutation cancelled before its
//! commit point leaves no trace at all, and one that has committed is reported as committed,
//! never as a failure, so the caller's picture of the disk stays true.
//!
//! Providers call [`Signal::check`] at entry and between steps, [`Signal::checkpoint`] at the
//! named points inside a mutation, and [`Signal::committed`] right after publication. A test
//! harness can attach a probe that sees every checkpoint (with the staging paths, so it can look
//! at them while they exist) and decides to cancel there: that is how the conformance suite
//! cancels a write "just before it publishes" or "just after".

use crate::{FsError, FsErrorCode};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The operation a cancellation interrupted; it names the `<verb> aborted` message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verb {
    /// `resolve`
    Resolve,
    /// `stat`
    Stat,
    /// `lstat`
    Lstat,
    /// `list`
    List,
    /// `read` (read_text, stream_text, read_bytes)
    Read,
    /// `write`
    Write,
    /// `edit`
    Edit,
}

impl Verb {
    /// The verb as it appears in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Resolve => "resolve",
            Verb::Stat => "stat",
            Verb::Lstat => "lstat",
            Verb::List => "list",
            Verb::Read => "read",
            Verb::Write => "write",
            Verb::Edit => "edit",
        }
    }
}

/// The named points inside a mutation where a provider offers cancellation to a probe.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
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
            })),
        }
    }

    /// Cancels the operation. Has no effect on [`Signal::none`].
    pub fn cancel(&self) {
        if let Some(inner) = &self.inner {
            inner.cancelled.store(true, Ordering::SeqCst);
        }
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|i| i.cancelled.load(Ordering::SeqCst))
    }

    /// `Err(FS_ABORTED "<verb> aborted")` when cancelled.
    pub fn check(&self, verb: Verb) -> Result<(), FsError> {
        if self.is_cancelled() {
            Err(Self::aborted(verb))
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

    /// The `FS_ABORTED` error for a verb.
    pub fn aborted(verb: Verb) -> FsError {
        FsError::new(FsErrorCode::Aborted, format!("{} aborted", verb.as_str()))
    }

    fn show(&self, checkpoint: &Checkpoint<'_>) {
        if let Some(inner) = &self.inner
            && let Some(probe) = &inner.probe
            && probe(checkpoint)
        {
            inner.cancelled.store(true, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_probe_cancels_at_its_point_and_commit_never_fails() {
        let s = Signal::with_probe(|c| c.point == CancelPoint::Staged);
        assert!(s.checkpoint(&cp(CancelPoint::BeforeStage)).is_ok());
        assert!(s.checkpoint(&cp(CancelPoint::Staged)).is_err());
        let s = Signal::with_probe(|c| c.point == CancelPoint::Committed);
        s.committed(&cp(CancelPoint::Committed));
        assert!(s.is_cancelled());
    }
}
