//! The properties of a suite run, as a typed registry. Most are fixed scenarios run through the
//! same harness as generated sequences (so every outcome, byte and version is still checked
//! against the model), each step with an *intent* — the code the scenario exists to provoke —
//! so a scenario that drifted into testing nothing fails loudly instead of passing. The rest
//! (claims, races, staging, permissions, sandbox) drive the provider directly.

pub mod bad_input;
pub mod big_dirs;
pub mod claims;
pub mod containment;
mod containment_ns;
pub mod crash;
pub mod crash_rename;
pub mod differential;
pub mod facts;
mod fence_layout;
pub mod identity;
pub mod linearizable;
pub mod permissions;
pub mod policy;
pub mod power_loss;
pub mod races;
mod read_fence;
pub mod sandbox;
pub mod sequences;
pub mod short_cases;
pub mod staging;
pub mod swap_race;
pub mod visibility;

use crate::config::SuiteConfig;
use crate::factory::{CaseDurability, CaseOptions, Factory};
use crate::failure::{Failure, FailureKind, fail};
use crate::harness::HarnessConfig;
use crate::rules::Rule;
use crate::sequences::run_steps;
use crate::stats::Stats;
use crate::step::Step;
use crate::trace::Trace;
use crate::watch::Monitor;
use seam::{Capabilities, Capability, FsErrorCode};
use std::sync::Arc;
use tokio::runtime::Runtime;

/// What a scenario step is for: `Some(code)` must fail with it, `None` must succeed.
pub(crate) type Intent = (usize, Option<FsErrorCode>);

/// Everything a property needs to run. Owned, because a property runs on a thread of its own.
pub struct Context {
    /// The factory as it was given, for work that watches its subjects with a monitor of its
    /// own (a generated case: [`Monitor::for_case`]).
    pub(crate) inner: Arc<dyn Factory>,
    /// Makes (watched) subjects.
    pub factory: Arc<dyn Factory>,
    /// What is in flight, for the supervisor.
    pub(crate) monitor: Arc<Monitor>,
    /// The run's settings.
    pub config: SuiteConfig,
    /// What the provider claims.
    pub caps: Capabilities,
    /// Whether its world can make FIFOs.
    pub fifos: bool,
    /// Whether its world can put an mtime back exactly.
    pub restore_mtime: bool,
    /// Its diff-basis limit.
    pub diff_limit: u64,
    /// Where a long property reports progress (drained by the suite on its own thread).
    pub(crate) progress: Option<std::sync::mpsc::Sender<crate::config::SuiteProgress>>,
}

impl Context {
    /// Options of a fixed scenario: the run's seed, full durability, the first configuration.
    pub fn options(&self) -> CaseOptions {
        let configuration = self
            .factory
            .configurations()
            .first()
            .cloned()
            .unwrap_or_else(|| crate::factory::DEFAULT_CONFIGURATION.to_string());
        CaseOptions::new(
            self.config.sequences.seed,
            CaseDurability::Full,
            configuration,
        )
    }

    pub(crate) fn harness_config(&self) -> HarnessConfig {
        HarnessConfig {
            messages: self.config.sequences.messages,
            // A world change at a checkpoint is a world call: one that has not returned by then
            // is blocked by the provider (half the hang limit, so that the mutation it is in,
            // which has the whole limit, is not given up first).
            checkpoint_wait: self.config.timing.hang_after / 2,
            // A read of a quarter MiB answered in under 5 s on any machine that runs the suite;
            // a backend that serves one call at a time answers it only after the mutation.
            reader_wait: (self.config.timing.hang_after / 2).min(std::time::Duration::from_secs(5)),
            // What the steps answered is text only where a reference is compared with them
            // (`run_case` asks for it then); a property's failure says what differed.
            step_texts: false,
        }
    }

    pub(crate) fn runtime(&self) -> Result<Runtime, Failure> {
        crate::sequences::suite_runtime()
    }

    /// A trace of fixed steps for this property, failing at the last one.
    pub(crate) fn trace(&self, property: &str, steps: Vec<Step>, failure: &Failure) -> Trace {
        Trace::failing(
            self.factory.name(),
            property,
            self.config.sequences.seed,
            Some(self.options().configuration),
            steps,
            failure,
        )
    }
}

/// Whether a property runs against this backend in this run, decided before it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applicability {
    /// It runs.
    Runs,
    /// The backend does not claim these capabilities, which it needs: reported as not claimed.
    NotClaimed(Vec<Capability>),
    /// It cannot run here, for a reason of the run, not of the backend (no reference provider
    /// was given, no way to drop privileges as root): reported as not run, with the reason.
    CannotRun(String),
}

impl Applicability {
    /// [`Applicability::Runs`] when every capability in `needs` is claimed, else
    /// [`Applicability::NotClaimed`] with the ones that are not.
    pub fn needs(caps: &Capabilities, needs: &[Capability]) -> Applicability {
        let missing: Vec<Capability> = needs.iter().copied().filter(|c| !caps.has(*c)).collect();
        if missing.is_empty() {
            Applicability::Runs
        } else {
            Applicability::NotClaimed(missing)
        }
    }
}

/// What a property that ran found it could not check, decided at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotChecked {
    /// Nothing was checked, for a reason of this run (a setup the machine could not give):
    /// reported as not run, and a core property not run leaves the run incomplete.
    NotRun(String),
    /// What the property checks cannot happen through this backend — a fact about the backend,
    /// with the reason (a backend that serves one call at a time shows no reader a write half
    /// done). Reported as not applying, and so are `rules`; it does not stop a pass.
    DoesNotApply {
        /// Why, for people.
        reason: String,
        /// The rules that do not apply for the same reason.
        rules: Vec<Rule>,
    },
    /// The way the backend was given offers no means to check this (a Rust factory without
    /// [`crate::Factory::killable`], a server given by address): like a capability not claimed,
    /// reported as not claimed with the reason, and its `rules` need what is missing.
    NotOffered {
        /// Why, for people.
        reason: String,
        /// What the rules need, for people ("a backend the gate can kill").
        need: String,
        /// The rules that need it.
        rules: Vec<Rule>,
    },
    /// The machine the gate runs on cannot give what the property needs (a FUSE mount for
    /// `power-loss`): reported as not run, with the reason, and its `rules` as needing such a
    /// machine — a fact of where the gate ran, which neither fails the backend nor leaves its
    /// run incomplete.
    NotHere {
        /// Why, for people.
        reason: String,
        /// What the rules need, for people ("a machine where the gate can mount FUSE").
        need: String,
        /// The rules that need it.
        rules: Vec<Rule>,
    },
}

/// The breadth of a run's generated sequences, which the report heads with.
#[derive(Clone, Debug, Default)]
pub struct Generated {
    /// Cases run.
    pub cases: u64,
    /// Of those, at full durability.
    pub full_durability_cases: u64,
    /// Cases per factory configuration.
    pub configurations: std::collections::BTreeMap<String, u64>,
}

/// What a property produced besides its verdict.
#[derive(Debug, Default)]
pub struct Run {
    /// Counts of what ran (the property's `checks` is `stats.checks`).
    pub stats: Stats,
    /// A replayable counterexample, when the property failed on one.
    pub trace: Option<Trace>,
    /// The counterexample's length before shrinking.
    pub shrunk_from: Option<usize>,
    /// The breadth of the generated sequences, for the property that generates the run's
    /// sequences (`sequences`).
    pub generated: Option<Generated>,
    /// Set when the property found at run time that it could not check what it exists for
    /// (it is then never reported as passed).
    pub not_checked: Option<NotChecked>,
    /// What the property observed, in a sentence, where its count of checks alone does not say
    /// (how many reads really overlapped a write).
    pub detail: Option<String>,
}

/// One property of the suite.
pub trait Property: Send + Sync {
    /// Stable name (`sequences`, `staging-private`, ...).
    fn name(&self) -> &'static str;
    /// What it checks, in a sentence.
    fn summary(&self) -> &'static str;
    /// Whether it runs for this backend in this run; reported as such when it does not, never
    /// as passed.
    fn applies(&self, cx: &Context) -> Applicability {
        let _ = cx;
        Applicability::Runs
    }
    /// Whether a run must include this property to be a pass (the core contract).
    fn core(&self) -> bool;
    /// Runs it, filling `out`; the first failed check is the error.
    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure>;
}

/// The per-call policy a property about mutation mechanics gives its mutations: `workspace-write`
/// on the test root for a backend that fences (so that a read-only deployment's fence does not
/// hide what the property checks), nothing for one that does not.
pub(crate) fn let_through(fs: &dyn seam::FileSystem, root: &str) -> Option<seam::SandboxPolicy> {
    fs.sandbox_mode().map(|_| seam::SandboxPolicy {
        mode: seam::SandboxMode::WorkspaceWrite,
        workspace_root: root.to_string(),
    })
}

/// Every property, in the order a run executes them.
pub fn registry() -> Vec<Arc<dyn Property>> {
    vec![
        Arc::new(claims::Claims),
        Arc::new(facts::PathFacts),
        Arc::new(bad_input::BadInput),
        Arc::new(identity::SymlinkIdentity),
        Arc::new(big_dirs::BigDirectories),
        Arc::new(staging::StagingPrivate),
        Arc::new(staging::StagingNotClobbered),
        Arc::new(races::CasRaces),
        Arc::new(linearizable::Linearizable),
        Arc::new(visibility::AtomicVisibility),
        Arc::new(permissions::PermissionDenied),
        Arc::new(sandbox::SandboxModes),
        Arc::new(containment::Containment),
        Arc::new(swap_race::SwapRace),
        Arc::new(crash::Crash),
        Arc::new(crash_rename::CrashRename),
        Arc::new(power_loss::PowerLoss),
        Arc::new(short_cases::ShortCases),
        Arc::new(sequences::Sequences),
        Arc::new(policy::Policy),
        Arc::new(differential::Differential),
    ]
}

/// The names of every property, in run order.
pub fn names() -> Vec<&'static str> {
    registry().iter().map(|p| p.name()).collect()
}

/// `step` with `workspace-write` on the case for every mutation in it that has no policy of its
/// own (in the lanes of a group too).
pub(crate) fn let_through_step(mut step: Step) -> Step {
    if let crate::step::Op::Together { lanes, .. } = &mut step.op {
        for lane in lanes {
            lane.steps = std::mem::take(&mut lane.steps)
                .into_iter()
                .map(let_through_step)
                .collect();
        }
        return step;
    }
    if step.op.is_mutation() && step.sandbox.is_none() {
        step.fenced(crate::step::CallSandbox::case_root())
    } else {
        step
    }
}

/// Runs `steps` and checks both the model agreement and the intents.
pub(crate) fn scenario(
    cx: &Context,
    name: &str,
    steps: Vec<Step>,
    intents: &[Intent],
    out: &mut Run,
) -> Result<(), Failure> {
    let rt = cx.runtime()?;
    // A fencing backend's deployment may be read-only: the scenario is about something else.
    let steps: Arc<[Step]> = if cx.caps.sandbox_modes {
        steps.into_iter().map(let_through_step).collect()
    } else {
        steps.into()
    };
    // Watched: a call the harness held up on purpose (readers at a checkpoint) is the suite's
    // pause, not a slow backend, and a hang names the scenario's steps.
    let (records, stats) = crate::sequences::run_watched(
        cx.factory.as_ref(),
        &rt,
        &cx.options(),
        cx.harness_config(),
        &steps,
        Some(&cx.monitor),
        None,
        None,
    )?;
    out.stats.merge(&stats);
    if let Some(r) = records.iter().find(|r| r.failure.is_some()) {
        let f = r
            .failure
            .clone()
            .unwrap_or_else(|| fail(FailureKind::Setup, "?"));
        let failing = steps[..=r.index].to_vec();
        let (small, f) = shrink_scenario(cx, &rt, failing, f);
        if small.len() <= r.index {
            out.shrunk_from = Some(r.index + 1);
        }
        let description = small.last().map(crate::step::describe).unwrap_or_default();
        let failure = Failure::new(
            f.kind,
            format!(
                "step {} ({description}): {}",
                small.len().saturating_sub(1),
                f.message
            ),
        );
        out.trace = Some(cx.trace(name, small, &failure));
        return Err(failure);
    }
    for &(i, want) in intents {
        out.stats.check();
        let Some(r) = records.get(i) else {
            return Err(fail(
                FailureKind::Scenario,
                format!("scenario step {i} did not run"),
            ));
        };
        if r.expected_code != want {
            return Err(fail(
                FailureKind::Scenario,
                format!(
                    "scenario drifted: step {i} ({}) was meant to {} but the model expects {}",
                    r.description,
                    want.map_or("succeed".to_string(), |c| format!("fail with {c}")),
                    r.expected_code
                        .map_or("success".to_string(), |c| c.to_string())
                ),
            ));
        }
    }
    Ok(())
}

/// How many runs shrinking a fixed scenario's failure may take.
const SCENARIO_SHRINK_RUNS: usize = 200;

/// Shrinks a failing fixed scenario (`steps` ends at the failing step): first its world changes
/// and the failing step alone, then without each earlier step in turn (latest first), keeping
/// each deletion after which the last step still fails the same way. A hang or a panic is not
/// shrunk (each run would wait it out), nor is a trace of four steps or fewer.
fn shrink_scenario(
    cx: &Context,
    rt: &Runtime,
    steps: Vec<Step>,
    failure: Failure,
) -> (Vec<Step>, Failure) {
    if steps.len() <= 4 || matches!(failure.kind, FailureKind::Timeout | FailureKind::Panic) {
        return (steps, failure);
    }
    let kind = failure.kind;
    let runs = std::cell::Cell::new(0usize);
    let again = |candidate: &[Step]| -> Option<Failure> {
        runs.set(runs.get() + 1);
        let (records, _) = run_steps(
            cx.factory.as_ref(),
            rt,
            &cx.options(),
            cx.harness_config(),
            candidate,
        )
        .ok()?;
        let last = records.last()?;
        let f = last.failure.clone()?;
        (records.len() == candidate.len() && f.kind == kind).then_some(f)
    };
    let (mut best, mut found) = (steps, failure);
    let world_and_last: Vec<Step> = best[..best.len() - 1]
        .iter()
        .filter(|s| matches!(s.op, crate::step::Op::World(_)))
        .chain(best.last())
        .cloned()
        .collect();
    if world_and_last.len() < best.len()
        && let Some(f) = again(&world_and_last)
    {
        best = world_and_last;
        found = f;
    }
    let mut i = best.len() - 1;
    while i > 0 && runs.get() < SCENARIO_SHRINK_RUNS {
        i -= 1;
        let mut candidate = best.clone();
        candidate.remove(i);
        if let Some(f) = again(&candidate) {
            best = candidate;
            found = f;
        }
    }
    (best, found)
}
