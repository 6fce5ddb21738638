//! The generated-sequence property: proptest (through proptest-state-machine's sequential
//! strategy, so shrinking deletes whole steps before it simplifies single ones) drives sequences
//! against fresh subjects; a failing one is shrunk and then replayed once more to capture a
//! readable record of every step. Everything is derived from the seed, so the same seed
//! generates the same cases and shrinks to the same trace.

use crate::agent::AgentFactory;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::generate::{
    GenConfig, GenState, Policies, agent_opening, agent_step_strategy, apply_hint, let_through,
    let_through_one, opening, step_strategy,
};
use crate::harness::{Harness, HarnessConfig, MessageCheck, StepRecord};
use crate::stats::Stats;
use crate::step::Step;
use crate::watch::Monitor;
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
    /// Each step of the shrunk sequence as replayed.
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

/// A current-thread runtime for driving a provider from synchronous test code.
pub fn runtime() -> Result<Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))
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
    monitor: Option<&Monitor>,
    seen: Option<&AtomicUsize>,
    agent: Option<&dyn AgentFactory>,
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    let subject = factory
        .make(options)
        .map_err(|e| Failure::new(FailureKind::Setup, format!("cannot make a subject: {e}")))?;
    let mut harness = Harness::with_agent(subject, config, agent);
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
        let record = harness.step(rt, i, step);
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

/// One case: against `factory` alone, or — with a `reference` — against both, the step records
/// compared in normal form ([`StepRecord::normal`]); the first step they answer differently
/// fails as [`FailureKind::Differential`]. A departure from the model on either side is that
/// side's failure, named.
#[allow(clippy::too_many_arguments)]
fn run_case(
    factory: &dyn Factory,
    reference: Option<&dyn Factory>,
    rt: &Runtime,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &[Step],
    monitor: Option<&Monitor>,
    seen: Option<&AtomicUsize>,
    agent: Option<&dyn AgentFactory>,
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    let (mut records, mut stats) =
        run_watched(factory, rt, options, config, steps, monitor, seen, agent)?;
    let Some(reference) = reference else {
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

struct RunState {
    outcome: SequenceOutcome,
    failing: Option<String>,
    best_len: usize,
    original_len: usize,
}

/// Runs the sequence property against subjects from `factory`.
pub fn run_sequences(
    factory: &dyn Factory,
    config: &SequenceConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<SequenceOutcome, Failure> {
    run_sequences_watched(
        factory,
        None,
        config,
        HarnessConfig::default(),
        None,
        None,
        progress,
    )
}

/// Generated sequences of tool calls by two sessions through `agent` over subjects from
/// `factory`, with the world changing behind their backs: the policy property.
pub fn run_agent_sequences(
    factory: &dyn Factory,
    agent: &dyn AgentFactory,
    config: &SequenceConfig,
    progress: &mut dyn FnMut(Progress),
) -> Result<SequenceOutcome, Failure> {
    run_sequences_watched(
        factory,
        None,
        config,
        HarnessConfig::default(),
        None,
        Some(agent),
        progress,
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run_sequences_watched(
    factory: &dyn Factory,
    reference: Option<&dyn Factory>,
    config: &SequenceConfig,
    harness_config: HarnessConfig,
    monitor: Option<&Monitor>,
    agent: Option<&dyn AgentFactory>,
    progress: &mut dyn FnMut(Progress),
) -> Result<SequenceOutcome, Failure> {
    let started = Instant::now();
    let rt = runtime().map_err(|e| Failure::new(FailureKind::Setup, e))?;
    let harness_config = HarnessConfig {
        messages: config.messages,
        ..harness_config
    };
    let configurations = factory.configurations();
    let first = configurations
        .first()
        .cloned()
        .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string());
    let probe = factory
        .make(&CaseOptions::new(
            config.seed,
            CaseDurability::Relaxed,
            first,
        ))
        .map_err(|e| Failure::new(FailureKind::Setup, format!("cannot make a subject: {e}")))?;
    let caps = probe.fs.capabilities();
    let gen_config = GenConfig {
        caps,
        fifos: probe.world.supports_fifos(),
        diff_limit: probe.diff_basis_max_bytes,
        policies: policies_for(
            caps.sandbox_modes,
            probe.fs.sandbox_mode(),
            reference.is_some() || agent.is_some(),
        ),
    };
    drop(probe);

    // The reference state during generation is a model of the world, used to aim steps at
    // entries that exist. Every step is valid in every state (the model predicts its outcome),
    // so preconditions always hold and shrinking may delete any step.
    // The initial state carries an aimed opening (often empty) that the first transitions play.
    let opening_config = gen_config.clone();
    let agent_mode = agent.is_some();
    let strategy = Sequential::new(
        (1..=config.max_steps.max(1)).into(),
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
        |_: &GenState, _: &Step| true,
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
    );
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
        failing: None,
        best_len: usize::MAX,
        original_len: 0,
    });
    let every = u64::from(config.full_durability_every.max(1));
    let progress = RefCell::new(progress);
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
    let result = runner.run(
        &strategy,
        |(_, steps, seen): (GenState, Vec<Step>, Option<Arc<AtomicUsize>>)| {
            let (case_no, failing) = {
                let st = state.borrow();
                (st.outcome.cases, st.failing.is_some())
            };
            // While shrinking, every attempt reruns the failing case's options.
            let case_no = if failing { case_no - 1 } else { case_no };
            let options = options_for(case_no);
            let (records, stats) = run_case(
                factory,
                reference,
                &rt,
                &options,
                harness_config,
                &steps,
                monitor,
                seen.as_deref(),
                agent,
            )
            .map_err(|f| TestCaseError::fail(f.to_string()))?;
            let mut st = state.borrow_mut();
            let failure = records
                .last()
                .and_then(|r| r.failure.clone().map(|f| (r.index, f)));
            if failing {
                if let Some(f) = st.outcome.failure.as_mut() {
                    f.shrink_runs += 1;
                }
                if let Some((index, _)) = &failure {
                    st.best_len = st.best_len.min(index + 1);
                }
                let (attempt, len) = (
                    st.outcome.failure.as_ref().map_or(0, |f| f.shrink_runs),
                    st.best_len,
                );
                drop(st);
                (progress.borrow_mut())(Progress::Shrinking { attempt, len });
            } else {
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
                    st.failing = Some(options.configuration.clone());
                    st.original_len = index + 1;
                    st.best_len = index + 1;
                    st.outcome.failure = Some(SequenceFailure {
                        failure: f.clone(),
                        steps: Vec::new(),
                        original_len: index + 1,
                        records: Vec::new(),
                        shrink_runs: 0,
                        configuration: options.configuration.clone(),
                    });
                }
                let p = Progress::Case {
                    done: st.outcome.cases,
                    total: u64::from(config.cases),
                    steps: st.outcome.stats.steps,
                };
                drop(st);
                (progress.borrow_mut())(p);
            }
            match failure {
                Some((index, f)) => Err(TestCaseError::fail(format!("step {index}: {f}"))),
                None => Ok(()),
            }
        },
    );
    let mut st = state.into_inner();
    match result {
        Ok(()) => {}
        Err(TestError::Fail(_, (_, steps, _))) => {
            // Replay the minimal sequence once more for a clean record of each step.
            let case_no = st.outcome.cases.saturating_sub(1);
            let options = options_for(case_no);
            let (records, _) = run_case(
                factory,
                reference,
                &rt,
                &options,
                harness_config,
                &steps,
                monitor,
                None,
                agent,
            )?;
            let shrink_runs = st.outcome.failure.as_ref().map_or(0, |f| f.shrink_runs);
            let first = st.outcome.failure.as_ref().map(|f| f.failure.clone());
            let (failure, len) = match records.last().and_then(|r| r.failure.clone()) {
                Some(f) => (f, records.len()),
                None => (
                    Failure::new(
                        first.as_ref().map_or(FailureKind::Setup, |f| f.kind),
                        format!(
                            "a flaky failure: the shrunk sequence passed when replayed; the first failure seen was: {}",
                            first.map_or_else(|| "?".to_string(), |f| f.to_string())
                        ),
                    ),
                    steps.len(),
                ),
            };
            st.outcome.failure = Some(SequenceFailure {
                failure,
                steps: steps[..len.min(steps.len())].to_vec(),
                original_len: st.original_len,
                records,
                shrink_runs,
                configuration: options.configuration,
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
