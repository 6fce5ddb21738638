//! Running each kind of step on both sides and comparing the results.

use super::laws::PendingLaw;
use super::{Change, Earlier, Harness, StepRecord, same, show_bytes};
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Interfere, Op, Step, WriteGuard, render_path};
use futures_util::StreamExt;
use seam::{EditRequest, FsError, FsKind, FsPathKind, FsTarget, FsVersion, Signal, WriteIntent};
use seam_model::{Guard, Interference, Key, Resolved, WorldOp};

impl Harness {
    pub(super) async fn run(&mut self, step: &Step, rec: &mut StepRecord) -> Check {
        if let Op::World(op) = &step.op {
            return self.world_step(op, rec);
        }
        self.stats.op(step.op.kind());
        if step.interfere == Interfere::CancelledBeforeStart && !matches!(step.op, Op::Facts { .. })
        {
            return self.cancelled_before_start(step, rec).await;
        }
        let root = self.root.clone();
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
            Op::World(_) => Ok(()),
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
        let expected = self.model.resolve(path);
        let actual = self.fs.resolve(path, self.opts(), &Signal::none()).await;
        if let (Ok(r), Ok(t)) = (&expected, &actual) {
            self.last_expected_code = None;
            self.key_check(r, t)?;
            self.classify_resolved(path, r);
            self.targets.insert(
                path.to_string(),
                Earlier {
                    target: t.clone(),
                    model: r.clone(),
                    epoch: self.epoch,
                },
            );
            rec.expected = format!("{:?}", r.display);
            rec.actual = format!("{:?}", t.display_path);
            return Ok(Some((t.clone(), r.clone())));
        }
        rec.expected = format!("{:?}", expected.as_ref().map(|r| &r.display));
        rec.actual = format!("{:?}", actual.as_ref().map(|t| &t.display_path));
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
            && let Some(e) = self.targets.get(path).cloned()
        {
            if e.epoch != self.epoch {
                self.hit(Rule::TargetReused);
            }
            return Ok(Some((e.target, e.model)));
        }
        self.resolve_both(path, rec).await
    }

    /// The model key of the object a target leads to now (for version tracking and laws).
    fn real(&self, r: &Resolved) -> Key {
        self.model.real_key(&r.key).unwrap_or_else(|| r.key.clone())
    }

    async fn stat_step(&mut self, step: &Step, path: &str, rec: &mut StepRecord) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let expected = self.model.stat_target(&r);
        let actual = self.fs.stat(&t, &Signal::none()).await;
        rec.expected = format!("{expected:?}");
        rec.actual = format!("{actual:?}");
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
        let expected = self.model.lstat(path);
        let actual = self.fs.lstat(path, self.opts(), &Signal::none()).await;
        rec.expected = format!("{expected:?}");
        rec.actual = format!("{actual:?}");
        if let Err(e) = &expected {
            self.classify_resolve_error(path, e);
        }
        if let Ok(Some(info)) = &expected
            && info.kind == FsPathKind::Symlink
        {
            self.hit(Rule::LstatSymlink);
        }
        let key = self.model.resolve(path).ok().map(|r| r.key);
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
            collect_stream(self.fs.stream_text(&t, &Signal::none()).await).await
        } else {
            self.fs.read_text(&t, &Signal::none()).await
        };
        rec.expected = format!("{:?}", expected.as_ref().map(|t| show_bytes(t.as_bytes())));
        rec.actual = format!("{:?}", actual.as_ref().map(|t| show_bytes(t.as_bytes())));
        self.classify_read(&r, &expected, stream);
        self.outcome(&expected, &actual, |_, m, a| {
            if m == a {
                Ok(())
            } else {
                Err(fail(
                    FailureKind::Outcome,
                    format!(
                        "text differs: expected {}, got {}",
                        show_bytes(m.as_bytes()),
                        show_bytes(a.as_bytes())
                    ),
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
        rec.expected = format!("{:?}", expected.as_ref().map(|b| show_bytes(b)));
        rec.actual = format!("{:?}", actual.as_ref().map(|b| show_bytes(b)));
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
        self.classify_list(&expected);
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

    async fn write_step(
        &mut self,
        step: &Step,
        path: &str,
        content: &str,
        guard: WriteGuard,
        rec: &mut StepRecord,
    ) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let (model_guard, intent) = match guard {
            WriteGuard::None => (None, None),
            WriteGuard::CreateIfAbsent => (
                Some(Guard::CreateIfAbsent),
                Some(WriteIntent::CreateIfAbsent),
            ),
            WriteGuard::ReplaceIfVersion(v) => {
                let (v, token) = self.recent(v, Some(&r));
                (
                    Some(Guard::ReplaceIfVersion(v)),
                    Some(WriteIntent::ReplaceIfVersion { version: token }),
                )
            }
        };
        let interference = interference(&step.interfere);
        let before = self.write_situation(&r, content);
        let result = self
            .model
            .write_target(&r, content, model_guard, &interference);
        let (signal, log) = self.probe(&step.interfere, result.competitor.clone());
        let actual = self
            .fs
            .write_text(&t, content, intent.as_ref(), None, &signal)
            .await;
        self.epoch += 1;
        if let Ok(out) = &actual {
            self.fresh_stat(&t, &out.version).await?;
        }
        self.stats.op_committed(actual.is_ok());
        rec.expected = format!("{:?}", result.outcome);
        rec.actual = format!("{actual:?}");
        self.probe_problems(&log)?;
        self.classify_write(&before, guard, &step.interfere, &result);
        let real = self.real(&r);
        self.outcome(&result.outcome, &actual, |h, m, a| {
            same(
                FailureKind::Outcome,
                "operation",
                &m.operation,
                &a.operation,
            )?;
            same(FailureKind::Outcome, "before", &m.before, &a.before)?;
            same(FailureKind::Outcome, "after", &m.after, &a.after)?;
            h.note_latest(&r, &m.version, &a.version);
            h.pending_laws.push(PendingLaw::Write {
                rel: Harness::rel(&real),
                content: content.to_string(),
            });
            h.observe(&m.version, &a.version, Some(&real))
        })
    }

    async fn edit_step(
        &mut self,
        step: &Step,
        path: &str,
        request: &EditRequest,
        guard: Option<crate::step::VersionRef>,
        rec: &mut StepRecord,
    ) -> Check {
        let Some((t, r)) = self.target_of(step, path, rec).await? else {
            return Ok(());
        };
        let (model_guard, expected_version) = match guard {
            None => (None, None),
            Some(v) => {
                let (v, token) = self.recent(v, Some(&r));
                (Some(v), Some(token))
            }
        };
        let interference = interference(&step.interfere);
        let before = self.edit_situation(&r, request, model_guard);
        let expected = self.model.edit_target(
            &r,
            &request.old_string,
            &request.new_string,
            request.replace_all,
            model_guard,
            &interference,
        );
        let (signal, log) = self.probe(&step.interfere, None);
        let actual = self
            .fs
            .edit_text(&t, request, expected_version.as_ref(), None, &signal)
            .await;
        self.epoch += 1;
        if let Ok(out) = &actual {
            self.fresh_stat(&t, &out.version).await?;
        }
        self.stats.op_committed(actual.is_ok());
        rec.expected = format!("{expected:?}");
        rec.actual = format!("{actual:?}");
        self.probe_problems(&log)?;
        self.classify_edit(&before, &step.interfere, &expected);
        let real = self.real(&r);
        self.outcome(&expected, &actual, |h, m, a| {
            same(FailureKind::Outcome, "before", &m.1, &a.before)?;
            same(FailureKind::Outcome, "after", &m.2, &a.after)?;
            h.note_latest(&r, &m.0, &a.version);
            h.pending_laws.push(PendingLaw::Edit {
                rel: Harness::rel(&real),
                old: request.old_string.clone(),
                new: request.new_string.clone(),
                replace_all: request.replace_all,
            });
            h.observe(&m.0, &a.version, Some(&real))
        })
    }

    async fn facts_step(&mut self, path: &str, other: &str, rec: &mut StepRecord) -> Check {
        let Some((t, r)) = self.resolve_both(path, rec).await? else {
            return Ok(());
        };
        let Some((to, ro)) = self.resolve_both(other, rec).await? else {
            return Ok(());
        };
        let expected_pp = if r.key.0.is_empty() {
            self.process_root.clone()
        } else {
            format!("{}/{}", self.process_root, Harness::rel(&r.key))
        };
        let pp = self.fs.process_path(&t);
        rec.expected = format!("process_path {expected_pp:?}");
        rec.actual = format!("process_path {pp:?}");
        self.stats.check();
        if pp != expected_pp {
            return Err(fail(
                FailureKind::PathFacts,
                format!(
                    "process_path of {:?} is {pp:?}, the real path is {expected_pp:?}",
                    r.display
                ),
            ));
        }
        self.hit(Rule::FactsProcessPath);
        let url = self.fs.file_url(&t);
        self.stats.check();
        match seam::paths::file_url_path(&url) {
            Some(p) if p == pp => self.hit(Rule::FactsFileUrl),
            _ => {
                return Err(fail(
                    FailureKind::PathFacts,
                    format!(
                        "file_url of {:?} is {url:?}, not a file:// URL of {pp:?}",
                        r.display
                    ),
                ));
            }
        }
        for ((a, ra), (b, rb)) in [((&t, &r), (&to, &ro)), ((&to, &ro), (&t, &r))] {
            let want = self.model.contains(ra, rb);
            let got = self.fs.contains(a, b);
            self.stats.check();
            if want != got {
                return Err(fail(
                    FailureKind::PathFacts,
                    format!(
                        "contains({:?}, {:?}) is {got}, must be {want}",
                        ra.display, rb.display
                    ),
                ));
            }
            let (ka, kb) = (Harness::rel(&ra.key), Harness::rel(&rb.key));
            if want && ka != kb {
                self.hit(Rule::FactsContains);
                if ra.display != self.model.key_display(&ra.key)
                    || rb.display != self.model.key_display(&rb.key)
                {
                    self.hit(Rule::FactsContainsAlias);
                }
            }
            if !want && !ka.is_empty() && kb.starts_with(&ka) {
                self.hit(Rule::FactsContainsPrefix);
            }
        }
        rec.actual = format!("{} ; file_url {url:?}", rec.actual);
        Ok(())
    }

    async fn fresh_stat(&mut self, target: &FsTarget, version: &FsVersion) -> Check {
        self.stats.fresh_stats += 1;
        self.stats.check();
        match self.fs.stat(target, &Signal::none()).await {
            Ok(Some(info)) if &info.version == version => {
                self.hit(Rule::VersionFreshStat);
                Ok(())
            }
            Ok(Some(info)) => Err(fail(
                FailureKind::FreshStat,
                format!(
                    "the mutation returned version {:?} but a fresh stat says {:?}",
                    version.as_str(),
                    info.version.as_str()
                ),
            )),
            Ok(None) => Err(fail(
                FailureKind::FreshStat,
                "the mutation succeeded but a fresh stat finds nothing",
            )),
            Err(e) => Err(fail(
                FailureKind::FreshStat,
                format!(
                    "a fresh stat after the mutation failed: {} {:?}",
                    e.code(),
                    e.message()
                ),
            )),
        }
    }
}

pub(super) fn interference(i: &Interfere) -> Interference {
    match i {
        Interfere::CancelAt(p) => Interference::Cancel(*p),
        Interfere::Competitor(c) => Interference::Competitor(c.clone()),
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
