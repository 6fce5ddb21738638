//! `seam mcp`: the composition of an MCP filesystem server — the sandbox provider over the
//! local disk, fenced to `--root` in `--mode` (or a server's backend over the wire), the
//! observation policy as the gate, one owner for the session, every tool — served on stdio by
//! `seam-mcp`. With `--workspace`, the root is a registered workspace (a path not seen before
//! is registered), and every call's mode and root come from the per-call policy resolver.

use seam::{FileSystem, SandboxMode};
use seam_local::LocalConfig;
use seam_mcp::{CallContext, RootsBinder, SeamMcp, SpillDir};
use seam_policy::{ObservationPolicy, Owner};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use seam_tools::{Exec, ImageSink, ToolError, Toolset};
use seam_workspace::{PolicyService, Session, WorkspaceErrorCode};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// What `seam mcp` was asked for.
#[derive(Debug)]
pub struct McpArgs {
    /// The workspace: relative paths resolve against it, and it is the writable root.
    pub root: Option<PathBuf>,
    /// A registered workspace's id or root (instead of `root`).
    pub workspace: Option<String>,
    /// The registry file (`None`: the default, see `seam workspace`).
    pub registry: Option<PathBuf>,
    /// The deployment's sandbox mode (`None`: workspace-write for local; the server's own for
    /// a remote provider).
    pub mode: Option<SandboxMode>,
    /// `local`, or a server's address (`unix:PATH`, `tcp://HOST:PORT`, `exec:COMMAND`).
    pub provider: String,
    /// The longest message accepted, in bytes.
    pub max_message: usize,
    /// Reads are not confined to the root (the seed's sandbox: only mutations are fenced).
    pub read_anywhere: bool,
    /// Keep `--root` even when the client names roots of its own.
    pub ignore_client_roots: bool,
}

struct Composed {
    fs: Arc<dyn FileSystem>,
    root: String,
    mode: Option<SandboxMode>,
    context: Option<Arc<dyn CallContext>>,
    /// How the client's roots become the session's (only for `--root` on the local disk).
    roots: Option<Arc<dyn RootsBinder>>,
}

/// The client's roots as the sandbox's: the first the workspace and working directory, the
/// others writable (and readable) beside it, each by its real path.
struct LocalRoots {
    mode: SandboxMode,
    read_anywhere: bool,
}

impl RootsBinder for LocalRoots {
    fn bind(&self, roots: &[String]) -> Result<(Arc<dyn FileSystem>, String), String> {
        let mut real = Vec::new();
        for r in roots {
            let p = std::fs::canonicalize(r).map_err(|e| format!("{r}: {e}"))?;
            if !p.is_dir() {
                return Err(format!("{r}: not a directory"));
            }
            real.push(
                p.to_str()
                    .ok_or_else(|| format!("{r}: not valid UTF-8"))?
                    .to_string(),
            );
        }
        let Some(first) = real.first().cloned() else {
            return Err("no root".into());
        };
        let config = SandboxConfig::new(first.clone(), self.mode)
            .with_local(LocalConfig::new(first.clone()))
            .with_temp_roots(real[1..].to_vec())
            .with_confined_reads(!self.read_anywhere);
        Ok((Arc::new(SandboxFileSystem::new(config)), first))
    }
}

/// Every call of a workspace session resolves its policy anew: the session's mode choice (none
/// is made over MCP, so the deployment's `--mode`) and the session's root.
struct WorkspaceCalls {
    service: PolicyService,
    session: Session,
}

impl CallContext for WorkspaceCalls {
    fn prepare(&self, exec: Exec) -> Result<Exec, ToolError> {
        let call = self
            .service
            .resolve(Some(&self.session), None)
            .map_err(|e| ToolError::composition(e.code().as_str(), e.message()))?;
        Ok(exec.with_cwd(call.cwd).with_sandbox(call.policy))
    }
}

/// The workspace `--workspace NAME` names: a record by id or root, or a directory registered
/// now; and a session at its root.
fn workspace_session(name: &str, registry: Option<&std::path::Path>) -> Result<Session, String> {
    let file = crate::workspace::registry_file(registry)?;
    let registry = crate::workspace::open(&file)?;
    let rt = crate::workspace::runtime()?;
    let signal = seam::Signal::none();
    let failed = |e: seam_workspace::WorkspaceError| {
        format!("--workspace {name}: {} [{}]", e.message(), e.code())
    };
    let record = match rt.block_on(crate::workspace::find(&registry, name, &signal)) {
        Ok(w) => w,
        Err(e) if e.code() == WorkspaceErrorCode::NotFound && !name.starts_with("ws-") => {
            let path = crate::workspace::absolute(std::path::Path::new(name))?;
            let path = path
                .to_str()
                .ok_or_else(|| format!("--workspace {name}: not valid UTF-8"))?;
            let added = rt
                .block_on(registry.add(path, None, &signal))
                .map_err(failed)?;
            if added.created {
                eprintln!(
                    "seam mcp: registered {} {} in {}",
                    added.workspace.id,
                    added.workspace.root,
                    file.display()
                );
            }
            added.workspace
        }
        Err(e) => return Err(failed(e)),
    };
    rt.block_on(registry.enter(&record, &signal))
        .map_err(failed)
}

/// The sandbox provider over the local disk, fenced to `--root` (or the workspace's root).
fn local(args: &McpArgs) -> Result<Composed, String> {
    let mode = args.mode.unwrap_or(SandboxMode::WorkspaceWrite);
    let (root, session) = match (&args.root, &args.workspace) {
        (Some(dir), None) => {
            let root =
                std::fs::canonicalize(dir).map_err(|e| format!("--root {}: {e}", dir.display()))?;
            if !root.is_dir() {
                return Err(format!("--root {}: not a directory", dir.display()));
            }
            let root = root
                .to_str()
                .ok_or_else(|| format!("--root {}: not valid UTF-8", root.display()))?
                .to_string();
            (root, None)
        }
        (None, Some(name)) => {
            let session = workspace_session(name, args.registry.as_deref())?;
            (session.cwd().to_string(), Some(session))
        }
        _ => return Err("give --root DIR or --workspace ID|PATH".into()),
    };
    // Under a workspace the provider's own default fails closed: each call's mode and root
    // are stamped on it by the per-call policy (`WorkspaceCalls`), with `--mode` as the
    // deployment default.
    let provider_mode = if session.is_some() {
        SandboxMode::ReadOnly
    } else {
        mode
    };
    // Only the root is writable under workspace-write (the seed also opens /tmp; an MCP server
    // handed one directory should not).
    // An MCP server exposes one directory: reads are confined to it too, unless the user
    // widens them explicitly (--read-anywhere).
    let config = SandboxConfig::new(root.clone(), provider_mode)
        .with_local(LocalConfig::new(root.clone()))
        .with_temp_roots(Vec::new())
        .with_confined_reads(!args.read_anywhere);
    let context = session.map(|session| {
        Arc::new(WorkspaceCalls {
            service: PolicyService::new(mode).with_fallback(session.workspace().clone()),
            session,
        }) as Arc<dyn CallContext>
    });
    // The client's roots replace --root (as the reference server's do), unless told not to;
    // a registered workspace keeps its own.
    let roots = (args.workspace.is_none() && !args.ignore_client_roots).then(|| {
        Arc::new(LocalRoots {
            mode,
            read_anywhere: args.read_anywhere,
        }) as Arc<dyn RootsBinder>
    });
    Ok(Composed {
        fs: Arc::new(SandboxFileSystem::new(config)),
        root,
        mode: Some(mode),
        context,
        roots,
    })
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
    if args.workspace.is_some() {
        return Err(
            "--workspace applies to the local provider; with a server, give --root, a directory in its world".into(),
        );
    }
    let Some(root) = &args.root else {
        return Err("--root DIR is required with a remote provider".into());
    };
    let root = root
        .to_str()
        .filter(|r| r.starts_with('/'))
        .ok_or_else(|| {
            format!(
                "--root {}: with a remote provider, an absolute path in the server's world",
                root.display()
            )
        })?
        .to_string();
    let token = std::env::var("SEAM_TOKEN").ok();
    let conn =
        seam_remote::Connection::connect(&address, token.as_deref()).map_err(|e| e.to_string())?;
    let fs = seam_remote::RemoteFileSystem::new(Arc::new(conn));
    let mode = fs.sandbox_mode();
    Ok(Composed {
        fs: Arc::new(fs),
        root,
        mode,
        context: None,
        roots: None,
    })
}

/// `read_image` takes every format the tool knows, up to its default size.
struct AnyImage;

impl ImageSink for AnyImage {}

/// Serves until the client closes stdin. Usage problems come back as `Err` (exit 2); a
/// session that fails after starting is reported on stderr (exit 1).
pub fn run(args: McpArgs) -> Result<ExitCode, String> {
    if args.registry.is_some() && args.workspace.is_none() {
        return Err("--registry goes with --workspace".into());
    }
    let Composed {
        fs,
        root,
        mode,
        context,
        roots,
    } = if args.provider == "local" {
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
        .extended()
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
    let limits = seam_mcp::SessionLimits {
        max_message: args.max_message,
        max_held: (2 * args.max_message as u64).max(seam_mcp::SessionLimits::default().max_held),
        ..seam_mcp::SessionLimits::default()
    };
    let mut server = SeamMcp::new(tools, exec).with_limits(limits);
    if let Some(context) = context {
        server = server.with_call_context(context);
    }
    if let Some(binder) = roots {
        server = server.with_client_roots(binder);
    }
    let served = runtime.block_on(async {
        // Watched from before the first message is read: a client that stops its server once
        // it has answered finds the signal watched.
        let stop = stopped();
        tokio::select! {
            served = server.serve_stdio() => Ended::Served(served),
            signal = stop => Ended::Stopped(signal),
        }
    });
    match served {
        Ended::Served(served) => {
            drop(spill);
            match served {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("seam mcp: {}", e.message);
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        Ended::Stopped((name, code)) => {
            // The calls under way are dropped with the session; blocking work still running (a
            // read of stdin that never returns, a file call) is waited for a second at most.
            runtime.shutdown_timeout(std::time::Duration::from_secs(1));
            drop(spill);
            eprintln!("seam mcp: {name}: stopped, its spill directory removed");
            Ok(ExitCode::from(code))
        }
    }
}

/// How a session ended.
enum Ended {
    /// The client closed stdin (or the session failed).
    Served(Result<(), seam_mcp::McpError>),
    /// A signal stopped it: its name and the shell's status for it.
    Stopped((&'static str, u8)),
}

/// A client stopping its server (an MCP host ends a session with SIGTERM, a terminal with
/// Ctrl-C): the session ends there, and the spill directory — tool outputs too long to
/// answer whole, file contents among them — is removed before the process exits rather than
/// left in TMPDIR. The signals are watched from the call on (it must be made on the runtime);
/// where they cannot be, it says so and the future stays pending.
fn stopped() -> impl std::future::Future<Output = (&'static str, u8)> {
    use tokio::signal::unix::{SignalKind, signal};
    let watched = signal(SignalKind::interrupt())
        .and_then(|int| signal(SignalKind::terminate()).map(|term| (int, term)));
    async move {
        let Ok((mut int, mut term)) = watched else {
            eprintln!(
                "seam mcp: cannot watch for SIGINT and SIGTERM: a signal leaves the spill directory behind"
            );
            return std::future::pending().await;
        };
        tokio::select! {
            _ = int.recv() => ("SIGINT", 130),
            _ = term.recv() => ("SIGTERM", 143),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::SandboxPolicy;

    #[test]
    fn each_call_resolves_the_sessions_policy_anew() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical");
        let project = base.join("project");
        std::fs::create_dir(&project).expect("mkdir");
        let project = project.to_str().expect("utf-8").to_string();
        let registry = crate::workspace::open(&base.join("workspaces.json")).expect("registry");
        let rt = crate::workspace::runtime().expect("runtime");
        let signal = seam::Signal::none();
        rt.block_on(registry.add(&project, None, &signal))
            .expect("add");
        let session = rt
            .block_on(registry.session(&project, &signal))
            .expect("session");
        let calls = WorkspaceCalls {
            service: PolicyService::new(SandboxMode::WorkspaceWrite),
            session,
        };
        let fs: Arc<dyn FileSystem> = Arc::new(seam_local::LocalFileSystem::new(LocalConfig::new(
            project.clone(),
        )));
        let exec = calls.prepare(Exec::new(fs.clone())).expect("prepared");
        assert_eq!(exec.cwd.as_deref(), Some(project.as_str()));
        assert_eq!(
            exec.sandbox,
            Some(SandboxPolicy {
                mode: SandboxMode::WorkspaceWrite,
                workspace_root: project.clone(),
            })
        );
        // The session's choice, made after the first call, governs the next one.
        calls.session.set_mode(Some(SandboxMode::ReadOnly));
        let exec = calls.prepare(Exec::new(fs)).expect("prepared");
        assert_eq!(exec.sandbox.map(|p| p.mode), Some(SandboxMode::ReadOnly));
    }
}
