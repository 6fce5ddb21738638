//! The sequence property's run: cases drawn and run a few at a time, the first failure shrunk
//! (a hang by deleting steps at a lowered limit) and replayed once more for its record.

use super::draw::{draw_and_run, sequence_strategy};
use super::{
    First, Progress, RunState, SequenceConfig, SequenceFailure, SequenceOutcome, Subjects,
    policies_for, reproduces, rng_for, run_case_supervised,
};
use crate::concurrent;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::generate::{GenConfig, GenState};
use crate::harness::HarnessConfig;
use crate::step::Step;
use crate::watch::{Found, Monitor, WatchedFactory};
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The sequence property. `subjects` are unwatched: every case watches its own with a monitor
/// of its own under `monitor` (see [`run_case_supervised`]).
pub(crate) fn run_sequences_watched(
    subjects: &Subjects,
    config: &SequenceConfig,
    harness_config: HarnessConfig,
    monitor: &Arc<Monitor>,
    progress: &mut dyn FnMut(Progress),
) -> Result<SequenceOutcome, Failure> {
    let started = Instant::now();
    let harness_config = HarnessConfig {
        messages: config.messages,
        ..harness_config
    };
    let factory = subjects.factory.as_ref();
    let configurations = factory.configurations();
    let first = configurations
        .first()
        .cloned()
        .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string());
    let probe = WatchedFactory {
        inner: subjects.factory.clone(),
        monitor: monitor.clone(),
    }
    .make(&CaseOptions::new(
        config.seed,
        CaseDurability::Relaxed,
        first,
    ))
    .map_err(|e| Failure::new(FailureKind::Setup, format!("cannot make a subject: {e}")))?;
    let mut caps = probe.fs.capabilities();
    // Compared with a reference, only what both backends claim and both worlds can do is
    // generated: a step the reference cannot carry out would be charged to it as a departure.
    let (mut fifos, mut restore_mtime, mut modes) = (
        probe.world.supports_fifos(),
        probe.world.restores_mtime(),
        probe.world.keeps_modes(),
    );
    if let Some(reference) = &subjects.reference {
        let theirs = WatchedFactory {
            inner: reference.clone(),
            monitor: monitor.clone(),
        }
        .make(&CaseOptions::new(
            config.seed,
            CaseDurability::Relaxed,
            reference
                .configurations()
                .first()
                .cloned()
                .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string()),
        ))
        .map_err(|e| {
            Failure::new(
                FailureKind::Setup,
                format!("cannot make a subject of the reference: {e}"),
            )
        })?;
        fifos &= theirs.world.supports_fifos();
        restore_mtime &= theirs.world.restores_mtime();
        modes &= theirs.world.keeps_modes();
        // The fence is the subject's deployment, which the comparison already handles (the
        // per-call policies below); every other claim must be both sides'.
        let their_caps = theirs.fs.capabilities();
        for c in seam::Capability::ALL {
            let fence = matches!(
                c,
                seam::Capability::SandboxModes | seam::Capability::ReadFence
            );
            if !fence && !their_caps.has(c) {
                caps = caps.without(c);
            }
        }
    }
    let gen_config = GenConfig {
        caps,
        fifos,
        restore_mtime,
        modes,
        diff_limit: probe.diff_basis_max_bytes,
        policies: policies_for(
            caps.sandbox_modes,
            probe.fs.sandbox_mode(),
            subjects.reference.is_some() || subjects.agent.is_some(),
        ),
    };
    drop(probe);

    let strategy = sequence_strategy(gen_config, config.max_steps, subjects.agent.is_some());
    let every = u64::from(config.full_durability_every.max(1));
    let options_for = |case_no: u64| {
        let durability = if case_no.is_multiple_of(every) {
            CaseDurability::Full
        } else {
            CaseDurability::Relaxed
        };
        let configuration = configurations
            .get((case_no as usize) % configurations.len().max(1))
            .cloned()
            .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string());
        CaseOptions::new(config.seed, durability, configuration)
    };
    // Every case first, a few at a time (`crate::concurrent`), up to the first that fails;
    // each starts as soon as the generator, on a thread of its own, has drawn it.
    let (mut done, mut steps_so_far) = (0u64, 0u64);
    let pre = draw_and_run(
        &strategy,
        config.cases,
        config.seed,
        &|i, steps| {
            run_case_supervised(
                subjects,
                monitor,
                false,
                &options_for(i as u64),
                harness_config,
                steps,
                None,
            )
        },
        &mut |result| {
            done += 1;
            if let Ok((_, stats)) = result {
                steps_so_far += stats.steps;
            }
            progress(Progress::Case {
                done,
                total: u64::from(config.cases),
                steps: steps_so_far,
            });
        },
    )?;
    if !pre.last().is_some_and(concurrent::failed) {
        let mut outcome = SequenceOutcome::default();
        for (case_no, result) in pre.into_iter().enumerate() {
            let (_, stats) = result?;
            let options = options_for(case_no as u64);
            outcome.cases += 1;
            if options.durability == CaseDurability::Full {
                outcome.full_durability_cases += 1;
            }
            *outcome
                .configurations
                .entry(options.configuration)
                .or_default() += 1;
            outcome.stats.merge(&stats);
        }
        outcome.seconds = started.elapsed().as_secs_f64();
        return Ok(outcome);
    }
    // A case failed. The runner draws the same cases again, one at a time: those already run
    // are taken as they came out (not run twice), and the failing one is shrunk from there.
    let pre = RefCell::new(pre.into_iter().map(Some).collect::<Vec<_>>());
    let proptest_config = Config {
        cases: config.cases,
        failure_persistence: None,
        max_shrink_iters: config.max_shrink_iters,
        fork: false,
        timeout: 0,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(proptest_config, rng_for(config.seed));
    let state = RefCell::new(RunState {
        outcome: SequenceOutcome::default(),
        first: None,
        best_len: usize::MAX,
        shrink_runs: 0,
        setup: None,
    });
    let progress = RefCell::new(progress);
    let result = runner.run(
        &strategy,
        |(_, steps, seen): (GenState, Vec<Step>, Option<Arc<AtomicUsize>>)| {
            let (case_no, found, stopped) = {
                let st = state.borrow();
                (
                    st.outcome.cases,
                    st.first
                        .as_ref()
                        .map(|f| (f.options.clone(), f.failure.kind)),
                    st.setup.is_some(),
                )
            };
            if stopped {
                return Ok(());
            }
            let steps: Arc<[Step]> = steps.into();
            // While shrinking, every attempt reruns the failing case's options; a hang's
            // candidates only have to show that they still hang (at a lowered limit).
            let (options, lowered) = match &found {
                Some((options, kind)) => (options.clone(), *kind == FailureKind::Timeout),
                None => (options_for(case_no), false),
            };
            let already = match found {
                None => pre
                    .borrow_mut()
                    .get_mut(case_no as usize)
                    .and_then(Option::take),
                Some(_) => None,
            };
            let replayed = already.is_some();
            let ran = match already {
                Some(ran) => {
                    // As if it had just run: the steps it reached are what shrinking may touch.
                    if let (Some(seen), Ok((records, _))) = (&seen, &ran) {
                        seen.store(records.len(), Ordering::SeqCst);
                    }
                    ran
                }
                None => run_case_supervised(
                    subjects,
                    monitor,
                    lowered,
                    &options,
                    harness_config,
                    &steps,
                    seen,
                ),
            };
            let mut st = state.borrow_mut();
            let (records, stats) = match ran {
                Ok(r) => r,
                // A case that cannot be set up while shrinking does not reproduce; before, it
                // stops the run.
                Err(f) => {
                    if found.is_none() {
                        st.setup = Some(f);
                    }
                    return Ok(());
                }
            };
            let failure = records
                .last()
                .and_then(|r| r.failure.clone().map(|f| (r.index, f)));
            if let Some((_, kind)) = found {
                // A hang is shrunk afterwards, by `shrink_hang`, within a budget: each candidate
                // that still hangs costs its limit, and proptest's shrinker tries hundreds.
                if kind == FailureKind::Timeout {
                    return Ok(());
                }
                st.shrink_runs += 1;
                let again = failure.as_ref().filter(|(_, f)| reproduces(kind, f.kind));
                if let Some((index, f)) = again {
                    st.best_len = st.best_len.min(index + 1);
                    // Keep the smallest failure seen for a property given up later (a hang's
                    // candidates are not confirmed at the full limit, so not those).
                    if kind != FailureKind::Timeout {
                        monitor.found(Found {
                            failure: f.clone(),
                            steps: steps[..=*index].to_vec(),
                            configuration: Some(options.configuration.clone()),
                        });
                    }
                }
                let (attempt, len) = (st.shrink_runs, st.best_len);
                let message = again.map(|(index, f)| format!("step {index}: {f}"));
                drop(st);
                (progress.borrow_mut())(Progress::Shrinking { attempt, len });
                return match message {
                    Some(m) => Err(TestCaseError::fail(m)),
                    // Passed, or failed some other way (a timeout, a panic): not this failure.
                    None => Ok(()),
                };
            }
            st.outcome.cases += 1;
            if options.durability == CaseDurability::Full {
                st.outcome.full_durability_cases += 1;
            }
            *st.outcome
                .configurations
                .entry(options.configuration.clone())
                .or_default() += 1;
            st.outcome.stats.merge(&stats);
            if let Some((index, f)) = &failure {
                st.best_len = index + 1;
                monitor.found(Found {
                    failure: f.clone(),
                    steps: steps[..=*index].to_vec(),
                    configuration: Some(options.configuration.clone()),
                });
                st.first = Some(First {
                    options: options.clone(),
                    failure: f.clone(),
                    steps: steps[..=*index].to_vec(),
                    records: records.clone(),
                });
            }
            let p = Progress::Case {
                done: st.outcome.cases,
                total: u64::from(config.cases),
                steps: st.outcome.stats.steps,
            };
            drop(st);
            if !replayed {
                (progress.borrow_mut())(p);
            }
            match failure {
                Some((index, f)) => Err(TestCaseError::fail(format!("step {index}: {f}"))),
                None => Ok(()),
            }
        },
    );
    let mut st = state.into_inner();
    if let Some(f) = st.setup.take() {
        return Err(f);
    }
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, (_, steps, _))) => {
            let Some(first) = st.first.take() else {
                return Err(Failure::new(
                    FailureKind::Setup,
                    "the run reported a failure it never recorded",
                ));
            };
            let steps = if first.failure.kind == FailureKind::Timeout {
                let (small, runs) = shrink_hang(
                    subjects,
                    monitor,
                    &first.options,
                    harness_config,
                    &first.steps,
                    &mut |attempt, len| {
                        (progress.borrow_mut())(Progress::Shrinking { attempt, len });
                    },
                );
                st.shrink_runs += runs;
                st.best_len = small.len();
                small
            } else {
                steps
            };
            // Run the minimal sequence once more, at the full limits, for a clean record of
            // each step and to confirm it: a trace that does not fail the same way again is
            // not reported; the failure as generated is.
            let ran = run_case_supervised(
                subjects,
                monitor,
                false,
                &first.options,
                harness_config,
                &Arc::from(steps.as_slice()),
                None,
            );
            let confirmed = ran.ok().and_then(|(records, _)| {
                let f = records.last().and_then(|r| r.failure.clone())?;
                reproduces(first.failure.kind, f.kind).then_some((f, records))
            });
            let original_len = first.steps.len();
            st.outcome.failure = Some(match confirmed {
                Some((failure, records)) => SequenceFailure {
                    failure,
                    steps: steps[..records.len().min(steps.len())].to_vec(),
                    original_len,
                    records,
                    shrink_runs: st.shrink_runs,
                    configuration: first.options.configuration,
                },
                None => SequenceFailure {
                    failure: Failure::new(
                        first.failure.kind,
                        format!(
                            "{} (shown as generated: the shrunk trace of {} steps did not fail the same way when run again)",
                            first.failure.message,
                            st.best_len.min(steps.len())
                        ),
                    ),
                    steps: first.steps,
                    original_len,
                    records: first.records,
                    shrink_runs: st.shrink_runs,
                    configuration: first.options.configuration,
                },
            });
        }
        Err(TestError::Abort(why)) => {
            return Err(Failure::new(
                FailureKind::Setup,
                format!("the run was aborted: {why}"),
            ));
        }
    }
    st.outcome.seconds = started.elapsed().as_secs_f64();
    Ok(st.outcome)
}

/// How long shrinking a hang may take: each candidate that still hangs costs its (lowered)
/// limit and the grace after it.
pub(super) const HANG_SHRINK_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// Shrinks a case that hung at its last step: first the hanging step alone, then without each
/// earlier step in turn (latest first), keeping every deletion after which it still hangs —
/// at a lowered limit, within [`HANG_SHRINK_BUDGET`]. The caller confirms the result at the
/// full limit. Returns the smallest case found and the candidates run.
pub(super) fn shrink_hang(
    subjects: &Subjects,
    monitor: &Arc<Monitor>,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
    progress: &mut dyn FnMut(u64, usize),
) -> (Vec<Step>, u64) {
    let started = Instant::now();
    let mut runs = 0;
    let hangs = |candidate: &[Step], runs: &mut u64| -> bool {
        *runs += 1;
        let ran = run_case_supervised(
            subjects,
            monitor,
            true,
            options,
            config,
            &candidate.into(),
            None,
        );
        matches!(ran, Ok((records, _))
            if records.len() == candidate.len()
                && records.last().and_then(|r| r.failure.as_ref()).is_some_and(|f| f.kind == FailureKind::Timeout))
    };
    let Some(last) = steps.last() else {
        return (Vec::new(), 0);
    };
    if steps.len() > 1 && hangs(std::slice::from_ref(last), &mut runs) {
        progress(runs, 1);
        return (vec![last.clone()], runs);
    }
    let mut best = steps.to_vec();
    let mut i = best.len().saturating_sub(1);
    while i > 0 && started.elapsed() < HANG_SHRINK_BUDGET {
        i -= 1;
        let mut candidate = best.clone();
        candidate.remove(i);
        if hangs(&candidate, &mut runs) {
            best = candidate;
        }
        progress(runs, best.len());
    }
    (best, runs)
}
