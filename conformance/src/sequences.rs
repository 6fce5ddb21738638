//! The generated-sequence property: proptest (through proptest-state-machine's sequential
//! strategy, so shrinking deletes whole steps before it simplifies single ones) drives sequences
//! against fresh subjects; a failing one is shrunk and then replayed once more to capture a
//! readable record of every step. Everything is derived from the seed, so the same seed
//! generates the same cases and shrinks to the same trace.

use crate::agent::AgentFactory;
use crate::concurrent;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::generate::{
    GenConfig, GenState, Policies, agent_opening, agent_step_strategy, apply_hint,
    keeps_links_inside, let_through, let_through_one, opening, step_strategy,
};
use crate::harness::{Harness, HarnessConfig, MessageCheck, StepRecord};
use crate::stats::Stats;
use crate::step::Step;
use crate::timing::Timing;
use crate::watch::{Found, Monitor, WatchedFactory, supervised};
use proptest::strategy::{BoxedStrategy, Strategy};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use proptest_state_machine::strategy::Sequential;
use seam::SandboxMode;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tokio::runtime::Runtime;

/// Settings of the sequence property.
#[derive(Clone, Debug)]
pub struct SequenceConfig {
    /// How many sequences to generate.
    pub cases: u32,
    /// The longest sequence.
    pub max_steps: usize,
    /// The seed of the whole run.
    pub seed: u64,
    /// Every n-th case runs at full durability (the rest relaxed).
    pub full_durability_every: u32,
    /// How strictly messages are compared.
    pub messages: MessageCheck,
    /// Upper bound on shrinking attempts.
    pub max_shrink_iters: u32,
}

impl Default for SequenceConfig {
    fn default() -> Self {
        Self {
            cases: 256,
            max_steps: 40,
            seed: 0x5EA4,
            full_durability_every: 8,
            messages: MessageCheck::Exact,
            max_shrink_iters: 2048,
        }
    }
}

/// Where a run is, for progress displays.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Generated case `done` of `total` finished; `steps` executed so far.
    Case {
        /// Cases finished.
        done: u64,
        /// Cases planned.
        total: u64,
        /// Steps executed so far.
        steps: u64,
    },
    /// A failure was found; shrinking attempt `attempt`, best length so far `len`.
    Shrinking {
        /// Attempts so far.
        attempt: u64,
        /// Length of the shortest failing sequence so far.
        len: usize,
    },
}

/// A failing sequence, shrunk.
#[derive(Clone, Debug)]
pub struct SequenceFailure {
    /// What went wrong at the failing step.
    pub failure: Failure,
    /// The shrunk sequence, ending at the failing step.
    pub steps: Vec<Step>,
    /// The length of the sequence before shrinking.
    pub original_len: usize,
    /// Each step of the shrunk sequence as replayed: its description and the failing step's
    /// failure. What each step answered is not kept as text (a run formats nothing it does not
    /// show: [`HarnessConfig::step_texts`]); [`crate::replay`] of the trace prints it.
    pub records: Vec<StepRecord>,
    /// Runs spent shrinking.
    pub shrink_runs: u64,
    /// The configuration the case ran in.
    pub configuration: String,
}

/// The outcome of the sequence property.
#[derive(Clone, Debug, Default)]
pub struct SequenceOutcome {
    /// Counts over the generated (not the shrinking) runs.
    pub stats: Stats,
    /// Cases generated and run.
    pub cases: u64,
    /// Of those, run at full durability.
    pub full_durability_cases: u64,
    /// Cases run per configuration.
    pub configurations: std::collections::BTreeMap<String, u64>,
    /// The failure, if any.
    pub failure: Option<SequenceFailure>,
    /// Seconds spent.
    pub seconds: f64,
}

pub(crate) fn rng_for(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mixed = seed
            .wrapping_add(i as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17);
        chunk.copy_from_slice(&mixed.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// A current-thread runtime (with its clock) for driving a provider from synchronous test code.
pub fn runtime() -> std::io::Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// [`runtime`], its failure a setup failure of the suite.
pub(crate) fn suite_runtime() -> Result<Runtime, Failure> {
    runtime().map_err(|e| Failure::new(FailureKind::Setup, format!("cannot start a runtime: {e}")))
}

/// Runs `steps` against a fresh subject; returns every record up to and including the first
/// failure, and the harness counts.
pub fn run_steps(
    factory: &dyn Factory,
    rt: &Runtime,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    run_watched(factory, rt, options, config, steps, None, None, None)
}

/// [`run_steps`] with an agent surface over the subject's provider, for agent steps.
pub fn run_agent_steps(
    factory: &dyn Factory,
    agent: &dyn AgentFactory,
    rt: &Runtime,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    run_watched(factory, rt, options, config, steps, None, None, Some(agent))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run_watched(
    factory: &dyn Factory,
    rt: &Runtime,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
    monitor: Option<&Arc<Monitor>>,
    seen: Option<&AtomicUsize>,
    agent: Option<&dyn AgentFactory>,
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    let subject = factory
        .make(options)
        .map_err(|e| Failure::new(FailureKind::Setup, format!("cannot make a subject: {e}")))?;
    let second = if steps.iter().any(Step::uses_second_instance) {
        match factory.reopen(options, &subject) {
            Some(Ok(fs)) => Some(fs),
            Some(Err(e)) => {
                return Err(Failure::new(
                    FailureKind::Setup,
                    format!("cannot open a second instance: {e}"),
                ));
            }
            None => None,
        }
    } else {
        None
    };
    let mut harness = Harness::with_agent(subject, config, agent);
    if let Some(fs) = second {
        harness = harness.with_second(fs);
    }
    if let Some(m) = monitor {
        let m = m.clone();
        harness = harness.with_pause_log(Arc::new(move |from, to| m.paused(from, to)));
    }
    if let Err(e) = harness.verify_world() {
        return Err(Failure::new(
            FailureKind::Setup,
            format!("the fresh subject is not empty: {}", e.message),
        ));
    }
    if let Some(m) = monitor {
        m.set_case(steps);
    }
    let mut records = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        if let Some(m) = monitor {
            m.set_step(i);
        }
        // proptest-state-machine shrinks by the steps a case actually ran.
        if let Some(seen) = seen {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        let mut record = harness.step(rt, i, step);
        // A call given up at its limit is this step's failure, whatever the comparison made of
        // the error it returned.
        if let Some(hang) = monitor.and_then(|m| m.take_hang()) {
            record.failure = Some(Failure::new(FailureKind::Timeout, hang.message()));
        }
        let failed = record.failure.is_some();
        records.push(record);
        if failed {
            break;
        }
    }
    Ok((records, harness.stats))
}

/// The per-call policies a run's mutations carry: drawn for a fencing backend, except in a run
/// about something else (a comparison with a reference that does not fence, the agent surface),
/// where a deployment that refuses part of the case (read-only; workspace-write on `d`) gets
/// every call let through on the test root, and `danger-full-access` none.
fn policies_for(fences: bool, deployment: Option<SandboxMode>, about_else: bool) -> Policies {
    match (fences, deployment) {
        (true, Some(mode)) if !about_else => Policies::Drawn(mode),
        (true, Some(SandboxMode::DangerFullAccess)) => Policies::None,
        (true, Some(_)) => Policies::CaseRoot,
        _ => Policies::None,
    }
}

/// What a case runs against: the factory, the reference it must answer like (a differential
/// run) and the agent surface (a policy run). Owned, so a case can run on a thread of its own.
#[derive(Clone)]
pub(crate) struct Subjects {
    pub factory: Arc<dyn Factory>,
    pub reference: Option<Arc<dyn Factory>>,
    pub agent: Option<Arc<dyn AgentFactory>>,
}

impl Subjects {
    /// The same, every subject watched by `monitor`.
    fn watched_by(&self, monitor: &Arc<Monitor>) -> Subjects {
        let watch = |f: &Arc<dyn Factory>| -> Arc<dyn Factory> {
            Arc::new(WatchedFactory {
                inner: f.clone(),
                monitor: monitor.clone(),
            })
        };
        Subjects {
            factory: watch(&self.factory),
            reference: self.reference.as_ref().map(watch),
            agent: self.agent.clone(),
        }
    }
}

/// One case: against `factory` alone, or — with a `reference` — against both, the step records
/// compared in normal form ([`StepRecord::normal`]); the first step they answer differently
/// fails as [`FailureKind::Differential`]. A departure from the model on either side is that
/// side's failure, named.
fn run_case(
    subjects: &Subjects,
    rt: &Runtime,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
    monitor: Option<&Arc<Monitor>>,
    seen: Option<&AtomicUsize>,
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    let factory = subjects.factory.as_ref();
    let agent = subjects.agent.as_deref();
    // Two providers are compared on what they answered: the records must say it.
    let config = HarnessConfig {
        step_texts: config.step_texts || subjects.reference.is_some(),
        ..config
    };
    let (mut records, mut stats) =
        run_watched(factory, rt, options, config, steps, monitor, seen, agent)?;
    let Some(reference) = subjects.reference.as_deref() else {
        return Ok((records, stats));
    };
    let (theirs, _) = run_watched(reference, rt, options, config, steps, monitor, None, agent)?;
    let named = |mut records: Vec<StepRecord>, name: String| {
        if let Some(f) = records.last_mut().and_then(|r| r.failure.as_mut()) {
            f.message = format!("{name} departs from the model: {}", f.message);
        }
        records
    };
    if records.last().is_some_and(|r| r.failure.is_some()) {
        return Ok((named(records, factory.name()), stats));
    }
    if theirs.last().is_some_and(|r| r.failure.is_some()) {
        return Ok((named(theirs, reference.name()), stats));
    }
    let diverged = records.iter().zip(&theirs).position(|(a, b)| {
        stats.check();
        a.normal != b.normal
    });
    if let Some(i) = diverged {
        records.truncate(i + 1);
        let (a, b) = (&records[i].normal, &theirs[i].normal);
        let message = format!(
            "{} answered {a}; {} answered {b}",
            factory.name(),
            reference.name()
        );
        records[i].failure = Some(Failure::new(FailureKind::Differential, message));
    }
    Ok((records, stats))
}

/// [`run_case`] on a thread of its own, watched by a monitor of its own: a call that blocks its
/// thread past its limit gives up this case alone (its steps up to that call are the record,
/// failing there as a hang), and the run — or its shrinking — goes on. `lowered`: the case is a
/// candidate of a hang being shrunk (see [`Monitor::for_case`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_case_supervised(
    subjects: &Subjects,
    parent: &Monitor,
    lowered: bool,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
    seen: Option<Arc<AtomicUsize>>,
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    let monitor = parent.for_case(lowered);
    let watched = subjects.watched_by(&monitor);
    let (m, options, owned) = (monitor.clone(), options.clone(), steps.to_vec());
    let result = supervised(
        &monitor,
        move || -> Result<(Vec<StepRecord>, Stats), Failure> {
            let rt = suite_runtime()?;
            run_case(
                &watched,
                &rt,
                &options,
                config,
                &owned,
                Some(&m),
                seen.as_deref(),
            )
        },
        &mut || {},
    );
    match result {
        Ok(r) => r,
        Err(given_up) => {
            let reached = monitor.current_case().unwrap_or_default();
            let mut records: Vec<StepRecord> = reached
                .iter()
                .enumerate()
                .map(|(i, s)| StepRecord::unfinished(i, s))
                .collect();
            match records.last_mut() {
                Some(last) => {
                    last.failure = Some(given_up.failure());
                    Ok((records, Stats::default()))
                }
                // Given up before its first step: making the subject hung.
                None => Err(given_up.failure()),
            }
        }
    }
}

/// Whether a shrinking candidate's failure reproduces the one found: a hang only by a hang, a
/// panic only by a panic, and any other failure only by another of the same kind of kind — so
/// that a candidate that merely timed out or panicked never takes the place of what was found.
fn reproduces(found: FailureKind, candidate: FailureKind) -> bool {
    let class = |k: FailureKind| match k {
        FailureKind::Timeout => 0,
        FailureKind::Panic => 1,
        FailureKind::Setup => 2,
        _ => 3,
    };
    class(found) == class(candidate)
}

/// The first failure a run found, as generated: what shrinking must reproduce, and what is
/// reported if the shrunk trace does not fail the same way when run again.
struct First {
    options: CaseOptions,
    failure: Failure,
    steps: Vec<Step>,
    records: Vec<StepRecord>,
}

struct RunState {
    outcome: SequenceOutcome,
    first: Option<First>,
    best_len: usize,
    shrink_runs: u64,
    /// A case that could not even be set up (the factory failed): the run stops and says so;
    /// it is not shrunk.
    setup: Option<Failure>,
}

/// The default settings, with no step's answers kept as text (as the suite runs).
fn lean() -> HarnessConfig {
    HarnessConfig {
        step_texts: false,
        ..HarnessConfig::default()
    }
}

/// Runs the sequence property against subjects from `factory`, with the default [`Timing`].
pub fn run_sequences(
    factory: Arc<dyn Factory>,
    config: &SequenceConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<SequenceOutcome, Failure> {
    let subjects = Subjects {
        factory,
        reference: None,
        agent: None,
    };
    let monitor = Monitor::new(Timing::default());
    run_sequences_watched(&subjects, config, lean(), &monitor, progress)
}

/// Generated sequences of tool calls by two sessions through `agent` over subjects from
/// `factory`, with the world changing behind their backs: the policy property.
pub fn run_agent_sequences(
    factory: Arc<dyn Factory>,
    agent: Arc<dyn AgentFactory>,
    config: &SequenceConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<SequenceOutcome, Failure> {
    let subjects = Subjects {
        factory,
        reference: None,
        agent: Some(agent),
    };
    let monitor = Monitor::new(Timing::default());
    run_sequences_watched(&subjects, config, lean(), &monitor, progress)
}

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
                &steps,
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

/// The strategy of a run's sequences: each case an aimed opening (often empty) and then free
/// steps, up to `max_steps`.
fn sequence_strategy(
    gen_config: GenConfig,
    max_steps: usize,
    agent_mode: bool,
) -> SequenceStrategy {
    // The reference state during generation is a model of the world, used to aim steps at
    // entries that exist. Every step is valid in every state (the model predicts its outcome),
    // so preconditions always hold and shrinking may delete any step.
    // The initial state carries an aimed opening (often empty) that the first transitions play.
    let opening_config = gen_config.clone();
    Sequential::new(
        (1..=max_steps.max(1)).into(),
        move || {
            let plan = if agent_mode {
                agent_opening(&opening_config)
            } else {
                opening(&opening_config)
            };
            let c = opening_config.clone();
            plan.prop_map(move |p| GenState::with_plan(let_through(&c, p)))
                .boxed()
        },
        keeps_links_inside,
        move |state: &GenState| -> BoxedStrategy<Step> {
            let policies = gen_config.policies;
            let step = if agent_mode {
                agent_step_strategy(&gen_config, state)
            } else {
                step_strategy(&gen_config, state)
            };
            // Free steps keep the policy they drew (or none: the deployment's default decides),
            // unless the run is about something else.
            if policies == Policies::CaseRoot {
                step.prop_map(move |s| let_through_one(policies, s)).boxed()
            } else {
                step
            }
        },
        apply_hint,
    )
}

/// The cases `sequences` generates for a backend (what a subject from `factory` claims, what
/// its world can do) at `config`'s seed and breadth, without running any: the same steps, in
/// the same order, as a run that meets no failure. For measuring the gate against the model
/// alone, and for reading what a seed covers.
pub fn generated_cases(
    factory: &dyn Factory,
    config: &SequenceConfig,
) -> Result<Vec<Vec<Step>>, Failure> {
    let configuration = factory
        .configurations()
        .first()
        .cloned()
        .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string());
    let probe = factory
        .make(&CaseOptions::new(
            config.seed,
            CaseDurability::Relaxed,
            configuration,
        ))
        .map_err(|e| Failure::new(FailureKind::Setup, format!("cannot make a subject: {e}")))?;
    let caps = probe.fs.capabilities();
    let gen_config = GenConfig {
        caps,
        fifos: probe.world.supports_fifos(),
        restore_mtime: probe.world.restores_mtime(),
        modes: probe.world.keeps_modes(),
        diff_limit: probe.diff_basis_max_bytes,
        policies: policies_for(caps.sandbox_modes, probe.fs.sandbox_mode(), false),
    };
    drop(probe);
    let strategy = sequence_strategy(gen_config, config.max_steps, false);
    generate(&strategy, config.cases, config.seed)
}

/// Draws `cases` cases from `strategy` on a thread of its own and runs each with `run` as soon
/// as it is drawn, a few at a time ([`concurrent::in_order`]): the results in order, up to and
/// including the first that failed. The cases are those [`generate`] draws, in its order.
///
/// A panic while drawing (the strategy runs the model) ends the drawing, so that no runner
/// waits for a case for ever, and is raised again on this thread once the runners are done —
/// reported as the property's panic, as when the cases were drawn on this thread. Drawing that
/// fails otherwise is a setup failure.
fn draw_and_run(
    strategy: &SequenceStrategy,
    cases: u32,
    seed: u64,
    run: &(dyn Fn(usize, &[Step]) -> concurrent::CaseResult + Sync),
    finished: &mut dyn FnMut(&concurrent::CaseResult),
) -> Result<Vec<concurrent::CaseResult>, Failure> {
    let drawn = Drawn::default();
    let mut generator_panic = None;
    let pre = std::thread::scope(|scope| {
        let generator = std::thread::Builder::new()
            .name("seam-generate".into())
            .spawn_scoped(scope, || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    generate_into(strategy, cases, seed, &drawn)
                }))
                .inspect_err(|_| drawn.end(Some("the generator panicked".into())))
            });
        if let Err(e) = &generator {
            drawn.end(Some(format!("cannot start the generator: {e}")));
        }
        let pre = concurrent::in_order(
            cases as usize,
            &|i| match drawn.case(i) {
                Ok(steps) => run(i, &steps),
                Err(failure) => Err(failure),
            },
            finished,
        );
        // A case failed, or all ran: the cases after it are not wanted.
        drawn.stop();
        if let Ok(handle) = generator
            && let Ok(Err(payload)) = handle.join()
        {
            generator_panic = Some(payload);
        }
        pre
    });
    if let Some(payload) = generator_panic {
        std::panic::resume_unwind(payload);
    }
    match drawn.failed() {
        Some(failure) => Err(failure),
        None => Ok(pre),
    }
}

/// The cases of a run as the generator draws them, for the runners that wait for them: each
/// case is there as soon as it is drawn, so the first cases run while the later ones are drawn.
#[derive(Default)]
struct Drawn {
    state: std::sync::Mutex<DrawnState>,
    changed: std::sync::Condvar,
}

#[derive(Default)]
struct DrawnState {
    /// The cases drawn so far, in order.
    cases: Vec<Arc<Vec<Step>>>,
    /// Drawing ended: `Some(None)` with every case, `Some(Some(why))` when it could not go on.
    ended: Option<Option<String>>,
    /// No more cases are wanted (one failed, or all ran).
    stopped: bool,
}

impl Drawn {
    fn lock(&self) -> std::sync::MutexGuard<'_, DrawnState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds the next case; false when no more are wanted.
    fn push(&self, steps: Vec<Step>) -> bool {
        let mut st = self.lock();
        st.cases.push(Arc::new(steps));
        self.changed.notify_all();
        !st.stopped
    }

    /// Drawing ended, with why it could not go on (`None`: it drew every case).
    fn end(&self, why: Option<String>) {
        let mut st = self.lock();
        st.ended.get_or_insert(why);
        self.changed.notify_all();
    }

    /// No more cases are wanted.
    fn stop(&self) {
        self.lock().stopped = true;
    }

    /// Case `i`, once it is drawn; why not when drawing ended before it.
    fn case(&self, i: usize) -> Result<Arc<Vec<Step>>, Failure> {
        let mut st = self.lock();
        loop {
            if let Some(steps) = st.cases.get(i) {
                return Ok(Arc::clone(steps));
            }
            if let Some(why) = &st.ended {
                let why = why
                    .as_deref()
                    .unwrap_or("it drew fewer cases than asked for");
                return Err(Failure::new(
                    FailureKind::Setup,
                    format!("cannot generate: {why}"),
                ));
            }
            st = self
                .changed
                .wait(st)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Why drawing failed on its own (not because the cases left were no longer wanted).
    fn failed(&self) -> Option<Failure> {
        match &self.lock().ended {
            Some(Some(why)) => Some(Failure::new(
                FailureKind::Setup,
                format!("cannot generate: {why}"),
            )),
            _ => None,
        }
    }
}

/// Draws the cases of [`generate`] into `drawn`, one by one, until all are drawn or no more are
/// wanted: the same cases in the same order (the runner is made the same way, and every case it
/// is given passes until the rest are not wanted).
fn generate_into(strategy: &SequenceStrategy, cases: u32, seed: u64, drawn: &Drawn) {
    let proptest_config = Config {
        cases,
        failure_persistence: None,
        fork: false,
        timeout: 0,
        // A case no longer wanted ends the run as a failure, which is not to be shrunk.
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(proptest_config, rng_for(seed));
    let wanted = std::cell::Cell::new(true);
    let result = runner.run(
        strategy,
        |(_, steps, _): (GenState, Vec<Step>, Option<Arc<AtomicUsize>>)| {
            if drawn.push(steps) {
                Ok(())
            } else {
                wanted.set(false);
                Err(TestCaseError::fail("no more cases are wanted"))
            }
        },
    );
    drawn.end(match result {
        Ok(()) => None,
        Err(_) if !wanted.get() => None,
        Err(e) => Some(e.to_string()),
    });
}

/// The `cases` cases a run at `seed` draws from `strategy`, in order, none run: the runner of
/// a real run, drawing the same way.
fn generate(strategy: &SequenceStrategy, cases: u32, seed: u64) -> Result<Vec<Vec<Step>>, Failure> {
    let proptest_config = Config {
        cases,
        failure_persistence: None,
        fork: false,
        timeout: 0,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(proptest_config, rng_for(seed));
    let drawn = RefCell::new(Vec::new());
    runner
        .run(
            strategy,
            |(_, steps, _): (GenState, Vec<Step>, Option<Arc<AtomicUsize>>)| {
                drawn.borrow_mut().push(steps);
                Ok(())
            },
        )
        .map_err(|e| Failure::new(FailureKind::Setup, format!("cannot generate: {e}")))?;
    Ok(drawn.into_inner())
}

/// The strategy of a run's sequences.
type SequenceStrategy = Sequential<GenState, Step, BoxedStrategy<GenState>, BoxedStrategy<Step>>;

/// How long shrinking a hang may take: each candidate that still hangs costs its (lowered)
/// limit and the grace after it.
const HANG_SHRINK_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// Shrinks a case that hung at its last step: first the hanging step alone, then without each
/// earlier step in turn (latest first), keeping every deletion after which it still hangs —
/// at a lowered limit, within [`HANG_SHRINK_BUDGET`]. The caller confirms the result at the
/// full limit. Returns the smallest case found and the candidates run.
fn shrink_hang(
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
        let ran = run_case_supervised(subjects, monitor, true, options, config, candidate, None);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::Policies;
    use std::sync::Mutex;
    use std::sync::mpsc;
    use std::time::Duration;

    fn strategy() -> SequenceStrategy {
        let gen_config = GenConfig {
            caps: seam::Capabilities::none(),
            fifos: false,
            restore_mtime: true,
            modes: true,
            diff_limit: 1 << 20,
            policies: Policies::None,
        };
        sequence_strategy(gen_config, 12, false)
    }

    /// A strategy whose every transition panics (the model in it failing).
    fn panicking() -> SequenceStrategy {
        Sequential::new(
            (1..=4).into(),
            || proptest::strategy::Just(GenState::new()).boxed(),
            |_, _| true,
            |_| -> BoxedStrategy<Step> { panic!("the model broke while drawing") },
            |state, _| state,
        )
    }

    fn passing(_: usize, steps: &[Step]) -> concurrent::CaseResult {
        let stats = Stats {
            steps: steps.len() as u64,
            ..Stats::default()
        };
        Ok((Vec::new(), stats))
    }

    /// `f` on a thread of its own, given a minute: `None` when it hangs.
    fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(60)).ok()
    }

    #[test]
    fn the_cases_run_are_the_cases_generate_draws_in_its_order() {
        let drawn = generate(&strategy(), 24, 11).expect("drawn");
        let ran = Mutex::new(vec![None; 24]);
        let pre = draw_and_run(
            &strategy(),
            24,
            11,
            &|i, steps| {
                ran.lock().expect("lock")[i] = Some(steps.to_vec());
                passing(i, steps)
            },
            &mut |_| {},
        )
        .expect("ran");
        assert_eq!(pre.len(), 24);
        let ran: Vec<Vec<Step>> = ran
            .into_inner()
            .expect("lock")
            .into_iter()
            .map(|c| c.expect("every case ran"))
            .collect();
        assert_eq!(ran, drawn);
    }

    #[test]
    fn no_case_after_a_failed_one_is_counted() {
        let pre = draw_and_run(
            &strategy(),
            40,
            5,
            &|i, steps| {
                if i == 3 {
                    Err(Failure::new(FailureKind::BytesOnDisk, "case 3 departs"))
                } else {
                    passing(i, steps)
                }
            },
            &mut |_| {},
        )
        .expect("ran");
        assert_eq!(pre.len(), 4, "cases 0 to 3, the failing one last");
        assert!(concurrent::failed(&pre[3]));
    }

    /// Drawing that panics is the property's panic, raised where the run was asked for — not a
    /// run that waits for ever for a case that will never be drawn.
    #[test]
    fn a_panic_while_drawing_is_raised_not_waited_for() {
        let outcome = within_a_minute(|| {
            std::panic::catch_unwind(|| {
                draw_and_run(&panicking(), 8, 5, &passing, &mut |_| {}).map(|pre| pre.len())
            })
        })
        .expect("the run ended");
        let payload = outcome.expect_err("the panic came through");
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert!(text.contains("the model broke while drawing"), "{text}");
    }
}
