//! `seam mcp`: the composition of an MCP filesystem server — the sandbox provider over the
//! local disk, fenced to `--root` in `--mode`, the observation policy as the gate, one owner for
//! the session, every tool — served on stdio by `seam-mcp`.

use seam::{FileSystem, SandboxMode};
use seam_local::LocalConfig;
use seam_mcp::{SeamMcp, SpillDir};
use seam_policy::{ObservationPolicy, Owner};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use seam_tools::{Exec, ImageSink, Toolset};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// What `seam mcp` was asked for.
#[derive(Debug)]
pub struct McpArgs {
    /// The workspace: relative paths resolve against it, and it is the writable root.
    pub root: PathBuf,
    /// The deployment's sandbox mode.
    pub mode: SandboxMode,
    /// The backend (only `local` today).
    pub provider: String,
}

/// `read_image` takes every format the tool knows, up to its default size.
struct AnyImage;

impl ImageSink for AnyImage {}

/// Serves until the client closes stdin. Usage problems come back as `Err` (exit 2); a
/// session that fails after starting is reported on stderr (exit 1).
pub fn run(args: McpArgs) -> Result<ExitCode, String> {
    if args.provider != "local" {
        return Err(format!(
            "unknown provider {:?} for seam mcp (available: local)",
            args.provider
        ));
    }
    let root = std::fs::canonicalize(&args.root)
        .map_err(|e| format!("--root {}: {e}", args.root.display()))?;
    if !root.is_dir() {
        return Err(format!("--root {}: not a directory", args.root.display()));
    }
    let root = root
        .to_str()
        .ok_or_else(|| format!("--root {}: not valid UTF-8", root.display()))?
        .to_string();
    // Only the root is writable under workspace-write (the seed also opens /tmp; an MCP server
    // handed one directory should not).
    let config = SandboxConfig::new(root.clone(), args.mode)
        .with_local(LocalConfig::new(root.clone()))
        .with_temp_roots(Vec::new());
    let fs: Arc<dyn FileSystem> = Arc::new(SandboxFileSystem::new(config));
    let spill = tempfile::Builder::new()
        .prefix("seam-mcp-spill-")
        .tempdir()
        .map_err(|e| format!("cannot create the spill directory: {e}"))?;
    let mut tools = Toolset::builder(fs.as_ref())
        .image_sink(Arc::new(AnyImage))
        .spill_store(Arc::new(SpillDir::new(spill.path())))
        .str_replace_editor()
        .build();
    if args.mode == SandboxMode::ReadOnly {
        // Every mutation would be refused: list only the tools that look.
        tools = tools.retain(|t| t.effects().read_only);
    }
    let exec = Exec::new(fs)
        .with_gate(Arc::new(ObservationPolicy::new()))
        .with_actor(Owner::new())
        .with_cwd(root);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let served = runtime.block_on(SeamMcp::new(tools, exec).serve_stdio());
    drop(spill);
    match served {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("seam mcp: {}", e.message);
            Ok(ExitCode::FAILURE)
        }
    }
}
