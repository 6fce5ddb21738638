//! Targeted properties: the things generated sequences cannot reach cheaply. Most are fixed
//! scenarios run through the same harness (so every outcome, byte and version is still checked
//! against the model), plus an *intent* per step — the code the scenario exists to provoke — so
//! a scenario that drifted into testing nothing fails loudly instead of passing.

pub mod bad_input;
pub mod identity;
pub mod permissions;
pub mod races;
pub mod staging;

use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::harness::MessageCheck;
use crate::report::PropertyResult;
use crate::sequences::run_steps;
use crate::stats::Stats;
use crate::step::Step;
use crate::trace::{TRACE_FORMAT, Trace, TraceFailure};
use seam::FsErrorCode;
use tokio::runtime::Runtime;

/// What a scenario step is for: `Some(code)` must fail with it, `None` must succeed.
pub(crate) type Intent = (usize, Option<FsErrorCode>);

/// Everything a property needs to run.
pub struct Context<'a> {
    /// Makes subjects.
    pub factory: &'a dyn Factory,
    /// Drives async calls.
    pub rt: &'a Runtime,
    /// Message strictness.
    pub messages: MessageCheck,
    /// The run's seed.
    pub seed: u64,
    /// What the provider claims.
    pub caps: seam::Capabilities,
}

impl Context<'_> {
    pub(crate) fn options(&self) -> CaseOptions {
        CaseOptions {
            seed: self.seed,
            durability: CaseDurability::Full,
        }
    }
}

/// Runs `steps` and checks both the model agreement and the intents.
pub(crate) fn scenario(
    cx: &Context<'_>,
    name: &str,
    summary: &str,
    steps: Vec<Step>,
    intents: &[Intent],
    stats: &mut Stats,
) -> PropertyResult {
    let started = std::time::Instant::now();
    let fail = |message: String, upto: usize| {
        let mut r = PropertyResult::failed(name, summary, 0, message.clone());
        r.trace = Some(Trace {
            seam_trace: TRACE_FORMAT,
            provider: cx.factory.name(),
            property: name.into(),
            seed: cx.seed,
            steps: steps[..upto.min(steps.len())].to_vec(),
            failure: Some(TraceFailure {
                step: upto.saturating_sub(1),
                message,
            }),
        });
        r
    };
    let (records, run_stats) =
        match run_steps(cx.factory, cx.rt, &cx.options(), cx.messages, &steps, None) {
            Ok(r) => r,
            Err(e) => return PropertyResult::failed(name, summary, 0, e),
        };
    stats.merge(&run_stats);
    if let Some(r) = records.iter().find(|r| r.failure.is_some()) {
        return fail(
            format!(
                "step {} ({}): {}",
                r.index,
                r.description,
                r.failure.clone().unwrap_or_default()
            ),
            r.index + 1,
        );
    }
    for &(i, want) in intents {
        let Some(r) = records.get(i) else {
            return fail(format!("scenario step {i} did not run"), records.len());
        };
        if r.expected_code != want {
            return fail(
                format!(
                    "scenario drifted: step {i} ({}) was meant to {} but the model expects {}",
                    r.description,
                    want.map_or("succeed".to_string(), |c| format!("fail with {c}")),
                    r.expected_code
                        .map_or("success".to_string(), |c| c.to_string())
                ),
                i + 1,
            );
        }
    }
    let mut r = PropertyResult::passed(name, summary, run_stats.steps + intents.len() as u64);
    r.seconds = started.elapsed().as_secs_f64();
    r
}
