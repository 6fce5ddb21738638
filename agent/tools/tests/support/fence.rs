//! The real sandbox provider (`seam-sandbox`) with a recorder in front: every mutation's
//! per-call policy is kept, so the tests can see what the tools stamped on each call, while the
//! real fence decides. Only the workspace is writable (no temp roots: the test directories
//! themselves live under `/tmp`).

use seam::{
    EditOutcome, EditRequest, FileSystem, FsError, FsTarget, FsVersion, Layer, SandboxMode,
    SandboxPolicy, Signal, WriteIntent, WriteOutcome,
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

// A layer: everything but the two mutations reaches the real sandbox unchanged.
#[async_trait::async_trait]
impl Layer for Fence {
    fn inner(&self) -> &dyn FileSystem {
        &self.inner
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        Some(self.default_mode)
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
