//! `policy`: the agent side under the same gate — two sessions reading, writing and editing
//! through the model-facing tools and the read-before-write policy, while the world changes
//! files behind their backs. Every tool call is checked against the model's observation gate
//! and every byte on disk as in `sequences`, and the policy's promises are checked as laws: no
//! session changes an existing file it has not observed at its current version, a stale
//! mutation leaves the file as it was, and after `FS_STALE_VERSION` the remedy (re-read, retry)
//! succeeds when nothing else changed — recreating a file that was deleted.
//!
//! It runs when the composition gives the suite an agent surface (`SuiteConfig::agent`; `seam
//! check` gives the shipped tools and policy); otherwise it does not run, and says so.

use super::{Applicability, Context, Property, Run};
use crate::config::SuiteProgress;
use crate::failure::Failure;
use crate::sequences::{SequenceConfig, Subjects, run_sequences_watched};
use crate::step::{Op, Step};
use seam_model::WorldOp;
use std::sync::Arc;

/// `policy`.
pub struct Policy;

impl Property for Policy {
    fn name(&self) -> &'static str {
        "policy"
    }

    fn summary(&self) -> &'static str {
        "tool calls by two sessions agree with the observation gate: nothing unobserved changes, stale changes nothing, re-read and retry succeed"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        if cx.config.agent.is_some() {
            Applicability::Runs
        } else {
            Applicability::CannotRun("no agent surface was given (SuiteConfig::agent; seam check gives the shipped tools and policy)".into())
        }
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let Some(agent) = cx.config.agent.clone() else {
            return Ok(());
        };
        // Half the breadth of the provider's sequences, shorter: the situations are fewer.
        let config = SequenceConfig {
            cases: (cx.config.sequences.cases / 2).max(1),
            max_steps: cx.config.sequences.max_steps.min(24),
            ..cx.config.sequences.clone()
        };
        // The aimed cases first, the same at every seed: the situations the policy's rules
        // need lined up (a windowed read then an edit; a file deleted under a session, the
        // stale retry, the re-read that finds nothing, and the write that recreates it).
        let rt = cx.runtime()?;
        for (what, steps) in aimed() {
            let steps: Arc<[Step]> = steps.into();
            let (records, stats) = crate::sequences::run_watched(
                cx.factory.as_ref(),
                &rt,
                &cx.options(),
                cx.harness_config(),
                &steps,
                Some(&cx.monitor),
                None,
                Some(agent.as_ref()),
            )?;
            out.stats.merge(&stats);
            if let Some(failure) = records.last().and_then(|r| r.failure.clone()) {
                let at = records.len() - 1;
                let description = records[at].description.clone();
                out.trace = Some(cx.trace(self.name(), steps[..=at].to_vec(), &failure));
                return Err(Failure::new(
                    failure.kind,
                    format!(
                        "step {at} ({description}): {} — the aimed case of {what}",
                        failure.message
                    ),
                ));
            }
        }
        let subjects = Subjects {
            factory: cx.inner.clone(),
            reference: None,
            agent: Some(agent),
        };
        let outcome = run_sequences_watched(
            &subjects,
            &config,
            cx.harness_config(),
            &cx.monitor,
            &mut |p| {
                if let Some(tx) = &cx.progress {
                    let _ = tx.send(SuiteProgress::Sequences(p));
                }
            },
        )?;
        out.stats.merge(&outcome.stats);
        super::sequences::finish(cx, out, self.name(), outcome.failure)
    }
}

/// The aimed cases of the policy, each a situation and what it is for.
fn aimed() -> Vec<(&'static str, Vec<Step>)> {
    let world_write = |path: &str, text: &str| {
        Step::plain(Op::World(WorldOp::Write {
            path: path.into(),
            bytes: text.as_bytes().to_vec().into(),
            mode: 0o644,
        }))
    };
    let read = |path: &str, window: bool| {
        Step::plain(Op::AgentRead {
            owner: 0,
            path: path.into(),
            window,
        })
    };
    let write = |path: &str| {
        Step::plain(Op::AgentWrite {
            owner: 0,
            path: path.into(),
            content: "new\n".into(),
        })
    };
    vec![
        (
            "an edit after a windowed read",
            vec![
                world_write("a", "one\ntwo\nthree\nfour\nfive\n"),
                read("a", true),
                Step::plain(Op::AgentEdit {
                    owner: 0,
                    path: "a".into(),
                    old: "two".into(),
                    new: "2".into(),
                    replace_all: false,
                }),
            ],
        ),
        (
            "a file deleted under a session, then recreated",
            vec![
                world_write("a", "one\n"),
                read("a", false),
                Step::plain(Op::World(WorldOp::Remove { path: "a".into() })),
                write("a"),
                read("a", false),
                write("a"),
            ],
        ),
        (
            "one session reads, the other writes",
            vec![
                world_write("b", "one\n"),
                read("b", false),
                Step::plain(Op::AgentWrite {
                    owner: 1,
                    path: "b".into(),
                    content: "theirs\n".into(),
                }),
            ],
        ),
    ]
}
