//! A failure in a fixed scenario is shrunk like a generated one: `bad-input` runs a hundred
//! steps, and a backend that gets one of them wrong is shown the one step (with the world
//! changes it needs), not the fifty before it.

mod support;

use seam::{FsError, FsErrorCode};
use seam_conformance::{FailureKind, SequenceConfig, Status, SuiteConfig, run_suite};
use seam_local_testkit::LocalFactory;
use std::sync::Arc;
use support::{Before, HookedFactory};

#[test]
fn a_bad_input_failure_is_shrunk_to_the_step_that_departs() {
    // Right code, its own words: for a list_dir of a file (well into the scenario).
    let factory = Arc::new(HookedFactory::new(
        Arc::new(LocalFactory),
        Arc::new(|op, path| {
            if op == "list_dir" && path.ends_with("/f") {
                Before::Fail(FsError::new(FsErrorCode::NotDirectory, "not a folder"))
            } else {
                Before::Go
            }
        }),
    ));
    let config = SuiteConfig {
        sequences: SequenceConfig {
            seed: 24228,
            ..SequenceConfig::default()
        },
        only: vec!["bad-input".into()],
        ..SuiteConfig::default()
    };
    let report = run_suite(factory, &config, &mut |_| {}).expect("runs");
    let p = report
        .properties
        .iter()
        .find(|p| p.name == "bad-input")
        .expect("ran");
    assert_eq!(p.status, Status::Failed, "{}", report.render());
    assert_eq!(
        p.failure_kind,
        Some(FailureKind::Message),
        "{:?}",
        p.failure
    );
    let trace = p.trace.as_ref().expect("a trace");
    let from = p.shrunk_from.expect("shrunk");
    assert!(from > 20, "the failing step was {from} steps in");
    // The file the listing is of, and the listing.
    assert!(trace.steps.len() <= 2, "{:?}", trace.steps);
    assert!(
        p.failure
            .as_deref()
            .is_some_and(|m| m.contains("list_dir") && m.contains("not a folder")),
        "{:?}",
        p.failure
    );
    // Beside it, the provider itself passes the same scenario.
    let plain = run_suite(Arc::new(LocalFactory), &config, &mut |_| {}).expect("runs");
    assert_eq!(
        plain
            .properties
            .iter()
            .find(|p| p.name == "bad-input")
            .map(|p| p.status.clone()),
        Some(Status::Passed)
    );
}
