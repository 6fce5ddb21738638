//! Writes and edits on both sides: the guard each side gets, the probe that interferes, the
//! fresh `stat` a success must agree with, and the laws checked on the world afterwards.

use super::laws::PendingLaw;
use super::ops::interference;
use super::probe::{Expect, READ_BYTES_CAP, Readers};
use super::{Harness, StepRecord, same, show_bytes};
use crate::failure::{Check, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Interfere, Step, WriteGuard};
use seam::{EditRequest, FsTarget, FsVersion, Signal, WriteIntent};
use seam_model::{Guard, MutationResult, Resolved, WorldEffect};
use std::sync::Arc;

impl Harness {
    pub(super) async fn write_step(
        &mut self,
        step: &Step,
        path: &str,
        content: &Arc<str>,
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
        let old = self.expect_if_read(step, &r);
        let (policy, fence) = self.fence_of(step, &r);
        if fence.denial.is_some() {
            self.denied_root = Some(fence.root.clone());
        }
        let result = match &fence.denial {
            // Denied before anything else: no competitor is placed, no point is reached.
            Some(denied) => MutationResult {
                outcome: Err(denied.clone()),
                competitor: None,
            },
            None => self
                .model
                .write_target(&r, content, model_guard, &interference),
        };
        let readers = self.readers(step, &t, &r, old)?;
        let (signal, log) = self.probe(&step.interfere, result.competitor.clone(), readers);
        let actual = self
            .fs
            .write_text(&t, content, intent.as_ref(), policy.as_ref(), &signal)
            .await;
        self.epoch += 1;
        self.stats.op_committed(actual.is_ok());
        if self.config.step_texts {
            rec.expected = match &result.outcome {
                Ok(w) => format!(
                    "Ok({:?}, version {:?}, before {}, after {})",
                    w.operation,
                    w.version,
                    w.before
                        .as_ref()
                        .map_or("None".into(), |b| show_bytes(b.as_bytes())),
                    show_bytes(w.after.as_bytes())
                ),
                Err(e) => format!("Err({} {:?})", e.code, e.message),
            };
            rec.actual = match &actual {
                Ok(w) => format!(
                    "Ok({:?}, version {:?}, before {}, after {})",
                    w.operation,
                    w.version.as_str(),
                    w.before
                        .as_ref()
                        .map_or("None".into(), |b| show_bytes(b.as_bytes())),
                    show_bytes(w.after.as_bytes())
                ),
                Err(e) => format!("Err({} {:?})", e.code(), e.message()),
            };
        }
        // The probe first: a competitor that could not be placed explains a fresh stat that
        // disagrees (it lands after the mutation), and is the diagnosis the author needs.
        self.probe_problems(&log)?;
        if let Ok(out) = &actual {
            self.fresh_stat(&t, &out.version).await?;
        }
        self.classify_fence(&r, step, &fence);
        if fence.denial.is_none() {
            self.classify_write(&before, guard, &step.interfere, &result);
        }
        if result.outcome.is_ok() && long_name(&r) {
            self.hit(Rule::WriteLongName);
        }
        if matches!(step.interfere, Interfere::ChangeAt(..)) && result.competitor.is_some() {
            self.hit(Rule::WriteChangedMidWrite);
        }
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
                content: Arc::clone(content),
            });
            h.observe(&m.version, &a.version, Some(&real))
        })
    }

    pub(super) async fn edit_step(
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
        let old = self.expect_if_read(step, &r);
        let (policy, fence) = self.fence_of(step, &r);
        if fence.denial.is_some() {
            self.denied_root = Some(fence.root.clone());
        }
        let (expected, change) = match &fence.denial {
            Some(denied) => (Err(denied.clone()), None),
            None => {
                let m = self.model.edit_changed(
                    &r,
                    &request.old_string,
                    &request.new_string,
                    request.replace_all,
                    model_guard,
                    &interference,
                );
                (m.outcome, m.competitor)
            }
        };
        let changed = change.is_some();
        // The edit is made again on the file as the change left it: that is its law's basis.
        let basis = match &change {
            Some(
                WorldEffect::RewriteFile { bytes, .. } | WorldEffect::CreateFile { bytes, .. },
            ) => Some(bytes.clone()),
            _ => None,
        };
        let readers = self.readers(step, &t, &r, old)?;
        let (signal, log) = self.probe(&step.interfere, change, readers);
        let actual = self
            .fs
            .edit_text(
                &t,
                request,
                expected_version.as_ref(),
                policy.as_ref(),
                &signal,
            )
            .await;
        self.epoch += 1;
        self.stats.op_committed(actual.is_ok());
        if self.config.step_texts {
            rec.expected = match &expected {
                Ok((v, before, after)) => format!(
                    "Ok(version {v:?}, before {}, after {})",
                    show_bytes(before.as_bytes()),
                    show_bytes(after.as_bytes())
                ),
                Err(e) => format!("Err({} {:?})", e.code, e.message),
            };
            rec.actual = match &actual {
                Ok(o) => format!(
                    "Ok(version {:?}, before {}, after {})",
                    o.version.as_str(),
                    show_bytes(o.before.as_bytes()),
                    show_bytes(o.after.as_bytes())
                ),
                Err(e) => format!("Err({} {:?})", e.code(), e.message()),
            };
        }
        // The probe first: a competitor that could not be placed explains a fresh stat that
        // disagrees (it lands after the mutation), and is the diagnosis the author needs.
        self.probe_problems(&log)?;
        if let Ok(out) = &actual {
            self.fresh_stat(&t, &out.version).await?;
        }
        self.classify_fence(&r, step, &fence);
        if fence.denial.is_none() {
            self.classify_edit(&before, &step.interfere, &expected);
        }
        if expected.is_ok() && long_name(&r) {
            self.hit(Rule::WriteLongName);
        }
        if changed {
            self.hit(Rule::EditChangedMidEdit);
        }
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
                basis: basis.clone(),
            });
            h.observe(&m.0, &a.version, Some(&real))
        })
    }

    /// What a reader of `r` sees now, as the model says — for a step with readers at its
    /// checkpoints only (it copies the file).
    fn expect_if_read(&self, step: &Step, r: &Resolved) -> Option<Expect> {
        let parent = match r.display.rsplit_once('/') {
            Some(("", _)) | None => "/",
            Some((parent, _)) => parent,
        };
        matches!(step.interfere, Interfere::ReadersAtCheckpoints(_)).then(|| Expect {
            text: self.model.read_text_target(r).map_err(|e| e.code),
            bytes: self
                .model
                .read_bytes_target(r, READ_BYTES_CAP)
                .map_err(|e| e.code),
            names: Some(
                self.model
                    .list_dir(parent)
                    .map(|entries| entries.into_iter().map(|e| e.name).collect())
                    .map_err(|e| e.code),
            ),
        })
    }

    /// The readers of a step with readers at its checkpoints: the file before (`old`) and after
    /// the mutation as the model now says, through the instance the step names.
    fn readers(
        &self,
        step: &Step,
        target: &FsTarget,
        r: &Resolved,
        old: Option<Expect>,
    ) -> Result<Option<Readers>, crate::failure::Failure> {
        let (Interfere::ReadersAtCheckpoints(instance), Some(old)) = (&step.interfere, old) else {
            return Ok(None);
        };
        let fs = self.instance(*instance)?;
        let new = self.expect_if_read(step, r).unwrap_or_else(|| old.clone());
        Ok(Some(Readers {
            fs,
            instance: *instance,
            target: target.clone(),
            old,
            new,
            bytes: self.caps.read_bytes,
            wait: self.config.reader_wait,
            patience: self.patience[usize::from(*instance > 0)].clone(),
            pause_log: self.pause_log.clone(),
        }))
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

/// Whether the target's name is 200 bytes or longer (a staging name built from it may not fit).
fn long_name(r: &Resolved) -> bool {
    r.key.0.last().is_some_and(|n| n.len() >= 200)
}
