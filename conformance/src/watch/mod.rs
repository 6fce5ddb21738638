//! A gate that survives its subject. A backend under test may hang (a lost wake-up, a deadlock,
//! a remote peer that never answers) or panic, and on a busy machine a correct one may be slow;
//! the gate must still finish, say which call hung, and never call a slow one hung. So every
//! provider and world call goes through a [`Watched`] wrapper that records what is in flight and
//! since when, names the operation in a panic, and measures every call that returns (the hang
//! limits grow with the slowest; slow calls are warnings: see [`crate::timing`]).
//!
//! Three levels give up on a hang, each without losing what was found before it:
//!
//! 1. an asynchronous call past its limit is dropped by its own timer, recorded as a hang, and
//!    its caller gets an error — the step fails as a hang and the case goes on to its end;
//! 2. a generated case runs on a thread of its own under [`supervised`] with a monitor of its
//!    own ([`Monitor::for_case`]): a call that blocks its thread past its limit gives up that
//!    case alone, and shrinking goes on;
//! 3. every property runs under [`supervised`] too: a blocked call outside a case gives up the
//!    property, which then reports the best failure it had found ([`Monitor::found`]).
//!
//! A thread given up on is left behind (a thread cannot be killed), and so is its temporary
//! directory.

use crate::failure::{Failure, FailureKind};
use crate::harness::panic_text;
use crate::step::Step;
use crate::timing::{CallKind, Hang, Load, SlowCall, Slowness, Timing};
use futures_util::FutureExt;
use seam::{FsError, FsErrorCode};
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

mod fs;
mod workers;
mod world;

pub(crate) use world::WatchedFactory;
#[cfg(test)]
mod tests;

/// What every monitor of one property shares: the thresholds, the slowest call of each operation
/// that returned so far (the hang limits grow with it), and the slow calls.
struct Clock {
    timing: Timing,
    slowest: Mutex<HashMap<&'static str, Duration>>,
    slow: Mutex<Slowness>,
    /// When the suite itself held a call up (a mutation paused at a checkpoint while its
    /// readers were waited for): a call that spans one says nothing of the backend's speed.
    pauses: Mutex<std::collections::VecDeque<(Instant, Instant)>>,
}

/// How many of the suite's own pauses are remembered.
const PAUSES_KEPT: usize = 256;

/// A call in flight.
struct InFlight {
    what: String,
    kind: CallKind,
    since: Instant,
    limit: Duration,
}

/// The best failure a property found so far, so that a property abandoned later (a shrinking
/// candidate that blocked its thread for good) still reports what it found.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    pub failure: Failure,
    pub steps: Vec<Step>,
    pub configuration: Option<String>,
}

/// What is in flight, for one property (or one generated case of it: [`Monitor::for_case`]).
pub(crate) struct Monitor {
    clock: Arc<Clock>,
    calls: Mutex<HashMap<u64, InFlight>>,
    next: AtomicU64,
    /// The generated case being run and the step it is at, so a hang can be reported with the
    /// steps that led to it.
    case: Mutex<Option<(Arc<[Step]>, usize)>>,
    /// The first call given up at its limit.
    hang: Mutex<Option<Hang>>,
    /// Whether any call was given up at its limit (taking the hang does not clear it).
    gave_up_any: std::sync::atomic::AtomicBool,
    /// Hang limits at a tenth of the floor (at least a second): a candidate of a hang being
    /// shrunk only has to show that it still hangs.
    lowered: bool,
    found: Mutex<Option<Found>>,
}

/// Removes its call from the monitor when the call returns (or unwinds); a call that returned
/// is measured (its duration raises the limit of its operation, and a slow one is recorded).
pub(crate) struct CallGuard {
    monitor: Arc<Monitor>,
    id: u64,
    limit: Duration,
    returned: bool,
}

impl CallGuard {
    /// The call's hang limit.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// The call returned (as opposed to being given up or unwinding).
    pub fn returned(mut self) {
        self.returned = true;
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let Some(call) = self.monitor.lock_calls().remove(&self.id) else {
            return;
        };
        if !self.returned {
            return;
        }
        let now = Instant::now();
        let took = now - call.since;
        let clock = &self.monitor.clock;
        // Held up by the suite itself: neither slow nor a measure of the backend.
        if lock(&clock.pauses)
            .iter()
            .any(|&(from, to)| from < now && to > call.since)
        {
            return;
        }
        {
            let mut slowest = lock(&clock.slowest);
            let entry = slowest.entry(call.kind.name()).or_default();
            *entry = (*entry).max(took);
        }
        if took > clock.timing.slow_after {
            lock(&clock.slow).record(SlowCall {
                what: call.what,
                seconds: took.as_secs_f64(),
                load: Load::now(),
            });
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How far past its limit a call may go before a supervisor gives up on the thread that made it:
/// an asynchronous call is given up at its limit by its own timer, and this is only for one that
/// blocks its thread.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

impl Monitor {
    pub fn new(timing: Timing) -> Arc<Self> {
        Arc::new(Self {
            clock: Arc::new(Clock {
                timing,
                slowest: Mutex::new(HashMap::new()),
                slow: Mutex::new(Slowness {
                    slow_after: timing.slow_after.as_secs_f64(),
                    ..Slowness::default()
                }),
                pauses: Mutex::new(std::collections::VecDeque::new()),
            }),
            calls: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            case: Mutex::new(None),
            hang: Mutex::new(None),
            gave_up_any: std::sync::atomic::AtomicBool::new(false),
            lowered: false,
            found: Mutex::new(None),
        })
    }

    /// A monitor for one generated case: its own calls in flight (a case given up on leaves its
    /// calls behind, and they must not be mistaken for the next case's), the property's clock.
    /// `lowered`: the case is a candidate of a hang being shrunk.
    pub fn for_case(&self, lowered: bool) -> Arc<Self> {
        Arc::new(Self {
            clock: self.clock.clone(),
            calls: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            case: Mutex::new(None),
            hang: Mutex::new(None),
            gave_up_any: std::sync::atomic::AtomicBool::new(false),
            lowered,
            found: Mutex::new(None),
        })
    }

    fn lock_calls(&self) -> std::sync::MutexGuard<'_, HashMap<u64, InFlight>> {
        lock(&self.calls)
    }

    /// The hang limit a call of `kind` gets now.
    pub fn limit(&self, kind: CallKind) -> Duration {
        let t = &self.clock.timing;
        let floor = match kind {
            CallKind::Start => t.start_after,
            CallKind::Op(_) if self.lowered => (t.hang_after / 10).max(Duration::from_secs(1)),
            CallKind::Op(_) => t.hang_after,
        };
        let measured = lock(&self.clock.slowest)
            .get(kind.name())
            .map_or(Duration::ZERO, |d| d.saturating_mul(t.hang_scale));
        floor.max(measured)
    }

    pub fn enter(self: &Arc<Self>, what: String, kind: CallKind) -> CallGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let limit = self.limit(kind);
        self.lock_calls().insert(
            id,
            InFlight {
                what,
                kind,
                since: Instant::now(),
                limit,
            },
        );
        CallGuard {
            monitor: self.clone(),
            id,
            limit,
            returned: false,
        }
    }

    fn hang_of(&self, what: String, kind: CallKind, limit: Duration) -> Hang {
        Hang {
            what,
            limit,
            start: kind == CallKind::Start,
            load: Load::now(),
            lowered: self.lowered && kind != CallKind::Start,
        }
    }

    /// Records a call given up at its limit (the first one is kept).
    pub fn gave_up(&self, what: String, kind: CallKind, limit: Duration) {
        let hang = self.hang_of(what, kind, limit);
        lock(&self.hang).get_or_insert(hang);
        self.gave_up_any.store(true, Ordering::SeqCst);
    }

    /// Whether a call was given up at its limit under this monitor: its work (a disk provider's
    /// write on the blocking pool) may still be running.
    pub fn gave_up_any(&self) -> bool {
        self.gave_up_any.load(Ordering::SeqCst)
    }

    /// The call given up at its limit since the last look, if any.
    pub fn take_hang(&self) -> Option<Hang> {
        lock(&self.hang).take()
    }

    /// The oldest call in flight for longer than its limit and `grace`.
    pub fn overdue(&self, grace: Duration) -> Option<Hang> {
        let calls = self.lock_calls();
        calls
            .values()
            .filter(|c| c.since.elapsed() > c.limit + grace)
            .min_by_key(|c| c.since)
            .map(|c| self.hang_of(c.what.clone(), c.kind, c.limit))
    }

    /// The suite held calls up from `from` to `to` (see [`Clock::pauses`]).
    pub fn paused(&self, from: Instant, to: Instant) {
        let mut pauses = lock(&self.clock.pauses);
        if pauses.len() == PAUSES_KEPT {
            pauses.pop_front();
        }
        pauses.push_back((from, to));
    }

    /// The slow calls of the property so far.
    pub fn slowness(&self) -> Option<Slowness> {
        let slow = lock(&self.clock.slow);
        (slow.count > 0).then(|| slow.clone())
    }

    /// Records the generated case being run (shared, not copied: a case's contents can be
    /// large).
    pub fn set_case(&self, steps: &Arc<[Step]>) {
        *lock(&self.case) = Some((Arc::clone(steps), 0));
    }

    /// Records the step the case is at.
    pub fn set_step(&self, index: usize) {
        if let Some((_, at)) = lock(&self.case).as_mut() {
            *at = index;
        }
    }

    /// The current case up to and including its current step.
    pub fn current_case(&self) -> Option<Vec<Step>> {
        lock(&self.case)
            .as_ref()
            .map(|(steps, at)| steps[..(*at + 1).min(steps.len())].to_vec())
    }

    /// Keeps the best failure found so far.
    pub fn found(&self, found: Found) {
        *lock(&self.found) = Some(found);
    }

    /// The best failure found so far.
    pub fn best_found(&self) -> Option<Found> {
        lock(&self.found).clone()
    }
}

/// The error a provider call given up at its limit returns to its caller (the step then fails as
/// a hang, whatever the comparison made of it).
fn given_up(what: &str, limit: Duration) -> FsError {
    crate::case_dirs::a_call_was_given_up();
    FsError::new(
        FsErrorCode::IoError,
        format!(
            "seam-conformance gave up on `{what}` after {:.1}s",
            limit.as_secs_f64()
        ),
    )
}

/// Runs `what` and re-raises a panic with the operation's name in it.
async fn named<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(v) => v,
        Err(payload) => std::panic::resume_unwind(Box::new(format!(
            "{what} panicked: {}",
            panic_text(payload.as_ref())
        ))),
    }
}

fn named_sync<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => std::panic::resume_unwind(Box::new(format!(
            "{what} panicked: {}",
            panic_text(payload.as_ref())
        ))),
    }
}

/// Why supervised work was given up.
#[derive(Debug)]
pub(crate) enum GivenUp {
    /// A call blocked its thread past its limit.
    Hung(Hang),
    /// The work panicked outside any call's own guard.
    Panicked(String),
    /// The thread could not be started or ended without a result.
    Lost(String),
}

impl GivenUp {
    /// As a failure of the property.
    pub fn failure(&self) -> Failure {
        match self {
            GivenUp::Hung(h) => Failure::new(
                FailureKind::Timeout,
                format!("{}; the work was given up", h.message()),
            ),
            GivenUp::Panicked(p) => {
                Failure::new(FailureKind::Panic, format!("the provider panicked: {p}"))
            }
            GivenUp::Lost(why) => Failure::new(FailureKind::Setup, why.clone()),
        }
    }
}

/// Runs `work` on a thread of its own (one kept from earlier work: [`workers`]); gives up on it when a watched call blocks past its limit
/// (and [`GRACE`]: an asynchronous call is given up at its limit by its own timer), and turns a
/// panic into [`GivenUp::Panicked`]. A thread given up on is left behind: a thread cannot be
/// killed.
pub(crate) fn supervised<T: Send + 'static>(
    monitor: &Arc<Monitor>,
    work: impl FnOnce() -> T + Send + 'static,
    tick: &mut dyn FnMut(),
) -> Result<T, GivenUp> {
    let (tx, rx) = mpsc::channel();
    let job: workers::Job = Box::new(move || {
        let result = std::panic::catch_unwind(AssertUnwindSafe(work));
        let _ = tx.send(result);
    });
    let worker = workers::run(job)
        .map_err(|e| GivenUp::Lost(format!("cannot start a thread for the work: {e}")))?;
    loop {
        tick();
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Ok(value)) => {
                worker.done();
                return Ok(value);
            }
            Ok(Err(payload)) => {
                worker.done();
                return Err(GivenUp::Panicked(panic_text(payload.as_ref())));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(hang) = monitor.overdue(GRACE) {
                    crate::case_dirs::a_call_was_given_up();
                    return Err(GivenUp::Hung(hang));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(GivenUp::Lost(
                    "the work's thread ended without a result".into(),
                ));
            }
        }
    }
}
