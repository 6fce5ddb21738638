//! The namespace operations on both sides: `create_dir`, guarded `remove`, atomic guarded
//! `rename`. Each step fences on the entry's parent (a fencing backend), runs the model and the
//! provider, compares the outcomes, checks the returned version against a fresh `lstat`, and
//! counts the rules its situation exercised. The world is read back after the step like after
//! any other, so a rename that copied, a remove that followed a link or a no-replace rename
//! that replaced shows on the raw bytes, kinds and modes.

use super::probe::ProbeLog;
use super::{Harness, StepRecord};
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Interfere, Step, VersionRef};
use seam::{
    CancelPoint, CreateDirOptions, FsError, FsPathKind, FsVersion, RemoveOptions, RenameOptions,
    Signal, Verb,
};
use seam_model::{ModelError, SnapEntry, Version};
use std::sync::{Arc, Mutex};

/// What a namespace step expects and got, shown for the record.
fn shown<T: std::fmt::Debug>(r: &Result<T, ModelError>) -> String {
    match r {
        Ok(v) => format!("Ok({v:?})"),
        Err(e) => format!("Err({} {:?})", e.code, e.message),
    }
}

fn shown_actual<T: std::fmt::Debug>(r: &Result<T, FsError>) -> String {
    match r {
        Ok(v) => format!("Ok({v:?})"),
        Err(e) => format!("Err({} {:?})", e.code(), e.message()),
    }
}

impl Harness {
    /// The signal of a namespace step: cancelled before it starts, or a probe that sees the
    /// checkpoints and cancels where the step says (with its log, to check after the call).
    fn ns_signal(&self, step: &Step) -> (Signal, Option<Arc<Mutex<ProbeLog>>>) {
        if step.interfere == Interfere::CancelledBeforeStart {
            let signal = Signal::new();
            signal.cancel();
            return (signal, None);
        }
        let (signal, log) = self.probe(&step.interfere, None, None);
        (signal, Some(log))
    }

    /// Where the step cancels the operation, for the model.
    fn ns_cancel(step: &Step) -> Option<CancelPoint> {
        match step.interfere {
            Interfere::CancelAt(p) => Some(p),
            _ => None,
        }
    }

    /// After the call: what the probe saw (checkpoints of a backend that does not claim them,
    /// problems placing anything), and the rule a cancel at a checkpoint exercised.
    fn ns_probed(&mut self, step: &Step, log: Option<Arc<Mutex<ProbeLog>>>) -> Check {
        if let Some(log) = &log {
            self.probe_problems(log)?;
        }
        if Self::ns_cancel(step).is_some() {
            self.hit(Rule::CancelNamespace);
        }
        Ok(())
    }

    /// A guard for an entry: a version seen earlier, or (`target`) the entry's version as
    /// `lstat` shows it on both sides right now. Never issued when there is none.
    async fn entry_guard(
        &mut self,
        r: VersionRef,
        path: &str,
        spelled: &str,
    ) -> Result<(Version, FsVersion), Failure> {
        let never = (
            Version::Object { n: u64::MAX },
            FsVersion::new(super::NEVER_ISSUED),
        );
        if r != VersionRef::Target {
            return Ok(self.recent(r, None));
        }
        let model = self.model.lstat(spelled).ok().flatten();
        let actual = self.fs.lstat(path, self.opts(), &Signal::none()).await;
        match (model, actual) {
            (Some(m), Ok(Some(a))) => {
                self.observe(&m.version, &a.version, None)?;
                Ok((m.version, a.version))
            }
            _ => Ok(never),
        }
    }

    /// After a success: the version a namespace operation returned must be what `lstat` of the
    /// entry says now.
    async fn fresh_lstat(&mut self, path: &str, version: &FsVersion) -> Check {
        self.stats.fresh_stats += 1;
        self.stats.check();
        match self.fs.lstat(path, self.opts(), &Signal::none()).await {
            Ok(Some(info)) if &info.version == version => {
                self.hit(Rule::VersionFreshStat);
                Ok(())
            }
            Ok(Some(info)) => Err(fail(
                FailureKind::FreshStat,
                format!(
                    "the operation returned version {:?} but a fresh lstat says {:?}",
                    version.as_str(),
                    info.version.as_str()
                ),
            )),
            Ok(None) => Err(fail(
                FailureKind::FreshStat,
                "the operation succeeded but a fresh lstat finds nothing",
            )),
            Err(e) => Err(fail(
                FailureKind::FreshStat,
                format!("a fresh lstat failed: {} {:?}", e.code(), e.message()),
            )),
        }
    }

    /// The fence's verdict on one end of a namespace operation, as an expected denial.
    fn ns_fence(&mut self, step: &Step, verb: Verb, spelled: &str) -> Option<ModelError> {
        let parent = self.model.fence_parent(verb, spelled)?;
        let (_, verdict) = self.fence_of(step, &parent);
        if verdict.case != seam_model::FenceCase::Unfenced {
            self.hit(Rule::NamespaceFenced);
        }
        if verdict.denial.is_some() {
            self.denied_root = Some(verdict.root.clone());
        }
        verdict.denial
    }

    /// The fence on both ends of a rename, the source's end first: each end is decided when its
    /// path names a place (a refused spelling or a loop comes first; a bad destination spelling
    /// is refused before anything is decided).
    fn rename_fence(&mut self, step: &Step, from: &str, to: &str) -> Option<ModelError> {
        self.model.fence_parent(Verb::Rename, from)?;
        if self.model.refuses(Verb::Rename, to) {
            return None;
        }
        if let Some(denied) = self.ns_fence(step, Verb::Rename, from) {
            return Some(denied);
        }
        self.ns_fence(step, Verb::Rename, to)
    }

    pub(super) async fn create_dir_step(
        &mut self,
        step: &Step,
        path: &str,
        request: CreateDirOptions,
        rec: &mut StepRecord,
    ) -> Check {
        let spelled = self.spelled(path);
        let (signal, log) = self.ns_signal(step);
        let policy = self.policy_of(step);
        let expected = if signal.is_cancelled() {
            Err(ModelError::from(FsError::aborted(Verb::Mkdir)))
        } else if let Some(denied) = self.ns_fence(step, Verb::Mkdir, &spelled) {
            Err(denied)
        } else {
            let missing = self
                .model
                .mkdir_place(&spelled, true)
                .map(|(_, m)| !m.is_empty())
                .unwrap_or(false);
            let before = self.model.lstat(&spelled).ok().flatten().map(|i| i.kind);
            let out = self.model.create_dir_cut(
                &spelled,
                request.parents,
                request.exist_ok,
                Self::ns_cancel(step),
            );
            match (&out, before) {
                (Ok(o), _) if o.created && missing => self.hit(Rule::MkdirParents),
                (Ok(o), _) if o.created => self.hit(Rule::MkdirCreated),
                (Ok(_), _) => self.hit(Rule::MkdirExists),
                (Err(e), _) if missing && e.code == seam::FsErrorCode::NotFound => {
                    self.hit(Rule::MkdirParents)
                }
                (Err(_), Some(FsPathKind::Directory)) => self.hit(Rule::MkdirExists),
                (Err(_), Some(_)) => self.hit(Rule::MkdirInTheWay),
                _ => {}
            }
            out
        };
        let actual = self
            .fs
            .create_dir(path, self.opts(), request, policy.as_ref(), &signal)
            .await;
        self.epoch += 1;
        self.stats.op_committed(actual.is_ok());
        if self.config.step_texts {
            rec.expected = shown(&expected);
            rec.actual = shown_actual(&actual);
        }
        self.ns_probed(step, log)?;
        if let Ok(o) = &actual {
            self.fresh_lstat(path, &o.version).await?;
        }
        self.outcome(&expected, &actual, |h, m, a| {
            if m.created != a.created {
                return Err(fail(
                    FailureKind::Outcome,
                    format!("created: expected {}, got {}", m.created, a.created),
                ));
            }
            h.observe(&m.version, &a.version, None)
        })
    }

    pub(super) async fn remove_step(
        &mut self,
        step: &Step,
        path: &str,
        guard: Option<VersionRef>,
        directory: bool,
        rec: &mut StepRecord,
    ) -> Check {
        let spelled = self.spelled(path);
        let (signal, log) = self.ns_signal(step);
        let policy = self.policy_of(step);
        let guard = match guard {
            Some(g) => Some(self.entry_guard(g, path, &spelled).await?),
            None => None,
        };
        let request = RemoveOptions {
            if_version: guard.as_ref().map(|(_, t)| t.clone()),
            directory,
        };
        let expected = if signal.is_cancelled() {
            Err(ModelError::from(FsError::aborted(Verb::Remove)))
        } else if let Some(denied) = self.ns_fence(step, Verb::Remove, &spelled) {
            Err(denied)
        } else {
            let before = self.model.lstat(&spelled).ok().flatten();
            let link_target = self
                .model
                .entry(Verb::Remove, &spelled)
                .ok()
                .flatten()
                .and_then(|e| match self.model.entry_at(&e.key) {
                    Some(SnapEntry::Symlink { .. }) => self.model.followed_entry(&e.key),
                    _ => None,
                });
            let out = self.model.remove_cut(
                &spelled,
                guard.as_ref().map(|(v, _)| *v),
                directory,
                Self::ns_cancel(step),
            );
            match (&out, before.map(|b| b.kind)) {
                (Err(e), Some(_)) if e.code == seam::FsErrorCode::StaleVersion => {
                    self.hit(Rule::RemoveStale)
                }
                (Ok(FsPathKind::Symlink), _) if link_target.is_some() => {
                    self.hit(Rule::RemoveLinkNotTarget)
                }
                (Ok(FsPathKind::File), _) => self.hit(Rule::RemoveFile),
                (_, Some(FsPathKind::Directory)) => self.hit(Rule::RemoveDirectory),
                _ => {}
            }
            out
        };
        let actual = self
            .fs
            .remove(path, self.opts(), &request, policy.as_ref(), &signal)
            .await;
        self.epoch += 1;
        self.stats.op_committed(actual.is_ok());
        if self.config.step_texts {
            rec.expected = shown(&expected);
            rec.actual = shown_actual(&actual);
        }
        self.ns_probed(step, log)?;
        self.outcome(&expected, &actual, |_, m, a| {
            super::same(FailureKind::Outcome, "kind removed", m, &a.kind)
        })
    }

    pub(super) async fn rename_step(
        &mut self,
        step: &Step,
        (from, to): (&str, &str),
        guard: Option<VersionRef>,
        replace: Option<VersionRef>,
        rec: &mut StepRecord,
    ) -> Check {
        let (sfrom, sto) = (self.spelled(from), self.spelled(to));
        let (signal, log) = self.ns_signal(step);
        let policy = self.policy_of(step);
        let guard = match guard {
            Some(g) => Some(self.entry_guard(g, from, &sfrom).await?),
            None => None,
        };
        let replace = match replace {
            Some(g) => Some(self.entry_guard(g, to, &sto).await?),
            None => None,
        };
        let request = RenameOptions {
            if_version: guard.as_ref().map(|(_, t)| t.clone()),
            replace: replace.as_ref().map(|(_, t)| t.clone()),
        };
        // Where the entry lands, by its real place: the destination's spelling may pass through
        // the very link that moved.
        let mut dest_real = None;
        let expected = if signal.is_cancelled() {
            Err(ModelError::from(FsError::aborted(Verb::Rename)))
        } else if let Some(denied) = self.rename_fence(step, &sfrom, &sto) {
            Err(denied)
        } else {
            dest_real = self
                .model
                .place(Verb::Rename, &sto)
                .ok()
                .map(|e| self.model.key_display(&e.key));
            let source = self.model.lstat(&sfrom).ok().flatten().map(|i| i.version);
            let source_stale = match (&guard, source) {
                (Some((g, _)), Some(v)) => *g != v,
                (Some(_), None) => true,
                (None, _) => false,
            };
            let out = self.model.rename_cut(
                &sfrom,
                &sto,
                guard.as_ref().map(|(v, _)| *v),
                replace.as_ref().map(|(v, _)| *v),
                Self::ns_cancel(step),
            );
            match &out {
                Ok(o) => {
                    self.hit(Rule::RenameMoves);
                    match o.kind {
                        FsPathKind::Symlink => self.hit(Rule::RenameLinkAsLink),
                        FsPathKind::Directory => self.hit(Rule::RenameDirectory),
                        _ => {}
                    }
                    if o.replaced {
                        self.hit(Rule::RenameReplaceGuarded);
                    }
                }
                Err(e) => match e.code {
                    seam::FsErrorCode::NotObserved => self.hit(Rule::RenameNoReplace),
                    seam::FsErrorCode::StaleVersion if source_stale => {
                        self.hit(Rule::RenameStaleSource)
                    }
                    seam::FsErrorCode::StaleVersion => self.hit(Rule::RenameReplaceGuarded),
                    seam::FsErrorCode::IoError if e.message.contains("into itself") => {
                        self.hit(Rule::RenameIntoItself)
                    }
                    _ => {}
                },
            }
            out
        };
        let actual = self
            .fs
            .rename(from, to, self.opts(), &request, policy.as_ref(), &signal)
            .await;
        self.epoch += 1;
        self.stats.op_committed(actual.is_ok());
        if self.config.step_texts {
            rec.expected = shown(&expected);
            rec.actual = shown_actual(&actual);
        }
        self.ns_probed(step, log)?;
        if let Ok(o) = &actual {
            let landed = dest_real.unwrap_or_else(|| to.to_string());
            self.fresh_lstat(&landed, &o.version).await?;
        }
        self.outcome(&expected, &actual, |h, m, a| {
            super::same(FailureKind::Outcome, "kind moved", &m.kind, &a.kind)?;
            super::same(FailureKind::Outcome, "replaced", &m.replaced, &a.replaced)?;
            h.observe(&m.version, &a.version, None)
        })
    }
}
