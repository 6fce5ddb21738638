//! Running each kind of step on both sides and comparing the results.

use super::laws::PendingLaw;
use super::{Change, Earlier, Harness, StepRecord, same, show_bytes};
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Interfere, Op, Step, render_path};
use futures_util::StreamExt;
use seam::{EditRequest, FsError, FsKind, FsPathKind, FsTarget, Signal};
use seam_model::{Interference, Key, Resolved, WorldOp};

impl Harness {
    pub(super) async fn run(&mut self, step: &Step, rec: &mut StepRecord) -> Check {
        if let Op::World(op) = &step.op {
            return self.world_step(op, rec);
        }
        if let Op::Together { lanes, on } = &step.op {
            return self.together_step(lanes, *on, rec).await;
        }
        self.stats.op(step.op.kind());
        if step.op.is_agent() {
            return self.agent_step(&step.op, rec).await;
        }
        let root = self.root.clone();
        match &step.op {
            Op::CreateDir {
                path,
                parents,
                exist_ok,
            } => {
                let request = seam::CreateDirOptions {
                    parents: *parents,
                    exist_ok: *exist_ok,
                };
                return self
                    .create_dir_step(step, &render_path(path, &root), request, rec)
                    .await;
            }
            Op::Remove {
                path,
                guard,
                directory,
            } => {
                return self
                    .remove_step(step, &render_path(path, &root), *guard, *directory, rec)
                    .await;
            }
            Op::Rename {
                from,
                to,
                guard,
                replace,
            } => {
                let (from, to) = (render_path(from, &root), render_path(to, &root));
                return self
                    .rename_step(step, (&from, &to), *guard, *replace, rec)
                    .await;
            }
            _ => {}
        }
        if step.interfere == Interfere::CancelledBeforeStart && !matches!(step.op, Op::Facts { .. })
        {
            return self.cancelled_before_start(step, rec).await;
        }
        match &step.op {
            Op::Resolve { path } => {
                let path = render_path(path, &root);
                self.resolve_both(&path, rec).await.map(|_| ())
            }
            Op::Stat { path } => self.stat_step(step, &render_path(path, &root), rec).await,
            Op::Lstat { path } => self.lstat_step(&render_path(path, &root), rec).await,
            Op::ReadText { path } => {
                self.read_step(step, &render_path(path, &root), false, rec)
                    .await
            }
            Op::StreamText { path } => {
                self.read_step(step, &render_path(path, &root), true, rec)
                    .await
            }
            Op::ReadBytes { path, max } => {
                self.bytes_step(step, &render_path(path, &root), *max, rec)
                    .await
            }
            Op::ListDir { path } => self.list_step(step, &render_path(path, &root), rec).await,
            Op::Write {
                path,
                content,
                guard,
            } => {
                self.write_step(step, &render_path(path, &root), content, *guard, rec)
                    .await
            }
            Op::Edit {
                path,
                old,
                new,
                replace_all,
                guard,
            } => {
                let request = EditRequest {
                    old_string: old.clone(),
                    new_string: new.clone(),
                    replace_all: *replace_all,
                };
                self.edit_step(step, &render_path(path, &root), &request, *guard, rec)
                    .await
            }
            Op::Facts { path, other } => {
                self.facts_step(&render_path(path, &root), &render_path(other, &root), rec)
                    .await
            }
            Op::World(_)
            | Op::CreateDir { .. }
            | Op::Remove { .. }
            | Op::Rename { .. }
            | Op::AgentRead { .. }
            | Op::AgentWrite { .. }
            | Op::AgentEdit { .. }
            | Op::Together { .. } => Ok(()),
        }
    }

    fn world_step(&mut self, op: &WorldOp, rec: &mut StepRecord) -> Check {
        let effect = self.model.world(op);
        match &effect {
            Some(e) => {
                self.world.apply(e).map_err(|err| {
                    fail(
                        FailureKind::Setup,
                        format!("the world could not carry out {e:?}: {err}"),
                    )
                })?;
                self.stats.world(true);
                self.epoch += 1;
                self.track_world_change(op);
                rec.expected = "applied".into();
            }
            None => {
                self.stats.world(false);
                rec.expected = "not applicable (skipped)".into();
            }
        }
        rec.actual = rec.expected.clone();
        Ok(())
    }

    fn track_world_change(&mut self, op: &WorldOp) {
        let key = |p: &str| Key(p.split('/').map(str::to_string).collect());
        match op {
            WorldOp::Scribble {
                path,
                restore_mtime,
            } => {
                let change = if *restore_mtime {
                    Change::RestoredMtime
                } else {
                    Change::InPlace
                };
                self.changed.insert(key(path), change);
            }
            WorldOp::Append { path, .. } => {
                self.changed.insert(key(path), Change::InPlace);
            }
            WorldOp::Chmod { path, .. } => {
                self.changed.insert(key(path), Change::Chmod);
            }
            WorldOp::Write { path, .. } | WorldOp::Remove { path } => {
                self.changed.remove(&key(path));
            }
            _ => {}
        }
    }

    /// Resolves `path` on both sides. `Ok(None)`: both refused it the same way (that is the
    /// step's outcome).
    pub(super) async fn resolve_both(
        &mut self,
        path: &str,
        rec: &mut StepRecord,
    ) -> Result<Option<(FsTarget, Resolved)>, Failure> {
        let spelled = self.spelled(path);
        let expected = self.model.resolve(&spelled);
        let actual = self.fs.resolve(path, self.opts(), &Signal::none()).await;
        if let (Ok(r), Ok(t)) = (&expected, &actual) {
            self.last_expected_code = None;
            self.key_check(r, t)?;
            self.classify_resolved(&spelled, r);
            if spelled != path {
                self.hit(Rule::PathCwd);
            }
            self.targets.insert(
                spelled,
                Earlier {
                    target: t.clone(),
                    model: r.clone(),
                    epoch: self.epoch,
                },
            );
            if self.config.step_texts {
                rec.expected = format!("{:?}", r.display);
                rec.actual = format!("{:?}", t.display_path);
            }
            return Ok(Some((t.clone(), r.clone())));
        }
        if self.config.step_texts {
            rec.expected = format!("{:?}", expected.as_ref().map(|r| &r.display));
            rec.actual = format!("{:?}", actual.as_ref().map(|t| &t.display_path));
        }
        if let Err(e) = &expected {
            self.classify_resolve_error(path, e);
        }
        self.outcome(&expected, &actual, |_, _, _| Ok(()))?;
        Ok(None)
    }

    /// The target a step works on: one resolved earlier (when the step reuses it), or resolved
    /// now.
    pub(super) async fn target_of(
        &mut self,
        step: &Step,
        path: &str,
        rec: &mut StepRecord,
    ) -> Result<Option<(FsTarget, Resolved)>, Failure> {
        if step.reuse
            && let Some(e) = self.targets.get(&self.spelled(path)).cloned()
        {
            if e.epoch != self.epoch {
                self.hit(Rule::TargetReused);
                self.classify_reused(step, &e.model);
            }
            return Ok(Some((e.target, e.model)));
        }
        self.resolve_both(path, rec).await
    }

    /// The model key of the object a target leads to now (for version tracking and laws).
    pub(super) fn real(&self, r: &Resolved) -> Key {
        self.model.real_key(&r.key).unwrap_or_else(|| r.key.clone())
    }

    async fn stat_step(&mut self, step: &Step, path: &str, rec: &mut StepRecord) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let expected = self.model.stat_target(&r);
        let actual = self.fs.stat(&t, &Signal::none()).await;
        if self.config.step_texts {
            rec.expected = format!("{expected:?}");
            rec.actual = format!("{actual:?}");
        }
        self.classify_stat(&r, &expected);
        let real = self.real(&r);
        self.outcome(&expected, &actual, |h, m, a| match (m, a) {
            (None, None) => Ok(()),
            (Some(m), Some(a)) => {
                same(FailureKind::Outcome, "kind", &m.kind, &a.kind)?;
                same(FailureKind::Outcome, "size", &m.size, &a.size)?;
                let file = m.kind == FsKind::File;
                if file {
                    h.note_latest(&r, &m.version, &a.version);
                }
                h.observe(&m.version, &a.version, file.then_some(&real))
            }
            (m, a) => Err(fail(
                FailureKind::Outcome,
                format!("expected {m:?}, got {a:?}"),
            )),
        })
    }

    async fn lstat_step(&mut self, path: &str, rec: &mut StepRecord) -> Check {
        let expected = self.model.lstat(&self.spelled(path));
        let actual = self.fs.lstat(path, self.opts(), &Signal::none()).await;
        if self.config.step_texts {
            rec.expected = format!("{expected:?}");
            rec.actual = match (&expected, &actual) {
                // A link's size is the length of its text, and an absolute text spells the test
                // root, whose length differs between providers: once the size is what the model
                // says (checked below), the record keeps it out of the normal form a differential
                // run compares.
                (Ok(Some(m)), Ok(Some(a))) if a.kind == FsPathKind::Symlink && m.size == a.size => {
                    let mut shown = a.clone();
                    shown.size = None;
                    format!("Ok(Some({shown:?})) (link size as the model says)")
                }
                _ => format!("{actual:?}"),
            };
        }
        if let Err(e) = &expected {
            self.classify_resolve_error(path, e);
        }
        if let Ok(Some(info)) = &expected
            && info.kind == FsPathKind::Symlink
        {
            self.hit(Rule::LstatSymlink);
        }
        let key = self.model.resolve(&self.spelled(path)).ok().map(|r| r.key);
        self.outcome(&expected, &actual, |h, m, a| match (m, a) {
            (None, None) => Ok(()),
            (Some(m), Some(a)) => {
                same(FailureKind::Outcome, "kind", &m.kind, &a.kind)?;
                same(FailureKind::Outcome, "size", &m.size, &a.size)?;
                let file = (m.kind == FsPathKind::File).then_some(()).and(key.as_ref());
                h.observe(&m.version, &a.version, file)
            }
            (m, a) => Err(fail(
                FailureKind::Outcome,
                format!("expected {m:?}, got {a:?}"),
            )),
        })
    }

    async fn read_step(
        &mut self,
        step: &Step,
        path: &str,
        stream: bool,
        rec: &mut StepRecord,
    ) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let expected = self.model.read_text_target(&r);
        let actual = if stream {
            let long = self.slow_long_streams
                && expected
                    .as_ref()
                    .is_ok_and(|text| text.len() > SLOW_READER_FROM);
            let stream = self.fs.stream_text(&t, &Signal::none()).await;
            if long {
                collect_stream_slowly(stream).await
            } else {
                collect_stream(stream).await
            }
        } else {
            self.fs.read_text(&t, &Signal::none()).await
        };
        if self.config.step_texts {
            rec.expected = format!("{:?}", expected.as_ref().map(|t| show_bytes(t.as_bytes())));
            rec.actual = format!("{:?}", actual.as_ref().map(|t| show_bytes(t.as_bytes())));
        }
        self.classify_read(&r, &expected, stream);
        self.outcome(&expected, &actual, |_, m, a| {
            if m == a {
                Ok(())
            } else {
                let (m, a) = super::show_two(m.as_bytes(), a.as_bytes());
                Err(fail(
                    FailureKind::Outcome,
                    format!("text differs: expected {m}, got {a}"),
                ))
            }
        })
    }

    async fn bytes_step(
        &mut self,
        step: &Step,
        path: &str,
        max: u64,
        rec: &mut StepRecord,
    ) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let expected = self.model.read_bytes_target(&r, max);
        let actual = self.fs.read_bytes(&t, max, &Signal::none()).await;
        if self.config.step_texts {
            rec.expected = format!("{:?}", expected.as_ref().map(|b| show_bytes(b)));
            rec.actual = format!("{:?}", actual.as_ref().map(|b| show_bytes(b)));
        }
        self.classify_bytes(&r, max, &expected);
        self.outcome(&expected, &actual, |_, m, a| {
            if m == a {
                Ok(())
            } else {
                Err(fail(
                    FailureKind::Outcome,
                    format!(
                        "bytes differ: expected {}, got {}",
                        show_bytes(m),
                        show_bytes(a)
                    ),
                ))
            }
        })
    }

    async fn list_step(&mut self, step: &Step, path: &str, rec: &mut StepRecord) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let expected = self.model.list_dir_target(&r);
        let actual = self.fs.list_dir(&t, &Signal::none()).await;
        let names = |v: &Vec<(String, FsKind)>| format!("{v:?}");
        if self.config.step_texts {
            rec.expected = format!(
                "{:?}",
                expected
                    .as_ref()
                    .map(|v| names(&v.iter().map(|e| (e.name.clone(), e.kind)).collect()))
            );
            rec.actual = format!(
                "{:?}",
                actual
                    .as_ref()
                    .map(|v| names(&v.iter().map(|e| (e.name.clone(), e.kind)).collect()))
            );
        }
        self.classify_list(&expected);
        if expected.is_ok()
            && matches!(
                self.model.lstat(&self.spelled(path)),
                Ok(Some(ref i)) if i.kind == FsPathKind::Symlink
            )
        {
            self.hit(Rule::ListThroughLink);
        }
        let real = self.real(&r);
        self.outcome(&expected, &actual, |h, m, a| {
            let an: Vec<String> = a.iter().map(|e| e.name.clone()).collect();
            h.pending_laws.push(PendingLaw::List {
                rel: Harness::rel(&real),
                names: an.clone(),
            });
            let mn: Vec<&String> = m.iter().map(|e| &e.name).collect();
            let an: Vec<&String> = an.iter().collect();
            same(FailureKind::Outcome, "listing order", &mn, &an)?;
            for (m, a) in m.iter().zip(a) {
                h.stats.check();
                same(
                    FailureKind::Outcome,
                    &format!("{}: kind", m.name),
                    &m.kind,
                    &a.kind,
                )?;
                same(
                    FailureKind::Outcome,
                    &format!("{}: size", m.name),
                    &m.size,
                    &a.size,
                )?;
                same(
                    FailureKind::KeyIdentity,
                    &format!("{}: display path", m.name),
                    &m.display,
                    &a.target.display_path,
                )?;
                h.laws
                    .key(&m.key, a.target.key.as_str())
                    .map_err(|e| fail(FailureKind::KeyIdentity, e))?;
                match (&m.version, &a.version) {
                    (None, None) => {}
                    (Some(mv), Some(av)) => {
                        let file = (m.kind == FsKind::File).then_some(&m.key);
                        h.observe(mv, av, file)?
                    }
                    (mv, av) => {
                        return Err(fail(
                            FailureKind::Outcome,
                            format!(
                                "{}: version expected {}, got {}",
                                m.name,
                                if mv.is_some() { "present" } else { "absent" },
                                if av.is_some() { "present" } else { "absent" }
                            ),
                        ));
                    }
                }
            }
            Ok(())
        })
    }
}

pub(super) fn interference(i: &Interfere) -> Interference {
    match i {
        Interfere::CancelAt(p) => Interference::Cancel(*p),
        Interfere::Competitor(c) => Interference::Competitor(c.clone()),
        Interfere::ChangeAt(p, c) => Interference::Change(*p, c.clone()),
        _ => Interference::None,
    }
}

/// Concatenates a stream; the first error item is the result.
pub(super) async fn collect_stream(
    stream: Result<seam::TextStream, FsError>,
) -> Result<String, FsError> {
    let mut s = stream?;
    let mut text = String::new();
    while let Some(chunk) = s.next().await {
        text.push_str(&chunk?);
    }
    Ok(text)
}

/// A stream the model says is longer than this is read slowly, when the provider's streams
/// come through a window ([`crate::Factory::streams_through_a_window`]): more than a window
/// of chunks of any backend here (8 chunks of 16 KiB, the kits'), so that a backend sending
/// past its window has something to send.
const SLOW_READER_FROM: usize = 128 * 1024;

/// How long a slow reader stops after its first chunk.
const SLOW_READER_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// [`collect_stream`] by a reader slower than the backend: it stops after the first chunk for
/// [`SLOW_READER_PAUSE`], as an agent's client does while it works on what it has. A backend
/// that honours flow control waits for credit meanwhile; one that ignores it sends on past the
/// window it was granted, which a client that counts (the remote one does) refuses — the
/// stream then fails, and the step departs with that reason.
async fn collect_stream_slowly(
    stream: Result<seam::TextStream, FsError>,
) -> Result<String, FsError> {
    let mut s = stream?;
    let mut text = String::new();
    if let Some(chunk) = s.next().await {
        text.push_str(&chunk?);
        tokio::time::sleep(SLOW_READER_PAUSE).await;
    }
    while let Some(chunk) = s.next().await {
        text.push_str(&chunk?);
    }
    Ok(text)
}
