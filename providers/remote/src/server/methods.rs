//! The methods a connection serves: the contract's calls on the hosted provider, streams
//! under the client's credit, and the `world/*` test control.

use super::conn::Conn;
use super::params::{answer, case_spec, describe, params_of, text_param};
use super::{Reply, STREAM_FRAME_BYTES, invalid, lock};
use crate::frame::Frame;
use crate::protocol::calls::{
    BytesAnswer, CreateDir, EditAnswer, EditText, ListDir, Lstat, ReadBytes, ReadText, Remove,
    Rename, Resolve, Stat, StreamEnd, StreamText, TextAnswer, WriteAnswer, WriteText,
};
use crate::protocol::control::{AboutRequest, StreamChunk, StreamStart};
use crate::protocol::test_control::{
    Applied, CaseAnswer, WorldApply, WorldCase, WorldEntryMode, WorldReopen, WorldSnapshot,
};
use crate::protocol::values::{DirEntry, WriteGuard};
use crate::protocol::{self, Method, Notification};
use crate::wire::{self, error_object, fs_error_object, target_in, target_json};
use crate::world;
use seam::{EditRequest, FileSystem, FsError, FsTarget, ResolveOptions, Signal};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::Semaphore;

impl Conn {
    pub(super) async fn world(&self, method: &str, params: &Value, frame: &mut Frame) -> Reply {
        let Some((maker, base_dirs)) = &self.server.cases else {
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
                let p = params_of::<WorldCase>(params)?;
                // A case in a directory the gate chose (`root`: for `power-loss`, a mount that
                // keeps what a power cut leaves), or in a fresh one of the server's own.
                let (dir, root) = match &p.root {
                    Some(asked) => {
                        let real = std::fs::canonicalize(asked)
                            .map_err(|e| failed(format!("world/case {asked}: {e}")))?;
                        if !real.is_dir() {
                            return Err(failed(format!("world/case {asked}: not a directory")));
                        }
                        (None, real)
                    }
                    None => {
                        let dir = base_dirs
                            .make()
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
                let spec = case_spec(&root, &p);
                let provider = maker.make(&spec).map_err(failed)?;
                let description = describe(&self.server, provider.as_ref(), Some(&root));
                let mut state = lock(&self.state);
                state.end_case();
                state.provider = provider;
                state.root = Some(root_path);
                state.case = dir;
                answer::<WorldCase>(&CaseAnswer {
                    description,
                    root,
                    world: None,
                })
            }
            "reopen" => {
                let p = params_of::<WorldReopen>(params)?;
                // A second backend over a case another connection made: what a second agent
                // process opens over the same files (the cross-instance properties).
                let asked = p
                    .root
                    .as_deref()
                    .ok_or_else(|| failed("world/reopen needs the case's root".into()))?;
                let real = std::fs::canonicalize(asked)
                    .map_err(|e| failed(format!("world/reopen {asked}: {e}")))?;
                let base = std::fs::canonicalize(base_dirs.base())
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
                let reopened = base_dirs.reopened(&real).ok_or_else(|| {
                    failed(format!(
                        "world/reopen {asked}: not the directory of a case in progress"
                    ))
                })?;
                let spec = case_spec(&root, &p);
                let provider = maker.make(&spec).map_err(failed)?;
                let description = describe(&self.server, provider.as_ref(), Some(&root));
                let mut state = lock(&self.state);
                state.reopened = Some(reopened);
                state.provider = provider;
                state.root = Some(real);
                answer::<WorldReopen>(&CaseAnswer {
                    description,
                    root,
                    world: None,
                })
            }
            "apply" | "snapshot" => {
                let Some(root) = root else {
                    return Err(failed(format!("world/{method} needs world/case first")));
                };
                if method == "apply" {
                    let effect = params_of::<WorldApply>(params)?;
                    world::apply(&root, &effect, frame).map_err(failed)?;
                    // The answer carries no bytes: the effect's are not sent back.
                    frame.segments.clear();
                    answer::<WorldApply>(&Applied {})
                } else {
                    frame.segments.clear();
                    let snapshot = world::snapshot(&root, frame).map_err(failed)?;
                    answer::<WorldSnapshot>(&snapshot)
                }
            }
            "entry_mode" => {
                let p = params_of::<WorldEntryMode>(params)?;
                answer::<WorldEntryMode>(&world::entry_mode(&p.path).map_err(failed)?)
            }
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
        match method {
            <Resolve as Method>::NAME => {
                let p = params_of::<Resolve>(params)?;
                let cwd = ResolveOptions {
                    cwd: p.cwd.as_deref(),
                };
                let t = fs.resolve(&p.path, cwd, signal).await.map_err(fs_err)?;
                answer::<Resolve>(&target_json(fs.as_ref(), &t))
            }
            <Stat as Method>::NAME => {
                let p = params_of::<Stat>(params)?;
                let info = fs.stat(&target_in(&p.target), signal).await;
                answer::<Stat>(&info.map_err(fs_err)?)
            }
            <Lstat as Method>::NAME => {
                let p = params_of::<Lstat>(params)?;
                let cwd = ResolveOptions {
                    cwd: p.cwd.as_deref(),
                };
                let info = fs.lstat(&p.path, cwd, signal).await;
                answer::<Lstat>(&info.map_err(fs_err)?)
            }
            <ReadText as Method>::NAME => {
                let p = params_of::<ReadText>(params)?;
                let text = fs.read_text(&target_in(&p.target), signal).await;
                let text = out.attach_ref(text.map_err(fs_err)?.into_bytes());
                answer::<ReadText>(&TextAnswer { text })
            }
            <ReadBytes as Method>::NAME => {
                let p = params_of::<ReadBytes>(params)?;
                let bytes = fs
                    .read_bytes(&target_in(&p.target), p.max_bytes, signal)
                    .await;
                let bytes = out.attach_ref(bytes.map_err(fs_err)?);
                answer::<ReadBytes>(&BytesAnswer { bytes })
            }
            <ListDir as Method>::NAME => {
                let p = params_of::<ListDir>(params)?;
                let entries = fs.list_dir(&target_in(&p.target), signal).await;
                let entries: Vec<DirEntry> = entries
                    .map_err(fs_err)?
                    .into_iter()
                    .map(|e| DirEntry {
                        target: target_json(fs.as_ref(), &e.target),
                        name: e.name,
                        kind: e.kind,
                        version: e.version,
                        size: e.size,
                    })
                    .collect();
                answer::<ListDir>(&entries)
            }
            <WriteText as Method>::NAME => {
                let p = params_of::<WriteText>(params)?;
                let content = text_param(frame, p.content, "content")?;
                let expected = p.expected.as_ref().map(WriteGuard::intent).transpose();
                let expected = expected.map_err(invalid)?;
                let sandbox = self.client_policy(p.sandbox)?;
                let o = fs
                    .write_text(
                        &target_in(&p.target),
                        &content,
                        expected.as_ref(),
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                let before = o.before.map(|b| out.attach_ref(b.into_bytes()));
                let after = out.attach_ref(o.after.into_bytes());
                answer::<WriteText>(&WriteAnswer {
                    operation: o.operation,
                    version: o.version,
                    before,
                    after,
                })
            }
            <EditText as Method>::NAME => {
                let p = params_of::<EditText>(params)?;
                let edit = EditRequest {
                    old_string: text_param(frame, p.old_string, "old_string")?,
                    new_string: text_param(frame, p.new_string, "new_string")?,
                    replace_all: p.replace_all,
                };
                let sandbox = self.client_policy(p.sandbox)?;
                let o = fs
                    .edit_text(
                        &target_in(&p.target),
                        &edit,
                        p.expected.as_ref(),
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                answer::<EditText>(&EditAnswer {
                    version: o.version,
                    before: out.attach_ref(o.before.into_bytes()),
                    after: out.attach_ref(o.after.into_bytes()),
                })
            }
            <CreateDir as Method>::NAME => {
                let p = params_of::<CreateDir>(params)?;
                let sandbox = self.client_policy(p.sandbox)?;
                let o = fs
                    .create_dir(
                        &p.path,
                        ResolveOptions {
                            cwd: p.cwd.as_deref(),
                        },
                        p.request.unwrap_or_default(),
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                answer::<CreateDir>(&o)
            }
            <Remove as Method>::NAME => {
                let p = params_of::<Remove>(params)?;
                let sandbox = self.client_policy(p.sandbox)?;
                let o = fs
                    .remove(
                        &p.path,
                        ResolveOptions {
                            cwd: p.cwd.as_deref(),
                        },
                        &p.request.unwrap_or_default(),
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                answer::<Remove>(&o)
            }
            <Rename as Method>::NAME => {
                let p = params_of::<Rename>(params)?;
                let sandbox = self.client_policy(p.sandbox)?;
                let o = fs
                    .rename(
                        &p.from,
                        &p.to,
                        ResolveOptions {
                            cwd: p.cwd.as_deref(),
                        },
                        &p.request.unwrap_or_default(),
                        sandbox.as_ref(),
                        signal,
                    )
                    .await
                    .map_err(fs_err)?;
                answer::<Rename>(&o)
            }
            <StreamText as Method>::NAME => {
                let p = params_of::<StreamText>(params)?;
                self.stream(fs, target_in(&p.target), id, signal).await
            }
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
        policy: Option<seam::SandboxPolicy>,
    ) -> Result<Option<seam::SandboxPolicy>, Value> {
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
            .write_now(&wire::message(
                None,
                StreamStart::NAME,
                protocol::encode(&AboutRequest { id: id.clone() }),
            ))
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
                    None => break Some(Ok(protocol::encode(&StreamEnd { end: true }))),
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
                let mut frame = wire::message(
                    None,
                    StreamChunk::NAME,
                    protocol::encode(&AboutRequest { id: id.clone() }),
                );
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
