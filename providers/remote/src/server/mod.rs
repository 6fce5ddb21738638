//! The server: hosts any [`FileSystem`] on a Unix socket, TCP or stdio, one task per request so
//! that a slow call (a durable write, a stream whose reader stalls) never holds up the others.
//!
//! What one connection may cost the server is bounded (see [`crate::budget`]): the bytes it
//! holds for the client, the calls it runs, and — before `initialize` succeeded — a small line,
//! no payload to speak of, and a deadline. Accepting is in [`crate::accept`].

use crate::budget::{Budget, CONTENT_CALLS};
use crate::frame::{Limits, ReadError, read_frame};
use crate::limits::{ConnectionLimits, HANDSHAKE_MAX_LINE, HANDSHAKE_MAX_PAYLOAD};
use crate::wire::{self, error_object, response};
use crate::world::CaseMaker;
use seam::FileSystem;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{Semaphore, mpsc};

mod case_dirs;
mod conn;
mod methods;
mod params;

use conn::{Conn, Outgoing, Socket, State};

/// Chunks a stream may have in flight before the client grants more.
pub const DEFAULT_STREAM_WINDOW: u32 = 8;

/// About how many bytes of text one `stream/chunk` carries (the backend's smaller chunks are
/// gathered): with the window, a stream holds at most about 8 MiB in flight.
pub const STREAM_FRAME_BYTES: usize = 1024 * 1024;

/// Where a server's log lines go (one line each, without a trailing newline).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// A server hosting one backend (or, under test control, one per connection).
pub struct Server {
    provider: Arc<dyn FileSystem>,
    cases: Option<(Arc<dyn CaseMaker>, Arc<case_dirs::CaseDirs>)>,
    token: Option<String>,
    limits: Limits,
    pub(crate) connection_limits: ConnectionLimits,
    window: u32,
    name: String,
    cwd: Option<String>,
    served: std::sync::atomic::AtomicU64,
    /// Connections being served.
    pub(crate) active: std::sync::atomic::AtomicUsize,
    /// Connections refused since the start.
    pub(crate) refused: std::sync::atomic::AtomicU64,
    /// A refusal at the cap was logged since the last connection admitted.
    pub(crate) crowded: std::sync::atomic::AtomicBool,
    log: Option<Log>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("test_control", &self.cases.is_some())
            .field("token", &self.token.is_some())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server for `provider`, without test control, token or custom limits.
    pub fn new(provider: Arc<dyn FileSystem>) -> Self {
        Self {
            provider,
            cases: None,
            token: None,
            limits: Limits::default(),
            connection_limits: ConnectionLimits::default(),
            window: DEFAULT_STREAM_WINDOW,
            name: format!("seam {}", env!("CARGO_PKG_VERSION")),
            cwd: None,
            served: std::sync::atomic::AtomicU64::new(0),
            active: std::sync::atomic::AtomicUsize::new(0),
            refused: std::sync::atomic::AtomicU64::new(0),
            crowded: std::sync::atomic::AtomicBool::new(false),
            log: None,
        }
    }

    /// Other connection limits (budget, cap, handshake deadline).
    pub fn with_connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection_limits = limits;
        self
    }

    /// The connection limits in force.
    pub fn connection_limits(&self) -> ConnectionLimits {
        self.connection_limits
    }

    /// Where to log what a running server must tell its operator (connections refused, a
    /// shortage of descriptors): one line per call. Without it nothing is logged.
    pub fn with_log(mut self, log: Log) -> Self {
        self.log = Some(log);
        self
    }

    pub(crate) fn log(&self, line: &str) {
        if let Some(log) = &self.log {
            log(line);
        }
    }

    /// How many connections are being served now.
    pub fn connections_active(&self) -> usize {
        self.active.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many connections were refused since the server started (at the cap, or for want
    /// of descriptors).
    pub fn connections_refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Enables the `world/*` methods: `world/case` makes a fresh case directory under `base`
    /// and a backend over it with `maker`.
    pub fn with_test_control(mut self, maker: Arc<dyn CaseMaker>, base: PathBuf) -> Self {
        self.cases = Some((maker, case_dirs::CaseDirs::new(base, false)));
        self
    }

    /// With test control: a case's directory, once its case is done, is emptied and handed to
    /// a later case (a few kept, 16 cases each at most) instead of being made and removed per
    /// case — what a conformance run of thousands of cases spends most on, on some disks. A
    /// server killed outright leaves the kept ones behind, empty. Off by default.
    pub fn with_case_reuse(mut self) -> Self {
        if let Some((_, dirs)) = &mut self.cases {
            *dirs = case_dirs::CaseDirs::new(dirs.base().to_path_buf(), true);
        }
        self
    }

    /// The directory the backend resolves relative paths against, as `initialize` reports it.
    pub fn with_cwd(mut self, cwd: String) -> Self {
        self.cwd = Some(cwd);
        self
    }

    /// The token a TCP client's `initialize` must carry.
    pub fn with_token(mut self, token: String) -> Self {
        self.token = Some(token);
        self
    }

    /// Other frame limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How many requests (of every method, `initialize` and `world/*` included) this server has
    /// received since it started: what a round trip costs is counted here.
    pub fn requests_served(&self) -> u64 {
        self.served.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Binds a Unix socket at `path`, reachable by its owner only (0600 before it appears at
    /// its name: it is bound under a temporary name, restricted, then renamed into place).
    pub fn bind_unix(path: &Path) -> std::io::Result<tokio::net::UnixListener> {
        use std::os::unix::fs::PermissionsExt;
        let staging = path.with_file_name(format!(
            ".{}.{}.binding",
            path.file_name()
                .map_or_else(|| "socket".into(), |n| n.to_string_lossy()),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&staging);
        // Never take over a path: a live server's socket is in use, anything but a socket is
        // someone's file; only a dead server's socket is cleared.
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_socket() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a socket", path.display()),
                ));
            }
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    format!("{} is in use by a running server", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = tokio::net::UnixListener::bind(&staging)?;
        std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))?;
        // A hard link appears atomically and never replaces what got there meanwhile.
        let linked = std::fs::hard_link(&staging, path);
        let _ = std::fs::remove_file(&staging);
        linked?;
        Ok(listener)
    }

    /// Accepts connections on a Unix listener for as long as the process runs (a failed
    /// `accept` is survived: see [`crate::accept`]).
    pub async fn serve_unix(self: Arc<Self>, listener: tokio::net::UnixListener) {
        self.accept_loop(listener).await;
    }

    /// Accepts TCP connections for as long as the process runs; each must authenticate.
    pub async fn serve_tcp(self: Arc<Self>, listener: tokio::net::TcpListener) {
        self.accept_loop(listener).await;
    }

    /// Serves one connection on this process's stdin and stdout.
    pub async fn serve_stdio(self: Arc<Self>) {
        self.serve_connection(tokio::io::stdin(), tokio::io::stdout(), false)
            .await;
    }

    /// Serves one connection until the peer closes it or breaks the framing.
    pub async fn serve_connection<R, W>(self: Arc<Self>, reader: R, writer: W, tcp: bool)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        // Responses, notifications and checkpoint requests wait here for the socket, each
        // holding its bytes against the connection's budget until written; the queue is
        // bounded by that budget, since nothing more is read while it is spent. A stream's
        // chunks never come this way (its task writes them itself, within its credit).
        let (out, mut outbox) = mpsc::unbounded_channel::<Outgoing>();
        let budget = Arc::new(Budget::new(self.connection_limits.answer_budget));
        let writer = Arc::new(Socket {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            broken: std::sync::atomic::AtomicBool::new(false),
        });
        let socket = writer.clone();
        let writing = tokio::spawn(async move {
            while let Some(next) = outbox.recv().await {
                if !socket.write(&next.line, &next.segments).await {
                    break;
                }
            }
        });
        let conn = Arc::new(Conn {
            server: self.clone(),
            out,
            writer,
            tcp,
            state: Mutex::new(State {
                provider: self.provider.clone(),
                initialized: false,
                segments: false,
                case: None,
                reopened: None,
                root: None,
            }),
            inflight: Mutex::new(HashMap::new()),
            early: Mutex::new(std::collections::VecDeque::new()),
            credits: Mutex::new(HashMap::new()),
            answers: Mutex::new(HashMap::new()),
            asked: std::sync::atomic::AtomicU64::new(1),
            slots: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            content: Arc::new(Semaphore::new(CONTENT_CALLS)),
            budget: budget.clone(),
        });
        // However the connection ends — its peer gone, or this task dropped (an in-process
        // connection's client aborts it) — what still runs for it is cancelled.
        let hang_up = HangUp(conn.clone());
        let mut reader = BufReader::new(reader);
        let handshake_by = tokio::time::Instant::now() + self.connection_limits.handshake_timeout;
        loop {
            // Nothing more is read while the client has its budget's worth waiting for it.
            budget.below().await;
            let initialized = lock(&conn.state).initialized;
            let read = if initialized {
                read_frame(&mut reader, self.limits).await
            } else {
                // Before the handshake: a small line, no payload to speak of (a token is
                // checked before anything large is read), and a deadline.
                let limits = Limits {
                    max_line: HANDSHAKE_MAX_LINE.min(self.limits.max_line),
                    max_payload: HANDSHAKE_MAX_PAYLOAD.min(self.limits.max_payload),
                };
                match tokio::time::timeout_at(handshake_by, read_frame(&mut reader, limits)).await {
                    Ok(read) => read,
                    Err(_) => {
                        conn.send(response(
                            &Value::Null,
                            Err(error_object(
                                wire::NOT_INITIALIZED,
                                &format!(
                                    "no initialize within {:.0?}: closing",
                                    self.connection_limits.handshake_timeout
                                ),
                                None,
                            )),
                        ))
                        .await;
                        break;
                    }
                }
            };
            match read {
                Ok(frame) => {
                    let held = budget.hold(frame.segments.iter().map(|s| s.len() as u64).sum());
                    if conn.clone().on_frame(frame, held).await.is_break() {
                        break;
                    }
                }
                Err(ReadError::Closed | ReadError::Io(_)) => break,
                Err(ReadError::Parse(m)) => {
                    conn.send(response(
                        &Value::Null,
                        Err(error_object(wire::PARSE_ERROR, &m, None)),
                    ))
                    .await;
                }
                Err(ReadError::BadPayload(m)) => {
                    conn.send(response(
                        &Value::Null,
                        Err(error_object(wire::INVALID_REQUEST, &m, None)),
                    ))
                    .await;
                }
                Err(ReadError::TooLarge(m)) => {
                    conn.send(response(
                        &Value::Null,
                        Err(error_object(wire::TOO_LARGE, &m, None)),
                    ))
                    .await;
                    break;
                }
            }
        }
        drop(hang_up);
        drop(conn);
        let _ = writing.await;
    }
}

/// Hangs a connection up when dropped ([`Conn::hang_up`]).
struct HangUp(Arc<Conn>);

impl Drop for HangUp {
    fn drop(&mut self) {
        self.0.hang_up();
    }
}

/// Contract calls one connection may have running at once.
pub const MAX_IN_FLIGHT: usize = 256;

/// `$/cancel`s for ids not seen yet that one connection keeps (a client sends one just before
/// its request; more is a client cancelling ids it never sends, and the oldest go).
pub const EARLY_CANCELS: usize = 64;

/// How long a checkpoint waits for the client's probe before it cancels the mutation (a client
/// that stopped answering must not leave it hanging; cancelling leaves no trace).
const CHECKPOINT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

type Reply = Result<Value, Value>;

fn invalid(message: impl Into<String>) -> Value {
    error_object(wire::INVALID_PARAMS, &message.into(), None)
}
