//! `sequences`: the generated-sequence property as a registry entry ([`crate::run_sequences`]
//! does the work).

use super::{Context, Generated, Property, Run};
use crate::config::SuiteProgress;
use crate::failure::Failure;
use crate::sequences::{Subjects, run_sequences_watched};
use crate::trace::Trace;

/// `sequences`.
pub struct Sequences;

impl Property for Sequences {
    fn name(&self) -> &'static str {
        "sequences"
    }

    fn summary(&self) -> &'static str {
        "generated sequences agree with the model: outcomes, messages, version laws, keys, fresh stats, bytes and modes on disk, no litter"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let subjects = Subjects {
            factory: cx.inner.clone(),
            reference: None,
            agent: None,
        };
        let outcome = run_sequences_watched(
            &subjects,
            &cx.config.sequences,
            cx.harness_config(),
            &cx.monitor,
            &mut |p| {
                if let Some(tx) = &cx.progress {
                    let _ = tx.send(SuiteProgress::Sequences(p));
                }
            },
        )?;
        out.stats.merge(&outcome.stats);
        out.generated = Some(Generated {
            cases: outcome.cases,
            full_durability_cases: outcome.full_durability_cases,
            configurations: outcome.configurations.clone(),
        });
        finish(cx, out, self.name(), outcome.failure)
    }
}

/// Turns the failure of generated sequences (if any) into the property's failure, with its
/// shrunk, replayable trace in `out`.
pub(super) fn finish(
    cx: &Context,
    out: &mut Run,
    property: &str,
    failure: Option<crate::sequences::SequenceFailure>,
) -> Result<(), Failure> {
    let Some(f) = failure else {
        return Ok(());
    };
    let at = f
        .records
        .last()
        .map(|r| r.description.clone())
        .unwrap_or_default();
    let failure = Failure::new(
        f.failure.kind,
        format!(
            "step {} ({at}): {}",
            f.steps.len().saturating_sub(1),
            f.failure.message
        ),
    );
    out.shrunk_from = Some(f.original_len);
    out.trace = Some(Trace::failing(
        cx.factory.name(),
        property,
        cx.config.sequences.seed,
        Some(f.configuration),
        f.steps,
        &f.failure,
    ));
    Err(failure)
}
