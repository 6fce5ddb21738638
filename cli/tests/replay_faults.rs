//! Saved counterexamples named `fault-<name>.json` must still catch their broken variant when
//! replayed, and a failing run's trace replays to the same departure (`seam replay` in a build
//! with the `faults` feature does the same from the command line).

use seam_cli::providers::LocalFactory;
use seam_conformance::{MessageCheck, SequenceConfig, SuiteConfig, Trace, replay, run_suite};
use seam_faults::{Fault, FaultyFactory};
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
        let broken = FaultyFactory::new(Arc::new(LocalFactory), fault);
        let outcome = replay(&broken, &trace, MessageCheck::Exact).expect("replays");
        let departure = outcome
            .departure()
            .unwrap_or_else(|| panic!("{stem} no longer catches {name}"));
        let (_, kinds) = fault.caught_as();
        let kind = departure.failure.as_ref().map(|f| f.kind);
        assert!(kind.is_some_and(|k| kinds.contains(&k)), "{stem}: {kind:?}");
        seen += 1;
    }
    assert!(seen >= 9, "only {seen} fault counterexamples");
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
    let outcome = replay(broken.as_ref(), &back, MessageCheck::Exact).expect("replays");
    let departure = outcome.departure().expect("departs");
    assert_eq!(departure.index, trace.steps.len() - 1);
    assert_eq!(
        departure.failure.as_ref().map(|f| f.kind),
        trace.failure.as_ref().and_then(|f| f.kind)
    );
    // The correct provider follows the same trace to the end.
    let fixed = replay(&LocalFactory, &back, MessageCheck::Exact).expect("replays");
    assert!(fixed.departure().is_none());
}
