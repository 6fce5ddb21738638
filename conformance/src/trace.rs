//! Saved counterexamples: a JSON trace of steps that `seam replay` (or [`replay`]) runs against
//! any provider, stopping where it departs from the model.

use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::harness::{MessageCheck, StepRecord};
use crate::sequences::{run_steps, runtime};
use crate::step::Step;
use serde::{Deserialize, Serialize};

/// The format version written into every trace.
pub const TRACE_FORMAT: u32 = 1;

/// Where and why a traced run failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceFailure {
    /// The failing step (0-based).
    pub step: usize,
    /// What went wrong.
    pub message: String,
}

/// A replayable sequence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// Always [`TRACE_FORMAT`].
    pub seam_trace: u32,
    /// The provider it was found against.
    pub provider: String,
    /// The property that failed.
    pub property: String,
    /// The case seed (staging names and other provider randomness).
    pub seed: u64,
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
    #[error("trace format {0} is not supported (this seam reads format {TRACE_FORMAT})")]
    Version(u32),
}

impl Trace {
    /// Parses a trace.
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let trace: Trace =
            serde_json::from_str(text).map_err(|e| TraceError::Malformed(e.to_string()))?;
        if trace.seam_trace != TRACE_FORMAT {
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

/// Runs a trace step by step against a fresh subject.
pub fn replay(
    factory: &dyn Factory,
    trace: &Trace,
    messages: MessageCheck,
) -> Result<ReplayOutcome, String> {
    let rt = runtime()?;
    let options = CaseOptions {
        seed: trace.seed,
        durability: CaseDurability::Full,
    };
    let (records, _) = run_steps(factory, &rt, &options, messages, &trace.steps, None)?;
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
        let ok = r#"{"seam_trace":1,"provider":"p","property":"x","seed":1,"steps":[{"op":"stat","path":"a"}]}"#;
        assert_eq!(Trace::parse(ok).expect("parses").steps.len(), 1);
    }
}
