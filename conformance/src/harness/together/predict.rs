//! What the model says a group's calls return, and the one-to-one mapping of its versions to
//! the provider's that every explaining order must keep.

use super::READ_BYTES_MAX;
use super::seen::{Content, Job, Seen};
use crate::step::Op;
use seam::{FsErrorCode, FsVersion};
use seam_model::{Interference, Model, ModelError, Version};
use std::collections::HashMap;

pub(super) fn model_failed(e: &ModelError) -> (Seen, Option<Version>) {
    (Seen::Failed(e.code, e.message.clone()), None)
}

/// What the model says `job` returns from `model`'s state (mutating it for a mutation).
pub(super) fn predict(model: &mut Model, job: &Job) -> (Seen, Option<Version>) {
    let r = &job.resolved;
    match &job.op {
        Op::Write { content, .. } => {
            match model
                .write_target(r, content, job.model_guard, &Interference::None)
                .outcome
            {
                Ok(w) => (
                    Seen::Wrote {
                        operation: w.operation,
                        before: w.before,
                        after: w.after,
                    },
                    Some(w.version),
                ),
                Err(e) => model_failed(&e),
            }
        }
        Op::Edit {
            old,
            new,
            replace_all,
            ..
        } => match model.edit_target(
            r,
            old,
            new,
            *replace_all,
            job.model_edit_guard,
            &Interference::None,
        ) {
            Ok((v, before, after)) => (Seen::Edited { before, after }, Some(v)),
            Err(e) => model_failed(&e),
        },
        Op::Remove { directory, .. } => {
            match model.remove(&r.display, job.model_edit_guard, *directory) {
                Ok(kind) => (Seen::Removed(kind), None),
                Err(e) => model_failed(&e),
            }
        }
        Op::Rename { .. } => match model.rename(
            &r.display,
            job.to.as_deref().unwrap_or_default(),
            job.model_edit_guard,
            job.replace.as_ref().map(|(_, m)| *m),
        ) {
            Ok(o) => (
                Seen::Renamed {
                    kind: o.kind,
                    replaced: o.replaced,
                },
                Some(o.version),
            ),
            Err(e) => model_failed(&e),
        },
        _ => predict_read(model, job),
    }
}

/// What the model says a read or a stat returns from `model`'s state (it changes nothing, so
/// it needs no copy of the model).
pub(super) fn predict_read(model: &Model, job: &Job) -> (Seen, Option<Version>) {
    let r = &job.resolved;
    match &job.op {
        Op::ReadText { .. } | Op::StreamText { .. } => match model.read_text_target(r) {
            Ok(t) => (Seen::Read(Content::of(t.as_bytes())), None),
            Err(e) => model_failed(&e),
        },
        Op::ReadBytes { max, .. } => match model.read_bytes_target(r, (*max).min(READ_BYTES_MAX)) {
            Ok(b) => (Seen::Read(Content::of(&b)), None),
            Err(e) => model_failed(&e),
        },
        Op::Stat { .. } => match model.stat_target(r) {
            Ok(info) => {
                let v = info.as_ref().map(|i| i.version);
                (Seen::Stat(info.map(|i| (i.kind, i.size))), v)
            }
            Err(e) => model_failed(&e),
        },
        Op::ListDir { .. } => match model.list_dir_target(r) {
            Ok(entries) => (
                Seen::listed(entries.into_iter().map(|e| (e.name, e.kind, e.size))),
                None,
            ),
            Err(e) => model_failed(&e),
        },
        // Refused before the group runs (`check_shape`); a mutation goes through `predict`.
        _ => (
            Seen::Failed(FsErrorCode::IoError, "not a step a group reads with".into()),
            None,
        ),
    }
}

/// What the model says a call returns, with the version it carries.
pub(super) type Predicted = (Seen, Option<Version>);

/// A one-to-one mapping between model versions and provider versions.
#[derive(Clone, Default)]
pub(super) struct Versions {
    pub(super) forward: HashMap<Version, FsVersion>,
    pub(super) backward: HashMap<FsVersion, Version>,
}

impl Versions {
    pub(super) fn pair(
        &mut self,
        model: Option<Version>,
        seen: Option<&FsVersion>,
    ) -> Result<(), String> {
        let (m, s) = match (model, seen) {
            (Some(m), Some(s)) => (m, s),
            (None, None) => return Ok(()),
            (m, s) => {
                return Err(format!(
                    "version presence differs: model {m:?}, provider {:?}",
                    s.map(FsVersion::as_str)
                ));
            }
        };
        if let Some(v) = self.forward.get(&m)
            && v != s
        {
            return Err(format!(
                "one state has two versions ({} and {})",
                v.as_str(),
                s.as_str()
            ));
        }
        if let Some(other) = self.backward.get(s)
            && *other != m
        {
            return Err(format!(
                "version {} stands for two different states",
                s.as_str()
            ));
        }
        self.forward.insert(m, s.clone());
        self.backward.insert(s.clone(), m);
        Ok(())
    }
}

/// Every order of `0..n`.
pub(super) fn permutations(n: usize) -> Vec<Vec<usize>> {
    pub(super) fn go(rest: &mut Vec<usize>, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if rest.is_empty() {
            out.push(prefix.clone());
            return;
        }
        for i in 0..rest.len() {
            let x = rest.remove(i);
            prefix.push(x);
            go(rest, prefix, out);
            prefix.pop();
            rest.insert(i, x);
        }
    }
    let mut out = Vec::new();
    go(&mut (0..n).collect(), &mut Vec::new(), &mut out);
    out
}
