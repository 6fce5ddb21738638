//! One connection to a server: its requests in flight and their waiters, the reader that
//! routes every frame to its waiter, checkpoints the server shows answered, and an `exec:`
//! adapter started, tracked and reaped with it.

use super::{Address, RemoteError};
use crate::credit::Credit;
use crate::frame::{Frame, Limits, ReadError, read_frame};
use crate::protocol::control::{
    AboutRequest, Cancel, Checkpoint, CheckpointAnswer, CheckpointParams, Description, Initialize,
    InitializeParams, StreamChunk, StreamStart,
};
use crate::protocol::{self, Method, Notification};
use crate::wire::{self, message};
use seam::{Signal, Verb};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};

pub(super) enum Waiter {
    Call(oneshot::Sender<Frame>),
    /// A call made from a plain thread, which waits on the channel itself
    /// ([`Connection::request_blocking`]).
    Blocking(std::sync::mpsc::Sender<Frame>),
    /// A stream's frames, and its flow control.
    Stream(mpsc::UnboundedSender<Frame>, Arc<Credit>),
}

/// The calls waiting for an answer, and whether answers have ended (the server's stream closed
/// or broke the protocol).
#[derive(Default)]
pub(super) struct Waiters {
    pub(super) by_id: HashMap<u64, Waiter>,
    ended: bool,
}

impl Waiters {
    /// Waits for `id`'s answer. Once answers have ended the waiter is dropped at once, so its
    /// call sees the connection closed: a call that starts after the reading task has finished
    /// must not wait for an answer nothing will ever route to it (its request may still have
    /// been queued, and the writer fail only later).
    pub(super) fn add(&mut self, id: u64, waiter: Waiter) {
        if !self.ended {
            self.by_id.insert(id, waiter);
        }
    }

    /// Ends the answers: every waiter is handed back (dropped, each sees the connection
    /// closed) and none is taken from now on.
    fn end(&mut self) -> Vec<Waiter> {
        self.ended = true;
        self.by_id.drain().map(|(_, w)| w).collect()
    }
}

pub(super) struct Inner {
    pub(super) out: Arc<crate::outbox::Outbox>,
    pub(super) pending: Mutex<Waiters>,
    /// The signals of mutations whose checkpoints the server shows us, by request id.
    pub(super) probes: Mutex<HashMap<u64, Signal>>,
    pub(super) next: AtomicU64,
    pub(super) handle: tokio::runtime::Handle,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    pub(super) fn id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(message(None, method, params));
    }

    /// Sends a request and waits for its response frame, sending `$/cancel` if `signal` is
    /// cancelled meanwhile (the server then answers `FS_ABORTED` or the committed result).
    pub(super) async fn call(
        &self,
        method: &str,
        params: Value,
        segments: Vec<Vec<u8>>,
        signal: &Signal,
        checkpoints: bool,
    ) -> Result<Frame, RemoteError> {
        let id = self.id();
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).add(id, Waiter::Call(tx));
        let mut params = params;
        let probed = checkpoints && signal.has_probe();
        if probed {
            params["checkpoints"] = json!(true);
            lock(&self.probes).insert(id, signal.clone());
        }
        let mut frame = message(Some(id), method, params);
        frame.segments = segments;
        let Ok(told) = self.send_request(id, frame, signal) else {
            lock(&self.pending).by_id.remove(&id);
            lock(&self.probes).remove(&id);
            return Err(RemoteError::Closed);
        };
        let watch = self.watch(id, signal, told);
        let answer = rx.await.map_err(|_| RemoteError::Closed);
        let _ = watch.send(());
        if probed {
            lock(&self.probes).remove(&id);
        }
        answer
    }

    /// Sends a request. A call whose signal is already cancelled is still sent, after a
    /// `$/cancel` for its id: the backend answers it (`FS_ABORTED`, nothing done), not this
    /// client, so a backend that ignores cancellation is seen to.
    pub(super) fn send_request(
        &self,
        id: u64,
        frame: Frame,
        signal: &Signal,
    ) -> Result<bool, crate::outbox::Closed> {
        let told = signal.is_cancelled();
        if told {
            self.out
                .send(message(None, Cancel::NAME, cancel_params(id)))?;
        }
        self.out.send(frame)?;
        Ok(told)
    }

    /// Watches `signal` on the connection's runtime until told to stop; on cancellation tells
    /// the server once.
    pub(super) fn watch(&self, id: u64, signal: &Signal, told: bool) -> oneshot::Sender<()> {
        let (stop, mut stopped) = oneshot::channel::<()>();
        // `told`: cancelled before it was sent, and the `$/cancel` went first. A signal
        // cancelled after that check is watched like any other (its cancel is sent at once).
        if !signal.is_live() || told {
            // Nothing can cancel it, or the server was told already: nothing to watch.
            return stop;
        }
        let signal = signal.clone();
        let out = self.out.clone();
        self.handle.spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    () = tokio::time::sleep(std::time::Duration::from_millis(2)) => {
                        if signal.is_cancelled() {
                            let _ = out.send(message(None, Cancel::NAME, cancel_params(id)));
                            return;
                        }
                    }
                }
            }
        });
        stop
    }
}

/// One connection to a server, initialised.
pub struct Connection {
    pub(super) inner: Arc<Inner>,
    hello: Value,
    description: Description,
    /// The connection's tasks on the shared runtime ([`io_runtime`]): its writer, its reader
    /// and, for an in-process server, the server's connection task. Aborted when it drops;
    /// the in-process server then hangs the connection up (its calls still running are
    /// cancelled, as the peer's going would) and its calls' tasks end on their own.
    tasks: Vec<tokio::task::AbortHandle>,
    _child: Option<tokio::process::Child>,
    /// The adapter's `TMPDIR` ([`crate::children::give_temp_dirs`]), removed once it is reaped.
    temp: Option<Box<dyn crate::children::TempDir>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("hello", &self.hello)
            .finish_non_exhaustive()
    }
}

/// The runtime every connection of the process does its I/O on: its writer and reader tasks,
/// the watchers of its cancellable calls, the checkpoints it shows. A conformance run opens a
/// connection per case, thousands of them, and a runtime of its own for each (a thread started
/// and ended, a poller made) cost a short case more than its calls did. A connection's tasks
/// are aborted when it drops, as its own runtime's were when that was shut down; nothing on
/// the runtime blocks (a checkpoint's probe runs on its blocking pool), so connections share
/// it without waiting on one another. Built on first use; a failure to build it is every
/// connection's failure to start.
fn io_runtime() -> Result<tokio::runtime::Handle, String> {
    static IO: std::sync::OnceLock<Result<tokio::runtime::Runtime, String>> =
        std::sync::OnceLock::new();
    IO.get_or_init(|| {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("seam-remote-io")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the connections' runtime: {e}"))
    })
    .as_ref()
    .map(|rt| rt.handle().clone())
    .map_err(Clone::clone)
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The sending half first (a child's stdin closes: the adapter sees the end of its
        // input), whoever still holds the connection's state.
        self.inner.out.close();
        // Drops the connection's tasks, and with them its socket or the child's stdin: an
        // adapter sees end of input and exits.
        for task in self.tasks.drain(..) {
            task.abort();
        }
        if let Some(mut child) = self._child.take() {
            let pid = child.id();
            reap(&mut child);
            // Tracked until now: a program interrupted while it waited stops it too
            // (`children::terminate_all`), rather than exit with it still running.
            if let Some(pid) = pid {
                crate::children::forget(pid);
            }
        }
        drop(self.temp.take());
    }
}

/// Waits for an adapter that was told its input ended, killing it if it does not leave.
pub(super) fn reap(child: &mut tokio::process::Child) {
    // Reap it (a killed child left unwaited stays a zombie until this process exits):
    // give it a moment to leave by itself, then kill it — its whole process group: the
    // shell and the adapter it runs (killed alone, the shell leaves an adapter that
    // does not stop at the end of its input running on, with nobody to stop it).
    let exits = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
    for i in 0..200 {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if i == 100 => {
                // Not reaped yet, so the group's id is still the shell's.
                let group = child
                    .id()
                    .and_then(|p| i32::try_from(p).ok())
                    .and_then(rustix::process::Pid::from_raw)
                    .is_some_and(|pid| {
                        rustix::process::kill_process_group(pid, rustix::process::Signal::KILL)
                            .is_ok()
                    });
                if !group {
                    let _ = child.start_kill();
                }
            }
            Ok(None) => {}
        }
        a_moment(exits.as_ref());
    }
}

/// Waits 5 ms — or less where the process has a pidfd (`exits`): until it exits. An adapter
/// leaving at the end of its input is then reaped as it goes, not at the next tick (the crash
/// properties drop a connection to a fresh process twice a round: a 5 ms tick cost them about
/// a tenth of their time).
fn a_moment(exits: Option<&std::os::fd::OwnedFd>) {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let moment = Timespec {
        tv_sec: 0,
        tv_nsec: 5_000_000,
    };
    let waited = exits.map(|fd| poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&moment)));
    if !matches!(waited, Some(Ok(_))) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

pub(super) type BoxRead = Box<dyn AsyncRead + Unpin + Send>;
pub(super) type BoxWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// How a connection is made.
pub(super) enum Dial {
    Address(Address),
    InProcess(Arc<crate::Server>),
}

/// An adapter started for an `exec:` address, with the `TMPDIR` it was given.
pub(super) type Adapter = (
    tokio::process::Child,
    Option<Box<dyn crate::children::TempDir>>,
);

/// What [`open`] opened: the two halves, the adapter it started (`exec:`), and the server's
/// task (in process).
pub(super) struct Opened {
    reader: BoxRead,
    writer: BoxWrite,
    adapter: Option<Adapter>,
    server: Option<tokio::task::AbortHandle>,
}

pub(super) async fn open(dial: Dial) -> std::io::Result<Opened> {
    let plain = |reader: BoxRead, writer: BoxWrite| Opened {
        reader,
        writer,
        adapter: None,
        server: None,
    };
    let address = match dial {
        Dial::Address(a) => a,
        Dial::InProcess(server) => {
            let (ours, theirs) = tokio::net::UnixStream::pair()?;
            let (r, w) = theirs.into_split();
            let task = tokio::spawn(server.serve_connection(r, w, false));
            let (r, w) = ours.into_split();
            return Ok(Opened {
                server: Some(task.abort_handle()),
                ..plain(Box::new(r), Box::new(w))
            });
        }
    };
    match &address {
        Address::Unix(p) => {
            let s = tokio::net::UnixStream::connect(p).await?;
            crate::frame::widen_buffers(&s);
            let (r, w) = s.into_split();
            Ok(plain(Box::new(r), Box::new(w)))
        }
        Address::Tcp(a) => {
            let s = tokio::net::TcpStream::connect(a).await?;
            let _ = s.set_nodelay(true);
            let (r, w) = s.into_split();
            Ok(plain(Box::new(r), Box::new(w)))
        }
        Address::Exec(c) => {
            // A process group of its own: the shell and whatever it runs (an interpreter, a
            // server it execs) are killed together. Tracked before a program interrupted
            // meanwhile can look (see `children::starting`).
            let temp = crate::children::temp_dir()?;
            let starting = crate::children::starting()?;
            let mut command = tokio::process::Command::new("sh");
            if let Some(t) = &temp {
                command.env("TMPDIR", t.path());
            }
            let mut child = command
                .arg("-c")
                .arg(c)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::inherit())
                .process_group(0)
                .kill_on_drop(true)
                .spawn()?;
            if let Some(pid) = child.id() {
                starting.track(pid);
            }
            let (Some(w), Some(r)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(std::io::Error::other("the child has no stdin/stdout"));
            };
            Ok(Opened {
                adapter: Some((child, temp)),
                ..plain(Box::new(r), Box::new(w))
            })
        }
    }
}

/// Routes incoming frames to their waiters; on the end of the stream drops every waiter (each
/// then sees the connection closed).
pub(super) async fn read_loop(inner: Arc<Inner>, reader: BoxRead) {
    let mut reader = BufReader::new(reader);
    let limits = Limits {
        max_line: usize::MAX / 2,
        max_payload: u64::MAX / 2,
    };
    loop {
        let frame = match read_frame(&mut reader, limits).await {
            Ok(f) => f,
            Err(e @ (ReadError::Parse(_) | ReadError::BadPayload(_))) => {
                // A server that answers garbage cannot be trusted with the rest of the stream:
                // every waiting call fails with what was received.
                let said = format!("the server broke the protocol: {e}");
                for waiter in lock(&inner.pending).end() {
                    let mut json = serde_json::Map::new();
                    json.insert(
                        "error".into(),
                        wire::error_object(wire::PARSE_ERROR, &said, None),
                    );
                    let frame = Frame::new(json);
                    match waiter {
                        Waiter::Call(tx) => {
                            let _ = tx.send(frame);
                        }
                        Waiter::Blocking(tx) => {
                            let _ = tx.send(frame);
                        }
                        Waiter::Stream(tx, _) => {
                            let _ = tx.send(frame);
                        }
                    }
                }
                break;
            }
            Err(_) => break,
        };
        let stream_id = match frame.json.get("method").and_then(Value::as_str) {
            Some(<StreamStart as Notification>::NAME | <StreamChunk as Notification>::NAME) => {
                frame
                    .json
                    .get("params")
                    .and_then(|p| p.get("id"))
                    .and_then(Value::as_u64)
            }
            _ => None,
        };
        if let Some(id) = stream_id {
            let chunk = frame.json.get("method").and_then(Value::as_str) == Some(StreamChunk::NAME);
            let mut pending = lock(&inner.pending);
            if let Some(Waiter::Stream(tx, credit)) = pending.by_id.get(&id) {
                if !chunk || credit.arrived() {
                    let _ = tx.send(frame);
                } else {
                    // Past the window: the stream ends here (its reader sees why, in
                    // `credit`), and the server is told to stop sending it.
                    pending.by_id.remove(&id);
                    drop(pending);
                    inner.notify(Cancel::NAME, cancel_params(id));
                }
            }
            continue;
        }
        if frame.json.get("method").and_then(Value::as_str) == Some(Checkpoint::NAME) {
            answer_checkpoint(&inner, frame);
            continue;
        }
        let Some(id) = frame.json.get("id").and_then(Value::as_u64) else {
            continue;
        };
        match lock(&inner.pending).by_id.remove(&id) {
            Some(Waiter::Call(tx)) => {
                let _ = tx.send(frame);
            }
            Some(Waiter::Blocking(tx)) => {
                let _ = tx.send(frame);
            }
            Some(Waiter::Stream(tx, _)) => {
                let _ = tx.send(frame);
            }
            None => {}
        }
    }
    drop(lock(&inner.pending).end());
}

/// `$/cancel`'s parameters for request `id`.
fn cancel_params(id: u64) -> Value {
    protocol::encode(&AboutRequest {
        id: Value::from(id),
    })
}

/// Shows a server's checkpoint to the probe of the mutation it belongs to, off the reading task
/// (the probe may change the world through this same connection), and answers whether to
/// cancel there.
pub(super) fn answer_checkpoint(inner: &Arc<Inner>, frame: Frame) {
    let Some(sid) = frame.json.get("id").cloned() else {
        return;
    };
    let params = frame.json.get("params").unwrap_or(&Value::Null);
    // A checkpoint this client cannot read is not ours to show: the mutation goes on.
    let params: Option<CheckpointParams> = protocol::decode(params).ok();
    let signal = params
        .as_ref()
        .and_then(|p| p.id.as_u64())
        .and_then(|id| lock(&inner.probes).get(&id).cloned());
    let out = inner.out.clone();
    inner.handle.spawn_blocking(move || {
        let cancel = match (signal, params) {
            (Some(signal), Some(p)) => {
                signal.committed(&seam::Checkpoint {
                    point: p.point,
                    verb: match p.verb.as_str() {
                        "edit" => Verb::Edit,
                        _ => Verb::Write,
                    },
                    display_path: &p.display_path,
                    staging: &p.staging,
                });
                signal.is_cancelled()
            }
            _ => false,
        };
        let mut answer = serde_json::Map::new();
        answer.insert("jsonrpc".into(), json!("2.0"));
        answer.insert("id".into(), sid);
        answer.insert(
            "result".into(),
            protocol::encode(&CheckpointAnswer { cancel }),
        );
        let _ = out.send(Frame::new(answer));
    });
}

impl Connection {
    /// Connects and initialises (blocking the calling thread until the server answers, so it
    /// can be called from anywhere, async code included). `token` is required over TCP.
    pub fn connect(address: &Address, token: Option<&str>) -> Result<Connection, RemoteError> {
        Self::dial(Dial::Address(address.clone()), token, None)
    }

    /// [`Connection::connect`], offering the server more in `initialize`: each member of `offer`
    /// is added to the request's parameters (`listen`, for an `exec:` adapter that may serve a
    /// whole run from one process). What the server made of it is in [`Connection::hello`].
    pub fn connect_offering(
        address: &Address,
        token: Option<&str>,
        offer: serde_json::Map<String, Value>,
    ) -> Result<Connection, RemoteError> {
        Self::dial(Dial::Address(address.clone()), token, Some(offer))
    }

    /// A connection to `server` running on the connections' runtime, over a socket pair:
    /// the whole protocol, no listening socket and no file anywhere (for a process that wants
    /// the wire between itself and a backend, as the suite's unprivileged runner does).
    pub fn in_process(server: Arc<crate::Server>) -> Result<Connection, RemoteError> {
        Self::dial(Dial::InProcess(server), None, None)
    }

    fn dial(
        dial: Dial,
        token: Option<&str>,
        offer: Option<serde_json::Map<String, Value>>,
    ) -> Result<Connection, RemoteError> {
        let name = match &dial {
            Dial::Address(a) => a.to_string(),
            Dial::InProcess(_) => "an in-process server".to_string(),
        };
        let failed = |reason: String| RemoteError::Connect {
            address: name.clone(),
            reason,
        };
        let handle = io_runtime().map_err(failed)?;
        let (done, wait) = std::sync::mpsc::channel();
        handle.spawn(async move {
            let _ = done.send(open(dial).await);
        });
        let opened = wait
            .recv()
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| failed(e.to_string()))?;
        let out = Arc::new(crate::outbox::Outbox::new(opened.writer));
        let inner = Arc::new(Inner {
            out: out.clone(),
            pending: Mutex::new(Waiters::default()),
            probes: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            handle: handle.clone(),
        });
        let mut tasks: Vec<tokio::task::AbortHandle> = opened.server.into_iter().collect();
        tasks.push(handle.spawn(async move { out.run().await }).abort_handle());
        tasks.push(
            handle
                .spawn(read_loop(inner.clone(), opened.reader))
                .abort_handle(),
        );
        let mut conn = Connection {
            inner,
            hello: Value::Null,
            description: Description::default(),
            tasks,
            _child: None,
            temp: None,
        };
        if let Some((child, temp)) = opened.adapter {
            conn._child = Some(child);
            conn.temp = temp;
        }
        let hello = InitializeParams {
            protocol: wire::PROTOCOL,
            client: Some(format!("seam {}", env!("CARGO_PKG_VERSION"))),
            token: token.map(str::to_string),
            stream_segments: true,
            listen: None,
        };
        let mut params = protocol::encode(&hello);
        for (k, v) in offer.into_iter().flatten() {
            params[k] = v;
        }
        conn.hello = conn
            .request_blocking(Initialize::NAME, params, Vec::new())
            .map_err(|e| failed(e.to_string()))?
            .0;
        if conn.hello.get("protocol").and_then(Value::as_u64) != Some(wire::PROTOCOL) {
            return Err(failed(format!(
                "the server speaks protocol {}, this client {}",
                conn.hello["protocol"],
                wire::PROTOCOL
            )));
        }
        conn.description = protocol::decode(&conn.hello)
            .map_err(|e| failed(format!("its initialize answer is malformed: {e}")))?;
        Ok(conn)
    }

    /// The server's `initialize` answer, as it came (members this client does not know
    /// included).
    pub fn hello(&self) -> &Value {
        &self.hello
    }

    /// The server's `initialize` answer, read.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// Kills the process this connection started (an `exec:` adapter: the shell and everything
    /// in its process group) with SIGKILL, at once: whatever it was doing stops where it is, as
    /// in a crash. Every call still waiting then fails as lost. `false` when the connection
    /// started no process. (The shell is not reaped until the connection is dropped, so the
    /// group's id cannot have been given to another.)
    pub fn kill_backend(&self) -> bool {
        let Some(pid) = self
            ._child
            .as_ref()
            .and_then(tokio::process::Child::id)
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).is_ok()
    }

    /// Sends a request and waits for its result and payload segments.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        segments: Vec<Vec<u8>>,
    ) -> Result<(Value, Frame), RemoteError> {
        let mut frame = self
            .inner
            .call(method, params, segments, &Signal::none(), false)
            .await?;
        unpack(&mut frame)
    }

    /// [`Connection::request`] from a plain thread (not from the connections' runtime): the
    /// request is written from this thread (or queued for the writer task, when the socket
    /// does not take it at once), and the reader hands the answer to this thread directly — no
    /// task is started for it (the gate reads its world back this way after every step).
    pub fn request_blocking(
        &self,
        method: &str,
        params: Value,
        segments: Vec<Vec<u8>>,
    ) -> Result<(Value, Frame), RemoteError> {
        let inner = &self.inner;
        let id = inner.id();
        let (tx, answered) = std::sync::mpsc::channel();
        lock(&inner.pending).add(id, Waiter::Blocking(tx));
        let mut frame = message(Some(id), method, params);
        frame.segments = segments;
        if inner.send_request(id, frame, &Signal::none()).is_err() {
            lock(&inner.pending).by_id.remove(&id);
            return Err(RemoteError::Closed);
        }
        let mut frame = answered.recv().map_err(|_| RemoteError::Closed)?;
        unpack(&mut frame)
    }

    /// [`Connection::request_blocking`] of method `M`: its typed parameters out, its typed
    /// answer back (with the frame, for the payload segments the answer names). An answer
    /// that is not `M`'s is a [`RemoteError::Protocol`] quoting what came.
    pub fn ask_blocking<M: Method>(
        &self,
        params: &M::Params,
        segments: Vec<Vec<u8>>,
    ) -> Result<(M::Answer, Frame), RemoteError> {
        let (v, frame) = self.request_blocking(M::NAME, protocol::encode(params), segments)?;
        match protocol::decode(&v) {
            Ok(answer) => Ok((answer, frame)),
            Err(e) => {
                let said = super::quoted(&v);
                Err(RemoteError::Protocol(format!(
                    "the answer to {} is malformed ({e}): {said}",
                    M::NAME
                )))
            }
        }
    }
}

/// A response's result (with the frame, for its payload), or its error.
pub(super) fn unpack(frame: &mut Frame) -> Result<(Value, Frame), RemoteError> {
    if let Some(e) = frame.json.remove("error") {
        return Err(RemoteError::Server {
            code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        });
    }
    let result = frame.json.remove("result").unwrap_or(Value::Null);
    Ok((
        result,
        std::mem::replace(frame, Frame::new(Default::default())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll};

    /// A socket that never takes a byte: every frame waits in the outbox's queue for the writer
    /// task, as one does when the socket is not ready yet.
    struct NeverReady;

    impl tokio::io::AsyncWrite for NeverReady {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            Poll::Pending
        }
        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// A call that starts after the server's answers have ended (its process killed: the
    /// reading task saw the end of its output and let every waiter go) fails at once as closed,
    /// even when its request was only queued — before, it waited for an answer nothing would
    /// ever route to it, and `crash-rename` reported a rename of the correct provider as hung
    /// about once in a thousand kills.
    #[test]
    fn a_call_made_after_the_answers_ended_fails_closed_instead_of_waiting() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let inner = Arc::new(Inner {
            out: Arc::new(crate::outbox::Outbox::new(Box::new(NeverReady))),
            pending: Mutex::new(Waiters::default()),
            probes: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            handle: rt.handle().clone(),
        });
        // The server's output ends: the reading task finishes.
        rt.block_on(read_loop(inner.clone(), Box::new(tokio::io::empty())));
        let answered = rt.block_on(async {
            tokio::time::timeout(
                std::time::Duration::from_secs(5),
                inner.call("stat", json!({}), Vec::new(), &Signal::none(), false),
            )
            .await
        });
        match answered {
            Ok(Err(RemoteError::Closed)) => {}
            Ok(other) => panic!("expected the connection closed, got {other:?}"),
            Err(_) => panic!("the call waited for an answer that could never come"),
        }
    }
}
