//! Saved counterexamples named `fault-<name>.json` must still catch their broken variant when
//! replayed, and a failing run's trace replays to the same departure (`seam replay` in a build
//! with the `faults` feature does the same from the command line) — a race, a linearizability
//! batch and a visibility round as much as a generated sequence.

mod support;

use seam::Capability;
use seam_conformance::{
    Factory, FailureKind, ReplayConfig, SequenceConfig, SuiteConfig, Trace, replay, run_suite,
};
use seam_faults::{Fault, FaultyFactory};
use seam_local_testkit::LocalFactory;
use std::path::Path;
use std::sync::Arc;

#[test]
fn fault_counterexamples_still_catch_their_fault() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/counterexamples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("counterexamples dir") {
        let path = entry.expect("entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let Some(name) = stem.strip_prefix("fault-") else {
            continue;
        };
        let fault = Fault::from_name(name).unwrap_or_else(|| panic!("{stem}: no such fault"));
        let trace = Trace::parse(&std::fs::read_to_string(&path).expect("read")).expect("parse");
        let broken = Arc::new(FaultyFactory::new(Arc::new(LocalFactory), fault));
        let config = ReplayConfig {
            attempts: ReplayConfig::attempts_for(&trace),
            ..ReplayConfig::default()
        };
        let outcome = replay(broken, &trace, &config).expect("replays");
        let departure = outcome
            .departure()
            .unwrap_or_else(|| panic!("{stem} no longer catches {name}"));
        let (_, kinds) = fault.caught_as();
        let kind = departure.failure.as_ref().map(|f| f.kind);
        assert!(kind.is_some_and(|k| kinds.contains(&k)), "{stem}: {kind:?}");
        seen += 1;
    }
    assert!(seen >= 16, "only {seen} fault counterexamples");
}

#[test]
fn a_failing_trace_replays_to_the_same_departure() {
    let broken = Arc::new(FaultyFactory::new(
        Arc::new(LocalFactory),
        Fault::LocaleOrderedListing,
    ));
    let config = SuiteConfig {
        sequences: SequenceConfig {
            seed: 11,
            ..SequenceConfig::default()
        },
        only: vec!["sequences".into()],
        ..SuiteConfig::default()
    };
    let report = run_suite(broken.clone(), &config, &mut |_| {}).expect("runs");
    let p = &report
        .properties
        .iter()
        .find(|p| p.name == "sequences")
        .expect("ran");
    let trace = p.trace.clone().expect("a trace");
    let json = trace.to_json();
    let back = Trace::parse(&json).expect("round trip");
    let outcome = replay(broken, &back, &ReplayConfig::default()).expect("replays");
    let departure = outcome.departure().expect("departs");
    assert_eq!(departure.index, trace.steps.len() - 1);
    assert_eq!(
        departure.failure.as_ref().map(|f| f.kind),
        trace.failure.as_ref().and_then(|f| f.kind)
    );
    // The correct provider follows the same trace to the end.
    let fixed = replay(Arc::new(LocalFactory), &back, &ReplayConfig::default()).expect("replays");
    assert!(fixed.departure().is_none());
}

/// The local provider without its cancel points: `atomic-visibility` then has only its
/// free-running rounds (readers looping beside writers), whose failures are concurrent traces.
fn without_cancel_points() -> Arc<dyn Factory> {
    let mut f =
        support::HookedFactory::new(Arc::new(LocalFactory), Arc::new(|_, _| support::Before::Go));
    f.without = Some(Capability::CancelPoints);
    Arc::new(f)
}

/// A failure of a property that runs steps at the same time is a trace too: saved, parsed back,
/// and replayed (a few runs, for a race) to a departure of the same kind; the correct provider
/// follows the same trace through every run.
#[test]
fn a_race_a_linearizability_batch_and_a_visibility_round_replay_from_their_traces() {
    let local: Arc<dyn Factory> = Arc::new(LocalFactory);
    for (base, fault, property, kind) in [
        (
            local.clone(),
            Fault::GuardCheckedApart,
            "cas-races",
            FailureKind::Race,
        ),
        (
            local,
            Fault::EditReadsOutsideLock,
            "linearizable",
            FailureKind::Linearizability,
        ),
        (
            without_cancel_points(),
            Fault::TruncatesInPlace,
            "atomic-visibility",
            FailureKind::TornRead,
        ),
    ] {
        let broken = Arc::new(FaultyFactory::new(base.clone(), fault));
        let config = SuiteConfig {
            sequences: SequenceConfig {
                seed: 24228,
                ..SequenceConfig::default()
            },
            only: vec![property.into()],
            ..SuiteConfig::default()
        };
        let report = run_suite(broken.clone(), &config, &mut |_| {}).expect("runs");
        let p = report
            .properties
            .iter()
            .find(|p| p.name == property)
            .expect("ran");
        assert_eq!(
            p.failure_kind,
            Some(kind),
            "{}: {:?}",
            fault.name(),
            p.failure
        );
        let trace = p
            .trace
            .clone()
            .unwrap_or_else(|| panic!("{}: no trace saved", fault.name()));
        assert!(
            trace.is_concurrent(),
            "{}: a trace of {} steps, none concurrent",
            fault.name(),
            trace.steps.len()
        );
        let back = Trace::parse(&trace.to_json()).expect("round trip");
        assert_eq!(back, trace);
        let replay_config = ReplayConfig {
            attempts: ReplayConfig::attempts_for(&back),
            ..ReplayConfig::default()
        };
        assert!(replay_config.attempts > 1, "a race gets more than one run");
        let outcome = replay(broken, &back, &replay_config).expect("replays");
        let departure = outcome
            .departure()
            .unwrap_or_else(|| panic!("{}: {} runs, no departure", fault.name(), outcome.attempts));
        assert_eq!(departure.index, back.steps.len() - 1, "{}", fault.name());
        assert_eq!(
            departure.failure.as_ref().map(|f| f.kind),
            Some(kind),
            "{}: {:?}",
            fault.name(),
            departure.failure
        );
        let fixed = replay(base, &back, &replay_config).expect("replays");
        assert!(
            fixed.departure().is_none(),
            "{}: the correct provider departs: {:?}",
            fault.name(),
            fixed.departure()
        );
        assert_eq!(
            fixed.attempts, replay_config.attempts,
            "every run followed the model"
        );
    }
}
