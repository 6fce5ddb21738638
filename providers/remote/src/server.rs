//! The server: hosts any [`FileSystem`] on a Unix socket, TCP or stdio, one task per request so
//! that a slow call (a durable write, a stream whose reader stalls) never holds up the others.
//!
//! What one connection may cost the server is bounded (see [`crate::budget`]): the bytes it
//! holds for the client, the calls it runs, and — before `initialize` succeeded — a small line,
//! no payload to speak of, and a deadline. Accepting is in [`crate::accept`].

use crate::accept::{ConnectionLimits, HANDSHAKE_MAX_LINE, HANDSHAKE_MAX_PAYLOAD};
use crate::budget::{Budget, CONTENT_CALLS, Held};
use crate::frame::{Frame, Limits, ReadError, encode_line, read_frame, write_encoded};
use crate::wire::{self, error_object, fs_error_object, response, target_in, target_json};
use crate::world::{self, CaseMaker, CaseSpec};
use seam::{
    CreateDirOptions, EditRequest, FileSystem, FsError, FsTarget, FsVersion, RemoveOptions,
    RenameOptions, ResolveOptions, Signal,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{Semaphore, mpsc};

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
    cases: Option<(Arc<dyn CaseMaker>, PathBuf)>,
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

    /// How many connections were refused since the server started (at the cap, or for want
    /// of descriptors).
    pub fn connections_refused(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Enables the `world/*` methods: `world/case` makes a fresh case directory under `base`
    /// and a backend over it with `maker`.
    pub fn with_test_control(mut self, maker: Arc<dyn CaseMaker>, base: PathBuf) -> Self {
        self.cases = Some((maker, base));
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
        conn.hang_up();
        drop(conn);
        let _ = writing.await;
    }
}

struct State {
    provider: Arc<dyn FileSystem>,
    initialized: bool,
    /// The client takes `stream/chunk` frames of several segments (`stream_segments` in its
    /// `initialize`), so the backend's chunks travel as they are, without being joined.
    segments: bool,
    case: Option<tempfile::TempDir>,
    /// The case directory `world/*` works in: the one `world/case` made, or the one
    /// `world/reopen` opened (a case another connection — maybe a killed process — made).
    root: Option<PathBuf>,
}

/// An encoded frame waiting for the socket, its bytes held against the connection's budget.
struct Outgoing {
    line: Vec<u8>,
    segments: Vec<Vec<u8>>,
    _held: Held,
}

/// A connection's writing half, shared by its writer task and its streams.
struct Socket {
    /// A frame is written whole under the lock, so frames never interleave.
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Unpin + Send>>,
    /// A write failed, perhaps partway through a frame: nothing more may follow it.
    broken: std::sync::atomic::AtomicBool,
}

impl Socket {
    /// Writes an encoded frame whole; false if this or an earlier write failed. A write
    /// blocked on a full socket waits for the peer to read (cancellation is seen between
    /// frames).
    async fn write(&self, line: &[u8], segments: &[Vec<u8>]) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        let mut writer = self.writer.lock().await;
        if self.broken.load(SeqCst) {
            return false;
        }
        let written = write_encoded(&mut *writer, line, segments).await.is_ok();
        if !written {
            self.broken.store(true, SeqCst);
        }
        written
    }
}

/// One connection's shared state.
struct Conn {
    server: Arc<Server>,
    /// Responses and notifications, written in order by the connection's writer task.
    out: mpsc::UnboundedSender<Outgoing>,
    /// The socket itself, for a stream's frames: the stream's task writes them without a hop
    /// to the writer task, and a peer that stops reading the socket stops the stream there,
    /// with one frame in the server's memory.
    writer: Arc<Socket>,
    tcp: bool,
    state: Mutex<State>,
    inflight: Mutex<HashMap<String, Signal>>,
    /// `$/cancel`s that came before their request (a client whose call was cancelled before it
    /// was sent says so first), the newest [`EARLY_CANCELS`]: the request, when it comes, starts
    /// cancelled and the backend answers it.
    early: Mutex<std::collections::VecDeque<String>>,
    credits: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Checkpoints shown to the client, waiting for its answer (by the server's request id).
    answers: Mutex<HashMap<String, std::sync::mpsc::Sender<bool>>>,
    asked: std::sync::atomic::AtomicU64,
    slots: Arc<Semaphore>,
    /// Calls that return content running at once (see [`crate::budget`]).
    content: Arc<Semaphore>,
    /// What the server holds for this client.
    budget: Arc<Budget>,
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

impl Conn {
    async fn send(&self, frame: Frame) {
        self.queue(frame);
    }

    /// Encodes `frame` and queues it for the writer task, its bytes held against the budget
    /// until written.
    fn queue(&self, frame: Frame) {
        let Ok(line) = encode_line(&frame) else {
            return;
        };
        let bytes = line.len() as u64 + frame.segments.iter().map(|s| s.len() as u64).sum::<u64>();
        let _ = self.out.send(Outgoing {
            line,
            segments: frame.segments,
            _held: self.budget.hold(bytes),
        });
    }

    /// Writes `frame` to the socket now, from the calling task (after whatever the writer task
    /// is writing); false when the peer is gone. Only for frames that must come before
    /// anything this request later sends through `out` (a stream's start and chunks).
    async fn write_now(&self, frame: &Frame) -> bool {
        match encode_line(frame) {
            Ok(line) => self.writer.write(&line, &frame.segments).await,
            Err(_) => false,
        }
    }

    /// The signal a mutation runs with when its client's signal has a probe: every checkpoint
    /// is shown to the client (a `checkpoint` request), and the mutation cancels there if the
    /// client's probe says so. Runs on the provider's thread and blocks it until the answer.
    fn probing(self: &Arc<Self>, signal: &Signal, id: &Value) -> Signal {
        let conn = Arc::downgrade(self);
        let id = id.clone();
        signal.layered(move |cp| {
            let Some(conn) = conn.upgrade() else {
                return true;
            };
            let asked = conn
                .asked
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let key = format!("s{asked}");
            let (tx, rx) = std::sync::mpsc::channel();
            lock(&conn.answers).insert(key.clone(), tx);
            let mut frame = Map::new();
            frame.insert("jsonrpc".into(), json!("2.0"));
            frame.insert("id".into(), json!(key));
            frame.insert("method".into(), json!("checkpoint"));
            frame.insert(
                "params".into(),
                json!({
                    "id": id,
                    "point": cp.point,
                    "verb": cp.verb.as_str(),
                    "display_path": cp.display_path,
                    "staging": cp.staging,
                }),
            );
            conn.queue(Frame::new(frame));
            drop(conn);
            rx.recv_timeout(CHECKPOINT_PATIENCE).unwrap_or(true)
        })
    }

    /// The peer is gone: cancel what still runs for it and end its streams.
    fn hang_up(&self) {
        for (_, signal) in lock(&self.inflight).drain() {
            signal.cancel();
        }
        for (_, credits) in lock(&self.credits).drain() {
            credits.close();
        }
        // A checkpoint nobody will answer cancels its mutation.
        for (_, tx) in lock(&self.answers).drain() {
            let _ = tx.send(true);
        }
        lock(&self.state).case = None;
    }

    /// Handles one frame, whose payload is `held` against the budget until its call ends;
    /// `Break` ends the connection.
    async fn on_frame(self: Arc<Self>, mut frame: Frame, held: Held) -> std::ops::ControlFlow<()> {
        use std::ops::ControlFlow::{Break, Continue};
        let method = frame
            .json
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = frame.json.get("id").cloned();
        let params = frame.json.remove("params").unwrap_or(Value::Null);
        if frame.json.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            self.send(response(
                &id.clone().unwrap_or(Value::Null),
                Err(error_object(
                    wire::INVALID_REQUEST,
                    "not JSON-RPC 2.0 (\"jsonrpc\": \"2.0\" is required)",
                    None,
                )),
            ))
            .await;
            return Continue(());
        }
        let Some(method) = method else {
            // A client's answer to a checkpoint.
            if let Some(key) = id.as_ref().and_then(Value::as_str)
                && let Some(tx) = lock(&self.answers).remove(key)
            {
                let cancel = frame
                    .json
                    .get("result")
                    .and_then(|r| r.get("cancel"))
                    .and_then(Value::as_bool)
                    // An error or a malformed answer cancels (cancelling leaves no trace).
                    .unwrap_or(true);
                let _ = tx.send(cancel);
                return Continue(());
            }
            self.send(response(
                &id.unwrap_or(Value::Null),
                Err(error_object(
                    wire::INVALID_REQUEST,
                    "a request needs a method",
                    None,
                )),
            ))
            .await;
            return Continue(());
        };
        let Some(id) = id else {
            self.notification(&method, &params);
            return Continue(());
        };
        self.server
            .served
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if method == "initialize" {
            let (reply, close) = self.initialize(&params);
            self.send(response(&id, reply)).await;
            return if close { Break(()) } else { Continue(()) };
        }
        if !lock(&self.state).initialized {
            self.send(response(
                &id,
                Err(error_object(
                    wire::NOT_INITIALIZED,
                    "initialize first",
                    None,
                )),
            ))
            .await;
            return Continue(());
        }
        if let Some(world_method) = method.strip_prefix("world/") {
            let reply = self.world(world_method, &params, &mut frame).await;
            let mut out = response(&id, reply);
            out.segments = std::mem::take(&mut frame.segments);
            self.send(out).await;
            return Continue(());
        }
        let signal = Signal::new();
        let key = id.to_string();
        let early = {
            let mut early = lock(&self.early);
            let at = early.iter().position(|k| *k == key);
            at.and_then(|at| early.remove(at)).is_some()
        };
        if early {
            signal.cancel();
        }
        lock(&self.inflight).insert(key.clone(), signal.clone());
        let fs = lock(&self.state).provider.clone();
        let signal = if params.get("checkpoints").and_then(Value::as_bool) == Some(true)
            && matches!(
                method.as_str(),
                "write_text" | "edit_text" | "create_dir" | "remove" | "rename"
            ) {
            self.probing(&signal, &id)
        } else {
            signal
        };
        // At most MAX_IN_FLIGHT calls run for one connection; past that the connection is not
        // read until one finishes, so a client that pipelines without reading answers holds
        // a bounded amount of the server's memory.
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return Break(());
        };
        tokio::spawn(async move {
            let _slot = slot;
            let _held = held;
            // A call that may return content starts only while the client is under its
            // budget, and at most CONTENT_CALLS of them at once: what the client has not read
            // bounds what is read for it next. The permit is given back once the answer is
            // queued (and held against the budget itself).
            let _content = if returns_content(&method) {
                let Ok(permit) = self.content.clone().acquire_owned().await else {
                    return;
                };
                self.budget.below().await;
                Some(permit)
            } else {
                None
            };
            let mut reply_frame = Frame::new(Map::new());
            let reply = self
                .call(
                    fs,
                    &method,
                    &params,
                    &id,
                    &mut frame,
                    &mut reply_frame,
                    &signal,
                )
                .await;
            lock(&self.inflight).remove(&key);
            lock(&self.credits).remove(&key);
            let mut out = response(&id, reply);
            out.segments = reply_frame.segments;
            self.send(out).await;
        });
        Continue(())
    }

    fn notification(&self, method: &str, params: &Value) {
        let id = params.get("id").map(Value::to_string);
        match (method, id) {
            ("$/cancel", Some(id)) => {
                if let Some(signal) = lock(&self.inflight).get(&id) {
                    signal.cancel();
                } else {
                    // Not seen yet: its request follows (or never comes, and this is dropped
                    // with the oldest).
                    let mut early = lock(&self.early);
                    if !early.contains(&id) {
                        if early.len() == EARLY_CANCELS {
                            early.pop_front();
                        }
                        early.push_back(id);
                    }
                }
            }
            ("stream/credit", Some(id)) => {
                let n = params.get("chunks").and_then(Value::as_u64).unwrap_or(0);
                if let Some(credits) = lock(&self.credits).get(&id) {
                    credits.add_permits(usize::try_from(n.min(1 << 20)).unwrap_or(0));
                }
            }
            _ => {}
        }
    }

    fn initialize(&self, params: &Value) -> (Reply, bool) {
        let server = &self.server;
        if self.tcp {
            let given = params.get("token").and_then(Value::as_str);
            let ok = match (&server.token, given) {
                (Some(want), Some(got)) => constant_time_eq(want.as_bytes(), got.as_bytes()),
                _ => false,
            };
            if !ok {
                return (
                    Err(error_object(
                        wire::UNAUTHORIZED,
                        "unauthorized: initialize must carry the server's token",
                        None,
                    )),
                    true,
                );
            }
        }
        match params.get("protocol").and_then(Value::as_u64) {
            Some(wire::PROTOCOL) => {}
            other => {
                return (
                    Err(invalid(format!(
                        "protocol {} is not spoken here (this server speaks {})",
                        other.map_or("(missing)".to_string(), |p| p.to_string()),
                        wire::PROTOCOL
                    ))),
                    false,
                );
            }
        }
        let mut state = lock(&self.state);
        state.initialized = true;
        state.segments = params.get("stream_segments") == Some(&Value::Bool(true));
        (
            Ok(describe(
                server,
                state.provider.as_ref(),
                server.cwd.as_deref(),
            )),
            false,
        )
    }

    async fn world(&self, method: &str, params: &Value, frame: &mut Frame) -> Reply {
        let Some((maker, base)) = &self.server.cases else {
            return Err(error_object(
                wire::METHOD_NOT_FOUND,
                &format!("world/{method} exists only on a server started with --test-control"),
                None,
            ));
        };
        let root = lock(&self.state).root.clone();
        let failed = |m: String| error_object(wire::INVALID_PARAMS, &m, None);
        match method {
            "case" => {
                // A case in a directory the gate chose (`root`: for `power-loss`, a mount that
                // keeps what a power cut leaves), or in a fresh one of the server's own.
                let (dir, root) = match params.get("root").and_then(Value::as_str) {
                    Some(asked) => {
                        let real = std::fs::canonicalize(asked)
                            .map_err(|e| failed(format!("world/case {asked}: {e}")))?;
                        if !real.is_dir() {
                            return Err(failed(format!("world/case {asked}: not a directory")));
                        }
                        (None, real)
                    }
                    None => {
                        let dir = tempfile::Builder::new()
                            .prefix("case-")
                            .tempdir_in(base)
                            .map_err(|e| failed(format!("world/case: {e}")))?;
                        let root = std::fs::canonicalize(dir.path())
                            .map_err(|e| failed(format!("world/case: {e}")))?;
                        (Some(dir), root)
                    }
                };
                let root_path = root.clone();
                let root = root
                    .to_str()
                    .ok_or_else(|| failed("world/case: the case path is not UTF-8".into()))?
                    .to_string();
                let spec = case_spec(&root, params);
                let provider = maker.make(&spec).map_err(failed)?;
                let mut answer = describe(&self.server, provider.as_ref(), Some(&root));
                answer["root"] = json!(root);
                let mut state = lock(&self.state);
                state.provider = provider;
                state.root = Some(root_path);
                state.case = dir;
                Ok(answer)
            }
            "reopen" => {
                // A second backend over a case another connection made: what a second agent
                // process opens over the same files (the cross-instance properties).
                let asked = params
                    .get("root")
                    .and_then(Value::as_str)
                    .ok_or_else(|| failed("world/reopen needs the case's root".into()))?;
                let real = std::fs::canonicalize(asked)
                    .map_err(|e| failed(format!("world/reopen {asked}: {e}")))?;
                let base = std::fs::canonicalize(base)
                    .map_err(|e| failed(format!("world/reopen: {e}")))?;
                if real.parent() != Some(base.as_path()) {
                    return Err(failed(format!(
                        "world/reopen {asked}: not a case directory of this server"
                    )));
                }
                let root = real
                    .to_str()
                    .ok_or_else(|| failed("world/reopen: the case path is not UTF-8".into()))?
                    .to_string();
                let spec = case_spec(&root, params);
                let provider = maker.make(&spec).map_err(failed)?;
                let mut answer = describe(&self.server, provider.as_ref(), Some(&root));
                answer["root"] = json!(root);
                let mut state = lock(&self.state);
                state.provider = provider;
                state.root = Some(real);
                Ok(answer)
            }
            "apply" | "snapshot" => {
                let Some(root) = root else {
                    return Err(failed(format!("world/{method} needs world/case first")));
                };
                if method == "apply" {
                    world::apply(&root, params, frame).map_err(failed)
                } else {
                    frame.segments.clear();
                    world::snapshot(&root, frame).map_err(failed)
                }
            }
            "entry_mode" => world::entry_mode(params).map_err(failed),
            other => Err(error_object(
                wire::METHOD_NOT_FOUND,
                &format!("unknown method world/{other}"),
                None,
            )),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn call(
        &self,
        fs: Arc<dyn FileSystem>,
        method: &str,
        params: &Value,
        id: &Value,
        frame: &mut Frame,
        out: &mut Frame,
        signal: &Signal,
    ) -> Reply {
        let fs_err = |e: FsError| fs_error_object(&e);
        let target = || {
            target_in(params.get("target").unwrap_or(&Value::Null))
                .ok_or_else(|| invalid("target must be {key, display_path}"))
        };
        let cwd = params.get("cwd").and_then(Value::as_str);
        match method {
            "resolve" => {
                let path = str_param(params, "path")?;
                let t = fs
                    .resolve(path, ResolveOptions { cwd }, signal)
                    .await
                    .map_err(fs_err)?;
                Ok(target_json(fs.as_ref(), &t))
            }
            "stat" => {
                let info = fs.stat(&target()?, signal).await.map_err(fs_err)?;
                Ok(serde_json::to_value(info).unwrap_or(Value::Null))
            }
            "lstat" => {
                let path = str_param(params, "path")?;
                let info = fs
                    .lstat(path, ResolveOptions { cwd }, signal)
                    .await
                    .map_err(fs_err)?;
                Ok(serde_json::to_value(info).unwrap_or(Value::Null))
            }
            "read_text" => {
                let text = fs.read_text(&target()?, signal).await.map_err(fs_err)?;
                Ok(json!({ "text": out.attach(text.into_bytes()) }))
            }
            "read_bytes" => {
                let max = params
                    .get("max_bytes")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| invalid("max_bytes must be a number"))?;
                let bytes = fs
                    .read_bytes(&target()?, max, signal)
                    .await
                    .map_err(fs_err)?;
                Ok(json!({ "bytes": out.attach(bytes) }))
            }
            "list_dir" => {
                let entries = fs.list_dir(&target()?, signal).await.map_err(fs_err)?;
                Ok(Value::Array(
                    entries
                        .iter()
                        .map(|e| {
                            json!({
                                "name": e.name,
                                "kind": e.kind,
                                "target": target_json(fs.as_ref(), &e.target),
                                "version": e.version,
                                "size": e.size,
                            })
                        })
                        .collect(),
                ))
            }
            "write_text" => {
                let t = target()?;
                let content = text_param(params, frame, "content")?;
                let expected = wire::intent_in(params.get("expected")).map_err(invalid)?;
                let sandbox = self.client_policy(params)?;
                let o = fs
                    .write_text(&t, &content, expected.as_ref(), sandbox.as_ref(), signal)
                    .await
                    .map_err(fs_err)?;
                let before = o.before.map(|b| out.attach(b.into_bytes()));
                let after = out.attach(o.after.into_bytes());
                Ok(json!({
                    "operation": o.operation,
                    "version": o.version,
                    "before": before,
                    "after": after,
                }))
            }
            "edit_text" => {
                let t = target()?;
                let edit = EditRequest {
                    old_string: text_param(params, frame, "old_string")?,
                    new_string: text_param(params, frame, "new_string")?,
                    replace_all: params
                        .get("replace_all")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                };
                let expected = match params.get("expected") {
                    None | Some(Value::Null) => None,
                    Some(v) => {
                        Some(FsVersion::new(v.as_str().ok_or_else(|| {
                            invalid("expected must be a version string")
                        })?))
                    }
                };
                let sandbox = self.client_policy(params)?;
                let o = fs
                    .edit_text(&t, &edit, expected.as_ref(), sandbox.as_ref(), signal)
                    .await
                    .map_err(fs_err)?;
                Ok(json!({
                    "version": o.version,
                    "before": out.attach(o.before.into_bytes()),
                    "after": out.attach(o.after.into_bytes()),
                }))
            }
            "create_dir" => {
                let path = str_param(params, "path")?;
                let request: CreateDirOptions = object_param(params, "request")?;
                let sandbox = self.client_policy(params)?;
                let o = fs
                    .create_dir(
                        path,
                        ResolveOptions { cwd },
                        request,
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                Ok(serde_json::to_value(o).unwrap_or(Value::Null))
            }
            "remove" => {
                let path = str_param(params, "path")?;
                let request: RemoveOptions = object_param(params, "request")?;
                let sandbox = self.client_policy(params)?;
                let o = fs
                    .remove(
                        path,
                        ResolveOptions { cwd },
                        &request,
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                Ok(serde_json::to_value(o).unwrap_or(Value::Null))
            }
            "rename" => {
                let from = str_param(params, "from")?;
                let to = str_param(params, "to")?;
                let request: RenameOptions = object_param(params, "request")?;
                let sandbox = self.client_policy(params)?;
                let o = fs
                    .rename(
                        from,
                        to,
                        ResolveOptions { cwd },
                        &request,
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                Ok(serde_json::to_value(o).unwrap_or(Value::Null))
            }
            "stream_text" => self.stream(fs, target()?, id, signal).await,
            other => Err(error_object(
                wire::METHOD_NOT_FOUND,
                &format!("unknown method {other}"),
                None,
            )),
        }
    }

    /// A mutation's per-call sandbox policy. A client must not widen the fence of the server it
    /// talks to: outside test control the only policy accepted is `read-only` (which can only
    /// narrow); the suite, under `--test-control`, sets any policy, as it does in process.
    fn client_policy(&self, params: &Value) -> Result<Option<seam::SandboxPolicy>, Value> {
        let policy = wire::sandbox_in(params.get("sandbox")).map_err(invalid)?;
        match &policy {
            Some(p) if self.server.cases.is_none() && p.mode != seam::SandboxMode::ReadOnly => {
                Err(invalid(
                    "this server fences with its own policy: a client may narrow it to read-only, never widen it (per-call policies need --test-control)",
                ))
            }
            _ => Ok(policy),
        }
    }

    /// `stream_text`: start, chunks within the client's credit, then the end (or the error).
    async fn stream(
        &self,
        fs: Arc<dyn FileSystem>,
        t: FsTarget,
        id: &Value,
        signal: &Signal,
    ) -> Reply {
        let mut stream = fs
            .stream_text(&t, signal)
            .await
            .map_err(|e| fs_error_object(&e))?;
        let credits = Arc::new(Semaphore::new(self.server.window as usize));
        lock(&self.credits).insert(id.to_string(), credits.clone());
        if !self
            .write_now(&wire::message(None, "stream/start", json!({ "id": id })))
            .await
        {
            return Err(fs_error_object(&FsError::aborted(seam::Verb::Read)));
        }
        // The backend's chunks are gathered into frames of about STREAM_FRAME_BYTES: each frame
        // costs a few wake-ups on both sides, whatever its size. A client that takes several
        // segments per chunk gets the backend's chunks as they are (no copy to join them).
        let segments = lock(&self.state).segments;
        let aborted = || Err(fs_error_object(&FsError::aborted(seam::Verb::Read)));
        loop {
            // A frame is gathered like any call that returns content: under the budget, with
            // one of the connection's content permits (given back once it is gathered, its
            // bytes then held until written).
            let Ok(permit) = self.content.clone().acquire_owned().await else {
                return aborted();
            };
            self.budget.below().await;
            let mut gathered: Vec<Vec<u8>> = Vec::new();
            let mut gathered_bytes = 0;
            let last = loop {
                match std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await {
                    None => break Some(Ok(json!({ "end": true }))),
                    Some(Err(e)) => break Some(Err(fs_error_object(&e))),
                    Some(Ok(chunk)) => {
                        gathered_bytes += chunk.len();
                        match gathered.last_mut() {
                            Some(joined) if !segments => {
                                joined.extend_from_slice(chunk.as_bytes());
                            }
                            _ => gathered.push(chunk.into_bytes()),
                        }
                        if gathered_bytes >= STREAM_FRAME_BYTES {
                            break None;
                        }
                    }
                }
            };
            drop(permit);
            let _held = self.budget.hold(gathered_bytes as u64);
            if !gathered.is_empty() {
                // Wait for credit, but not past a cancellation (the request is always
                // answered); without credit for good (the peer is gone) stop reading.
                loop {
                    if signal.is_cancelled() {
                        return aborted();
                    }
                    tokio::select! {
                        permit = credits.acquire() => match permit {
                            Ok(p) => {
                                p.forget();
                                break;
                            }
                            Err(_) => return aborted(),
                        },
                        () = tokio::time::sleep(std::time::Duration::from_millis(5)) => {}
                    }
                }
                let mut frame = wire::message(None, "stream/chunk", json!({ "id": id }));
                for segment in gathered {
                    frame.attach(segment);
                }
                // Written by this task: a hop through the writer task per frame cost measurable
                // throughput (docs/performance.md), and a peer that stops reading the socket
                // holds the stream here with one frame in memory (before, every frame its
                // credit allowed could wait in the writer's queue).
                if !self.write_now(&frame).await {
                    return aborted();
                }
            }
            if let Some(last) = last {
                return last;
            }
        }
    }
}

/// Whether an answer to `method` may carry file content (or a listing as large as a
/// directory): such calls run under the connection's budget and content permits.
fn returns_content(method: &str) -> bool {
    matches!(
        method,
        "read_text" | "read_bytes" | "write_text" | "edit_text" | "list_dir"
    )
}

fn str_param<'a>(params: &'a Value, name: &str) -> Result<&'a str, Value> {
    params
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("{name} must be a string")))
}

/// An object parameter of a known shape; absent is its default.
fn object_param<T: serde::de::DeserializeOwned + Default>(
    params: &Value,
    name: &str,
) -> Result<T, Value> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| invalid(format!("{name} is not a valid request: {e}"))),
    }
}

/// A text parameter carried as a payload segment.
fn text_param(params: &Value, frame: &mut Frame, name: &str) -> Result<String, Value> {
    let bytes = params
        .get(name)
        .and_then(|r| frame.take(r))
        .ok_or_else(|| {
            invalid(format!(
                "{name} must be a payload reference {{\"$payload\": i}}"
            ))
        })?;
    String::from_utf8(bytes).map_err(|_| invalid(format!("{name} must be UTF-8")))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What `world/case` and `world/reopen` ask of the backend over a case directory at `root`.
fn case_spec(root: &str, params: &Value) -> CaseSpec {
    CaseSpec {
        root: root.to_string(),
        workspace: params
            .get("workspace")
            .and_then(Value::as_str)
            .map(str::to_string),
        durable: params.get("durability").and_then(Value::as_str) != Some("none"),
        diff_basis_max_bytes: params
            .get("diff_basis_max_bytes")
            .and_then(Value::as_u64)
            .unwrap_or(10 * 1024 * 1024),
        seed: params.get("seed").and_then(Value::as_u64).unwrap_or(0),
        configuration: params
            .get("configuration")
            .and_then(Value::as_str)
            .map(str::to_string),
        confine_reads: params.get("confine_reads").and_then(Value::as_bool) == Some(true),
    }
}

/// The `initialize` answer.
fn describe(server: &Server, fs: &dyn FileSystem, cwd: Option<&str>) -> Value {
    let caps = fs.capabilities();
    let claimed: Vec<&str> = seam::Capability::ALL
        .into_iter()
        .filter(|c| caps.has(*c))
        .map(seam::Capability::name)
        .collect();
    json!({
        "protocol": wire::PROTOCOL,
        "server": server.name,
        "capabilities": claimed,
        "sandbox_mode": fs.sandbox_mode().map(|m| m.as_str()),
        "cwd": cwd,
        "test_control": server.cases.is_some(),
        "limits": {
            "max_line": server.limits.max_line,
            "max_payload": server.limits.max_payload,
            "stream_window": server.window,
            "answer_budget": server.connection_limits.answer_budget,
        },
    })
}
