//! Every operation of the trait called with a signal that was cancelled before the call: it must
//! fail `FS_ABORTED` with `<verb> aborted` and change nothing (the world is read back after the
//! step as always). The target, when the operation takes one, is resolved normally first, so
//! the cancellation check of the operation itself is what is tested — not only `resolve`'s.

use super::{Harness, StepRecord};
use crate::failure::{Check, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Op, Step, render_path};
use futures_util::StreamExt;
use seam::{EditRequest, FsError, Signal, Verb};
use seam_model::ModelError;

impl Harness {
    pub(super) async fn cancelled_before_start(
        &mut self,
        step: &Step,
        rec: &mut StepRecord,
    ) -> Check {
        let cancelled = Signal::new();
        cancelled.cancel();
        let root = self.root.clone();
        let Some(path) = step.op.path().map(|p| render_path(p, &root)) else {
            return Ok(());
        };
        let (verb, rule, result): (Verb, Rule, Result<(), FsError>) = match &step.op {
            Op::Resolve { .. } => (
                Verb::Resolve,
                Rule::CancelResolve,
                self.fs
                    .resolve(&path, self.opts(), &cancelled)
                    .await
                    .map(|_| ()),
            ),
            Op::Lstat { .. } => (
                Verb::Lstat,
                Rule::CancelLstat,
                self.fs
                    .lstat(&path, self.opts(), &cancelled)
                    .await
                    .map(|_| ()),
            ),
            op => {
                let Some((t, _)) = self.target_of(step, &path, rec).await? else {
                    return Ok(());
                };
                let policy = self.policy_of(step);
                match op {
                    Op::Stat { .. } => (
                        Verb::Stat,
                        Rule::CancelStat,
                        self.fs.stat(&t, &cancelled).await.map(|_| ()),
                    ),
                    Op::ReadText { .. } => (
                        Verb::Read,
                        Rule::CancelReadText,
                        self.fs.read_text(&t, &cancelled).await.map(|_| ()),
                    ),
                    Op::StreamText { .. } => {
                        let r = match self.fs.stream_text(&t, &cancelled).await {
                            Ok(mut s) => match s.next().await {
                                Some(Err(e)) => Err(e),
                                Some(Ok(chunk)) => {
                                    return Err(fail(
                                        FailureKind::Outcome,
                                        format!(
                                            "stream_text with a cancelled signal yielded text ({} bytes) instead of FS_ABORTED",
                                            chunk.len()
                                        ),
                                    ));
                                }
                                None => Ok(()),
                            },
                            Err(e) => Err(e),
                        };
                        (Verb::Read, Rule::CancelStreamText, r)
                    }
                    Op::ReadBytes { max, .. } => (
                        Verb::Read,
                        Rule::CancelReadBytes,
                        self.fs.read_bytes(&t, *max, &cancelled).await.map(|_| ()),
                    ),
                    Op::ListDir { .. } => (
                        Verb::List,
                        Rule::CancelListDir,
                        self.fs.list_dir(&t, &cancelled).await.map(|_| ()),
                    ),
                    Op::Write { content, .. } => (
                        Verb::Write,
                        Rule::CancelWrite,
                        self.fs
                            .write_text(&t, content, None, policy.as_ref(), &cancelled)
                            .await
                            .map(|_| ()),
                    ),
                    Op::Edit {
                        old,
                        new,
                        replace_all,
                        ..
                    } => {
                        let request = EditRequest {
                            old_string: old.clone(),
                            new_string: new.clone(),
                            replace_all: *replace_all,
                        };
                        (
                            Verb::Edit,
                            Rule::CancelEdit,
                            self.fs
                                .edit_text(&t, &request, None, policy.as_ref(), &cancelled)
                                .await
                                .map(|_| ()),
                        )
                    }
                    Op::Resolve { .. }
                    | Op::Lstat { .. }
                    | Op::Facts { .. }
                    | Op::World(_)
                    | Op::AgentRead { .. }
                    | Op::AgentWrite { .. }
                    | Op::AgentEdit { .. }
                    | Op::CreateDir { .. }
                    | Op::Remove { .. }
                    | Op::Rename { .. }
                    | Op::Together { .. } => {
                        return Ok(());
                    }
                }
            }
        };
        let expected = ModelError::from(FsError::aborted(verb));
        rec.expected = format!("{} {:?}", expected.code, expected.message);
        rec.actual = format!("{result:?}");
        self.outcome(&Err::<(), _>(expected), &result, |_, _, _| Ok(()))?;
        self.hit(rule);
        Ok(())
    }
}
