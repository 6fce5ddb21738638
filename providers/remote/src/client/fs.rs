//! [`RemoteFileSystem`]: the contract over a [`Connection`], one round trip per call, and a
//! text stream that reads `stream/chunk` frames under the client's credit.

use super::RemoteError;
use super::connection::{Connection, Inner, Waiter, lock};
use crate::credit::Credit;
use crate::frame::Frame;
use crate::protocol::calls::{
    CreateDir, CreateDirParams, EditText, EditTextParams, ListDir, Lstat, PathParams, ReadBytes,
    ReadBytesParams, ReadText, Remove, RemoveParams, Rename, RenameParams, Resolve, Stat,
    StreamText, TargetParams, WriteText, WriteTextParams,
};
use crate::protocol::control::{
    AboutRequest, Cancel, CreditParams, Description, StreamChunk, StreamCredit, StreamStart,
};
use crate::protocol::values::{PayloadRef, WriteGuard};
use crate::protocol::{self, Method, Notification};
use crate::wire::{error_in, message, target_from_server, target_to_server, unpack_key};
use seam::{
    Capabilities, Capability, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest,
    FileSystem, FsDirEntry, FsError, FsErrorCode, FsInfo, FsPathInfo, FsTarget, FsVersion,
    RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome, ResolveOptions, SandboxMode,
    SandboxPolicy, Signal, TextStream, Verb, WriteIntent, WriteOutcome,
};
use serde_json::Value;
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
    let said = super::quoted(answer);
    FsError::new(
        FsErrorCode::IoError,
        format!("remote {method}: the server's answer is malformed: {said}"),
    )
}

impl RemoteFileSystem {
    /// The backend the connection's `initialize` described.
    pub fn new(conn: Arc<Connection>) -> Self {
        let description = conn.description().clone();
        Self::described(conn, &description)
    }

    /// The backend a description (`initialize`, or the start of `world/case`'s answer) gives:
    /// what it claims (names this client does not know are left out) and its sandbox mode.
    pub fn described(conn: Arc<Connection>, description: &Description) -> Self {
        let caps = description
            .capabilities
            .iter()
            .filter_map(|name| Capability::from_name(name))
            .fold(Capabilities::none(), Capabilities::with);
        Self {
            conn,
            caps,
            mode: description.sandbox_mode,
        }
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

    /// A call of method `M`: its typed parameters out, its typed answer back (with the frame,
    /// for the payload segments the answer names).
    async fn ask<M: Method>(
        &self,
        verb: Verb,
        params: &M::Params,
        segments: Vec<Vec<u8>>,
        signal: &Signal,
    ) -> Result<(M::Answer, Frame), FsError> {
        let (v, frame) = self
            .call(verb, M::NAME, protocol::encode(params), segments, signal)
            .await?;
        let answer = protocol::decode(&v).map_err(|_| bad_answer_of(M::NAME, &v))?;
        Ok((answer, frame))
    }
}

/// The text of the payload segment `r` names.
pub(super) fn text_of(frame: &Frame, r: PayloadRef, method: &str) -> Result<String, FsError> {
    let bytes = frame.segment(r).ok_or_else(|| bad_answer(method))?;
    String::from_utf8(bytes).map_err(|_| bad_answer(method))
}

/// What a call resolves against.
fn path_params(path: &str, options: ResolveOptions<'_>) -> PathParams {
    PathParams {
        path: path.to_string(),
        cwd: options.cwd.map(str::to_string),
    }
}

/// A target as the client sends it back.
fn target_params(target: &FsTarget) -> TargetParams {
    TargetParams {
        target: target_to_server(target),
    }
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
        let params = path_params(path, options);
        let (t, _) = self
            .ask::<Resolve>(Verb::Resolve, &params, Vec::new(), signal)
            .await?;
        Ok(target_from_server(t))
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
        let params = target_params(target);
        let (info, _) = self
            .ask::<Stat>(Verb::Stat, &params, Vec::new(), signal)
            .await?;
        Ok(info)
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        let params = path_params(path, options);
        let (info, _) = self
            .ask::<Lstat>(Verb::Lstat, &params, Vec::new(), signal)
            .await?;
        Ok(info)
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        let params = target_params(target);
        let (answer, frame) = self
            .ask::<ReadText>(Verb::Read, &params, Vec::new(), signal)
            .await?;
        text_of(&frame, answer.text, ReadText::NAME)
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        let inner = &self.conn.inner;
        let id = inner.id();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let window = self.conn.description().limits.stream_window;
        let credit = Arc::new(Credit::new(window));
        lock(&inner.pending).add(id, Waiter::Stream(tx, credit.clone()));
        let request = message(
            Some(id),
            StreamText::NAME,
            protocol::encode(&target_params(target)),
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
            return Err(error_in(&e, StreamText::NAME));
        }
        if first.json.get("method").and_then(Value::as_str) != Some(StreamStart::NAME) {
            let _ = watch.send(());
            return Err(bad_answer(StreamText::NAME));
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
        let params = ReadBytesParams {
            target: target_to_server(target),
            max_bytes,
        };
        let (answer, frame) = self
            .ask::<ReadBytes>(Verb::Read, &params, Vec::new(), signal)
            .await?;
        frame
            .segment(answer.bytes)
            .ok_or_else(|| bad_answer(ReadBytes::NAME))
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        let params = target_params(target);
        let (entries, _) = self
            .ask::<ListDir>(Verb::List, &params, Vec::new(), signal)
            .await?;
        Ok(entries
            .into_iter()
            .map(|e| FsDirEntry {
                name: e.name,
                kind: e.kind,
                target: target_from_server(e.target),
                version: e.version,
                size: e.size,
            })
            .collect())
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        let params = WriteTextParams {
            target: target_to_server(target),
            content: PayloadRef::to(0),
            expected: expected.map(WriteGuard::of),
            sandbox: sandbox.cloned(),
            checkpoints: false,
        };
        let segments = vec![content.as_bytes().to_vec()];
        let (answer, frame) = self
            .ask::<WriteText>(Verb::Write, &params, segments, signal)
            .await?;
        let before = match answer.before {
            None => None,
            Some(r) => Some(text_of(&frame, r, WriteText::NAME)?),
        };
        Ok(WriteOutcome {
            operation: answer.operation,
            version: answer.version,
            before,
            after: text_of(&frame, answer.after, WriteText::NAME)?,
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
        let params = EditTextParams {
            target: target_to_server(target),
            old_string: PayloadRef::to(0),
            new_string: PayloadRef::to(1),
            replace_all: edit.replace_all,
            expected: expected.cloned(),
            sandbox: sandbox.cloned(),
            checkpoints: false,
        };
        let segments = vec![
            edit.old_string.as_bytes().to_vec(),
            edit.new_string.as_bytes().to_vec(),
        ];
        let (answer, frame) = self
            .ask::<EditText>(Verb::Edit, &params, segments, signal)
            .await?;
        Ok(EditOutcome {
            version: answer.version,
            before: text_of(&frame, answer.before, EditText::NAME)?,
            after: text_of(&frame, answer.after, EditText::NAME)?,
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
        let params = CreateDirParams {
            path: path.to_string(),
            cwd: options.cwd.map(str::to_string),
            request: Some(request),
            sandbox: sandbox.cloned(),
            checkpoints: false,
        };
        let (outcome, _) = self
            .ask::<CreateDir>(Verb::Mkdir, &params, Vec::new(), signal)
            .await?;
        Ok(outcome)
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        let params = RemoveParams {
            path: path.to_string(),
            cwd: options.cwd.map(str::to_string),
            request: Some(request.clone()),
            sandbox: sandbox.cloned(),
            checkpoints: false,
        };
        let (outcome, _) = self
            .ask::<Remove>(Verb::Remove, &params, Vec::new(), signal)
            .await?;
        Ok(outcome)
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
        let params = RenameParams {
            from: from.to_string(),
            to: to.to_string(),
            cwd: options.cwd.map(str::to_string),
            request: Some(request.clone()),
            sandbox: sandbox.cloned(),
            checkpoints: false,
        };
        let (outcome, _) = self
            .ask::<Rename>(Verb::Rename, &params, Vec::new(), signal)
            .await?;
        Ok(outcome)
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
        if frame.json.get("method").and_then(Value::as_str) == Some(StreamChunk::NAME) {
            let id = self.id;
            // Counted before it is sent: the server can never have seen more.
            self.credit.grant();
            self.inner.notify(
                StreamCredit::NAME,
                protocol::encode(&CreditParams {
                    id: Value::from(id),
                    chunks: 1,
                }),
            );
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
            let about = AboutRequest {
                id: Value::from(self.id),
            };
            self.inner.notify(Cancel::NAME, protocol::encode(&about));
        }
    }
}
