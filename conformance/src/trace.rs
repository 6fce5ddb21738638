//! Saved counterexamples: a JSON trace of steps that `seam replay` (or [`replay`]) runs against
//! any provider, stopping where it departs from the model.
//!
//! Format 2 adds the factory configuration the case ran in and the failure's kind; format 3 adds
//! steps that run at the same time (`together`, in lanes), the instance a step runs on, and
//! readers at a mutation's checkpoints. Older traces are still read (format 1 in the factory's
//! first configuration).

use crate::agent::AgentFactory;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::harness::{HarnessConfig, MessageCheck, StepRecord};
use crate::sequences::{Subjects, run_case_supervised};
use crate::step::{Op, Step};
use crate::timing::Timing;
use crate::watch::Monitor;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The format version written into every trace.
pub const TRACE_FORMAT: u32 = 3;

/// The oldest format this version still reads.
const OLDEST_FORMAT: u32 = 1;

/// Where and why a traced run failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceFailure {
    /// The failing step (0-based).
    pub step: usize,
    /// What went wrong.
    pub message: String,
    /// Why, as a type (absent in format 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FailureKind>,
}

/// A replayable sequence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The format, [`TRACE_FORMAT`] when written.
    pub seam_trace: u32,
    /// The provider it was found against.
    pub provider: String,
    /// The property that failed.
    pub property: String,
    /// The case seed (staging names and other provider randomness).
    pub seed: u64,
    /// The factory configuration the case ran in (the first one when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<String>,
    /// The steps.
    pub steps: Vec<Step>,
    /// The failure seen when it was saved; `None` for a regression case that now passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<TraceFailure>,
}

/// Why a trace file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Not JSON, or not a trace.
    #[error("not a seam trace: {0}")]
    Malformed(String),
    /// A trace of a format this version does not read.
    #[error(
        "trace format {0} is not supported (this seam reads formats {OLDEST_FORMAT} to {TRACE_FORMAT})"
    )]
    Version(u32),
}

impl Trace {
    /// A trace of `steps` that failed at the last one.
    pub fn failing(
        provider: String,
        property: &str,
        seed: u64,
        configuration: Option<String>,
        steps: Vec<Step>,
        failure: &Failure,
    ) -> Trace {
        Trace {
            seam_trace: TRACE_FORMAT,
            provider,
            property: property.to_string(),
            seed,
            configuration,
            failure: Some(TraceFailure {
                step: steps.len().saturating_sub(1),
                message: failure.message.clone(),
                kind: Some(failure.kind),
            }),
            steps,
        }
    }

    /// The same trace, failing at its last step for `failure` instead.
    pub fn fail_with(&mut self, failure: &Failure) {
        let step = self.steps.len().saturating_sub(1);
        self.failure = Some(TraceFailure {
            step,
            message: failure.message.clone(),
            kind: Some(failure.kind),
        });
    }

    /// Parses a trace.
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let trace: Trace =
            serde_json::from_str(text).map_err(|e| TraceError::Malformed(e.to_string()))?;
        if !(OLDEST_FORMAT..=TRACE_FORMAT).contains(&trace.seam_trace) {
            return Err(TraceError::Version(trace.seam_trace));
        }
        Ok(trace)
    }

    /// Whether the trace runs steps at the same time (a group of lanes).
    pub fn is_concurrent(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.op, Op::Together { .. }))
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// How a trace is replayed.
#[derive(Clone, Copy, Debug)]
pub struct ReplayConfig {
    /// How strictly messages are compared.
    pub messages: MessageCheck,
    /// When a call is slow, and when it hangs (a replayed hang fails at the step, not forever).
    pub timing: Timing,
    /// How many times the trace is run, each on a fresh subject, until it departs: a trace that
    /// runs steps at the same time (a race) does not depart on every run.
    pub attempts: u32,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        Self {
            messages: MessageCheck::Exact,
            timing: Timing::default(),
            attempts: 1,
        }
    }
}

impl ReplayConfig {
    /// The attempts a trace gets by default: one, or a hundred when it runs steps at the same
    /// time (a race that an in-memory backend loses once in seventy runs must still show).
    pub fn attempts_for(trace: &Trace) -> u32 {
        if trace.is_concurrent() { 100 } else { 1 }
    }
}

/// What a replay found.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    /// Every step of the last run, up to its first departure.
    pub records: Vec<StepRecord>,
    /// The runs made (the last one departed, or every one followed the model).
    pub attempts: u32,
}

impl ReplayOutcome {
    /// The first step that departed from the model, if any.
    pub fn departure(&self) -> Option<&StepRecord> {
        self.records.iter().find(|r| r.failure.is_some())
    }
}

/// Runs a trace step by step against fresh subjects from `factory`.
pub fn replay(
    factory: Arc<dyn Factory>,
    trace: &Trace,
    config: &ReplayConfig,
) -> Result<ReplayOutcome, Failure> {
    replay_with(factory, None, trace, config)
}

/// [`replay`], with an agent surface for a trace that has agent steps (a `policy` trace).
pub fn replay_with(
    factory: Arc<dyn Factory>,
    agent: Option<Arc<dyn AgentFactory>>,
    trace: &Trace,
    config: &ReplayConfig,
) -> Result<ReplayOutcome, Failure> {
    config
        .timing
        .validate()
        .map_err(|e| Failure::new(FailureKind::Setup, format!("bad timing: {e}")))?;
    let configuration = match &trace.configuration {
        Some(c) => c.clone(),
        None => factory
            .configurations()
            .first()
            .cloned()
            .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string()),
    };
    let options = CaseOptions::new(trace.seed, CaseDurability::Full, configuration);
    let harness = HarnessConfig {
        messages: config.messages,
        checkpoint_wait: config.timing.hang_after / 2,
        ..HarnessConfig::default()
    };
    let subjects = Subjects {
        factory,
        reference: None,
        agent,
    };
    let monitor = Monitor::new(config.timing);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let (records, _) = run_case_supervised(
            &subjects,
            &monitor,
            false,
            &options,
            harness,
            &trace.steps.as_slice().into(),
            None,
        )?;
        let departed = records.iter().any(|r| r.failure.is_some());
        if departed || attempts >= config.attempts.max(1) {
            return Ok(ReplayOutcome { records, attempts });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_and_future_traces_are_refused_with_a_reason() {
        assert!(matches!(Trace::parse("{"), Err(TraceError::Malformed(_))));
        assert!(matches!(
            Trace::parse(r#"{"x":1}"#),
            Err(TraceError::Malformed(_))
        ));
        let future = r#"{"seam_trace":9,"provider":"p","property":"x","seed":1,"steps":[]}"#;
        assert!(matches!(Trace::parse(future), Err(TraceError::Version(9))));
        let old = r#"{"seam_trace":1,"provider":"p","property":"x","seed":1,"steps":[{"op":"stat","path":"a"}]}"#;
        let t = Trace::parse(old).expect("format 1 still parses");
        assert_eq!((t.steps.len(), t.configuration), (1, None));
    }
}
