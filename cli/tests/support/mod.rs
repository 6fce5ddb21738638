//! Test doubles shared by the CLI crate's tests: a provider with a hook before every call (to
//! make it slow, hang, or fail a call its own way), wrapped around any factory's subjects.

#![allow(dead_code)]

pub mod mcp;

use seam::{
    Capabilities, Capability, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo,
    FsPathInfo, FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal,
    TextStream, WriteIntent, WriteOutcome,
};
use seam_conformance::{CaseOptions, Factory, Subject};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// What happens before a call of the hooked provider.
#[derive(Clone)]
pub enum Before {
    /// The call goes on to the inner provider.
    Go,
    /// The thread sleeps first (a slow backend that blocks).
    Sleep(Duration),
    /// The call does not return (it stays pending) until its test releases these hangs, once
    /// it has its verdict: the thread the suite gave up on then finishes its case, and the
    /// case's directory goes with it rather than outlive the test process.
    Hang(Arc<seam_faults::Hangs>),
    /// The call fails with this error instead.
    Fail(FsError),
}

/// Waits, once a test released the hangs it planted, for the threads the suite gave up on to
/// finish their cases: their directories go with them, rather than outlive the test process
/// (nothing of a process runs at its exit to remove them). Done when this process has no case
/// directory left — or after 10 s, other tests of the binary running cases of their own: the
/// last test to end waits for everything.
pub fn settle() {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while seam_conformance::case_dirs::run_dir().is_some() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Decides, from the operation and the path it is about, what happens before a call.
pub type Hook = Arc<dyn Fn(&'static str, &str) -> Before + Send + Sync>;

/// A provider with a hook before every call; optionally serving one call at a time (every call
/// holds one lock from start to end, as a single-threaded adapter does) and claiming less than
/// the inner provider.
pub struct Hooked {
    inner: Arc<dyn FileSystem>,
    hook: Hook,
    one_at_a_time: Option<Arc<tokio::sync::Mutex<()>>>,
    without: Option<Capability>,
    streams: Option<Arc<StreamLog>>,
}

/// How the streams of a hooked provider were read: of those whose second chunk was asked for,
/// how many by a reader that stopped after the first (it let the runtime run something else in
/// between) and how many straight on.
#[derive(Default)]
pub struct StreamLog {
    pub paused: AtomicUsize,
    pub straight: AtomicUsize,
}

impl StreamLog {
    /// `stream`, telling this log how its second chunk was asked for. When the first chunk is
    /// handed over, a task is spawned on the reader's runtime that marks the stream: the
    /// runtime runs it only if the reader stops (its future waits on something, a timer say),
    /// never while it reads on without stopping. No clock is read.
    fn watch(self: &Arc<Self>, stream: TextStream) -> TextStream {
        let log = self.clone();
        let stopped = Arc::new(AtomicBool::new(false));
        let mut handed = 0usize;
        Box::pin(futures_util::StreamExt::map(stream, move |item| {
            handed += 1;
            if handed == 1 {
                let stopped = stopped.clone();
                tokio::spawn(async move { stopped.store(true, Ordering::SeqCst) });
            } else if handed == 2 {
                let count = if stopped.load(Ordering::SeqCst) {
                    &log.paused
                } else {
                    &log.straight
                };
                count.fetch_add(1, Ordering::SeqCst);
            }
            item
        }))
    }
}

impl Hooked {
    /// Holds the one-call-at-a-time lock, when there is one, for as long as the guard lives.
    async fn turn(&self) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        match &self.one_at_a_time {
            Some(lock) => Some(lock.clone().lock_owned().await),
            None => None,
        }
    }

    async fn before(&self, op: &'static str, path: &str) -> Result<(), FsError> {
        match (self.hook)(op, path) {
            Before::Go => Ok(()),
            Before::Sleep(d) => {
                std::thread::sleep(d);
                Ok(())
            }
            Before::Hang(hangs) => {
                hangs.wait().await;
                Ok(())
            }
            Before::Fail(e) => Err(e),
        }
    }
}

#[async_trait::async_trait]
impl FileSystem for Hooked {
    fn capabilities(&self) -> Capabilities {
        let mut caps = self.inner.capabilities();
        if let Some(c) = self.without {
            caps = caps.without(c);
        }
        caps
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.inner.sandbox_mode()
    }
    async fn resolve(
        &self,
        p: &str,
        o: ResolveOptions<'_>,
        s: &Signal,
    ) -> Result<FsTarget, FsError> {
        let _turn = self.turn().await;
        self.before("resolve", p).await?;
        self.inner.resolve(p, o, s).await
    }
    fn process_path(&self, t: &FsTarget) -> String {
        self.inner.process_path(t)
    }
    fn file_url(&self, t: &FsTarget) -> String {
        self.inner.file_url(t)
    }
    fn contains(&self, p: &FsTarget, c: &FsTarget) -> bool {
        self.inner.contains(p, c)
    }
    async fn stat(&self, t: &FsTarget, s: &Signal) -> Result<Option<FsInfo>, FsError> {
        let _turn = self.turn().await;
        self.before("stat", &t.display_path).await?;
        self.inner.stat(t, s).await
    }
    async fn lstat(
        &self,
        p: &str,
        o: ResolveOptions<'_>,
        s: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        let _turn = self.turn().await;
        self.before("lstat", p).await?;
        self.inner.lstat(p, o, s).await
    }
    async fn read_text(&self, t: &FsTarget, s: &Signal) -> Result<String, FsError> {
        let _turn = self.turn().await;
        self.before("read_text", &t.display_path).await?;
        self.inner.read_text(t, s).await
    }
    async fn stream_text(&self, t: &FsTarget, s: &Signal) -> Result<TextStream, FsError> {
        let turn = self.turn().await;
        self.before("stream_text", &t.display_path).await?;
        if turn.is_some() {
            // The whole stream is served in its turn, as a single-threaded server would.
            let text = self.inner.read_text(t, s).await?;
            return Ok(Box::pin(futures_util::stream::iter([Ok(text)])));
        }
        let stream = self.inner.stream_text(t, s).await?;
        Ok(match &self.streams {
            Some(log) => log.watch(stream),
            None => stream,
        })
    }
    async fn read_bytes(&self, t: &FsTarget, m: u64, s: &Signal) -> Result<Vec<u8>, FsError> {
        let _turn = self.turn().await;
        self.before("read_bytes", &t.display_path).await?;
        self.inner.read_bytes(t, m, s).await
    }
    async fn list_dir(&self, t: &FsTarget, s: &Signal) -> Result<Vec<FsDirEntry>, FsError> {
        let _turn = self.turn().await;
        self.before("list_dir", &t.display_path).await?;
        self.inner.list_dir(t, s).await
    }
    async fn write_text(
        &self,
        t: &FsTarget,
        c: &str,
        e: Option<&WriteIntent>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        let _turn = self.turn().await;
        self.before("write_text", &t.display_path).await?;
        self.inner.write_text(t, c, e, p, s).await
    }
    async fn edit_text(
        &self,
        t: &FsTarget,
        e: &EditRequest,
        v: Option<&FsVersion>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<EditOutcome, FsError> {
        let _turn = self.turn().await;
        self.before("edit_text", &t.display_path).await?;
        self.inner.edit_text(t, e, v, p, s).await
    }
    async fn create_dir(
        &self,
        path: &str,
        o: ResolveOptions<'_>,
        r: seam::CreateDirOptions,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<seam::CreateDirOutcome, FsError> {
        let _turn = self.turn().await;
        self.before("create_dir", path).await?;
        self.inner.create_dir(path, o, r, p, s).await
    }
    async fn remove(
        &self,
        path: &str,
        o: ResolveOptions<'_>,
        r: &seam::RemoveOptions,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<seam::RemoveOutcome, FsError> {
        let _turn = self.turn().await;
        self.before("remove", path).await?;
        self.inner.remove(path, o, r, p, s).await
    }
    async fn rename(
        &self,
        from: &str,
        to: &str,
        o: ResolveOptions<'_>,
        r: &seam::RenameOptions,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<seam::RenameOutcome, FsError> {
        let _turn = self.turn().await;
        self.before("rename", from).await?;
        self.inner.rename(from, to, o, r, p, s).await
    }
}

/// `inner`'s subjects, hooked: every subject by `hook`, or each by a hook of its own made by
/// `per_subject` (state kept per subject is a fact of the case: the same steps, the same calls).
pub struct HookedFactory {
    pub inner: Arc<dyn Factory>,
    pub hook: Hook,
    pub per_subject: Option<Arc<dyn Fn() -> Hook + Send + Sync>>,
    /// Each subject serves one call at a time.
    pub one_at_a_time: bool,
    /// A capability the subjects do not claim.
    pub without: Option<Capability>,
    /// Where the subjects' streams say how they were read.
    pub streams: Option<Arc<StreamLog>>,
    /// Whether the subjects' streams come through a window (`None`: as the inner factory's).
    pub window: Option<bool>,
}

impl HookedFactory {
    /// Every subject of `inner` hooked by `hook`.
    pub fn new(inner: Arc<dyn Factory>, hook: Hook) -> Self {
        Self {
            inner,
            hook,
            per_subject: None,
            one_at_a_time: false,
            without: None,
            streams: None,
            window: None,
        }
    }

    /// Every subject of `inner` hooked by a fresh hook from `make`.
    pub fn per_subject(inner: Arc<dyn Factory>, make: Arc<dyn Fn() -> Hook + Send + Sync>) -> Self {
        Self {
            inner,
            hook: Arc::new(|_, _| Before::Go),
            per_subject: Some(make),
            one_at_a_time: false,
            without: None,
            streams: None,
            window: None,
        }
    }
}

impl Factory for HookedFactory {
    fn name(&self) -> String {
        format!("{}+hooked", self.inner.name())
    }

    fn permissions_checkable(&self) -> Result<(), String> {
        self.inner.permissions_checkable()
    }
    fn configurations(&self) -> Vec<String> {
        self.inner.configurations()
    }
    fn streams_through_a_window(&self) -> bool {
        self.window
            .unwrap_or_else(|| self.inner.streams_through_a_window())
    }
    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let s = self.inner.make(options)?;
        Ok(Subject {
            fs: self.hooked(s.fs),
            world: s.world,
            diff_basis_max_bytes: s.diff_basis_max_bytes,
            keep_alive: s.keep_alive,
        })
    }
    /// A second instance of the inner provider, hooked the same way (with a lock of its own
    /// when it serves one call at a time: another process would have its own).
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn FileSystem>, String>> {
        Some(
            self.inner
                .reopen(options, subject)?
                .map(|fs| self.hooked(fs)),
        )
    }
}

impl HookedFactory {
    fn hooked(&self, inner: Arc<dyn FileSystem>) -> Arc<dyn FileSystem> {
        let hook = match &self.per_subject {
            Some(make) => make(),
            None => self.hook.clone(),
        };
        Arc::new(Hooked {
            inner,
            hook,
            one_at_a_time: self
                .one_at_a_time
                .then(|| Arc::new(tokio::sync::Mutex::new(()))),
            without: self.without,
            streams: self.streams.clone(),
        })
    }
}
