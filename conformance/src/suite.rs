//! The whole suite: every property against one provider, into one [`Report`].

use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::properties::permissions::Unprivileged;
use crate::properties::{self, Context};
use crate::report::{PropertyResult, Report};
use crate::sequences::{Progress, SequenceConfig, run_sequences, runtime};
use crate::stats::Stats;
use crate::trace::{TRACE_FORMAT, Trace, TraceFailure};
use std::sync::Arc;
use std::time::Instant;

/// Settings of a suite run.
#[derive(Clone, Default)]
pub struct SuiteConfig {
    /// The generated-sequence property.
    pub sequences: SequenceConfig,
    /// How to run cases as an unprivileged user when this process is root.
    pub unprivileged: Option<Arc<dyn Unprivileged>>,
    /// Run only the properties with these names (all when empty).
    pub only: Vec<String>,
}

/// What a suite run is doing, for progress displays.
#[derive(Clone, Debug)]
pub enum SuiteProgress {
    /// A property started.
    Property(String),
    /// Progress inside the sequence property.
    Sequences(Progress),
}

/// Every property name, in the order they run.
pub const PROPERTIES: &[&str] = &[
    "bad-input",
    "symlink-identity",
    "staging-private",
    "staging-not-clobbered",
    "cas-races",
    "permission-denied",
    "sequences",
];

const SEQUENCES_SUMMARY: &str = "generated sequences agree with the model: outcomes, messages, version laws, keys, fresh stats, bytes and modes on disk, no litter";

/// Runs the suite.
pub fn run_suite(
    factory: &dyn Factory,
    config: &SuiteConfig,
    progress: &mut dyn FnMut(SuiteProgress),
) -> Result<Report, String> {
    for name in &config.only {
        if !PROPERTIES.contains(&name.as_str()) {
            return Err(format!(
                "unknown property {name:?} (known: {})",
                PROPERTIES.join(", ")
            ));
        }
    }
    let started = Instant::now();
    let rt = runtime()?;
    let seq = &config.sequences;
    let caps = factory
        .make(&CaseOptions {
            seed: seq.seed,
            durability: CaseDurability::Relaxed,
        })?
        .fs
        .capabilities();
    let cx = Context {
        factory,
        rt: &rt,
        messages: seq.messages,
        seed: seq.seed,
        caps,
    };
    let wanted = |name: &str| config.only.is_empty() || config.only.iter().any(|o| o == name);
    let mut stats = Stats::default();
    let mut results: Vec<PropertyResult> = Vec::new();
    let mut cases = 0;
    let mut full = 0;
    for &name in PROPERTIES {
        if !wanted(name) {
            continue;
        }
        progress(SuiteProgress::Property(name.to_string()));
        let result = match name {
            "bad-input" => properties::bad_input::run(&cx, &mut stats),
            "symlink-identity" => properties::identity::run(&cx, &mut stats),
            "staging-private" => properties::staging::private(&cx),
            "staging-not-clobbered" => properties::staging::not_clobbered(&cx),
            "cas-races" => properties::races::run(&cx),
            "permission-denied" => {
                properties::permissions::run(&cx, config.unprivileged.as_deref(), &mut stats)
            }
            _ => {
                let outcome =
                    run_sequences(factory, seq, &mut |p| progress(SuiteProgress::Sequences(p)))?;
                stats.merge(&outcome.stats);
                cases = outcome.cases;
                full = outcome.full_durability_cases;
                let checks = outcome.stats.steps;
                let mut r = match outcome.failure {
                    None => PropertyResult::passed("sequences", SEQUENCES_SUMMARY, checks),
                    Some(f) => {
                        let mut r =
                            PropertyResult::failed("sequences", SEQUENCES_SUMMARY, checks, {
                                let at = f
                                    .records
                                    .last()
                                    .map(|r| r.description.clone())
                                    .unwrap_or_default();
                                format!(
                                    "step {} ({at}): {}",
                                    f.steps.len().saturating_sub(1),
                                    f.message
                                )
                            });
                        r.shrunk_from = Some(f.original_len);
                        r.trace = Some(Trace {
                            seam_trace: TRACE_FORMAT,
                            provider: factory.name(),
                            property: "sequences".into(),
                            seed: seq.seed,
                            failure: Some(TraceFailure {
                                step: f.steps.len().saturating_sub(1),
                                message: f.message.clone(),
                            }),
                            steps: f.steps,
                        });
                        r
                    }
                };
                r.seconds = outcome.seconds;
                r
            }
        };
        results.push(result);
    }
    Ok(Report {
        provider: factory.name(),
        capabilities: caps,
        seed: seq.seed,
        cases,
        full_durability_cases: full,
        max_steps: seq.max_steps,
        properties: results,
        stats,
        seconds: started.elapsed().as_secs_f64(),
    })
}
