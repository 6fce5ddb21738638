//! One connection's state and its reading side: every frame read is answered, routed (a
//! checkpoint's answer, a `$/cancel`, a stream's credit) or started as a call of its own, and
//! `initialize` admits the client.

use super::params::{constant_time_eq, describe, returns_content};
use super::{CHECKPOINT_PATIENCE, EARLY_CANCELS, Reply, Server, invalid, lock};
use crate::budget::{Budget, Held};
use crate::frame::{Frame, encode_line, write_encoded};
use crate::protocol::control::{
    Cancel, Checkpoint, CheckpointAnswer, CheckpointParams, CreditParams, Initialize,
    InitializeParams, StreamCredit,
};
use crate::protocol::{self, Method, Notification};
use crate::wire::{self, error_object, response};
use seam::{FileSystem, Signal};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWrite;
use tokio::sync::{Semaphore, mpsc};

pub(super) struct State {
    pub(super) provider: Arc<dyn FileSystem>,
    pub(super) initialized: bool,
    /// The client takes `stream/chunk` frames of several segments (`stream_segments` in its
    /// `initialize`), so the backend's chunks travel as they are, without being joined.
    pub(super) segments: bool,
    pub(super) case: Option<super::case_dirs::CaseDir>,
    /// The case directory of another connection this one opened (`world/reopen`).
    pub(super) reopened: Option<super::case_dirs::Reopened>,
    /// The case directory `world/*` works in: the one `world/case` made, or the one
    /// `world/reopen` opened (a case another connection — maybe a killed process — made).
    pub(super) root: Option<PathBuf>,
}

impl State {
    /// Lets the case's directory go (the connection's next case, or its end): kept for another
    /// case only when no call still holds the backend that works in it — a call cancelled or
    /// given up by its client may still be writing there.
    pub(super) fn end_case(&mut self) {
        let busy = Arc::strong_count(&self.provider) > 1;
        if let Some(mut dir) = self.case.take()
            && busy
        {
            dir.discard();
        }
        self.reopened = None;
    }
}

/// An encoded frame waiting for the socket, its bytes held against the connection's budget.
pub(super) struct Outgoing {
    pub(super) line: Vec<u8>,
    pub(super) segments: Vec<Vec<u8>>,
    pub(super) _held: Held,
}

/// A connection's writing half, shared by its writer task and its streams.
pub(super) struct Socket {
    /// A frame is written whole under the lock, so frames never interleave.
    pub(super) writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Unpin + Send>>,
    /// A write failed, perhaps partway through a frame: nothing more may follow it.
    pub(super) broken: std::sync::atomic::AtomicBool,
}

impl Socket {
    /// Writes an encoded frame whole; false if this or an earlier write failed. A write
    /// blocked on a full socket waits for the peer to read (cancellation is seen between
    /// frames).
    pub(super) async fn write(&self, line: &[u8], segments: &[Vec<u8>]) -> bool {
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
pub(super) struct Conn {
    pub(super) server: Arc<Server>,
    /// Responses and notifications, written in order by the connection's writer task.
    pub(super) out: mpsc::UnboundedSender<Outgoing>,
    /// The socket itself, for a stream's frames: the stream's task writes them without a hop
    /// to the writer task, and a peer that stops reading the socket stops the stream there,
    /// with one frame in the server's memory.
    pub(super) writer: Arc<Socket>,
    pub(super) tcp: bool,
    pub(super) state: Mutex<State>,
    pub(super) inflight: Mutex<HashMap<String, Signal>>,
    /// `$/cancel`s that came before their request (a client whose call was cancelled before it
    /// was sent says so first), the newest [`EARLY_CANCELS`]: the request, when it comes, starts
    /// cancelled and the backend answers it.
    pub(super) early: Mutex<std::collections::VecDeque<String>>,
    pub(super) credits: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Checkpoints shown to the client, waiting for its answer (by the server's request id).
    pub(super) answers: Mutex<HashMap<String, std::sync::mpsc::Sender<bool>>>,
    pub(super) asked: std::sync::atomic::AtomicU64,
    pub(super) slots: Arc<Semaphore>,
    /// Calls that return content running at once (see [`crate::budget`]).
    pub(super) content: Arc<Semaphore>,
    /// What the server holds for this client.
    pub(super) budget: Arc<Budget>,
}

impl Conn {
    pub(super) async fn send(&self, frame: Frame) {
        self.queue(frame);
    }

    /// Encodes `frame` and queues it for the writer task, its bytes held against the budget
    /// until written.
    pub(super) fn queue(&self, frame: Frame) {
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
    pub(super) async fn write_now(&self, frame: &Frame) -> bool {
        match encode_line(frame) {
            Ok(line) => self.writer.write(&line, &frame.segments).await,
            Err(_) => false,
        }
    }

    /// The signal a mutation runs with when its client's signal has a probe: every checkpoint
    /// is shown to the client (a `checkpoint` request), and the mutation cancels there if the
    /// client's probe says so. Runs on the provider's thread and blocks it until the answer.
    pub(super) fn probing(self: &Arc<Self>, signal: &Signal, id: &Value) -> Signal {
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
            let shown = CheckpointParams {
                id: id.clone(),
                point: cp.point,
                verb: cp.verb.as_str().to_string(),
                display_path: cp.display_path.to_string(),
                staging: cp.staging.to_vec(),
            };
            let mut frame = Map::new();
            frame.insert("jsonrpc".into(), json!("2.0"));
            frame.insert("id".into(), json!(key));
            frame.insert("method".into(), json!(Checkpoint::NAME));
            frame.insert("params".into(), protocol::encode(&shown));
            conn.queue(Frame::new(frame));
            drop(conn);
            rx.recv_timeout(CHECKPOINT_PATIENCE).unwrap_or(true)
        })
    }

    /// The peer is gone: cancel what still runs for it and end its streams.
    pub(super) fn hang_up(&self) {
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
        lock(&self.state).end_case();
    }

    /// Handles one frame, whose payload is `held` against the budget until its call ends;
    /// `Break` ends the connection.
    pub(super) async fn on_frame(
        self: Arc<Self>,
        mut frame: Frame,
        held: Held,
    ) -> std::ops::ControlFlow<()> {
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
                // An error or a malformed answer cancels (cancelling leaves no trace).
                let result = frame.json.get("result").unwrap_or(&Value::Null);
                let cancel =
                    protocol::decode::<CheckpointAnswer>(result).map_or(true, |a| a.cancel);
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
        if method == Initialize::NAME {
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

    pub(super) fn notification(&self, method: &str, params: &Value) {
        let id = params.get("id").map(Value::to_string);
        match (method, id) {
            (Cancel::NAME, Some(id)) => {
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
            (StreamCredit::NAME, Some(id)) => {
                let n = protocol::decode::<CreditParams>(params).map_or(0, |c| c.chunks);
                if let Some(credits) = lock(&self.credits).get(&id) {
                    credits.add_permits(usize::try_from(n.min(1 << 20)).unwrap_or(0));
                }
            }
            _ => {}
        }
    }

    pub(super) fn initialize(&self, params: &Value) -> (Reply, bool) {
        let server = &self.server;
        let asked = protocol::decode::<InitializeParams>(params);
        if self.tcp {
            let given = asked.as_ref().ok().and_then(|p| p.token.as_deref());
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
        let asked = match asked {
            Ok(p) if p.protocol == wire::PROTOCOL => p,
            Ok(p) => {
                return (
                    Err(invalid(format!(
                        "protocol {} is not spoken here (this server speaks {})",
                        p.protocol,
                        wire::PROTOCOL
                    ))),
                    false,
                );
            }
            Err(e) => {
                let protocol = params
                    .get("protocol")
                    .map_or("(missing)".to_string(), Value::to_string);
                return (
                    Err(invalid(format!(
                        "protocol {protocol} is not spoken here (this server speaks {}), or initialize's parameters are malformed: {e}",
                        wire::PROTOCOL
                    ))),
                    false,
                );
            }
        };
        let mut state = lock(&self.state);
        state.initialized = true;
        state.segments = asked.stream_segments;
        (
            Ok(protocol::encode(&describe(
                server,
                state.provider.as_ref(),
                server.cwd.as_deref(),
            ))),
            false,
        )
    }
}
