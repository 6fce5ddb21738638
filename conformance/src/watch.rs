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

use crate::factory::{CaseOptions, Factory, Subject};
use crate::failure::{Failure, FailureKind};
use crate::harness::panic_text;
use crate::step::Step;
use crate::timing::{CallKind, Hang, Load, SlowCall, Slowness, Timing};
use crate::world::{EntryMode, World};
use futures_util::FutureExt;
use seam::{
    Capabilities, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest, FileSystem,
    FsDirEntry, FsError, FsErrorCode, FsInfo, FsPathInfo, FsTarget, FsVersion, RemoveOptions,
    RemoveOutcome, RenameOptions, RenameOutcome, ResolveOptions, SandboxMode, SandboxPolicy,
    Signal, TextStream, WriteIntent, WriteOutcome,
};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

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
    case: Mutex<Option<(Vec<Step>, usize)>>,
    /// The first call given up at its limit.
    hang: Mutex<Option<Hang>>,
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

    /// Records the generated case being run.
    pub fn set_case(&self, steps: &[Step]) {
        *lock(&self.case) = Some((steps.to_vec(), 0));
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

/// A provider whose every call is recorded in a monitor.
pub(crate) struct Watched {
    inner: Arc<dyn FileSystem>,
    monitor: Arc<Monitor>,
}

impl Watched {
    /// Runs a provider call under its hang limit: past it the call is dropped, recorded as a
    /// hang, and its caller gets an error.
    async fn call<T>(
        &self,
        what: String,
        op: &'static str,
        fut: impl Future<Output = Result<T, FsError>>,
    ) -> Result<T, FsError> {
        let guard = self.monitor.enter(what.clone(), CallKind::Op(op));
        let limit = guard.limit();
        match tokio::time::timeout(limit, named(&what, fut)).await {
            Ok(v) => {
                guard.returned();
                v
            }
            Err(_) => {
                drop(guard);
                self.monitor.gave_up(what.clone(), CallKind::Op(op), limit);
                Err(given_up(&what, limit))
            }
        }
    }

    fn sync<T>(&self, what: String, op: &'static str, f: impl FnOnce() -> T) -> T {
        let guard = self.monitor.enter(what.clone(), CallKind::Op(op));
        let v = named_sync(&what, f);
        guard.returned();
        v
    }
}

#[async_trait::async_trait]
impl FileSystem for Watched {
    fn capabilities(&self) -> Capabilities {
        self.sync("capabilities".into(), "capabilities", || {
            self.inner.capabilities()
        })
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.sync("sandbox_mode".into(), "sandbox_mode", || {
            self.inner.sandbox_mode()
        })
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.call(
            format!("resolve {path:?}"),
            "resolve",
            self.inner.resolve(path, options, signal),
        )
        .await
    }

    fn process_path(&self, target: &FsTarget) -> String {
        self.sync(
            format!("process_path {:?}", target.display_path),
            "process_path",
            || self.inner.process_path(target),
        )
    }

    fn file_url(&self, target: &FsTarget) -> String {
        self.sync(
            format!("file_url {:?}", target.display_path),
            "file_url",
            || self.inner.file_url(target),
        )
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.sync(
            format!(
                "contains {:?} {:?}",
                parent.display_path, child.display_path
            ),
            "contains",
            || self.inner.contains(parent, child),
        )
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.call(
            format!("stat {:?}", target.display_path),
            "stat",
            self.inner.stat(target, signal),
        )
        .await
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        self.call(
            format!("lstat {path:?}"),
            "lstat",
            self.inner.lstat(path, options, signal),
        )
        .await
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.call(
            format!("read_text {:?}", target.display_path),
            "read_text",
            self.inner.read_text(target, signal),
        )
        .await
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        let what = format!("stream_text {:?}", target.display_path);
        let stream = self
            .call(
                what.clone(),
                "stream_text",
                self.inner.stream_text(target, signal),
            )
            .await?;
        Ok(Box::pin(WatchedStream {
            inner: stream,
            monitor: self.monitor.clone(),
            what: format!("{what} (next chunk)"),
            waiting: None,
            done: false,
        }))
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.call(
            format!("read_bytes {:?}", target.display_path),
            "read_bytes",
            self.inner.read_bytes(target, max_bytes, signal),
        )
        .await
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        self.call(
            format!("list_dir {:?}", target.display_path),
            "list_dir",
            self.inner.list_dir(target, signal),
        )
        .await
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        self.call(
            format!("write_text {:?}", target.display_path),
            "write_text",
            self.inner
                .write_text(target, content, expected, sandbox, signal),
        )
        .await
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        self.call(
            format!("edit_text {:?}", target.display_path),
            "edit_text",
            self.inner
                .edit_text(target, edit, expected, sandbox, signal),
        )
        .await
    }

    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        self.call(
            format!("create_dir {path:?}"),
            "create_dir",
            self.inner
                .create_dir(path, options, request, sandbox, signal),
        )
        .await
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        self.call(
            format!("remove {path:?}"),
            "remove",
            self.inner.remove(path, options, request, sandbox, signal),
        )
        .await
    }

    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        self.call(
            format!("rename {from:?} to {to:?}"),
            "rename",
            self.inner
                .rename(from, to, options, request, sandbox, signal),
        )
        .await
    }
}

/// A stream whose every wait for a chunk is recorded and bounded by its hang limit.
struct WatchedStream {
    inner: TextStream,
    monitor: Arc<Monitor>,
    what: String,
    /// The wait in progress: its record and its deadline.
    waiting: Option<(CallGuard, Pin<Box<tokio::time::Sleep>>)>,
    /// Given up: the stream ends.
    done: bool,
}

impl futures_core::Stream for WatchedStream {
    type Item = Result<String, FsError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if this.waiting.is_none() {
            let guard = this
                .monitor
                .enter(this.what.clone(), CallKind::Op("stream_text"));
            let sleep = Box::pin(tokio::time::sleep(guard.limit()));
            this.waiting = Some((guard, sleep));
        }
        let what = this.what.clone();
        let inner = &mut this.inner;
        let poll = named_sync(&what, || inner.as_mut().poll_next(cx));
        if poll.is_ready() {
            if let Some((guard, _)) = this.waiting.take() {
                guard.returned();
            }
            return poll;
        }
        let expired = this
            .waiting
            .as_mut()
            .is_some_and(|(_, sleep)| sleep.as_mut().poll(cx).is_ready());
        if expired && let Some((guard, _)) = this.waiting.take() {
            let limit = guard.limit();
            drop(guard);
            this.done = true;
            this.monitor
                .gave_up(what.clone(), CallKind::Op("stream_text"), limit);
            return Poll::Ready(Some(Err(given_up(&what, limit))));
        }
        Poll::Pending
    }
}

/// A world change in a few words (its bytes by their length: a 1 MiB content is no name).
fn describe_effect(effect: &WorldEffect) -> String {
    match effect {
        WorldEffect::CreateFile { path, bytes, mode } => {
            format!(
                "create_file {path:?} ({} bytes, mode {mode:o})",
                bytes.len()
            )
        }
        WorldEffect::RewriteFile { path, bytes, .. } => {
            format!("rewrite_file {path:?} ({} bytes)", bytes.len())
        }
        WorldEffect::CreateDir { path } => format!("create_dir {path:?}"),
        WorldEffect::Symlink { path, target } => format!("symlink {path:?} -> {target:?}"),
        WorldEffect::Remove { path } => format!("remove {path:?}"),
        WorldEffect::Chmod { path, mode } => format!("chmod {mode:o} {path:?}"),
        WorldEffect::Mkfifo { path } => format!("mkfifo {path:?}"),
    }
}

/// A world whose every call is recorded.
pub(crate) struct WatchedWorld {
    inner: Arc<dyn World>,
    monitor: Arc<Monitor>,
}

impl WatchedWorld {
    fn sync<T>(&self, what: String, op: &'static str, f: impl FnOnce() -> T) -> T {
        let guard = self.monitor.enter(what.clone(), CallKind::Op(op));
        let v = named_sync(&what, f);
        guard.returned();
        v
    }
}

impl World for WatchedWorld {
    fn root_display(&self) -> String {
        self.sync("world root_display".into(), "world root_display", || {
            self.inner.root_display()
        })
    }

    fn process_root(&self) -> String {
        self.sync("world process_root".into(), "world process_root", || {
            self.inner.process_root()
        })
    }

    fn apply(&self, effect: &WorldEffect) -> std::io::Result<()> {
        self.sync(
            format!("world apply {}", describe_effect(effect)),
            "world apply",
            || self.inner.apply(effect),
        )
    }

    fn snapshot(&self) -> std::io::Result<BTreeMap<String, SnapEntry>> {
        self.sync("world snapshot".into(), "world snapshot", || {
            self.inner.snapshot()
        })
    }

    fn entry_mode(&self, path: &str) -> std::io::Result<Option<EntryMode>> {
        self.sync(
            format!("world entry_mode {path:?}"),
            "world entry_mode",
            || self.inner.entry_mode(path),
        )
    }

    fn supports_fifos(&self) -> bool {
        self.sync(
            "world supports_fifos".into(),
            "world supports_fifos",
            || self.inner.supports_fifos(),
        )
    }

    fn restores_mtime(&self) -> bool {
        self.sync(
            "world restores_mtime".into(),
            "world restores_mtime",
            || self.inner.restores_mtime(),
        )
    }

    fn keeps_modes(&self) -> bool {
        self.sync("world keeps_modes".into(), "world keeps_modes", || {
            self.inner.keeps_modes()
        })
    }

    fn open_to_others(&self) -> std::io::Result<()> {
        self.sync(
            "world open_to_others".into(),
            "world open_to_others",
            || self.inner.open_to_others(),
        )
    }
}

/// A factory whose subjects are watched by one monitor.
pub(crate) struct WatchedFactory {
    pub inner: Arc<dyn Factory>,
    pub monitor: Arc<Monitor>,
}

impl Factory for WatchedFactory {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn permissions_checkable(&self) -> Result<(), String> {
        self.inner.permissions_checkable()
    }

    fn configurations(&self) -> Vec<String> {
        self.inner.configurations()
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let subject = {
            let guard = self.monitor.enter("factory make".into(), CallKind::Start);
            let made = named_sync("factory make", || self.inner.make(options));
            guard.returned();
            made?
        };
        Ok(Subject {
            fs: Arc::new(Watched {
                inner: subject.fs,
                monitor: self.monitor.clone(),
            }),
            world: Arc::new(WatchedWorld {
                inner: subject.world,
                monitor: self.monitor.clone(),
            }),
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
            keep_alive: subject.keep_alive,
        })
    }

    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let opened = {
            let guard = self.monitor.enter("factory reopen".into(), CallKind::Start);
            let opened = named_sync("factory reopen", || self.inner.reopen(options, subject));
            guard.returned();
            opened?
        };
        Some(opened.map(|fs| {
            Arc::new(Watched {
                inner: fs,
                monitor: self.monitor.clone(),
            }) as Arc<dyn seam::FileSystem>
        }))
    }

    fn killable(
        &self,
        options: &CaseOptions,
    ) -> Result<crate::factory::Killable, crate::factory::NotKillable> {
        let made = {
            let guard = self
                .monitor
                .enter("factory killable".into(), CallKind::Start);
            let made = named_sync("factory killable", || self.inner.killable(options));
            guard.returned();
            made?
        };
        Ok(crate::factory::Killable {
            subject: self.watched(made.subject),
            kill: made.kill,
        })
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        let recovered = {
            let guard = self
                .monitor
                .enter("factory recover".into(), CallKind::Start);
            let recovered = named_sync("factory recover", || self.inner.recover(options, killed));
            guard.returned();
            recovered?
        };
        Ok(self.watched(recovered))
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, crate::factory::NotPlaced> {
        let made = {
            let guard = self
                .monitor
                .enter("factory in_directory".into(), CallKind::Start);
            let made = named_sync("factory in_directory", || {
                self.inner.in_directory(options, dir)
            });
            guard.returned();
            made?
        };
        Ok(self.watched(made))
    }
}

impl WatchedFactory {
    /// `subject` with its provider and world watched by this factory's monitor.
    fn watched(&self, subject: Subject) -> Subject {
        Subject {
            fs: Arc::new(Watched {
                inner: subject.fs,
                monitor: self.monitor.clone(),
            }),
            world: Arc::new(WatchedWorld {
                inner: subject.world,
                monitor: self.monitor.clone(),
            }),
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
            keep_alive: subject.keep_alive,
        }
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

/// Runs `work` on a thread of its own; gives up on it when a watched call blocks past its limit
/// (and [`GRACE`]: an asynchronous call is given up at its limit by its own timer), and turns a
/// panic into [`GivenUp::Panicked`]. A thread given up on is left behind: a thread cannot be
/// killed.
pub(crate) fn supervised<T: Send + 'static>(
    monitor: &Arc<Monitor>,
    work: impl FnOnce() -> T + Send + 'static,
    tick: &mut dyn FnMut(),
) -> Result<T, GivenUp> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("seam-supervised".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(work));
            let _ = tx.send(result);
        });
    let handle =
        spawned.map_err(|e| GivenUp::Lost(format!("cannot start a thread for the work: {e}")))?;
    loop {
        tick();
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Ok(value)) => {
                let _ = handle.join();
                return Ok(value);
            }
            Ok(Err(payload)) => {
                let _ = handle.join();
                return Err(GivenUp::Panicked(panic_text(payload.as_ref())));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(hang) = monitor.overdue(GRACE) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Timing {
        Timing {
            hang_after: Duration::from_secs(30),
            hang_scale: 10,
            start_after: Duration::from_secs(60),
            ..Timing::default()
        }
    }

    /// The hang limit is the floor until an operation is measured, then ten times its slowest
    /// call; a start has its own budget; a hang being shrunk gets a tenth of the floor, at
    /// least a second; what one operation measured leaves the others alone.
    #[test]
    fn a_hang_limit_grows_with_the_slowest_call_of_its_operation() {
        let m = Monitor::new(timing());
        let stat = CallKind::Op("stat");
        assert_eq!(m.limit(stat), Duration::from_secs(30));
        assert_eq!(m.limit(CallKind::Start), Duration::from_secs(60));
        lock(&m.clock.slowest).insert("stat", Duration::from_secs(2));
        assert_eq!(
            m.limit(stat),
            Duration::from_secs(30),
            "10 × 2 s is under the floor"
        );
        lock(&m.clock.slowest).insert("stat", Duration::from_secs(5));
        assert_eq!(m.limit(stat), Duration::from_secs(50));
        assert_eq!(m.limit(CallKind::Op("read_text")), Duration::from_secs(30));
        let case = m.for_case(true);
        assert_eq!(
            case.limit(CallKind::Op("read_text")),
            Duration::from_secs(3)
        );
        assert_eq!(
            case.limit(stat),
            Duration::from_secs(50),
            "the case shares the clock"
        );
        let small = Monitor::new(Timing {
            hang_after: Duration::from_secs(5),
            ..timing()
        })
        .for_case(true);
        assert_eq!(small.limit(CallKind::Op("stat")), Duration::from_secs(1));
    }

    /// A call that returned is measured; one the suite held up, given up or unwound is not.
    #[test]
    fn only_a_call_that_returned_by_itself_is_measured() {
        let m = Monitor::new(timing());
        let slowest = |m: &Monitor| lock(&m.clock.slowest).get("stat").copied();
        m.enter("stat a".into(), CallKind::Op("stat")).returned();
        assert!(slowest(&m).is_some());
        let m = Monitor::new(timing());
        drop(m.enter("stat a".into(), CallKind::Op("stat")));
        assert_eq!(slowest(&m), None, "given up or unwound");
        let guard = m.enter("stat a".into(), CallKind::Op("stat"));
        let now = Instant::now();
        m.paused(now, now + Duration::from_millis(1));
        guard.returned();
        assert_eq!(slowest(&m), None, "held up by the suite");
        assert!(m.slowness().is_none());
    }

    /// A call is overdue only past its own limit and the grace; the first hang given up on is
    /// the one reported.
    #[test]
    fn a_call_is_overdue_past_its_limit_and_the_first_hang_is_kept() {
        let m = Monitor::new(timing());
        let _in_flight = m.enter("stat a".into(), CallKind::Op("stat"));
        assert!(m.overdue(Duration::ZERO).is_none());
        m.gave_up(
            "stat a".into(),
            CallKind::Op("stat"),
            Duration::from_secs(30),
        );
        m.gave_up(
            "stat b".into(),
            CallKind::Op("stat"),
            Duration::from_secs(30),
        );
        let hang = m.take_hang().expect("a hang");
        assert_eq!(hang.what, "stat a");
        assert!(!hang.start && !hang.lowered);
        assert!(m.take_hang().is_none());
    }
}
