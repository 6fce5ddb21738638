//! Drawing a run's cases: the strategy of its sequences, and a generator thread that hands
//! each case to the runners as soon as it is drawn — the same cases in the same order as
//! drawing them all first.

use super::{SequenceConfig, policies_for, rng_for};
use crate::concurrent;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind};
use crate::generate::{
    GenConfig, GenState, Policies, agent_opening, agent_step_strategy, apply_hint,
    keeps_links_inside, let_through, let_through_one, opening, step_strategy,
};
use crate::step::Step;
use proptest::strategy::{BoxedStrategy, Strategy};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use proptest_state_machine::strategy::Sequential;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

/// The strategy of a run's sequences: each case an aimed opening (often empty) and then free
/// steps, up to `max_steps`.
pub(super) fn sequence_strategy(
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
pub(super) fn draw_and_run(
    strategy: &SequenceStrategy,
    cases: u32,
    seed: u64,
    run: &(dyn Fn(usize, &Arc<[Step]>) -> concurrent::CaseResult + Sync),
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
pub(super) struct Drawn {
    state: std::sync::Mutex<DrawnState>,
    changed: std::sync::Condvar,
}

#[derive(Default)]
pub(super) struct DrawnState {
    /// The cases drawn so far, in order.
    cases: Vec<Arc<[Step]>>,
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
        st.cases.push(steps.into());
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
    fn case(&self, i: usize) -> Result<Arc<[Step]>, Failure> {
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
pub(super) fn generate_into(strategy: &SequenceStrategy, cases: u32, seed: u64, drawn: &Drawn) {
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
pub(super) fn generate(
    strategy: &SequenceStrategy,
    cases: u32,
    seed: u64,
) -> Result<Vec<Vec<Step>>, Failure> {
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
pub(super) type SequenceStrategy =
    Sequential<GenState, Step, BoxedStrategy<GenState>, BoxedStrategy<Step>>;
