//! A spy around a real provider: it forwards every call unchanged and counts the ones the
//! tools' budgets are about (stat, read_text, stream_text). Optionally it hides file sizes, as a
//! backend that cannot tell them would (the read tool must then stream), or its search, as a
//! backend that offers none would.

use seam::{
    Capabilities, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo, FsPathInfo,
    FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream,
    WriteIntent, WriteOutcome,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default, Debug)]
pub struct Counts {
    pub stat: AtomicUsize,
    pub read_text: AtomicUsize,
    pub stream_text: AtomicUsize,
    pub read_bytes: AtomicUsize,
}

impl Counts {
    pub fn get(&self) -> (usize, usize, usize) {
        (
            self.stat.load(Ordering::SeqCst),
            self.read_text.load(Ordering::SeqCst),
            self.stream_text.load(Ordering::SeqCst),
        )
    }

    pub fn reset(&self) {
        self.stat.store(0, Ordering::SeqCst);
        self.read_text.store(0, Ordering::SeqCst);
        self.stream_text.store(0, Ordering::SeqCst);
        self.read_bytes.store(0, Ordering::SeqCst);
    }
}

pub struct Counting {
    pub inner: Arc<dyn FileSystem>,
    pub counts: Arc<Counts>,
    pub hide_sizes: bool,
    pub hide_search: bool,
}

#[async_trait::async_trait]
impl FileSystem for Counting {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.inner.sandbox_mode()
    }
    fn search(&self) -> Option<&dyn seam::Search> {
        if self.hide_search {
            None
        } else {
            self.inner.search()
        }
    }
    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.inner.resolve(path, options, signal).await
    }
    fn process_path(&self, target: &FsTarget) -> String {
        self.inner.process_path(target)
    }
    fn file_url(&self, target: &FsTarget) -> String {
        self.inner.file_url(target)
    }
    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.inner.contains(parent, child)
    }
    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.counts.stat.fetch_add(1, Ordering::SeqCst);
        let info = self.inner.stat(target, signal).await?;
        Ok(info.map(|mut i| {
            if self.hide_sizes {
                i.size = None;
            }
            i
        }))
    }
    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        self.inner.lstat(path, options, signal).await
    }
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.counts.read_text.fetch_add(1, Ordering::SeqCst);
        self.inner.read_text(target, signal).await
    }
    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        self.counts.stream_text.fetch_add(1, Ordering::SeqCst);
        self.inner.stream_text(target, signal).await
    }
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.counts.read_bytes.fetch_add(1, Ordering::SeqCst);
        self.inner.read_bytes(target, max_bytes, signal).await
    }
    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        self.inner.list_dir(target, signal).await
    }
    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        self.inner
            .write_text(target, content, expected, sandbox, signal)
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
        self.inner
            .edit_text(target, edit, expected, sandbox, signal)
            .await
    }
}
