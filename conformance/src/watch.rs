//! A gate that survives its subject. A backend under test may hang (a lost wake-up, a deadlock,
//! a remote peer that never answers) or panic; the gate must still finish and say which call
//! did it. So every provider and world call goes through a [`Watched`] wrapper that records what
//! is in flight and since when, and names the operation in a panic; every property runs on a
//! thread of its own under [`supervised`], which gives up on a call older than the timeout,
//! reports it, and goes on with the next property. (The stuck thread is abandoned: a thread
//! cannot be killed, and its temporary directory stays behind.)

use crate::factory::{CaseOptions, Factory, Subject};
use crate::failure::{Failure, FailureKind};
use crate::harness::panic_text;
use crate::step::Step;
use crate::world::{EntryMode, World};
use futures_util::FutureExt;
use seam::{
    Capabilities, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo, FsPathInfo,
    FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream,
    WriteIntent, WriteOutcome,
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

/// What is in flight, for one property.
pub(crate) struct Monitor {
    calls: Mutex<HashMap<u64, (String, Instant)>>,
    next: AtomicU64,
    timeout: Duration,
    /// The generated case being run and the step it is at, so a hang can be reported with the
    /// steps that led to it.
    case: Mutex<Option<(Vec<Step>, usize)>>,
}

/// Removes its call from the monitor when the call returns (or unwinds).
pub(crate) struct CallGuard {
    monitor: Arc<Monitor>,
    id: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.monitor.lock_calls().remove(&self.id);
    }
}

impl Monitor {
    pub fn new(timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            calls: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            timeout,
            case: Mutex::new(None),
        })
    }

    fn lock_calls(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (String, Instant)>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn enter(self: &Arc<Self>, what: String) -> CallGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock_calls().insert(id, (what, Instant::now()));
        CallGuard {
            monitor: self.clone(),
            id,
        }
    }

    /// The oldest call in flight for longer than the timeout.
    pub fn overdue(&self) -> Option<String> {
        let calls = self.lock_calls();
        calls
            .values()
            .filter(|(_, since)| since.elapsed() > self.timeout)
            .min_by_key(|(_, since)| *since)
            .map(|(what, _)| what.clone())
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Records the generated case being run.
    pub fn set_case(&self, steps: &[Step]) {
        *self.case.lock().unwrap_or_else(|p| p.into_inner()) = Some((steps.to_vec(), 0));
    }

    /// Records the step the case is at.
    pub fn set_step(&self, index: usize) {
        if let Some((_, at)) = self.case.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            *at = index;
        }
    }

    /// The current case up to and including its current step.
    pub fn current_case(&self) -> Option<Vec<Step>> {
        self.case
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|(steps, at)| steps[..(*at + 1).min(steps.len())].to_vec())
    }
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
    async fn call<T>(&self, what: String, fut: impl Future<Output = T>) -> T {
        let _guard = self.monitor.enter(what.clone());
        named(&what, fut).await
    }

    fn sync<T>(&self, what: String, f: impl FnOnce() -> T) -> T {
        let _guard = self.monitor.enter(what.clone());
        named_sync(&what, f)
    }
}

#[async_trait::async_trait]
impl FileSystem for Watched {
    fn capabilities(&self) -> Capabilities {
        self.sync("capabilities".into(), || self.inner.capabilities())
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.sync("sandbox_mode".into(), || self.inner.sandbox_mode())
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.call(
            format!("resolve {path:?}"),
            self.inner.resolve(path, options, signal),
        )
        .await
    }

    fn process_path(&self, target: &FsTarget) -> String {
        self.sync(format!("process_path {:?}", target.display_path), || {
            self.inner.process_path(target)
        })
    }

    fn file_url(&self, target: &FsTarget) -> String {
        self.sync(format!("file_url {:?}", target.display_path), || {
            self.inner.file_url(target)
        })
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.sync(
            format!(
                "contains {:?} {:?}",
                parent.display_path, child.display_path
            ),
            || self.inner.contains(parent, child),
        )
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.call(
            format!("stat {:?}", target.display_path),
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
            self.inner.lstat(path, options, signal),
        )
        .await
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.call(
            format!("read_text {:?}", target.display_path),
            self.inner.read_text(target, signal),
        )
        .await
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        let what = format!("stream_text {:?}", target.display_path);
        let stream = self
            .call(what.clone(), self.inner.stream_text(target, signal))
            .await?;
        Ok(Box::pin(WatchedStream {
            inner: stream,
            monitor: self.monitor.clone(),
            what: format!("{what} (next chunk)"),
            guard: None,
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
            self.inner
                .edit_text(target, edit, expected, sandbox, signal),
        )
        .await
    }
}

/// A stream whose every wait for a chunk is recorded.
struct WatchedStream {
    inner: TextStream,
    monitor: Arc<Monitor>,
    what: String,
    guard: Option<CallGuard>,
}

impl futures_core::Stream for WatchedStream {
    type Item = Result<String, FsError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.guard.is_none() {
            this.guard = Some(this.monitor.enter(this.what.clone()));
        }
        let what = this.what.clone();
        let inner = &mut this.inner;
        let poll = named_sync(&what, || inner.as_mut().poll_next(cx));
        if poll.is_ready() {
            this.guard = None;
        }
        poll
    }
}

/// A world whose every call is recorded.
pub(crate) struct WatchedWorld {
    inner: Arc<dyn World>,
    monitor: Arc<Monitor>,
}

impl WatchedWorld {
    fn sync<T>(&self, what: String, f: impl FnOnce() -> T) -> T {
        let _guard = self.monitor.enter(what.clone());
        named_sync(&what, f)
    }
}

impl World for WatchedWorld {
    fn root_display(&self) -> String {
        self.sync("world root_display".into(), || self.inner.root_display())
    }

    fn process_root(&self) -> String {
        self.sync("world process_root".into(), || self.inner.process_root())
    }

    fn apply(&self, effect: &WorldEffect) -> std::io::Result<()> {
        self.sync(format!("world apply {effect:?}"), || {
            self.inner.apply(effect)
        })
    }

    fn snapshot(&self) -> std::io::Result<BTreeMap<String, SnapEntry>> {
        self.sync("world snapshot".into(), || self.inner.snapshot())
    }

    fn entry_mode(&self, path: &str) -> std::io::Result<Option<EntryMode>> {
        self.sync(format!("world entry_mode {path:?}"), || {
            self.inner.entry_mode(path)
        })
    }

    fn supports_fifos(&self) -> bool {
        self.sync("world supports_fifos".into(), || {
            self.inner.supports_fifos()
        })
    }

    fn open_to_others(&self) -> std::io::Result<()> {
        self.sync("world open_to_others".into(), || {
            self.inner.open_to_others()
        })
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

    fn configurations(&self) -> Vec<String> {
        self.inner.configurations()
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let subject = {
            let _guard = self.monitor.enter("factory make".into());
            named_sync("factory make", || self.inner.make(options))?
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
            let _guard = self.monitor.enter("factory reopen".into());
            self.inner.reopen(options, subject)?
        };
        Some(opened.map(|fs| {
            Arc::new(Watched {
                inner: fs,
                monitor: self.monitor.clone(),
            }) as Arc<dyn seam::FileSystem>
        }))
    }
}

/// Runs `work` on a thread of its own; gives up when a watched call is overdue, and turns a
/// panic into a failure.
pub(crate) fn supervised<T: Send + 'static>(
    monitor: &Arc<Monitor>,
    work: impl FnOnce() -> T + Send + 'static,
    tick: &mut dyn FnMut(),
) -> Result<T, Failure> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("seam-property".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(work));
            let _ = tx.send(result);
        });
    let handle = spawned.map_err(|e| {
        Failure::new(
            FailureKind::Setup,
            format!("cannot start a thread for the property: {e}"),
        )
    })?;
    loop {
        tick();
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Ok(value)) => {
                let _ = handle.join();
                return Ok(value);
            }
            Ok(Err(payload)) => {
                let _ = handle.join();
                return Err(Failure::new(
                    FailureKind::Panic,
                    format!("the provider panicked: {}", panic_text(payload.as_ref())),
                ));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(what) = monitor.overdue() {
                    return Err(Failure::new(
                        FailureKind::Timeout,
                        format!(
                            "`{what}` did not return within {:.1}s (the call timeout); the property was abandoned",
                            monitor.timeout().as_secs_f64()
                        ),
                    ));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Failure::new(
                    FailureKind::Panic,
                    "the property's thread ended without a result",
                ));
            }
        }
    }
}
