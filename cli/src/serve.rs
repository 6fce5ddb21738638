//! `seam serve`: hosts a shipped provider over the wire protocol (`docs/protocol.md`) on a Unix
//! socket, TCP (with a token) or stdio.

use seam_cli::providers::{ServeCases, hosted};
use seam_remote::Server;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// What `seam serve` was asked for.
#[derive(Debug)]
pub struct ServeArgs {
    /// The directory served (with test control: where case directories are made).
    pub root: PathBuf,
    /// `local` or `sandbox:MODE`.
    pub provider: String,
    /// `unix:PATH`, `tcp:HOST:PORT` or `stdio`.
    pub listen: String,
    /// A file holding the token TCP clients must present.
    pub token_file: Option<PathBuf>,
    /// Enable `world/*`.
    pub test_control: bool,
    /// With test control: hand emptied case directories to later cases.
    pub reuse_case_dirs: bool,
    /// Connections served at once (`None`: what the descriptor limit leaves room for).
    pub max_connections: Option<usize>,
    /// Bytes one connection may hold in the server before its requests stop being read.
    pub answer_budget: u64,
    /// How long a connection has to complete `initialize`.
    pub handshake_timeout: std::time::Duration,
}

enum Listen {
    Unix(PathBuf),
    Tcp(String),
    Stdio,
}

fn listen(spec: &str) -> Result<Listen, String> {
    if spec == "stdio" {
        Ok(Listen::Stdio)
    } else if let Some(p) = spec.strip_prefix("unix:") {
        Ok(Listen::Unix(PathBuf::from(p)))
    } else if let Some(a) = spec
        .strip_prefix("tcp://")
        .or_else(|| spec.strip_prefix("tcp:"))
    {
        Ok(Listen::Tcp(a.to_string()))
    } else {
        Err(format!(
            "--listen {spec:?}: expected unix:PATH, tcp:HOST:PORT or stdio"
        ))
    }
}

/// The limits a listening server announces on its first line.
fn describe(limits: &seam_remote::ConnectionLimits) -> String {
    format!(
        "at most {} connections, {} MiB held per connection, {:.0?} to initialize",
        limits.max_connections,
        limits.answer_budget / (1024 * 1024),
        limits.handshake_timeout
    )
}

/// Serves until killed (or, on stdio, until the client closes). Usage problems are `Err`.
pub fn run(args: ServeArgs) -> Result<ExitCode, String> {
    let listen = listen(&args.listen)?;
    let root = std::fs::canonicalize(&args.root)
        .map_err(|e| format!("--root {}: {e}", args.root.display()))?;
    if !root.is_dir() {
        return Err(format!("--root {}: not a directory", args.root.display()));
    }
    let root_text = root
        .to_str()
        .ok_or_else(|| format!("--root {}: not valid UTF-8", root.display()))?
        .to_string();
    let provider = hosted(&args.provider, &root_text)?;
    let fits = seam_remote::ConnectionLimits::default().max_connections;
    let max_connections = match args.max_connections {
        None => fits,
        Some(0) => return Err("--max-connections must be at least 1".into()),
        Some(n) => {
            if n > fits {
                eprintln!(
                    "seam serve: --max-connections {n} is more than the descriptor limit ({}) leaves room for ({fits}); past that, connections are refused as they arrive",
                    seam_remote::descriptor_limit().map_or("unlimited".into(), |l| l.to_string())
                );
            }
            n
        }
    };
    let limits = seam_remote::ConnectionLimits {
        answer_budget: args.answer_budget,
        max_connections,
        handshake_timeout: args.handshake_timeout,
    };
    let mut server = Server::new(provider)
        .with_cwd(root_text)
        .with_connection_limits(limits)
        .with_log(Arc::new(|line: &str| eprintln!("seam serve: {line}")));
    if args.test_control {
        server = server.with_test_control(Arc::new(ServeCases(args.provider.clone())), root);
        if args.reuse_case_dirs {
            server = server.with_case_reuse();
        }
    }
    let token = match &args.token_file {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| format!("--token-file {}: {e}", f.display()))?
                .trim_end_matches(['\n', '\r'])
                .to_string(),
        ),
        None => None,
    };
    if matches!(listen, Listen::Tcp(_)) {
        match &token {
            Some(t) if !t.is_empty() => {}
            Some(_) => return Err("--token-file: the token is empty".into()),
            None => {
                return Err(
                    "--listen tcp: needs --token-file (TCP clients must authenticate)".into(),
                );
            }
        }
    }
    if let Some(t) = token {
        server = server.with_token(t);
    }
    let server = Arc::new(server);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let served: Result<(), String> = runtime.block_on(async move {
        match listen {
            Listen::Stdio => {
                server.serve_stdio().await;
                Ok(())
            }
            Listen::Unix(path) => {
                let listener = Server::bind_unix(&path)
                    .map_err(|e| format!("cannot listen on unix:{}: {e}", path.display()))?;
                eprintln!(
                    "seam serve: listening on unix:{} ({})",
                    path.display(),
                    describe(&limits)
                );
                server.serve_unix(listener).await;
                Ok(())
            }
            Listen::Tcp(addr) => {
                let listener = tokio::net::TcpListener::bind(&addr)
                    .await
                    .map_err(|e| format!("cannot listen on tcp:{addr}: {e}"))?;
                let bound = listener
                    .local_addr()
                    .map_or(addr.clone(), |a| a.to_string());
                eprintln!(
                    "seam serve: listening on tcp:{bound} ({})",
                    describe(&limits)
                );
                server.serve_tcp(listener).await;
                Ok(())
            }
        }
    });
    match served {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.starts_with("cannot listen") => Err(e),
        Err(e) => {
            eprintln!("seam serve: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
