//! [`Watched`]: a backend with every call timed against its monitor, given up (with its thread)
//! when it hangs, and its text streams watched chunk by chunk.

use super::{CallGuard, Monitor, given_up, named, named_sync};
use crate::timing::CallKind;
use seam::{
    Capabilities, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest, FileSystem,
    FsDirEntry, FsError, FsInfo, FsPathInfo, FsTarget, FsVersion, RemoveOptions, RemoveOutcome,
    RenameOptions, RenameOutcome, ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream,
    WriteIntent, WriteOutcome,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// A provider whose every call is recorded in a monitor.
pub(crate) struct Watched {
    pub(super) inner: Arc<dyn FileSystem>,
    pub(super) monitor: Arc<Monitor>,
}

impl Watched {
    /// Runs a provider call under its hang limit: past it the call is dropped, recorded as a
    /// hang, and its caller gets an error.
    pub(super) async fn call<T>(
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

    pub(super) fn sync<T>(&self, what: String, op: &'static str, f: impl FnOnce() -> T) -> T {
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
pub(super) struct WatchedStream {
    pub(super) inner: TextStream,
    pub(super) monitor: Arc<Monitor>,
    pub(super) what: String,
    /// The wait in progress: its record and its deadline.
    pub(super) waiting: Option<(CallGuard, Pin<Box<tokio::time::Sleep>>)>,
    /// Given up: the stream ends.
    pub(super) done: bool,
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
