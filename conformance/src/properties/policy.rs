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
use crate::failure::Failure;
use crate::sequences::{SequenceConfig, Subjects, run_sequences_watched};
use crate::suite::SuiteProgress;

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
