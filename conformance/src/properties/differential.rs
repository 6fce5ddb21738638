//! `differential`: the same generated sequences against this provider and a reference provider
//! it must behave exactly like (the sandbox with its fence open, against the local provider it
//! wraps; a new backend against an old one), step by step in normal form — the root written
//! `{root}`, version tokens as their classes — so that everything the model leaves open (a
//! message under `--messages code-only`, a listing's details, an error's wording) must agree too.
//! A divergence shrinks like any failure and replays from the trace on either provider.
//!
//! It runs when the composition names a reference (`SuiteConfig::reference`; `seam check` gives
//! the local provider to the sandbox and to `remote`, and `--against` any provider to any
//! other); otherwise it does not run, and says so.

use super::{Applicability, Context, Property, Run};
use crate::config::SuiteProgress;
use crate::failure::Failure;
use crate::sequences::{Subjects, run_sequences_watched};

/// `differential`.
pub struct Differential;

impl Property for Differential {
    fn name(&self) -> &'static str {
        "differential"
    }

    fn summary(&self) -> &'static str {
        "the same sequences against a reference provider give the same answers, step by step, in normal form"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        match &cx.config.reference {
            Some(_) => Applicability::Runs,
            None => Applicability::CannotRun(
                "no reference provider to compare with (seam check --against PROVIDER, SuiteConfig::reference in Rust)"
                    .into(),
            ),
        }
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let Some(reference) = cx.config.reference.clone() else {
            return Ok(());
        };
        out.detail = Some(format!("compared with {}", reference.name()));
        let subjects = Subjects {
            factory: cx.inner.clone(),
            reference: Some(reference),
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
        super::sequences::finish(cx, out, self.name(), outcome.failure)
    }
}
