//! The methods a connection serves: the contract's calls on the hosted provider, streams
//! under the client's credit, and the `world/*` test control.

use super::conn::Conn;
use super::params::{case_spec, describe, object_param, str_param, text_param};
use super::{Reply, STREAM_FRAME_BYTES, invalid, lock};
use crate::frame::Frame;
use crate::wire::{self, error_object, fs_error_object, target_in, target_json};
use crate::world;
use seam::{
    CreateDirOptions, EditRequest, FileSystem, FsError, FsTarget, FsVersion, RemoveOptions,
    RenameOptions, ResolveOptions, Signal,
};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::Semaphore;

impl Conn {
    pub(super) async fn world(&self, method: &str, params: &Value, frame: &mut Frame) -> Reply {
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
    pub(super) async fn call(
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
    pub(super) fn client_policy(
        &self,
        params: &Value,
    ) -> Result<Option<seam::SandboxPolicy>, Value> {
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
    pub(super) async fn stream(
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
