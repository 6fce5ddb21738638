//! `seam mcp`: the composition of an MCP filesystem server — the sandbox provider over the
//! local disk, fenced to `--root` in `--mode` (or a server's backend over the wire), the
//! observation policy as the gate, one owner for the session, every tool — served on stdio by
//! `seam-mcp`.

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
    /// The deployment's sandbox mode (`None`: workspace-write for local; the server's own for
    /// a remote provider).
    pub mode: Option<SandboxMode>,
    /// `local`, or a server's address (`unix:PATH`, `tcp://HOST:PORT`, `exec:COMMAND`).
    pub provider: String,
}

type Composed = (Arc<dyn FileSystem>, String, Option<SandboxMode>);

/// The sandbox provider over the local disk, fenced to `--root`.
fn local(args: &McpArgs) -> Result<Composed, String> {
    let root = std::fs::canonicalize(&args.root)
        .map_err(|e| format!("--root {}: {e}", args.root.display()))?;
    if !root.is_dir() {
        return Err(format!("--root {}: not a directory", args.root.display()));
    }
    let root = root
        .to_str()
        .ok_or_else(|| format!("--root {}: not valid UTF-8", root.display()))?
        .to_string();
    let mode = args.mode.unwrap_or(SandboxMode::WorkspaceWrite);
    // Only the root is writable under workspace-write (the seed also opens /tmp; an MCP server
    // handed one directory should not).
    let config = SandboxConfig::new(root.clone(), mode)
        .with_local(LocalConfig::new(root.clone()))
        .with_temp_roots(Vec::new());
    Ok((Arc::new(SandboxFileSystem::new(config)), root, Some(mode)))
}

/// A server's backend over the wire: `--root` is a directory in the server's world (relative
/// paths resolve against it); the fence, if any, is the server's own.
fn remote(args: &McpArgs) -> Result<Composed, String> {
    let address = args
        .provider
        .parse::<seam_remote::Address>()
        .map_err(|e| format!("--provider: {e} (or local)"))?;
    if args.mode.is_some() {
        return Err(
            "--mode applies to the local provider; a server fences with its own mode (seam serve --provider sandbox:MODE)".into(),
        );
    }
    let root = args
        .root
        .to_str()
        .filter(|r| r.starts_with('/'))
        .ok_or_else(|| {
            format!(
                "--root {}: with a remote provider, an absolute path in the server's world",
                args.root.display()
            )
        })?
        .to_string();
    let token = std::env::var("SEAM_TOKEN").ok();
    let conn =
        seam_remote::Connection::connect(&address, token.as_deref()).map_err(|e| e.to_string())?;
    let fs = seam_remote::RemoteFileSystem::new(Arc::new(conn));
    let mode = fs.sandbox_mode();
    Ok((Arc::new(fs), root, mode))
}

/// `read_image` takes every format the tool knows, up to its default size.
struct AnyImage;

impl ImageSink for AnyImage {}

/// Serves until the client closes stdin. Usage problems come back as `Err` (exit 2); a
/// session that fails after starting is reported on stderr (exit 1).
pub fn run(args: McpArgs) -> Result<ExitCode, String> {
    let (fs, root, mode) = if args.provider == "local" {
        local(&args)?
    } else {
        remote(&args)?
    };
    let spill = tempfile::Builder::new()
        .prefix("seam-mcp-spill-")
        .tempdir()
        .map_err(|e| format!("cannot create the spill directory: {e}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(spill.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make the spill directory private: {e}"))?;
    }
    let mut tools = Toolset::builder(fs.as_ref())
        .image_sink(Arc::new(AnyImage))
        .spill_store(Arc::new(SpillDir::new(spill.path())))
        .str_replace_editor()
        .build();
    if mode == Some(SandboxMode::ReadOnly) {
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
