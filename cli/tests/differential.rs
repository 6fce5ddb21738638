//! The `differential` property: the sandbox under workspace-write (every mutation through its
//! confined walk) answers exactly like the local provider it wraps, and a provider that differs
//! from its reference only where the model looks away (an error's wording, with messages
//! compared by code only) passes `sequences` and is
//! caught here, for its own reason, with a short trace — at the same seeds.

use seam_conformance::{
    FailureKind, MessageCheck, PropertyResult, Report, SequenceConfig, Status, SuiteConfig,
    run_suite,
};
use seam_faults::{Fault, FaultyFactory};
use seam_local_testkit::LocalFactory;
use seam_sandbox_testkit::SandboxFactory;
use std::sync::Arc;

const SEEDS: [u64; 2] = [0x5EA4, 7];

fn run(subject: Arc<dyn seam_conformance::Factory>, seed: u64, messages: MessageCheck) -> Report {
    let config = SuiteConfig {
        // A quarter of the default breadth: both runs at one seed share it, and a divergence
        // at the first read is found in the first cases.
        sequences: SequenceConfig {
            seed,
            messages,
            cases: 64,
            ..SequenceConfig::default()
        },
        only: vec!["sequences".into(), "differential".into()],
        reference: Some(Arc::new(LocalFactory)),
        ..SuiteConfig::default()
    };
    run_suite(subject, &config, &mut |_| {}).expect("the suite runs")
}

fn property<'r>(report: &'r Report, name: &str) -> &'r PropertyResult {
    report
        .properties
        .iter()
        .find(|p| p.name == name)
        .expect("in the report")
}

#[test]
fn the_sandbox_answers_like_local_and_a_reworded_provider_is_caught() {
    for seed in SEEDS {
        let open = run(
            // workspace-write: the mode whose mutations run through the confined walk.
            Arc::new(SandboxFactory(seam::SandboxMode::WorkspaceWrite)),
            seed,
            MessageCheck::Exact,
        );
        let d = property(&open, "differential");
        assert_eq!(d.status, Status::Passed, "seed {seed}:\n{}", open.render());
        assert!(d.checks > 1000, "seed {seed}: {} checks", d.checks);

        let reworded = Arc::new(FaultyFactory::new(
            Arc::new(LocalFactory),
            Fault::RewordsReadErrors,
        ));
        let report = run(reworded, seed, MessageCheck::CodeOnly);
        // The model, comparing codes only, cannot see it...
        assert_eq!(
            property(&report, "sequences").status,
            Status::Passed,
            "seed {seed}:\n{}",
            report.render()
        );
        // ...the reference can.
        let d = property(&report, "differential");
        assert_eq!(
            d.status,
            Status::Failed,
            "seed {seed}:\n{}",
            report.render()
        );
        assert_eq!(d.failure_kind, Some(FailureKind::Differential));
        let message = d.failure.clone().unwrap_or_default();
        eprintln!("seed {seed}: {message}");
        assert!(
            message.contains("(reworded)") && message.contains("local answered"),
            "seed {seed}: {message}"
        );
        let trace = d.trace.as_ref().expect("a counterexample");
        assert!(d.shrunk_from.is_some(), "seed {seed}: not shrunk");
        assert!(
            trace.steps.len() <= 4,
            "seed {seed}: {} steps",
            trace.steps.len()
        );
    }
}

#[test]
fn without_a_reference_the_differential_property_says_it_did_not_run() {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            cases: 4,
            ..SequenceConfig::default()
        },
        only: vec!["differential".into()],
        ..SuiteConfig::default()
    };
    let report = run_suite(Arc::new(LocalFactory), &config, &mut |_| {}).expect("runs");
    match &property(&report, "differential").status {
        Status::NotRun(why) => assert!(why.starts_with("no reference provider"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// A departure from the model on either side is that side's failure, named, not a divergence.
#[test]
fn a_side_that_departs_from_the_model_is_named() {
    let broken = Arc::new(FaultyFactory::new(
        Arc::new(LocalFactory),
        Fault::LocaleOrderedListing,
    ));
    let report = run(broken, SEEDS[0], MessageCheck::Exact);
    let d = property(&report, "differential");
    assert_eq!(d.status, Status::Failed, "{}", report.render());
    assert_eq!(d.failure_kind, Some(FailureKind::Outcome));
    let message = d.failure.clone().unwrap_or_default();
    assert!(
        message.contains("local+locale-ordered-listing departs from the model: listing order"),
        "{message}"
    );
}
