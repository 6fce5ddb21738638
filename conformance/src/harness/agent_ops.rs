//! Tool calls through the agent surface, against the model's observation gate: a read records
//! what its session saw, a write is guarded by it, an edit is refused or guarded by it. Codes are
//! compared (the tools' texts carry remedies the contract does not define); the bytes on disk are
//! read back as after every step. Beside the model, the policy's promises are checked as laws:
//! a stale mutation leaves the file as it was, and after `FS_STALE_VERSION` the remedy — re-read,
//! retry — succeeds when nothing else changed in between.

use super::laws::PendingLaw;
use super::{Harness, StepRecord};
use crate::agent::AgentError;
use crate::failure::{Check, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Op, render_path};
use seam::{FsError, FsErrorCode, FsKind, Verb};
use seam_model::{Guard, Interference, Key, ModelError, Resolved, Seen};

/// What happened to one session's view of one file, for the remedy law.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Track {
    /// The session's last mutation of the file was stale.
    stale: bool,
    /// It re-read the file since, when the world was at this change count; `true` when the
    /// re-read found nothing.
    reread: Option<(u64, bool)>,
    /// Its view of the file came from a windowed read.
    windowed: bool,
}

fn show(r: &Result<(), AgentError>) -> String {
    match r {
        Ok(()) => "Ok".into(),
        Err(e) => format!("Err({} {:?})", e.code, e.message),
    }
}

fn show_model(r: &Result<(), ModelError>) -> String {
    match r {
        Ok(()) => "Ok".into(),
        Err(e) => format!("Err({} {:?})", e.code, e.message),
    }
}

impl Harness {
    fn compare_agent(
        &mut self,
        view: &str,
        what: &str,
        expected: &Result<(), ModelError>,
        actual: &Result<(), AgentError>,
    ) -> Check {
        self.last_expected_code = expected.as_ref().err().map(|e| e.code);
        self.stats.check();
        let gate =
            |c: FsErrorCode| matches!(c, FsErrorCode::NotObserved | FsErrorCode::StaleVersion);
        match (expected, actual) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(m), Err(a)) if m.code == a.code => {
                self.stats.code(a.code);
                Ok(())
            }
            (Err(m), Ok(())) if gate(m.code) => Err(fail(
                FailureKind::Policy,
                format!(
                    "the policy let {what} through{}: the model expects {}, the tool answered Ok",
                    view,
                    show_model(expected)
                ),
            )),
            (Ok(()), Err(a)) if gate(a.code) => Err(fail(
                FailureKind::Policy,
                format!(
                    "the policy refused {what}{}: the model expects Ok, the tool answered {}",
                    view,
                    show(actual)
                ),
            )),
            (Err(m), Err(a)) if gate(m.code) || gate(a.code) => Err(fail(
                FailureKind::Policy,
                format!(
                    "the policy answered {what} with another code{}: the model expects {}, the tool answered {}",
                    view,
                    show_model(expected),
                    show(actual)
                ),
            )),
            _ => Err(fail(
                FailureKind::Outcome,
                format!(
                    "{what}: the model expects {}, the tool answered {}",
                    show_model(expected),
                    show(actual)
                ),
            )),
        }
    }

    /// What the session, and the other, had observed of `path`, for a failure's message.
    fn whose_view(&self, owner: u8, path: &str) -> &'static str {
        let Ok(r) = self.model.resolve(path) else {
            return "";
        };
        let current = self.model.stat_target(&r).ok().flatten().map(|i| i.version);
        match self.observations.seen(owner, &r.key) {
            None if self.observations.seen_by_other(owner, &r.key) => {
                " (its session never observed the file; the other session did)"
            }
            None => " (no session observed the file)",
            Some(Seen::Absent) => " (its session saw nothing there)",
            Some(Seen::Present(v)) if Some(v) == current => {
                " (its session saw the file at its current version)"
            }
            Some(Seen::Present(_)) => " (its session saw an older version of the file)",
        }
    }

    pub(super) async fn agent_step(&mut self, op: &Op, rec: &mut StepRecord) -> Check {
        let Some(agent) = self.agent.clone() else {
            return Err(fail(
                FailureKind::Setup,
                "an agent step needs an agent surface (SuiteConfig::agent)",
            ));
        };
        let root = self.root.clone();
        match op {
            Op::AgentRead {
                owner,
                path,
                window,
            } => {
                let path = render_path(path, &root);
                // What the sessions had seen before the call, for a failure's message.
                let view = self.whose_view(*owner, &path);
                let (expected, key) = self.model_agent_read(*owner, &path);
                let actual = agent.read(*owner, &path, window.then_some((1, 3))).await;
                rec.expected = show_model(&expected);
                rec.actual = show(&actual);
                self.compare_agent(view, &format!("read {path:?}"), &expected, &actual)?;
                if let Some(key) = key
                    && matches!(&expected, Ok(()))
                        | matches!(&expected, Err(e) if e.code == FsErrorCode::NotFound)
                {
                    let at = self.epoch;
                    let t = self.tracks.entry((*owner, key)).or_default();
                    t.windowed = *window && expected.is_ok();
                    if t.stale {
                        t.reread = Some((at, expected.is_err()));
                    }
                }
                Ok(())
            }
            Op::AgentWrite {
                owner,
                path,
                content,
            } => {
                let path = render_path(path, &root);
                // What the sessions had seen before the call, for a failure's message.
                let view = self.whose_view(*owner, &path);
                let before = self.agent_situation(*owner, &path);
                let (expected, key) = self.model_agent_write(*owner, &path, content);
                let actual = agent.write(*owner, &path, content).await;
                rec.expected = show_model(&expected);
                rec.actual = show(&actual);
                // The policy's laws first: they judge the tool's answer without the model.
                self.agent_laws(*owner, key, before, &actual, false, view)?;
                self.compare_agent(view, &format!("write {path:?}"), &expected, &actual)
            }
            Op::AgentEdit {
                owner,
                path,
                old,
                new,
                replace_all,
            } => {
                let path = render_path(path, &root);
                // What the sessions had seen before the call, for a failure's message.
                let view = self.whose_view(*owner, &path);
                let before = self.agent_situation(*owner, &path);
                let (expected, key) = self.model_agent_edit(*owner, &path, old, new, *replace_all);
                let actual = agent.edit(*owner, &path, old, new, *replace_all).await;
                rec.expected = show_model(&expected);
                rec.actual = show(&actual);
                // The policy's laws first: they judge the tool's answer without the model.
                self.agent_laws(*owner, key, before, &actual, true, view)?;
                self.compare_agent(view, &format!("edit {path:?}"), &expected, &actual)
            }
            _ => Ok(()),
        }
    }

    /// Whether the file existed before a mutation, and what the session had seen of it.
    fn agent_situation(&self, owner: u8, path: &str) -> Option<(bool, bool, Option<Seen>)> {
        let r = self.model.resolve(path).ok()?;
        let exists = matches!(
            self.model.followed_entry(&r.key),
            Some(seam_model::SnapEntry::File { .. })
        );
        let current = self.model.stat_target(&r).ok().flatten().map(|i| i.version);
        let seen = self.observations.seen(owner, &r.key);
        let at_current = matches!((seen, current), (Some(Seen::Present(v)), Some(c)) if v == c);
        Some((exists, at_current, seen))
    }

    fn agent_laws(
        &mut self,
        owner: u8,
        key: Option<Key>,
        before: Option<(bool, bool, Option<Seen>)>,
        actual: &Result<(), AgentError>,
        edit: bool,
        view: &str,
    ) -> Check {
        let Some(key) = key else {
            return Ok(());
        };
        // The laws judge what the tool answered; only the situation before the call comes from
        // the model's world (did the file exist, what had the session seen).
        let code = actual.as_ref().err().map(|e| e.code);
        if let Some((exists, at_current, seen)) = before {
            // The policy's promise: an existing file changes only for a session that saw it at
            // its current version.
            if exists && !at_current {
                self.stats.check();
                if code.is_none() {
                    return Err(fail(
                        FailureKind::Policy,
                        format!(
                            "a {} changed a file its session had not observed at its current version{view}",
                            if edit { "edit" } else { "write" }
                        ),
                    ));
                }
                self.hit(Rule::PolicyUnobservedRefused);
            }
            if exists && seen.is_none() && code == Some(FsErrorCode::NotObserved) {
                self.hit(Rule::PolicyOwnersSeparate);
            }
        }
        if code == Some(FsErrorCode::StaleVersion) {
            self.pending_laws.push(PendingLaw::Unchanged {
                rel: Harness::rel(&self.model.real_key(&key).unwrap_or(key.clone())),
            });
            self.hit(Rule::PolicyStaleUnchanged);
        }
        let now = self.epoch;
        let t = self.tracks.entry((owner, key.clone())).or_default();
        let track = *t;
        match code {
            Some(FsErrorCode::StaleVersion) => {
                *t = Track {
                    stale: true,
                    ..Track::default()
                };
            }
            None => {
                *t = Track::default();
            }
            _ => {}
        }
        if code.is_none() {
            self.epoch += 1;
            if track.windowed && edit {
                self.hit(Rule::PolicyWindowedReadAuthorises);
            }
        }
        if let (true, Some((at, absent))) = (track.stale, track.reread)
            && at == now
        {
            // Stale, re-read, nothing at all changed since (no world change, no mutation): the
            // retry must go through.
            self.stats.check();
            if matches!(
                code,
                Some(FsErrorCode::StaleVersion | FsErrorCode::NotObserved)
            ) {
                return Err(fail(
                    FailureKind::Policy,
                    format!(
                        "the remedy failed: after FS_STALE_VERSION and a re-read, with nothing changed since, the retry was refused ({})",
                        code.map_or("?", FsErrorCode::as_str)
                    ),
                ));
            }
            if code.is_none() {
                self.hit(if absent {
                    Rule::PolicyRecreateAfterDelete
                } else {
                    Rule::PolicyRemedy
                });
            }
        }
        Ok(())
    }

    fn resolve_for_agent(&self, path: &str) -> Result<Resolved, ModelError> {
        self.model.resolve(path)
    }

    /// The model of the `read` tool: one stat; absent is recorded before failing; a file read
    /// whole is recorded present at the stat's version.
    fn model_agent_read(&mut self, owner: u8, path: &str) -> (Result<(), ModelError>, Option<Key>) {
        let r = match self.resolve_for_agent(path) {
            Ok(r) => r,
            Err(e) => return (Err(e), None),
        };
        let key = Some(r.key.clone());
        let info = match self.model.stat_target(&r) {
            Ok(i) => i,
            Err(e) => return (Err(e), key),
        };
        let result = match info {
            None => {
                self.observations.record(owner, &r.key, Seen::Absent);
                Err(FsError::not_found(Verb::Read, &r.display).into())
            }
            Some(i) if i.kind != FsKind::File => {
                Err(FsError::not_regular_file(Verb::Read, &r.display).into())
            }
            Some(i) => match self.model.read_text_target(&r) {
                Ok(_) => {
                    self.observations
                        .record(owner, &r.key, Seen::Present(i.version));
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        (result, key)
    }

    /// The model of the `write` tool: the session's view picks the guard.
    fn model_agent_write(
        &mut self,
        owner: u8,
        path: &str,
        content: &str,
    ) -> (Result<(), ModelError>, Option<Key>) {
        let r = match self.resolve_for_agent(path) {
            Ok(r) => r,
            Err(e) => return (Err(e), None),
        };
        let guard: Guard = self.observations.write_guard(owner, &r.key);
        let result = self
            .model
            .write_target(&r, content, Some(guard), &Interference::None);
        match result.outcome {
            Ok(w) => {
                self.observations
                    .record(owner, &r.key, Seen::Present(w.version));
                (Ok(()), Some(r.key))
            }
            Err(e) => (Err(e), Some(r.key)),
        }
    }

    /// The model of the `edit` tool: refused unless the session saw the file; guarded by what
    /// it saw.
    fn model_agent_edit(
        &mut self,
        owner: u8,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> (Result<(), ModelError>, Option<Key>) {
        let r = match self.resolve_for_agent(path) {
            Ok(r) => r,
            Err(e) => return (Err(e), None),
        };
        let version = match self.observations.edit_guard(owner, &r) {
            Ok(v) => v,
            Err(e) => return (Err(e), Some(r.key)),
        };
        match self.model.edit_target(
            &r,
            old,
            new,
            replace_all,
            Some(version),
            &Interference::None,
        ) {
            Ok((v, _, _)) => {
                self.observations.record(owner, &r.key, Seen::Present(v));
                (Ok(()), Some(r.key))
            }
            Err(e) => (Err(e), Some(r.key)),
        }
    }
}
