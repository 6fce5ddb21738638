//! Settings of the sandbox provider.

use seam::SandboxMode;
use seam_local::LocalConfig;

/// Configuration of a [`crate::SandboxFileSystem`].
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// The local provider underneath (its `cwd`, durability, staging...).
    pub local: LocalConfig,
    /// The deployment default mode, for calls without a per-call policy.
    pub mode: SandboxMode,
    /// The workspace root for calls without a per-call policy.
    pub workspace_root: String,
    /// Writable beside the workspace under `workspace-write`. Default: `/tmp` and the OS temp
    /// directory.
    pub temp_roots: Vec<String>,
    /// The fence covers reads too ([`seam::Capability::ReadFence`]): under `read-only` and
    /// `workspace-write`, reads, listings and searches see only what lies beneath the workspace
    /// and the temp roots. Default: off (the seed's sandbox fences mutations only — right for
    /// a harness with a shell of its own, wrong for a server that exposes one directory).
    pub confine_reads: bool,
}

impl SandboxConfig {
    /// A sandbox in `mode` over `workspace_root`, relative paths resolved against it, with the
    /// default temp roots.
    pub fn new(workspace_root: impl Into<String>, mode: SandboxMode) -> Self {
        let workspace_root = workspace_root.into();
        let mut temp_roots = vec!["/tmp".to_string()];
        if let Some(t) = std::env::temp_dir().to_str() {
            temp_roots.push(t.to_string());
        }
        Self {
            local: LocalConfig::new(workspace_root.clone()),
            mode,
            workspace_root,
            temp_roots,
            confine_reads: false,
        }
    }

    /// The same configuration with reads confined to the roots as well (see
    /// [`SandboxConfig::confine_reads`]).
    pub fn with_confined_reads(mut self, confined: bool) -> Self {
        self.confine_reads = confined;
        self
    }

    /// The same configuration with another local configuration underneath.
    pub fn with_local(mut self, local: LocalConfig) -> Self {
        self.local = local;
        self
    }

    /// The same configuration with other temp roots (none: only the workspace is writable).
    pub fn with_temp_roots(mut self, roots: Vec<String>) -> Self {
        self.temp_roots = roots;
        self
    }
}
