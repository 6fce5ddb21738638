//! Saved counterexamples: a JSON trace of steps that `seam replay` (or [`replay`]) runs against
//! any provider, stopping where it departs from the model.
//!
//! Format 2 adds the factory configuration the case ran in and the failure's kind; format 1
//! traces (without them) are still read, in the factory's first configuration.

use crate::agent::AgentFactory;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::harness::{HarnessConfig, MessageCheck, StepRecord};
use crate::sequences::{run_agent_steps, run_steps, runtime};
use crate::step::Step;
use serde::{Deserialize, Serialize};

/// The format version written into every trace.
pub const TRACE_FORMAT: u32 = 2;

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

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// What a replay found.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    /// Every step run, up to the first departure.
    pub records: Vec<StepRecord>,
}

impl ReplayOutcome {
    /// The first step that departed from the model, if any.
    pub fn departure(&self) -> Option<&StepRecord> {
        self.records.iter().find(|r| r.failure.is_some())
    }
}

/// Runs a trace step by step against a fresh subject from `factory`.
pub fn replay(
    factory: &dyn Factory,
    trace: &Trace,
    messages: MessageCheck,
) -> Result<ReplayOutcome, Failure> {
    replay_with(factory, None, trace, messages)
}

/// [`replay`], with an agent surface for a trace that has agent steps (a `policy` trace).
pub fn replay_with(
    factory: &dyn Factory,
    agent: Option<&dyn AgentFactory>,
    trace: &Trace,
    messages: MessageCheck,
) -> Result<ReplayOutcome, Failure> {
    let rt = runtime().map_err(|e| Failure::new(FailureKind::Setup, e))?;
    let configuration = match &trace.configuration {
        Some(c) => c.clone(),
        None => factory
            .configurations()
            .first()
            .cloned()
            .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string()),
    };
    let options = CaseOptions::new(trace.seed, CaseDurability::Full, configuration);
    let config = HarnessConfig {
        messages,
        ..HarnessConfig::default()
    };
    let (records, _) = match agent {
        Some(a) => run_agent_steps(factory, a, &rt, &options, config, &trace.steps)?,
        None => run_steps(factory, &rt, &options, config, &trace.steps)?,
    };
    Ok(ReplayOutcome { records })
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
