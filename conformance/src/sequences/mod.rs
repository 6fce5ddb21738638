//! The generated-sequence property: proptest (through proptest-state-machine's sequential
//! strategy, so shrinking deletes whole steps before it simplifies single ones) drives sequences
//! against fresh subjects; a failing one is shrunk and then replayed once more to capture a
//! readable record of every step. Everything is derived from the seed, so the same seed
//! generates the same cases and shrinks to the same trace.

use crate::agent::AgentFactory;
use crate::factory::{CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::generate::Policies;
use crate::harness::{Harness, HarnessConfig, MessageCheck, StepRecord};
use crate::stats::Stats;
use crate::step::Step;
use crate::timing::Timing;
use crate::watch::{Monitor, WatchedFactory, supervised};
use proptest::test_runner::{RngAlgorithm, TestRng};
use seam::SandboxMode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::runtime::Runtime;

mod draw;
mod run;
#[cfg(test)]
mod tests;

pub use draw::generated_cases;
pub(crate) use run::run_sequences_watched;

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

thread_local! {
    /// The runtime the last case on this thread ran on, kept for the next (see [`case_runtime`]).
    static KEPT: std::cell::RefCell<Option<Runtime>> = const { std::cell::RefCell::new(None) };
}

/// The runtime a case runs on: the one the thread's last case left, or a new one. Building a
/// runtime, and the thread its blocking pool starts for a disk provider's first call, cost a
/// short case more than its calls did; the threads cases run on are kept
/// ([`crate::watch::supervised`]), and their runtimes with them. Handed back with
/// [`keep_runtime`], which keeps it only when the case left no task behind: one that did is
/// dropped, and its tasks with it, as every case's were when each had its own. (Work on the
/// blocking pool is not a task it can count: a case that gave a call up, whose blocking work
/// may still run, drops its runtime instead of handing it back — dropping waits for that work,
/// as it did when every case had its own.)
fn case_runtime() -> Result<Runtime, Failure> {
    match KEPT.with(|k| k.borrow_mut().take()) {
        Some(rt) => Ok(rt),
        None => suite_runtime(),
    }
}

/// See [`case_runtime`].
fn keep_runtime(rt: Runtime) {
    if rt.metrics().num_alive_tasks() == 0 {
        KEPT.with(|k| *k.borrow_mut() = Some(rt));
    }
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
    run_watched(
        factory,
        rt,
        options,
        config,
        &steps.into(),
        None,
        None,
        None,
    )
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
    run_watched(
        factory,
        rt,
        options,
        config,
        &steps.into(),
        None,
        None,
        Some(agent),
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run_watched(
    factory: &dyn Factory,
    rt: &Runtime,
    options: &CaseOptions,
    config: HarnessConfig,
    steps: &Arc<[Step]>,
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
    let mut harness = Harness::with_agent(subject, config, agent)
        .with_stream_window(factory.streams_through_a_window());
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
    steps: &Arc<[Step]>,
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
    steps: &Arc<[Step]>,
    seen: Option<Arc<AtomicUsize>>,
) -> Result<(Vec<StepRecord>, Stats), Failure> {
    let monitor = parent.for_case(lowered);
    let watched = subjects.watched_by(&monitor);
    // The case is shared with the thread that runs it, not copied.
    let (m, options, owned) = (monitor.clone(), options.clone(), Arc::clone(steps));
    let result = supervised(
        &monitor,
        move || -> Result<(Vec<StepRecord>, Stats), Failure> {
            let rt = case_runtime()?;
            let ran = run_case(
                &watched,
                &rt,
                &options,
                config,
                &owned,
                Some(&m),
                seen.as_deref(),
            );
            if !m.gave_up_any() {
                keep_runtime(rt);
            }
            ran
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
