//! A stand-in for the sandbox provider (not built yet): the real local provider behind the
//! seed's mode fence, reduced to what the tools' sandbox handling needs — read-only denies every
//! mutation, workspace-write allows mutations whose key is under the workspace root (lexically;
//! the real sandbox re-resolves beneath a held handle), danger-full-access allows all. Denials
//! carry the seed's provider text. It records the policy each mutation was stamped with.

use seam::{
    Capabilities, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsErrorCode, FsInfo,
    FsPathInfo, FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal,
    TextStream, WriteIntent, WriteOutcome,
};
use seam_tools::sandbox::mode_name;
use std::sync::Mutex;

pub struct Fence {
    pub inner: seam_local::LocalFileSystem,
    pub default_mode: SandboxMode,
    pub default_root: String,
    pub stamps: Mutex<Vec<Option<SandboxPolicy>>>,
}

impl Fence {
    pub fn new(root: &str, mode: SandboxMode) -> Self {
        Self {
            inner: super::local(root),
            default_mode: mode,
            default_root: root.to_string(),
            stamps: Mutex::new(Vec::new()),
        }
    }

    fn check(&self, target: &FsTarget, policy: Option<&SandboxPolicy>) -> Result<(), FsError> {
        self.stamps.lock().expect("lock").push(policy.cloned());
        let mode = policy.map_or(self.default_mode, |p| p.mode);
        let root = policy.map_or(self.default_root.as_str(), |p| p.workspace_root.as_str());
        let key = target.key.as_str();
        let allowed = match mode {
            SandboxMode::ReadOnly => false,
            SandboxMode::WorkspaceWrite => key == root || key.starts_with(&format!("{root}/")),
            SandboxMode::DangerFullAccess => true,
        };
        if allowed {
            Ok(())
        } else {
            Err(FsError::new(
                FsErrorCode::SandboxDenied,
                format!(
                    "cannot write \"{}\": file access denied under {} mode",
                    target.display_path,
                    mode_name(mode)
                ),
            ))
        }
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
        self.check(target, sandbox)?;
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
        self.check(target, sandbox)?;
        self.inner
            .edit_text(target, edit, expected, sandbox, signal)
            .await
    }
}
