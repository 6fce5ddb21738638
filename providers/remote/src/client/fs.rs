//! [`RemoteFileSystem`]: the contract over a [`Connection`], one round trip per call, and a
//! text stream that reads `stream/chunk` frames under the client's credit.

use super::RemoteError;
use super::connection::{Connection, Inner, Waiter, lock};
use crate::credit::Credit;
use crate::frame::Frame;
use crate::wire::{self, error_in, message, target_from_server, target_to_server, unpack_key};
use seam::{
    Capabilities, Capability, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest,
    FileSystem, FsDirEntry, FsError, FsErrorCode, FsInfo, FsPathInfo, FsTarget, FsVersion,
    RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome, ResolveOptions, SandboxMode,
    SandboxPolicy, Signal, TextStream, Verb, WriteIntent, WriteOperation, WriteOutcome,
};
use serde_json::{Value, json};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, oneshot};

/// The contract over a connection. Claims what the server claims.
pub struct RemoteFileSystem {
    conn: Arc<Connection>,
    caps: Capabilities,
    mode: Option<SandboxMode>,
}

impl std::fmt::Debug for RemoteFileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFileSystem")
            .field("caps", &self.caps)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

pub(super) fn lost(verb: Verb, e: RemoteError) -> FsError {
    let unknown = matches!(verb, Verb::Write | Verb::Edit) && matches!(e, RemoteError::Closed);
    FsError::new(
        FsErrorCode::IoError,
        if unknown {
            // The request may or may not have been carried out: say so, and never retry it.
            format!(
                "remote {}: {e} before it answered; whether the {} happened is unknown (it was not retried)",
                verb.as_str(),
                verb.as_str()
            )
        } else {
            format!("remote {}: {e}", verb.as_str())
        },
    )
}

pub(super) fn bad_answer(method: &str) -> FsError {
    FsError::new(
        FsErrorCode::IoError,
        format!("remote {method}: the server's answer is malformed"),
    )
}

/// A malformed answer, quoting it (cut at 300 bytes).
pub(super) fn bad_answer_of(method: &str, answer: &Value) -> FsError {
    let mut said = answer.to_string();
    if said.len() > 300 {
        let mut cut = 300;
        while !said.is_char_boundary(cut) {
            cut -= 1;
        }
        said.truncate(cut);
        said.push('…');
    }
    FsError::new(
        FsErrorCode::IoError,
        format!("remote {method}: the server's answer is malformed: {said}"),
    )
}

impl RemoteFileSystem {
    /// The backend the connection's `initialize` described.
    pub fn new(conn: Arc<Connection>) -> Self {
        let hello = conn.hello().clone();
        Self::described(conn, &hello)
    }

    /// The backend a description (`initialize` or `world/case`) gives.
    pub fn described(conn: Arc<Connection>, description: &Value) -> Self {
        let mut caps = Capabilities::none();
        for name in description
            .get("capabilities")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if let Some(c) = Capability::from_name(name) {
                caps = caps.with(c);
            }
        }
        let mode = description
            .get("sandbox_mode")
            .and_then(Value::as_str)
            .and_then(SandboxMode::from_name);
        Self { conn, caps, mode }
    }

    /// The connection.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.conn
    }

    async fn call(
        &self,
        verb: Verb,
        method: &str,
        params: Value,
        segments: Vec<Vec<u8>>,
        signal: &Signal,
    ) -> Result<(Value, Frame), FsError> {
        // Checkpoints travel only for a mutation of a server that claims them.
        let checkpoints = self.caps.has(Capability::CancelPoints)
            && matches!(
                verb,
                Verb::Write | Verb::Edit | Verb::Mkdir | Verb::Remove | Verb::Rename
            );
        let mut frame = self
            .conn
            .inner
            .call(method, params, segments, signal, checkpoints)
            .await
            .map_err(|e| lost(verb, e))?;
        if let Some(e) = frame.json.remove("error") {
            return Err(error_in(&e, method));
        }
        let result = frame.json.remove("result").unwrap_or(Value::Null);
        Ok((result, frame))
    }

    /// A call whose whole answer is one typed value (the namespace operations' outcomes).
    async fn typed<T: serde::de::DeserializeOwned>(
        &self,
        verb: Verb,
        method: &str,
        params: Value,
        signal: &Signal,
    ) -> Result<T, FsError> {
        let (v, _) = self.call(verb, method, params, Vec::new(), signal).await?;
        serde_json::from_value(v.clone()).map_err(|_| bad_answer_of(method, &v))
    }
}

pub(super) fn text_of(
    frame: &mut Frame,
    v: Option<&Value>,
    method: &str,
) -> Result<String, FsError> {
    let bytes = v
        .and_then(|r| frame.take(r))
        .ok_or_else(|| bad_answer(method))?;
    String::from_utf8(bytes).map_err(|_| bad_answer(method))
}

pub(super) fn cwd_json(options: ResolveOptions<'_>) -> Value {
    options.cwd.map_or(Value::Null, |c| json!(c))
}

#[async_trait::async_trait]
impl FileSystem for RemoteFileSystem {
    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.mode
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        let (v, _) = self
            .call(
                Verb::Resolve,
                "resolve",
                json!({ "path": path, "cwd": cwd_json(options) }),
                Vec::new(),
                signal,
            )
            .await?;
        target_from_server(&v).ok_or_else(|| bad_answer_of("resolve", &v))
    }

    fn process_path(&self, target: &FsTarget) -> String {
        unpack_key(&target.key).0.to_string()
    }

    fn file_url(&self, target: &FsTarget) -> String {
        unpack_key(&target.key).1.to_string()
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        let p = unpack_key(&parent.key).0;
        let c = unpack_key(&child.key).0;
        if p == c {
            return true;
        }
        let p = p.trim_end_matches('/');
        c.strip_prefix(p).is_some_and(|rest| rest.starts_with('/'))
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        let (v, _) = self
            .call(
                Verb::Stat,
                "stat",
                json!({ "target": target_to_server(target) }),
                Vec::new(),
                signal,
            )
            .await?;
        wire::info_in(&v).ok_or_else(|| bad_answer_of("stat", &v))
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        let (v, _) = self
            .call(
                Verb::Lstat,
                "lstat",
                json!({ "path": path, "cwd": cwd_json(options) }),
                Vec::new(),
                signal,
            )
            .await?;
        wire::path_info_in(&v).ok_or_else(|| bad_answer_of("lstat", &v))
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        let (v, mut frame) = self
            .call(
                Verb::Read,
                "read_text",
                json!({ "target": target_to_server(target) }),
                Vec::new(),
                signal,
            )
            .await?;
        text_of(&mut frame, v.get("text"), "read_text")
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        let inner = &self.conn.inner;
        let id = inner.id();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let window = self.conn.hello()["limits"]["stream_window"].as_u64();
        let credit = Arc::new(Credit::new(window));
        lock(&inner.pending).add(id, Waiter::Stream(tx, credit.clone()));
        let request = message(
            Some(id),
            "stream_text",
            json!({ "target": target_to_server(target) }),
        );
        let Ok(told) = inner.send_request(id, request, signal) else {
            lock(&inner.pending).by_id.remove(&id);
            return Err(lost(Verb::Read, RemoteError::Closed));
        };
        let watch = inner.watch(id, signal, told);
        let first = rx.recv().await;
        let Some(mut first) = first else {
            let _ = watch.send(());
            return Err(lost(Verb::Read, RemoteError::Closed));
        };
        if let Some(e) = first.json.remove("error") {
            let _ = watch.send(());
            return Err(error_in(&e, "stream_text"));
        }
        if first.json.get("method").and_then(Value::as_str) != Some("stream/start") {
            let _ = watch.send(());
            return Err(bad_answer("stream_text"));
        }
        Ok(Box::pin(RemoteText {
            inner: inner.clone(),
            rx,
            credit,
            id,
            done: false,
            pending: Vec::new(),
            _watch: watch,
        }))
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        let (v, mut frame) = self
            .call(
                Verb::Read,
                "read_bytes",
                json!({ "target": target_to_server(target), "max_bytes": max_bytes }),
                Vec::new(),
                signal,
            )
            .await?;
        v.get("bytes")
            .and_then(|r| frame.take(r))
            .ok_or_else(|| bad_answer("read_bytes"))
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        let (v, _) = self
            .call(
                Verb::List,
                "list_dir",
                json!({ "target": target_to_server(target) }),
                Vec::new(),
                signal,
            )
            .await?;
        let Value::Array(items) = &v else {
            return Err(bad_answer_of("list_dir", &v));
        };
        items
            .iter()
            .map(|e| {
                Some(FsDirEntry {
                    name: e.get("name")?.as_str()?.to_string(),
                    kind: serde_json::from_value(e.get("kind")?.clone()).ok()?,
                    target: target_from_server(e.get("target")?)?,
                    version: serde_json::from_value(e.get("version")?.clone()).ok()?,
                    size: serde_json::from_value(e.get("size")?.clone()).ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad_answer_of("list_dir", &v))
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        let params = json!({
            "target": target_to_server(target),
            "content": { "$payload": 0 },
            "expected": expected.map(wire::intent_json),
            "sandbox": sandbox.map(wire::sandbox_json),
        });
        let (v, mut frame) = self
            .call(
                Verb::Write,
                "write_text",
                params,
                vec![content.as_bytes().to_vec()],
                signal,
            )
            .await?;
        let operation: WriteOperation = v
            .get("operation")
            .and_then(|o| serde_json::from_value(o.clone()).ok())
            .ok_or_else(|| bad_answer_of("write_text", &v))?;
        let version = v
            .get("version")
            .and_then(Value::as_str)
            .map(FsVersion::new)
            .ok_or_else(|| bad_answer("write_text"))?;
        let before = match v.get("before") {
            None | Some(Value::Null) => None,
            Some(r) => Some(text_of(&mut frame, Some(r), "write_text")?),
        };
        let after = text_of(&mut frame, v.get("after"), "write_text")?;
        Ok(WriteOutcome {
            operation,
            version,
            before,
            after,
        })
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        let params = json!({
            "target": target_to_server(target),
            "old_string": { "$payload": 0 },
            "new_string": { "$payload": 1 },
            "replace_all": edit.replace_all,
            "expected": expected.map(FsVersion::as_str),
            "sandbox": sandbox.map(wire::sandbox_json),
        });
        let segments = vec![
            edit.old_string.as_bytes().to_vec(),
            edit.new_string.as_bytes().to_vec(),
        ];
        let (v, mut frame) = self
            .call(Verb::Edit, "edit_text", params, segments, signal)
            .await?;
        let version = v
            .get("version")
            .and_then(Value::as_str)
            .map(FsVersion::new)
            .ok_or_else(|| bad_answer("edit_text"))?;
        Ok(EditOutcome {
            version,
            before: text_of(&mut frame, v.get("before"), "edit_text")?,
            after: text_of(&mut frame, v.get("after"), "edit_text")?,
        })
    }
    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        let params = json!({
            "path": path,
            "cwd": cwd_json(options),
            "request": request,
            "sandbox": sandbox.map(wire::sandbox_json),
        });
        self.typed(Verb::Mkdir, "create_dir", params, signal).await
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        let params = json!({
            "path": path,
            "cwd": cwd_json(options),
            "request": request,
            "sandbox": sandbox.map(wire::sandbox_json),
        });
        self.typed(Verb::Remove, "remove", params, signal).await
    }

    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        let params = json!({
            "from": from,
            "to": to,
            "cwd": cwd_json(options),
            "request": request,
            "sandbox": sandbox.map(wire::sandbox_json),
        });
        self.typed(Verb::Rename, "rename", params, signal).await
    }
}

/// A stream's chunks as they arrive, granting the server one chunk of credit per chunk taken.
pub(super) struct RemoteText {
    inner: Arc<Inner>,
    rx: mpsc::UnboundedReceiver<Frame>,
    credit: Arc<Credit>,
    id: u64,
    done: bool,
    /// The segments of the last chunk not yet handed out, last first.
    pending: Vec<Vec<u8>>,
    _watch: oneshot::Sender<()>,
}

impl futures_core::Stream for RemoteText {
    type Item = Result<String, FsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(segment) = self.pending.pop() {
            return Poll::Ready(Some(self.text(segment)));
        }
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(why) = self.credit.broken() {
            // Ended by the reader the moment a chunk came past the window; what came before
            // it is not handed out, as the stream is already wrong.
            self.done = true;
            return Poll::Ready(Some(Err(FsError::new(
                FsErrorCode::IoError,
                format!("remote stream_text: {why}"),
            ))));
        }
        let mut frame = match self.rx.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {
                self.done = true;
                return Poll::Ready(Some(Err(match self.credit.broken() {
                    Some(why) => {
                        FsError::new(FsErrorCode::IoError, format!("remote stream_text: {why}"))
                    }
                    None => lost(Verb::Read, RemoteError::Closed),
                })));
            }
            Poll::Ready(Some(f)) => f,
        };
        if frame.json.get("method").and_then(Value::as_str) == Some("stream/chunk") {
            let id = self.id;
            // Counted before it is sent: the server can never have seen more.
            self.credit.grant();
            self.inner
                .notify("stream/credit", json!({ "id": id, "chunks": 1 }));
            // One chunk may carry several segments (we said `stream_segments`): each is whole
            // characters, handed out in order.
            let mut segments = std::mem::take(&mut frame.segments);
            segments.reverse();
            let Some(first) = segments.pop() else {
                self.done = true;
                return Poll::Ready(Some(Err(bad_answer("stream_text"))));
            };
            self.pending = segments;
            return Poll::Ready(Some(self.text(first)));
        }
        self.done = true;
        if let Some(e) = frame.json.remove("error") {
            return Poll::Ready(Some(Err(error_in(&e, "stream_text"))));
        }
        Poll::Ready(None)
    }
}

impl RemoteText {
    /// A segment as text; not UTF-8 is the server breaking the protocol, and ends the stream.
    fn text(&mut self, segment: Vec<u8>) -> Result<String, FsError> {
        String::from_utf8(segment).map_err(|_| {
            self.done = true;
            self.pending.clear();
            bad_answer("stream_text")
        })
    }
}

impl Drop for RemoteText {
    fn drop(&mut self) {
        if !self.done {
            lock(&self.inner.pending).by_id.remove(&self.id);
            self.inner.notify("$/cancel", json!({ "id": self.id }));
        }
    }
}
