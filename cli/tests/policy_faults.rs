//! The `policy` property's self-test. The shipped tools and policy pass it (beside the broken
//! agents, at the same seed and breadth); each broken composition of them fails it for its own
//! reason. The broken gates and agents live here, in a test, never in a shipped crate: they wrap
//! the real policy and the real tools.

use seam::{Actor, FileSystem, FsError, FsObservation, FsTarget, FsVersion, Gate, WriteIntent};
use seam_cli::agent::{ToolAgent, ToolAgentFactory};
use seam_conformance::{
    Agent, AgentError, AgentFactory, FailureKind, PropertyResult, Report, SequenceConfig, Status,
    SuiteConfig, run_suite,
};
use seam_local_testkit::LocalFactory;
use seam_policy::{ObservationPolicy, Owner};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// The suite's default seed and one other.
const SEEDS: [u64; 2] = [0x5EA4, 7];

fn run(agent: Arc<dyn AgentFactory>, seed: u64) -> Report {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            seed,
            ..SequenceConfig::default()
        },
        only: vec!["policy".into()],
        agent: Some(agent),
        ..SuiteConfig::default()
    };
    run_suite(Arc::new(LocalFactory), &config, &mut |_| {}).expect("the suite runs")
}

fn policy(report: &Report) -> &PropertyResult {
    report
        .properties
        .iter()
        .find(|p| p.name == "policy")
        .expect("policy is in the report")
}

/// The tools over the local provider with `gate` instead of the policy.
struct Gated(fn() -> Arc<dyn Gate>, &'static str);

impl AgentFactory for Gated {
    fn name(&self) -> String {
        self.1.into()
    }
    fn agent(&self, fs: Arc<dyn FileSystem>, cwd: &str) -> Box<dyn Agent> {
        Box::new(ToolAgent::new(fs, cwd, (self.0)()))
    }
}

/// The real policy, except that it records only the first version each session is shown of
/// each file: a re-read after a stale change teaches it nothing.
struct KeepsFirstVersion {
    inner: ObservationPolicy,
    /// (session, key) pairs already recorded.
    seen: Mutex<HashSet<(String, String)>>,
}

#[async_trait::async_trait]
impl Gate for KeepsFirstVersion {
    async fn write_intent(
        &self,
        t: &FsTarget,
        a: Option<&Actor>,
    ) -> Result<Option<WriteIntent>, FsError> {
        self.inner.write_intent(t, a).await
    }
    async fn edit_intent(
        &self,
        t: &FsTarget,
        a: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        self.inner.edit_intent(t, a).await
    }
    fn observed(&self, t: &FsTarget, o: &FsObservation, a: Option<&Actor>) {
        let session = a
            .and_then(|a| a.downcast_ref::<Owner>())
            .map(|o| format!("{o:?}"))
            .unwrap_or_default();
        let first = self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((session, t.key.as_str().to_string()));
        if first || matches!(o, FsObservation::Absent) {
            self.inner.observed(t, o, a);
        }
    }
}

/// The real policy, except that a read that finds nothing is not recorded.
struct IgnoresAbsent(ObservationPolicy);

#[async_trait::async_trait]
impl Gate for IgnoresAbsent {
    async fn write_intent(
        &self,
        t: &FsTarget,
        a: Option<&Actor>,
    ) -> Result<Option<WriteIntent>, FsError> {
        self.0.write_intent(t, a).await
    }
    async fn edit_intent(
        &self,
        t: &FsTarget,
        a: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        self.0.edit_intent(t, a).await
    }
    fn observed(&self, t: &FsTarget, o: &FsObservation, a: Option<&Actor>) {
        if !matches!(o, FsObservation::Absent) {
            self.0.observed(t, o, a);
        }
    }
}

/// The real tools and policy, but every owner number is one session.
struct SharedSession;

struct Shared(Box<dyn Agent>);

#[async_trait::async_trait]
impl Agent for Shared {
    async fn read(
        &self,
        _owner: u8,
        path: &str,
        window: Option<(u64, u64)>,
    ) -> Result<(), AgentError> {
        self.0.read(0, path, window).await
    }
    async fn write(&self, _owner: u8, path: &str, content: &str) -> Result<(), AgentError> {
        self.0.write(0, path, content).await
    }
    async fn edit(
        &self,
        _owner: u8,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<(), AgentError> {
        self.0.edit(0, path, old, new, replace_all).await
    }
}

impl AgentFactory for SharedSession {
    fn name(&self) -> String {
        "shared-session".into()
    }
    fn agent(&self, fs: Arc<dyn FileSystem>, cwd: &str) -> Box<dyn Agent> {
        Box::new(Shared(ToolAgentFactory.agent(fs, cwd)))
    }
}

/// Each broken agent, and the words its failure must carry (one of them: the shortest
/// counterexample may show the mistake through the policy's law or through the model).
fn broken() -> Vec<(Arc<dyn AgentFactory>, &'static [&'static str])> {
    vec![
        (
            Arc::new(Gated(|| Arc::new(seam::BareGate), "no-gate")),
            &[
                "the model expects Err(FS_NOT_OBSERVED",
                "changed a file its session had not observed at its current version (no session",
                // The aimed case of a file deleted under a session: with no gate at all, the
                // stale write goes through.
                "the policy let write \"a\" through (its session saw an older version",
            ],
        ),
        (
            Arc::new(SharedSession),
            &["(its session never observed the file; the other session did)"],
        ),
        (
            Arc::new(Gated(
                || {
                    Arc::new(KeepsFirstVersion {
                        inner: ObservationPolicy::new(),
                        seen: Mutex::default(),
                    })
                },
                "keeps-first-version",
            )),
            &[
                "the remedy failed",
                "(its session saw the file at its current version)",
            ],
        ),
        (
            Arc::new(Gated(
                || Arc::new(IgnoresAbsent(ObservationPolicy::new())),
                "ignores-absent",
            )),
            &[
                "(its session saw nothing there)",
                // The aimed case: a session that re-read a deleted file and found nothing must
                // then be able to write it; with the absence unrecorded, the retry is refused.
                "the remedy failed: after FS_STALE_VERSION and a re-read, with nothing changed since, the retry was refused",
            ],
        ),
    ]
}

#[test]
fn the_shipped_policy_passes_and_each_broken_one_fails_for_its_own_reason() {
    for seed in SEEDS {
        let control = run(Arc::new(ToolAgentFactory), seed);
        assert_eq!(policy(&control).status, Status::Passed, "seed {seed}");
        assert!(policy(&control).checks > 1000, "seed {seed}");
        for (agent, reason) in broken() {
            let name = agent.name();
            let report = run(agent, seed);
            let p = policy(&report);
            assert_eq!(
                p.status,
                Status::Failed,
                "seed {seed}: {name} was not caught:\n{}",
                report.render()
            );
            let message = p.failure.clone().unwrap_or_default();
            eprintln!("seed {seed}: {name}: {message}");
            assert_eq!(
                p.failure_kind,
                Some(FailureKind::Policy),
                "seed {seed}: {name}: {message}"
            );
            assert!(
                reason.iter().any(|r| message.contains(r)),
                "seed {seed}: {name} failed for another reason: {message}"
            );
            let trace = p.trace.as_ref().expect("a counterexample");
            assert!(
                trace.steps.len() <= 8,
                "seed {seed}: {name}: {} steps",
                trace.steps.len()
            );
        }
    }
}

#[test]
fn without_an_agent_surface_the_policy_property_says_it_did_not_run() {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            cases: 4,
            ..SequenceConfig::default()
        },
        only: vec!["policy".into()],
        ..SuiteConfig::default()
    };
    let report = run_suite(Arc::new(LocalFactory), &config, &mut |_| {}).expect("the suite runs");
    match &policy(&report).status {
        Status::NotRun(why) => assert!(why.starts_with("no agent surface"), "{why}"),
        other => panic!("{other:?}"),
    }
    let text = report.render();
    assert!(
        text.contains("NOT RUN: no agent surface was given"),
        "{text}"
    );
    let policy_rules: Vec<_> = report
        .rules
        .iter()
        .filter(|r| r.id.starts_with("policy."))
        .collect();
    assert_eq!(policy_rules.len(), 6);
    assert!(
        policy_rules
            .iter()
            .all(|r| r.coverage == seam_conformance::Coverage::NotApplicable
                && r.needs.as_deref() == Some("an agent surface"))
    );
}
