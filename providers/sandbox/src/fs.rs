//! [`SandboxFileSystem`]: reads go straight to the local provider; a mutation is decided by the
//! fence ([`crate::fence`]) and then runs unfenced, or beneath the writable root that allowed
//! it, or not at all.

use crate::config::SandboxConfig;
use crate::fence::{Decision, decide};
use seam::{
    Capabilities, Capability, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo,
    FsPathInfo, FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal,
    TextStream, Verb, WriteIntent, WriteOutcome,
};
use seam_local::{Confinement, LocalFileSystem, is_escape};
use std::sync::Arc;

/// The local provider behind the sandbox fence.
#[derive(Clone, Debug)]
pub struct SandboxFileSystem {
    local: LocalFileSystem,
    config: SandboxConfig,
}

impl SandboxFileSystem {
    /// A sandbox with this configuration.
    pub fn new(config: SandboxConfig) -> Self {
        Self {
            local: LocalFileSystem::new(config.local.clone()),
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The fence's decision for a mutation of `target` under `policy` (or the default).
    fn fence(&self, target: &FsTarget, policy: Option<&SandboxPolicy>) -> (SandboxMode, Decision) {
        let (mode, workspace) = match policy {
            Some(p) => (p.mode, p.workspace_root.as_str()),
            None => (self.config.mode, self.config.workspace_root.as_str()),
        };
        (
            mode,
            decide(target, mode, workspace, &self.config.temp_roots),
        )
    }

    /// Opens the root a mutation was allowed beneath; a root that cannot be held is a denial.
    fn confinement(
        root: &str,
        target: &FsTarget,
        mode: SandboxMode,
    ) -> Result<Arc<Confinement>, FsError> {
        Confinement::open(root)
            .map(Arc::new)
            .map_err(|_| FsError::sandbox_denied(&target.display_path, mode))
    }
}

/// An escape from the root is a denial; anything else is the mutation's own failure.
fn denied_if_escape(e: FsError, target: &FsTarget, mode: SandboxMode) -> FsError {
    if is_escape(&e) {
        FsError::sandbox_denied(&target.display_path, mode)
    } else {
        e
    }
}

#[async_trait::async_trait]
impl FileSystem for SandboxFileSystem {
    fn capabilities(&self) -> Capabilities {
        self.local.capabilities().with(Capability::SandboxModes)
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        Some(self.config.mode)
    }

    /// Search reads, and reads are never fenced: the local provider's, whose walk never
    /// leaves the root it is given.
    fn search(&self) -> Option<&dyn seam::Search> {
        self.local.search()
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.local.resolve(path, options, signal).await
    }

    fn process_path(&self, target: &FsTarget) -> String {
        self.local.process_path(target)
    }

    fn file_url(&self, target: &FsTarget) -> String {
        self.local.file_url(target)
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.local.contains(parent, child)
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.local.stat(target, signal).await
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        self.local.lstat(path, options, signal).await
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.local.read_text(target, signal).await
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        self.local.stream_text(target, signal).await
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.local.read_bytes(target, max_bytes, signal).await
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        self.local.list_dir(target, signal).await
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        signal.check(Verb::Write)?;
        match self.fence(target, sandbox) {
            (_, Decision::Deny(e)) => Err(e),
            (_, Decision::Anywhere) => {
                self.local
                    .write_text(target, content, expected, None, signal)
                    .await
            }
            (mode, Decision::Beneath(root)) => {
                let within = Self::confinement(&root, target, mode)?;
                self.local
                    .write_text_beneath(&within, target, content, expected, signal)
                    .await
                    .map_err(|e| denied_if_escape(e, target, mode))
            }
        }
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        signal.check(Verb::Edit)?;
        match self.fence(target, sandbox) {
            (_, Decision::Deny(e)) => Err(e),
            (_, Decision::Anywhere) => {
                self.local
                    .edit_text(target, edit, expected, None, signal)
                    .await
            }
            (mode, Decision::Beneath(root)) => {
                let within = Self::confinement(&root, target, mode)?;
                self.local
                    .edit_text_beneath(&within, target, edit, expected, signal)
                    .await
                    .map_err(|e| denied_if_escape(e, target, mode))
            }
        }
    }
}
