//! Slow is not hung, and a failure once found is never lost.
//!
//! * A backend whose every call takes two seconds is slow, not broken: it passes, and the
//!   report warns about the slow calls (with their durations and the load).
//! * A backend whose `stat` never returns still fails — at the documented hang limit (30 s),
//!   naming the call — and the hang is shrunk to the step that hangs (with the one that made
//!   its file, where the call that hangs is the suite's own stat after a mutation).
//! * A real departure found in a case whose shrinking then meets candidates that hang is
//!   reported as the departure it is, with its own shrunk trace: a candidate that timed out does
//!   not reproduce it and never takes its place.

mod support;

use seam_conformance::{
    Factory, FailureKind, Report, SequenceConfig, Status, SuiteConfig, Timing, Verdict, run_suite,
};
use seam_faults::{Fault, FaultyFactory};
use seam_local_testkit::LocalFactory;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::{Before, Hook, HookedFactory};

fn sequences_only(seed: u64, cases: u32, max_steps: usize, timing: Timing) -> SuiteConfig {
    SuiteConfig {
        sequences: SequenceConfig {
            seed,
            cases,
            max_steps,
            ..SequenceConfig::default()
        },
        only: vec!["sequences".into()],
        timing,
        ..SuiteConfig::default()
    }
}

fn sequences(report: &Report) -> &seam_conformance::PropertyResult {
    report
        .properties
        .iter()
        .find(|p| p.name == "sequences")
        .expect("in the report")
}

#[test]
fn a_backend_whose_every_call_takes_two_seconds_passes_with_slow_warnings() {
    let slow = Arc::new(HookedFactory::new(
        Arc::new(LocalFactory),
        Arc::new(|_, _| Before::Sleep(Duration::from_secs(2))),
    ));
    let report = run_suite(
        slow,
        &sequences_only(24228, 2, 3, Timing::default()),
        &mut |_| {},
    )
    .expect("the suite runs");
    let p = sequences(&report);
    assert_eq!(p.status, Status::Passed, "{}", report.render());
    let warned = p.slow.as_ref().expect("slow calls are reported");
    assert!(warned.count > 0);
    assert!(
        warned.slowest.iter().all(|c| c.seconds >= 2.0),
        "{warned:?}"
    );
    assert!(
        warned.slowest.iter().all(|c| c.load.is_some()),
        "{warned:?}"
    );
    let text = report.render();
    assert!(
        text.contains("slow calls (warnings, not failures: a loaded machine or a slow backend):"),
        "{text}"
    );
    assert!(text.contains("sequences: "), "{text}");
    // A short run is incomplete, never failed: slow is not a failure.
    assert!(matches!(report.verdict, Verdict::Incomplete(_)), "{text}");
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).expect("json");
    assert!(
        json["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .any(|p| p["name"] == "sequences" && p["slow"]["count"].as_u64() > Some(0))
    );
    assert!(report.to_junit().contains("<system-out>slow: "));
}

#[test]
fn a_planted_hang_fails_at_the_default_limit_naming_the_call_shrunk_to_one_step() {
    let hangs = Arc::new(FaultyFactory::new(
        Arc::new(LocalFactory),
        Fault::HangsInStat,
    ));
    let timing = Timing::default();
    assert_eq!(
        timing.hang_after,
        Duration::from_secs(30),
        "the documented limit"
    );
    let report = run_suite(
        hangs.clone(),
        &sequences_only(24228, 8, 40, timing),
        &mut |_| {},
    )
    .expect("runs");
    hangs.release_hangs();
    let p = sequences(&report);
    assert_eq!(p.status, Status::Failed, "{}", report.render());
    assert_eq!(p.failure_kind, Some(FailureKind::Timeout));
    let message = p.failure.as_deref().unwrap_or_default();
    assert!(message.contains("`stat \""), "{message}");
    assert!(message.contains("did not return within 30.0s"), "{message}");
    assert!(message.contains("--call-timeout"), "{message}");
    // Shrunk to the step whose call hangs: a `stat` step, or a mutation whose fresh stat (the
    // suite's own check of its version) hangs, with the step that made its file.
    let trace = p.trace.as_ref().expect("a trace");
    assert!(trace.steps.len() <= 2, "{:?}", trace.steps);
    assert_eq!(
        trace.failure.as_ref().and_then(|f| f.kind),
        Some(FailureKind::Timeout)
    );
    support::settle();
}

#[test]
fn a_departure_whose_shrinking_meets_hanging_candidates_keeps_its_own_shrunk_trace() {
    // The variant drops a BOM on edit (a departure `sequences` finds and shrinks to two steps).
    // Beside that, once a file with a BOM has been edited (the departure), an edit of that same
    // name while there is nothing there hangs: a shrinking candidate that drops the write and
    // keeps the edit. The name is followed, not fixed, so this holds whatever the generator
    // draws; the first assertion below says whether a candidate did hang. Which candidates hang
    // is a fact of each candidate (the same steps, the same calls), and such a candidate cannot
    // reproduce the departure anyway, so after five hangs (each costs the limit) it fails the
    // edit as usual instead.
    // A seed whose shrinking tries such a candidate (not every shrink does: at seeds 1, 5, 6
    // and 8 none was tried when this was written, and at 2 none once the generator drew the
    // namespace operations too).
    const SEED: u64 = 3;
    let hung = Arc::new(AtomicUsize::new(0));
    let hangs = Arc::new(seam_faults::Hangs::default());
    // Hangs only while the departure is being shrunk (the suite says so through its progress):
    // a generated case that met the hook would hang for real, and fail as a hang.
    let shrinking = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let departed: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let hook: Hook = {
        let (hung, hangs) = (hung.clone(), hangs.clone());
        let shrinking = shrinking.clone();
        Arc::new(move |op, path| {
            if op != "edit_text" {
                return Before::Go;
            }
            // The path within its case's directory (each case, and each replay, has its own,
            // in the run's directory).
            let within = path
                .split_once("seam-check-")
                .and_then(|(_, rest)| rest.split_once("/case-"))
                .and_then(|(_, rest)| rest.split_once('/'))
                .map_or(path, |(_, p)| p)
                .to_string();
            let mut departed = departed.lock().unwrap_or_else(|p| p.into_inner());
            // Regular files only (reading a FIFO the world made would block the hook).
            let file = std::fs::metadata(path).map(|m| m.is_file());
            match file.and_then(|is_file| {
                if is_file {
                    std::fs::read(path)
                } else {
                    Ok(Vec::new())
                }
            }) {
                // The last file with a BOM edited before shrinking began: the departure's.
                Ok(bytes)
                    if bytes.starts_with(seam::text::BOM) && !shrinking.load(Ordering::SeqCst) =>
                {
                    *departed = Some(within);
                    Before::Go
                }
                Err(_)
                    if shrinking.load(Ordering::SeqCst)
                        && departed.as_deref() == Some(within.as_str())
                        && hung.load(Ordering::SeqCst) < 5 =>
                {
                    hung.fetch_add(1, Ordering::SeqCst);
                    Before::Hang(hangs.clone())
                }
                _ => Before::Go,
            }
        })
    };
    let broken = || -> Arc<dyn Factory> {
        Arc::new(FaultyFactory::new(
            Arc::new(LocalFactory),
            Fault::DropsBomOnEdit,
        ))
    };
    let factory = Arc::new(HookedFactory::new(broken(), hook));
    // 10 s, not less: at a load average of 10.8 on 2 cores a real write took over 3 s and was
    // reported hung (found by the full test run beside another load).
    let timing = Timing {
        hang_after: Duration::from_secs(10),
        ..Timing::default()
    };
    let report = run_suite(factory, &sequences_only(SEED, 256, 40, timing), &mut |p| {
        if matches!(
            p,
            seam_conformance::SuiteProgress::Sequences(
                seam_conformance::Progress::Shrinking { .. }
            )
        ) {
            shrinking.store(true, Ordering::SeqCst);
        }
    })
    .expect("runs");
    hangs.release();
    assert!(
        hung.load(Ordering::SeqCst) > 0,
        "no shrinking candidate hung: the test did not test\n{}",
        report.render()
    );
    let p = sequences(&report);
    assert_eq!(p.status, Status::Failed);
    assert_eq!(
        p.failure_kind,
        Some(FailureKind::BytesOnDisk),
        "{:?}",
        p.failure
    );
    let trace = p.trace.as_ref().expect("a trace");
    assert!(
        p.shrunk_from.is_some_and(|n| n > trace.steps.len()) && trace.steps.len() <= 8,
        "{} steps, from {:?}: {:?}",
        trace.steps.len(),
        p.shrunk_from,
        p.failure
    );
    assert!(
        !p.failure
            .as_deref()
            .unwrap_or_default()
            .contains("shown as generated"),
        "{:?}",
        p.failure
    );
    // Beside it, the same variant without hangs at the same seed: the same failure, and the
    // same minimal trace — the candidates that hung changed nothing.
    let plain = run_suite(
        broken(),
        &sequences_only(SEED, 256, 40, timing),
        &mut |_| {},
    )
    .expect("runs");
    let q = sequences(&plain);
    assert_eq!(q.failure_kind, Some(FailureKind::BytesOnDisk));
    assert_eq!(q.trace.as_ref().map(|t| &t.steps), Some(&trace.steps));
    support::settle();
}
