//! The real sandbox provider (`seam-sandbox`) with a recorder in front: every mutation's
//! per-call policy is kept, so the tests can see what the tools stamped on each call, while the
//! real fence decides. Only the workspace is writable (no temp roots: the test directories
//! themselves live under `/tmp`).

use seam::{
    Capabilities, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo, FsPathInfo,
    FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream,
    WriteIntent, WriteOutcome,
};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::sync::Mutex;

pub struct Fence {
    pub inner: SandboxFileSystem,
    pub default_mode: SandboxMode,
    pub stamps: Mutex<Vec<Option<SandboxPolicy>>>,
}

impl Fence {
    pub fn new(root: &str, mode: SandboxMode) -> Self {
        let config = SandboxConfig::new(root, mode)
            .with_local(
                seam_local::LocalConfig::new(root).with_durability(seam_local::Durability::None),
            )
            .with_temp_roots(Vec::new());
        Self {
            inner: SandboxFileSystem::new(config),
            default_mode: mode,
            stamps: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, policy: Option<&SandboxPolicy>) {
        self.stamps.lock().expect("lock").push(policy.cloned());
    }
}

#[async_trait::async_trait]
impl FileSystem for Fence {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        Some(self.default_mode)
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
        self.inner.stat(target, signal).await
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
        self.inner.read_text(target, signal).await
    }
    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        self.inner.stream_text(target, signal).await
    }
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
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
        self.record(sandbox);
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
        self.record(sandbox);
        self.inner
            .edit_text(target, edit, expected, sandbox, signal)
            .await
    }
}
