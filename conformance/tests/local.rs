//! The suite against the correct local provider: every property passes.

mod support;

use seam_conformance::{SequenceConfig, Status, SuiteConfig, run_suite};
use support::LocalFactory;

#[test]
fn the_local_provider_passes_every_property() {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            cases: 64,
            seed: 11,
            ..SequenceConfig::default()
        },
        ..SuiteConfig::default()
    };
    let report = run_suite(&LocalFactory::correct(), &config, &mut |_| {}).expect("suite runs");
    println!("{}", report.render());
    assert!(report.passed(), "{}", report.render());
    assert_eq!(report.cases, 64);
    assert!(
        report.stats.steps > 64 * 5,
        "sequences ran: {}",
        report.stats.steps
    );
    for p in &report.properties {
        if p.name == "permission-denied" && rustix::process::geteuid().is_root() {
            // As root it needs a privilege-dropping runner (the seam binary provides one).
            continue;
        }
        assert_eq!(p.status, Status::Passed, "{}: {:?}", p.name, p.status);
    }
}

#[test]
fn the_local_provider_passes_with_directory_staging_too() {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            cases: 48,
            seed: 12,
            ..SequenceConfig::default()
        },
        ..SuiteConfig::default()
    };
    let factory = LocalFactory {
        fault: None,
        staging: seam_local::Staging::Directory,
    };
    let report = run_suite(&factory, &config, &mut |_| {}).expect("suite runs");
    assert!(report.passed(), "{}", report.render());
    assert!(report.stats.staging_observed > 0);
}

#[test]
#[ignore = "prints the outcome distribution of generated steps (for tuning generators)"]
fn outcome_distribution() {
    let config = SequenceConfig {
        cases: 256,
        seed: 3,
        ..SequenceConfig::default()
    };
    let out = seam_conformance::run_sequences(&LocalFactory::correct(), &config, &mut |_| {})
        .expect("runs");
    for (op, m) in &out.stats.outcomes {
        println!("{op}: {m:?}");
    }
}

#[test]
fn the_corpus_fixtures_hold_exactly_the_generator_alphabet() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/corpus");
    let mut on_disk: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| std::fs::read(e.expect("entry").path()).expect("read"))
        .collect();
    let mut generated: Vec<Vec<u8>> = seam_conformance::text_corpus()
        .into_iter()
        .map(String::into_bytes)
        .collect();
    generated.extend([
        b"h\xFFi".to_vec(),
        b"ok\n\xC3".to_vec(),
        b"\xEF\xBB\xBF".to_vec(),
    ]);
    on_disk.sort();
    generated.sort();
    assert_eq!(on_disk, generated);
}
