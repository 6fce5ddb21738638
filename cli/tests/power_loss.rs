//! `power-loss` through real backends, at fresh seeds (each test prints the command that repeats
//! its run):
//!
//! * the local provider, fully durable, passes with cuts inside calls and every rule reached;
//! * the same provider deployed without fsyncs does not claim `durable`, and is told what it
//!   lost — as what it does not promise, never as a pass — beside the durable one passing at the
//!   same seed;
//! * the Python disk adapter passes through `exec:`, and each of four fsync mistakes made to it
//!   (`fixtures/adapters/broken/fsync_order.py`) is caught for its own reason with a shrunk
//!   plan, at three fresh seeds each.
//!
//! Where FUSE cannot be mounted the property says it did not run, and why; these tests then
//! fail, saying so, unless `SEAM_SKIP_FUSE=1` asks to skip them knowingly.

#[path = "support/seeds.rs"]
mod seeds;
use seeds::{check_at, fresh_seed};

#[path = "support/fuse.rs"]
mod fuse;
use fuse::fuse_or_skip;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

use seam_conformance::{
    CaseDurability, CaseOptions, Coverage, Factory, NotPlaced, Report, SequenceConfig, Status,
    Subject, SuiteConfig, run_suite,
};
use seam_local_testkit::LocalFactory;
use std::path::Path;
use std::sync::Arc;

fn power_loss(factory: Arc<dyn Factory>, seed: u64) -> Report {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            seed,
            ..SequenceConfig::default()
        },
        only: vec!["power-loss".into()],
        ..SuiteConfig::default()
    };
    run_suite(factory, &config, &mut |_| {}).expect("the suite runs")
}

fn property(report: &Report) -> &seam_conformance::PropertyResult {
    report
        .properties
        .iter()
        .find(|p| p.name == "power-loss")
        .expect("in the report")
}

/// The local provider deployed without fsyncs, whatever a case asks for.
struct NoFsync;

impl NoFsync {
    fn relaxed(options: &CaseOptions) -> CaseOptions {
        CaseOptions {
            durability: CaseDurability::Relaxed,
            ..options.clone()
        }
    }
}

impl Factory for NoFsync {
    fn name(&self) -> String {
        "local without fsync".into()
    }

    fn configurations(&self) -> Vec<String> {
        LocalFactory.configurations()
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        LocalFactory.make(&Self::relaxed(options))
    }

    fn in_directory(&self, options: &CaseOptions, dir: &Path) -> Result<Subject, NotPlaced> {
        LocalFactory.in_directory(&Self::relaxed(options), dir)
    }
}

#[test]
fn the_durable_local_provider_passes_with_cuts_inside_calls_and_every_rule_reached() {
    if !fuse_or_skip("the_durable_local_provider_passes") {
        return;
    }
    let seed = fresh_seed();
    let repeat =
        format!("repeat with: seam check --provider local --property power-loss --seed {seed}");
    let report = power_loss(Arc::new(LocalFactory), seed);
    let p = property(&report);
    assert_eq!(p.status, Status::Passed, "{repeat}\n{}", report.render());
    let detail = p.detail.as_deref().unwrap_or_default();
    assert!(detail.starts_with("120 cuts, "), "{repeat}\n{detail}");
    let mid: u64 = detail
        .trim_start_matches("120 cuts, ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        mid >= 20,
        "only {mid} cuts landed inside a call: {repeat}\n{detail}"
    );
    for id in [
        "power-loss.answered",
        "power-loss.old-or-new",
        "power-loss.listed-hidden",
        "power-loss.swept",
    ] {
        let rule = report.rules.iter().find(|r| r.id == id).expect("the rule");
        assert_eq!(rule.coverage, Coverage::Reached, "{id}: {repeat}\n{rule:?}");
    }
}

#[test]
fn the_local_provider_without_fsync_is_told_what_it_lost_beside_the_durable_one_passing() {
    if !fuse_or_skip("the_local_provider_without_fsync_is_told_what_it_lost") {
        return;
    }
    let seed = fresh_seed();
    let report = power_loss(Arc::new(NoFsync), seed);
    let p = property(&report);
    let Status::NotClaimed(reason) = &p.status else {
        panic!("seed {seed}: {:?}\n{}", p.status, report.render());
    };
    assert!(
        reason.starts_with("the backend does not claim durable, so a power cut may lose what it answered; over 120 cuts "),
        "seed {seed}: {reason}"
    );
    // Nothing was ever synced: every cut after an answered change finds it gone.
    assert!(
        reason.contains(" of 120 cuts lost or tore what had been written: cut "),
        "seed {seed}: {reason}"
    );
    assert!(reason.contains("lost"), "seed {seed}: {reason}");
    let durable = power_loss(Arc::new(LocalFactory), seed);
    assert_eq!(
        property(&durable).status,
        Status::Passed,
        "seed {seed}\n{}",
        durable.render()
    );
}

fn adapter(script: &str, args: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(script)
        .canonicalize()
        .expect("the script");
    format!("exec:python3 {} {args}--test-control", script.display())
}

#[test]
fn the_python_adapter_passes_and_each_fsync_mistake_is_caught_for_its_own_reason() {
    if !fuse_or_skip("the_python_adapter_passes") || !python_or_skip() {
        return;
    }
    let good = adapter("fixtures/adapters/python/seam_adapter.py", "");
    let faults: [(&str, &[&str]); 4] = [
        (
            "skip-file-fsync",
            &["is torn: it holds 0 bytes that no call wrote"],
        ),
        ("skip-dir-fsync", &["lost"]),
        ("dir-fsync-before-rename", &["lost"]),
        ("file-fsync-after-rename", &["is torn: it holds 0 bytes"]),
    ];
    for round in 0..3 {
        let seed = fresh_seed();
        for (fault, says) in faults {
            let broken = adapter(
                "fixtures/adapters/broken/fsync_order.py",
                &format!("--fault {fault} "),
            );
            let repeat = format!(
                "repeat with: seam check --provider '{broken}' --property power-loss --seed {seed}"
            );
            let (code, said) = check_at(&broken, seed, &["power-loss"]);
            assert_eq!(code, Some(1), "{repeat}\n{said}");
            let failed = said
                .lines()
                .find(|l| l.starts_with("FAILED power-loss [power-loss]: cut "))
                .unwrap_or_else(|| panic!("{repeat}\n{said}"));
            for s in says {
                assert!(
                    failed.contains(s),
                    "{fault}: {s:?} not said: {repeat}\n{failed}"
                );
            }
            // Shrunk: the plan said is at most two calls, and the message says from how many
            // (or that one call had nothing to shrink, or that a plan drawn that short had no
            // call to take out: a write and the edit of what it wrote, say).
            assert!(
                failed.contains("(shrunk from ")
                    || failed.contains("(one call: nothing to shrink)")
                    || failed.contains("(none of its 2 calls could be taken out)"),
                "{repeat}\n{failed}"
            );
            assert!(!failed.contains("; 3. "), "not shrunk: {repeat}\n{failed}");
            // The file synced after its rename is whole once the call answers: only a cut
            // inside the call (between the two syncs) finds it.
            if fault == "file-fsync-after-rename" {
                assert!(
                    failed.contains("file-system operations into call")
                        || failed.contains("right after sync"),
                    "{repeat}\n{failed}"
                );
            } else {
                assert!(
                    !failed.contains("is torn") || fault == "skip-file-fsync",
                    "{fault} is a loss, not a tear: {repeat}\n{failed}"
                );
            }
        }
        if round == 0 {
            let (code, said) = check_at(&good, seed, &["power-loss"]);
            assert!(
                said.contains("\n  power-loss             passed"),
                "{good} at seed {seed}:\n{said}"
            );
            assert_eq!(code, Some(3), "only one property was asked for: {said}");
        }
    }
}
