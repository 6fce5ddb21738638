//! The whole suite: every property of the registry against one provider, each on a supervised
//! thread of its own (a hanging or panicking backend fails that property with the operation
//! named, and the run goes on), into one [`Report`] with a verdict.

use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::generate::{GenConfig, skipped_steps};
use crate::properties::{self, Applicability, Context, NotChecked, Run};
use crate::report::{PropertyResult, Report, RuleContext, Skipped, Status, Verdict, rule_lines};
use crate::rules::Rule;
use crate::stats::Stats;
use crate::trace::Trace;
use crate::watch::{GivenUp, Monitor, WatchedFactory, supervised};
use std::collections::BTreeMap;
use std::sync::{Arc, mpsc};
use std::time::Instant;

pub use crate::config::{SuiteConfig, SuiteProgress};

/// Every property name, in the order they run.
pub fn property_names() -> Vec<&'static str> {
    properties::names()
}

fn result(name: &str, summary: &str, core: bool, status: Status) -> PropertyResult {
    PropertyResult {
        name: name.into(),
        summary: summary.into(),
        core,
        status,
        checks: 0,
        failure: None,
        failure_kind: None,
        trace: None,
        shrunk_from: None,
        seconds: 0.0,
        slow: None,
        detail: None,
    }
}

/// Why a suite run could not start. Everything a backend does wrong once it has started is in
/// the report, not here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// `SuiteConfig::only` names a property there is none of (a usage mistake).
    #[error("unknown property {name:?} (known: {known})")]
    UnknownProperty {
        /// The name given.
        name: String,
        /// Every property, comma-separated.
        known: String,
    },
    /// The thresholds cannot work (a usage mistake).
    #[error("bad timing: {0}")]
    Timing(#[from] crate::timing::TimingError),
    /// The factory could not make a first subject (or hung making it): the backend did not
    /// start, and nothing could be checked.
    #[error("the first subject could not be made: {0}")]
    FirstSubject(String),
}

/// Runs the suite against subjects from `factory`.
///
/// `Err` only when the run could not start ([`SuiteError`]); everything a backend does wrong is
/// in the report.
pub fn run_suite(
    factory: Arc<dyn Factory>,
    config: &SuiteConfig,
    progress: &mut dyn FnMut(SuiteProgress),
) -> Result<Report, SuiteError> {
    let registry = properties::registry();
    let known = properties::names();
    for name in &config.only {
        if !known.contains(&name.as_str()) {
            return Err(SuiteError::UnknownProperty {
                name: name.clone(),
                known: known.join(", "),
            });
        }
    }
    let started = Instant::now();
    let seq = &config.sequences;

    // A first subject tells what the backend claims and what its world can do.
    config.timing.validate()?;
    let monitor = Monitor::new(config.timing);
    let watched = WatchedFactory {
        inner: factory.clone(),
        monitor: monitor.clone(),
    };
    let first = factory
        .configurations()
        .first()
        .cloned()
        .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string());
    let probe_options = CaseOptions::new(seq.seed, CaseDurability::Relaxed, first);
    let (caps, (fifos, restore_mtime, modes), diff_limit) = supervised(
        &monitor,
        move || -> Result<_, String> {
            let s = watched
                .make(&probe_options)
                .map_err(|e| format!("cannot make a subject: {e}"))?;
            let mut caps = s.fs.capabilities();
            // The read fence is a way to deploy the backend: claimed when a deployment asked to
            // confine its reads claims it (`containment` and `swap-race` then attack its reads).
            if caps.sandbox_modes && !caps.read_fence {
                let confined = watched
                    .make(&probe_options.clone().with_confined_reads())
                    .map_err(|e| format!("cannot make a subject with confined reads: {e}"))?;
                if confined.fs.capabilities().read_fence {
                    caps = caps.with(seam::Capability::ReadFence);
                }
            }
            // So is durability: generated cases ask for less (they need no fsync), and a
            // deployment asked for full durability claims it (`power-loss` then holds it to
            // the claim).
            if !caps.durable {
                let mut full = probe_options.clone();
                full.durability = CaseDurability::Full;
                let durable = watched
                    .make(&full)
                    .map_err(|e| format!("cannot make a fully durable subject: {e}"))?;
                if durable.fs.capabilities().durable {
                    caps = caps.with(seam::Capability::Durable);
                }
            }
            let world = (
                s.world.supports_fifos(),
                s.world.restores_mtime(),
                s.world.keeps_modes(),
            );
            Ok((caps, world, s.diff_basis_max_bytes))
        },
        &mut || {},
    )
    .map_err(|g| SuiteError::FirstSubject(g.failure().message))?
    .map_err(SuiteError::FirstSubject)?;

    let (tx, rx) = mpsc::channel::<SuiteProgress>();
    let wanted = |name: &str| config.only.is_empty() || config.only.iter().any(|o| o == name);
    let mut stats = Stats::default();
    let mut results = Vec::new();
    let mut cases = 0;
    let mut full = 0;
    let mut configurations = BTreeMap::new();
    let mut sequences_ran = false;
    let mut not_applying = BTreeMap::new();
    for property in registry {
        let (name, summary, core) = (property.name(), property.summary(), property.core());
        if !wanted(name) {
            results.push(result(
                name,
                summary,
                core,
                Status::NotRun("left out (--property)".into()),
            ));
            continue;
        }
        let monitor = Monitor::new(config.timing);
        let cx = Arc::new(Context {
            inner: factory.clone(),
            factory: Arc::new(WatchedFactory {
                inner: factory.clone(),
                monitor: monitor.clone(),
            }),
            monitor: monitor.clone(),
            config: config.clone(),
            caps,
            fifos,
            restore_mtime,
            diff_limit,
            progress: Some(tx.clone()),
        });
        let status = match property.applies(&cx) {
            Applicability::Runs => None,
            Applicability::NotClaimed(missing) => Some(Status::NotClaimed(
                missing
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            )),
            Applicability::CannotRun(why) => Some(Status::NotRun(why)),
        };
        if let Some(status) = status {
            results.push(result(name, summary, core, status));
            continue;
        }
        progress(SuiteProgress::Property(name.to_string()));
        let property_started = Instant::now();
        let (p, c) = (property.clone(), cx.clone());
        let outcome = supervised(
            &monitor,
            move || {
                let mut run = Run::default();
                let r = p.run(&c, &mut run);
                (run, r)
            },
            &mut || {
                while let Ok(p) = rx.try_recv() {
                    progress(p);
                }
            },
        );
        // What the property sent in its last moments belongs before the next property's line.
        while let Ok(p) = rx.try_recv() {
            progress(p);
        }
        let (mut run, mut verdict): (Run, Result<(), Failure>) = match outcome {
            Ok(pair) => pair,
            Err(given_up) => given_up_run(&monitor, factory.name(), name, seq.seed, &given_up),
        };
        // A call given up at its limit is the failure, whatever the property made of the error
        // that call returned.
        if let Some(hang) = monitor.take_hang() {
            let failure = Failure::new(FailureKind::Timeout, hang.message());
            if let Some(t) = run.trace.as_mut() {
                t.fail_with(&failure);
            }
            verdict = Err(failure);
        }
        if let Some(g) = run.generated.take() {
            sequences_ran = true;
            cases = g.cases;
            full = g.full_durability_cases;
            configurations = g.configurations;
        }
        stats.merge(&run.stats);
        let mut r = result(name, summary, core, Status::Passed);
        r.checks = run.stats.checks;
        r.seconds = property_started.elapsed().as_secs_f64();
        r.slow = monitor.slowness();
        r.detail = run.detail.take();
        r.trace = run.trace;
        r.shrunk_from = run.shrunk_from;
        match verdict {
            Ok(()) => match run.not_checked {
                Some(NotChecked::NotRun(why)) => r.status = Status::NotRun(why),
                Some(NotChecked::DoesNotApply { reason, rules }) => {
                    for rule in rules {
                        not_applying.insert(
                            rule,
                            format!("what {name} checks to be possible for this backend"),
                        );
                    }
                    r.status = Status::DoesNotApply(reason);
                }
                Some(NotChecked::NotOffered {
                    reason,
                    need,
                    rules,
                }) => {
                    for rule in rules {
                        not_applying.insert(rule, need.clone());
                    }
                    r.status = Status::NotClaimed(reason);
                }
                Some(NotChecked::NotHere {
                    reason,
                    need,
                    rules,
                }) => {
                    for rule in rules {
                        not_applying.insert(rule, need.clone());
                    }
                    r.status = Status::NotRun(reason);
                }
                None => {}
            },
            Err(f) => {
                r.status = Status::Failed;
                r.failure = Some(f.message);
                r.failure_kind = Some(f.kind);
            }
        }
        results.push(r);
    }

    let gen_config = GenConfig {
        caps,
        fifos,
        restore_mtime,
        modes,
        diff_limit,
        policies: crate::generate::Policies::None,
    };
    let skipped: Vec<Skipped> = if sequences_ran {
        skipped_steps(&gen_config)
            .into_iter()
            .map(|(what, reason)| Skipped { what, reason })
            .collect()
    } else {
        Vec::new()
    };
    // What the world cannot do is never generated: its rules do not apply, and say why.
    if !fifos {
        not_applying.insert(Rule::ReadFifo, "a world that can make FIFOs".to_string());
    }
    if !restore_mtime {
        not_applying.insert(
            Rule::VersionRestoredMtime,
            "a world that can put an mtime back exactly".to_string(),
        );
    }
    let rules = rule_lines(
        &stats,
        &RuleContext {
            caps: &caps,
            agent: config.agent.is_some(),
            diff_limit_generated: crate::generate::diff_limit_generated(diff_limit),
            found_not_applying: &not_applying,
        },
    );
    let verdict = verdict(
        &results,
        &rules,
        &factory.configurations(),
        &configurations,
        sequences_ran,
    );
    Ok(Report {
        provider: factory.name(),
        capabilities: caps,
        seed: seq.seed,
        cases,
        full_durability_cases: full,
        max_steps: seq.max_steps,
        configurations,
        properties: results,
        skipped,
        rules,
        stats,
        verdict,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn verdict(
    results: &[PropertyResult],
    rules: &[crate::report::RuleLine],
    declared: &[String],
    ran: &BTreeMap<String, u64>,
    sequences_ran: bool,
) -> Verdict {
    if results.iter().any(|p| p.status == Status::Failed) {
        return Verdict::Fail;
    }
    let mut reasons = Vec::new();
    for p in results.iter().filter(|p| p.core) {
        if let Status::NotRun(why) | Status::NotClaimed(why) = &p.status {
            reasons.push(format!("core property {} did not run: {why}", p.name));
        }
    }
    let unreached: Vec<&str> = rules
        .iter()
        .filter(|r| r.coverage == crate::report::Coverage::Unreached)
        .map(|r| r.id.as_str())
        .collect();
    if !unreached.is_empty() {
        reasons.push(format!(
            "{} rule(s) that apply were never exercised: {}",
            unreached.len(),
            unreached.join(", ")
        ));
    }
    if sequences_ran {
        let idle: Vec<&str> = declared
            .iter()
            .filter(|c| ran.get(*c).copied().unwrap_or(0) == 0)
            .map(String::as_str)
            .collect();
        if !idle.is_empty() {
            reasons.push(format!(
                "declared configuration(s) never ran a case: {} (raise --cases)",
                idle.join(", ")
            ));
        }
    }
    if reasons.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Incomplete(reasons)
    }
}

/// What a property given up on reports: the best failure it had found before (with its trace),
/// or the hang or panic itself with the steps of the case it was in.
fn given_up_run(
    monitor: &Monitor,
    provider: String,
    property: &str,
    seed: u64,
    given_up: &GivenUp,
) -> (Run, Result<(), Failure>) {
    let mut run = Run::default();
    let why = given_up.failure();
    if let Some(found) = monitor.best_found() {
        let failure = Failure::new(
            found.failure.kind,
            format!(
                "{} (reported as found: the property was then given up: {})",
                found.failure.message, why.message
            ),
        );
        run.trace = Some(Trace::failing(
            provider,
            property,
            seed,
            found.configuration,
            found.steps,
            &found.failure,
        ));
        return (run, Err(failure));
    }
    if let Some(steps) = monitor.current_case() {
        run.trace = Some(Trace::failing(provider, property, seed, None, steps, &why));
    }
    (run, Err(why))
}
