//! The suite's self-test. A suite that passes a broken backend is itself broken, and one that
//! fails a correct backend is useless, so at the default seed and at two others:
//!
//! * the correct local provider passes the whole default run — every property, every rule of
//!   the contract reached (the verdict is a pass, not merely "nothing failed");
//! * every deliberately broken variant (`seam-faults`) fails, in the property and for the reason
//!   (`FailureKind`) it is known for, at the same seed and breadth, with a short trace.

#[path = "support/seeds.rs"]
mod seeds;
mod support;
use seam_cli::unprivileged::SelfExec;
use seam_conformance::{
    Report, SequenceConfig, Status, SuiteConfig, Timing, Verdict, property_names, run_suite,
};
use seam_faults::{Fault, FaultyFactory};
use seam_local_testkit::LocalFactory;
use seam_sandbox_testkit::SandboxFactory;
use seeds::fresh_seed;
use std::sync::Arc;
use std::time::Duration;

/// The suite's default seed (`SequenceConfig::default().seed`) and two others.
const SEEDS: [u64; 3] = [0x5EA4, 7, 1_000_003];

/// The longest counterexample accepted after shrinking (a hang is shrunk too).
const MAX_TRACE: usize = 8;

/// The timing of the runs of a hanging variant: a hang limit of 10 s instead of 30 (every
/// hanging case waits it out once, and once more to confirm the shrunk trace). The default is
/// tried once, in `a_planted_hang_fails_at_the_default_limit_naming_the_call`.
fn hang_timing() -> Timing {
    Timing {
        hang_after: Duration::from_secs(10),
        ..Timing::default()
    }
}

fn config(seed: u64, only: Vec<String>) -> SuiteConfig {
    SuiteConfig {
        sequences: SequenceConfig {
            seed,
            ..SequenceConfig::default()
        },
        unprivileged: Some(Arc::new(SelfExec {
            exe: env!("CARGO_BIN_EXE_seam").into(),
            provider: "local".into(),
        })),
        only,
        timing: Timing::default(),
        agent: Some(Arc::new(seam_cli::agent::ToolAgentFactory)),
        reference: None,
        scratch: None,
    }
}

fn property<'r>(report: &'r Report, name: &str) -> &'r seam_conformance::PropertyResult {
    report
        .properties
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{name} is not in the report"))
}

#[test]
fn the_correct_provider_passes_the_default_run_reaching_every_rule_at_three_seeds() {
    // The crash property runs the provider in a process of its own: this binary's `seam serve`.
    seam_local_testkit::set_host_binary(env!("CARGO_BIN_EXE_seam"));
    for seed in SEEDS {
        let report = run_suite(
            Arc::new(LocalFactory),
            &config(seed, Vec::new()),
            &mut |_| {},
        )
        .expect("the suite runs");
        assert_eq!(
            report.verdict,
            Verdict::Pass,
            "seed {seed}:\n{}",
            report.render()
        );
        assert!(report.unreached().is_empty());
        assert_eq!(report.cases, 256);
        for name in property_names() {
            let p = property(&report, name);
            match name {
                "sandbox-modes" | "containment" | "swap-race" => {
                    assert!(matches!(p.status, Status::NotClaimed(_)), "{name}")
                }
                // The local provider has no reference to answer like (the sandbox has it).
                "differential" => assert!(matches!(p.status, Status::NotRun(_))),
                _ => assert_eq!(p.status, Status::Passed, "seed {seed}: {name}"),
            }
            assert!(
                matches!(
                    name,
                    "sandbox-modes" | "containment" | "swap-race" | "differential"
                ) || p.checks > 0,
                "{name} passed without a check"
            );
        }
        for configuration in ["tmpfile", "directory"] {
            assert!(report.configurations[configuration] > 0, "{configuration}");
        }
    }
}

fn catch(fault: Fault) {
    // A broken fence wraps the sandbox (its fence is what the fault replaces).
    let base: Arc<dyn seam_conformance::Factory> = if fault.name().starts_with("fence-") {
        Arc::new(SandboxFactory(seam::SandboxMode::WorkspaceWrite))
    } else {
        Arc::new(LocalFactory)
    };
    catch_over(fault, base);
}

/// The in-memory provider with its guard check and its publication in two critical sections:
/// caught by the same races as the disk provider with the same mistake.
#[test]
fn catches_a_memory_provider_whose_check_and_publish_are_two_critical_sections() {
    catch_over(
        Fault::GuardCheckedApart,
        Arc::new(seam_memory_testkit::MemoryFactory),
    );
}

fn catch_over(fault: Fault, base: Arc<dyn seam_conformance::Factory>) {
    let (name, kinds) = fault.caught_as();
    for seed in SEEDS {
        let base = base.clone();
        let factory = Arc::new(FaultyFactory::new(base, fault));
        let mut c = config(seed, vec![name.into()]);
        if kinds.contains(&seam_conformance::FailureKind::Timeout) {
            c.timing = hang_timing();
        }
        let report = run_suite(factory.clone(), &c, &mut |_| {}).expect("the suite runs");
        factory.release_hangs();
        let p = property(&report, name);
        println!(
            "== {} at seed {seed}: {:?}",
            fault.name(),
            p.failure.as_deref().unwrap_or("(not caught)")
        );
        assert_eq!(
            p.status,
            Status::Failed,
            "{} was not caught at seed {seed}:\n{}",
            fault.name(),
            report.render()
        );
        assert!(
            p.failure_kind.is_some_and(|k| kinds.contains(&k)),
            "{} was caught for another reason ({:?}, expected one of {kinds:?}) at seed {seed}: {:?}",
            fault.name(),
            p.failure_kind,
            p.failure
        );
        let words = fault.signature();
        let message = p.failure.as_deref().unwrap_or_default();
        // A report a person can read: long values are excerpts, never the whole text.
        assert!(
            message.len() < 5_000,
            "{}: a failure message of {} bytes at seed {seed}",
            fault.name(),
            message.len()
        );
        assert!(
            words.is_empty() || words.iter().any(|w| message.contains(w)),
            "{} was caught as {:?} but not for its own mistake (expected one of {words:?}) at seed {seed}: {message}",
            fault.name(),
            p.failure_kind
        );
        assert_eq!(report.verdict, Verdict::Fail);
        // A short case is its own trace: a shape and one or two calls.
        if name == "short-cases" {
            let trace = p.trace.as_ref().expect("the case");
            assert!(
                trace.steps.len() <= 4,
                "{}: a short case of {} steps at seed {seed}",
                fault.name(),
                trace.steps.len()
            );
        }
        // A generated counterexample is shrunk to a few steps, a hang too.
        if name == "sequences" {
            let trace = p.trace.as_ref().expect("a counterexample");
            assert!(
                p.shrunk_from.is_some(),
                "{}: not shrunk at seed {seed}",
                fault.name()
            );
            assert!(
                trace.steps.len() <= MAX_TRACE,
                "{}: a trace of {} steps at seed {seed}",
                fault.name(),
                trace.steps.len()
            );
        }
    }
    if kinds.contains(&seam_conformance::FailureKind::Timeout) {
        support::settle();
    }
}

macro_rules! caught {
    ($($test:ident => $fault:ident,)*) => {
        $(
            #[test]
            fn $test() {
                catch(Fault::$fault);
            }
        )*
    };
}

caught! {
    catches_a_version_token_without_ctime => VersionWithoutCtime,
    catches_create_if_absent_that_checks_then_renames => CheckThenRename,
    catches_an_edit_that_normalises_line_endings => EditNormalisesEndings,
    catches_locale_ordered_listings => LocaleOrderedListing,
    catches_a_write_that_replaces_a_dangling_link => ReplacesDanglingLink,
    catches_a_bom_dropped_on_edit => DropsBomOnEdit,
    catches_world_readable_staging => WorldReadableStaging,
    catches_an_ignored_version_guard => IgnoresVersionGuard,
    catches_an_edit_that_samples_nul_like_a_read => EditSamplesNul,
    catches_a_write_that_ignores_a_cancelled_signal => WriteIgnoresEntryCancel,
    catches_a_directory_version_blind_to_its_entries => DirVersionIgnoresEntries,
    catches_a_stream_that_splits_characters => StreamSplitsCharacters,
    catches_a_nul_window_one_byte_too_long => NulWindowOffByOne,
    catches_an_exclusive_read_bytes_cap => ReadBytesCapExclusive,
    catches_a_target_that_pins_old_content => TargetPinsContent,
    catches_a_process_path_that_is_the_display_path => ProcessPathIsDisplay,
    catches_contains_by_string_prefix => ContainsByPrefix,
    catches_a_backend_that_claims_nothing => ClaimsNothing,
    catches_a_sandbox_claim_without_a_fence => ClaimsSandboxWithoutFence,
    catches_reworded_read_errors => RewordsReadErrors,
    catches_a_fence_that_compares_prefixes => FencePrefixWithoutSeparator,
    catches_a_fence_that_checks_the_key_then_opens_by_name => FenceChecksKeyThenOpensByName,
    catches_a_fence_that_only_checks_a_new_files_parent => FenceNewFileParentOnly,
    catches_a_fence_that_ignores_its_default => FenceIgnoresItsDefault,
    catches_a_read_fence_that_checks_the_key_then_reads_by_name => FenceReadsCheckKeyThenOpenByName,
    catches_a_rewrite_that_resets_the_mode => ResetsModeOnRewrite,
    catches_a_panicking_backend => PanicsInEdit,
    catches_a_backend_hanging_in_stat => HangsInStat,
    catches_a_backend_hanging_in_a_stream => HangsInStream,
    catches_a_write_that_truncates_in_place => TruncatesInPlace,
    catches_a_guard_checked_apart_from_publication => GuardCheckedApart,
    catches_an_edit_that_reads_outside_its_lock => EditReadsOutsideLock,
    catches_a_lock_that_lives_in_one_instance => InstanceLocalLock,
    catches_an_instance_serving_a_stale_copy_of_what_another_changed => StaleInstanceCache,
    catches_a_rewrite_torn_for_readers_on_another_instance => TornAcrossInstances,
    catches_a_backend_that_ignores_the_working_directory_it_is_given => IgnoresCwd,
    catches_a_refusal_that_names_the_normalised_path => RefusalNamesNormalised,
    catches_a_stat_through_a_file_that_answers_an_error => StatThroughFileErrors,
    catches_a_reused_target_that_follows_a_new_link => ReusedTargetFollowsNewLink,
    catches_a_staging_name_that_overflows_on_long_names => StagingNameOverflows,
    catches_a_listing_refused_through_a_link => RefusesListingThroughLink,
    catches_a_file_url_that_leaves_reserved_characters => FileUrlLeavesReserved,
    catches_a_guard_that_is_not_checked_again_at_publication => GuardNotRechecked,
    catches_a_rename_made_by_copy_and_delete => RenameByCopy,
    catches_a_remove_that_follows_a_link => RemoveFollowsLink,
    catches_a_remove_that_ignores_its_guard => RemoveIgnoresGuard,
    catches_a_rename_that_replaces_without_a_guard => RenameReplacesWithoutGuard,
    catches_a_remove_whose_guard_is_checked_apart => RemoveGuardCheckedApart,
    catches_a_rename_that_ignores_its_signal => RenameIgnoresCancel,
    catches_a_competitor_taken_for_a_file_whatever_it_is => CompetitorTakenForAFile,
    catches_emptiness_left_to_the_removal_after_before_stage => EmptinessCheckedAtRemoval,
    catches_a_listing_that_keeps_only_its_first_page => ListingKeepsFirstPage,
    catches_a_listing_that_shows_unreported_staging => ListingShowsStaging,
    catches_messages_that_name_the_key_not_the_path => MessagesNameTheKey,
    catches_a_listing_that_shows_staging_between_checkpoints => ListingShowsStagingInPublish,
}

#[test]
fn every_fault_has_a_test_here() {
    let source = include_str!("self_test.rs");
    for f in Fault::ALL {
        assert!(
            source.contains(&format!("=> {:?},", f)),
            "{} has no test",
            f.name()
        );
    }
}

#[test]
fn a_hang_or_a_panic_is_reported_with_the_operation_named() {
    for (fault, op) in [
        (Fault::HangsInStat, "`stat "),
        (Fault::HangsInStream, "`stream_text "),
        (Fault::PanicsInEdit, "edit_text "),
    ] {
        let factory = Arc::new(FaultyFactory::new(Arc::new(LocalFactory), fault));
        let mut c = config(SEEDS[0], vec!["sequences".into()]);
        c.timing = hang_timing();
        let report = run_suite(factory.clone(), &c, &mut |_| {}).expect("the suite runs");
        factory.release_hangs();
        let p = property(&report, "sequences");
        let message = p.failure.as_deref().unwrap_or("");
        assert!(message.contains(op), "{}: {message}", fault.name());
        assert!(
            p.trace.is_some(),
            "{}: the steps that led there are kept",
            fault.name()
        );
    }
    support::settle();
}

#[test]
fn the_same_seed_shrinks_to_the_same_trace() {
    let run = || {
        let factory = Arc::new(FaultyFactory::new(
            Arc::new(LocalFactory),
            Fault::DropsBomOnEdit,
        ));
        let report = run_suite(
            factory,
            &config(SEEDS[1], vec!["sequences".into()]),
            &mut |_| {},
        )
        .expect("the suite runs");
        property(&report, "sequences")
            .trace
            .clone()
            .expect("a trace")
            .steps
    };
    assert_eq!(run(), run());
}

/// The swap race catches a fence that checks the resolved key and then opens by name (a race,
/// so a few rounds), beside the real sandbox passing it at the same seed.
#[test]
fn the_swap_race_passes_the_sandbox_and_catches_a_check_then_open_fence() {
    let sandbox = || -> Arc<dyn seam_conformance::Factory> {
        Arc::new(SandboxFactory(seam::SandboxMode::WorkspaceWrite))
    };
    let only = || vec!["swap-race".to_string()];
    let report = run_suite(sandbox(), &config(SEEDS[0], only()), &mut |_| {}).expect("runs");
    assert_eq!(
        property(&report, "swap-race").status,
        Status::Passed,
        "{}",
        report.render()
    );
    let caught = (0..3).any(|round| {
        let broken = Arc::new(FaultyFactory::new(
            sandbox(),
            Fault::FenceChecksKeyThenOpensByName,
        ));
        let report = run_suite(broken, &config(SEEDS[0], only()), &mut |_| {}).expect("runs");
        let p = property(&report, "swap-race");
        println!("round {round}: {:?} {:?}", p.status, p.failure);
        p.status == Status::Failed
            && p.failure_kind == Some(seam_conformance::FailureKind::Sandbox)
            && p.failure
                .as_deref()
                .is_some_and(|m| m.contains("an escape during the swap race"))
    });
    assert!(caught, "the swap race never caught a check-then-open fence");
}

/// The generated side of the fence: at each seed the sandbox in every mode passes `sequences`
/// (per-call policies drawn around its deployment, the attack layout, a canary beside the
/// workspace checked after every step) reaching every `fence.*` rule; and each broken fence is
/// caught by the same generated sequences, at a mutation under a `workspace-write` call policy,
/// with a shrunk trace.
#[test]
fn every_sandbox_mode_passes_the_generated_fence_and_the_broken_fences_are_caught() {
    let only = || vec!["sequences".to_string()];
    let mut escapes = 0;
    for seed in SEEDS {
        for mode in seam::SandboxMode::ALL {
            let report = run_suite(
                Arc::new(SandboxFactory(mode)),
                &config(seed, only()),
                &mut |_| {},
            )
            .expect("runs");
            assert_eq!(
                property(&report, "sequences").status,
                Status::Passed,
                "{} at seed {seed}:\n{}",
                mode.as_str(),
                report.render()
            );
            let fence: Vec<_> = report
                .rules
                .iter()
                .filter(|r| r.id.starts_with("fence."))
                .collect();
            assert_eq!(fence.len(), 6);
            for r in fence {
                assert!(
                    r.steps > 0,
                    "{} unreached under {} at seed {seed}",
                    r.id,
                    mode.as_str()
                );
            }
        }
        for fault in [
            Fault::FencePrefixWithoutSeparator,
            Fault::FenceChecksKeyThenOpensByName,
            Fault::FenceNewFileParentOnly,
        ] {
            let broken = Arc::new(FaultyFactory::new(
                Arc::new(SandboxFactory(seam::SandboxMode::WorkspaceWrite)),
                fault,
            ));
            let report = run_suite(broken, &config(seed, only()), &mut |_| {}).expect("runs");
            let p = property(&report, "sequences");
            println!("== {} at seed {seed}: {:?}", fault.name(), p.failure);
            assert_eq!(p.status, Status::Failed, "{} at seed {seed}", fault.name());
            let trace = p.trace.as_ref().expect("a counterexample");
            assert!(p.shrunk_from.is_some() && trace.steps.len() <= MAX_TRACE);
            let failure = trace.failure.as_ref().expect("the failing step");
            let step = &trace.steps[failure.step];
            assert!(
                step.op.is_mutation()
                    && step
                        .sandbox
                        .as_ref()
                        .is_some_and(|s| s.mode == seam::SandboxMode::WorkspaceWrite),
                "{} was caught outside the fence at seed {seed}: {step:?}",
                fault.name()
            );
            // A write through a dangling link to outside lands outside: reported as the escape
            // it is, naming what changed beside the workspace.
            if p.failure_kind == Some(seam_conformance::FailureKind::Sandbox)
                && p.failure.as_deref().is_some_and(|m| {
                    m.contains("an escape") && m.contains("outside its writable root")
                })
            {
                escapes += 1;
            }
        }
    }
    assert!(escapes > 0, "no broken fence was reported as an escape");
}

/// The departures that need two things to line up — one guard met by one interference, a shape
/// and a call — are found by the short cases at every seed, not at the seeds that happen to
/// draw them: each of two planted ones, at twenty fresh seeds, with its case of at most two
/// steps as the trace, beside the correct provider passing the same property at the same seed.
/// (The random sequences alone found the emptiness one at 3 of 8 seeds when it was planted.)
#[test]
fn a_two_step_departure_is_found_at_every_one_of_twenty_fresh_seeds() {
    let seeds: Vec<u64> = (0..20).map(|_| fresh_seed()).collect();
    println!("seeds: {seeds:?}");
    for fault in [
        Fault::EmptinessCheckedAtRemoval,
        Fault::CompetitorTakenForAFile,
    ] {
        // The cases run a few at a time, but the one reported is the first in their fixed
        // order: the same case, message and trace at every seed and every run.
        let mut found: std::collections::BTreeSet<String> = Default::default();
        for &seed in &seeds {
            let repeat = format!(
                "repeat with: cargo run --release -p seam-cli --features faults -- check --provider memory --fault {} --property short-cases --seed {seed}",
                fault.name()
            );
            let base = Arc::new(seam_memory_testkit::MemoryFactory);
            let c = config(seed, vec!["short-cases".into()]);
            let good = run_suite(base.clone(), &c, &mut |_| {}).expect("the suite runs");
            assert_eq!(
                property(&good, "short-cases").status,
                Status::Passed,
                "the correct provider at seed {seed}:\n{}",
                good.render()
            );
            let broken = Arc::new(FaultyFactory::new(base, fault));
            let report = run_suite(broken, &c, &mut |_| {}).expect("the suite runs");
            let p = property(&report, "short-cases");
            assert_eq!(
                p.status,
                Status::Failed,
                "{} not found at seed {seed} ({repeat}):\n{}",
                fault.name(),
                report.render()
            );
            assert_eq!(
                p.failure_kind,
                Some(seam_conformance::FailureKind::Outcome),
                "{repeat}"
            );
            let message = p.failure.as_deref().unwrap_or_default();
            assert!(
                fault.signature().iter().any(|w| message.contains(w)),
                "{}: {message} ({repeat})",
                fault.name()
            );
            let steps = p.trace.as_ref().map_or(usize::MAX, |t| t.steps.len());
            assert!(
                steps <= 2,
                "a trace of {steps} steps at seed {seed} ({repeat})"
            );
            let trace = p.trace.as_ref().map(|t| format!("{:?}", t.steps));
            found.insert(format!("{message} {trace:?}"));
        }
        assert_eq!(found.len(), 1, "{}: {found:#?}", fault.name());
    }
}

/// Litter a reader sees: a listing that shows a staging file the backend never reported is
/// caught by `atomic-visibility` at fresh seeds, as litter, beside the correct local provider —
/// which stages beside the target too (its `directory` configuration), reports it, and passes.
/// Shown while a write is paused at a checkpoint, the paused readers see it; shown only between
/// checkpoints, inside the publication, only a reader listing while writes run freely can.
#[test]
fn a_listing_that_shows_unreported_staging_is_caught_at_fresh_seeds() {
    for _ in 0..4 {
        let seed = fresh_seed();
        let c = config(seed, vec!["atomic-visibility".into()]);
        let good = run_suite(Arc::new(LocalFactory), &c, &mut |_| {}).expect("the suite runs");
        assert_eq!(
            property(&good, "atomic-visibility").status,
            Status::Passed,
            "the correct provider at seed {seed}:\n{}",
            good.render()
        );
        for (fault, by) in [
            (
                Fault::ListingShowsStaging,
                "while the mutation was paused at",
            ),
            (
                Fault::ListingShowsStagingInPublish,
                "no state the directory had",
            ),
        ] {
            let repeat = format!(
                "repeat with: cargo run --release -p seam-cli --features faults -- check --provider local --fault {} --property atomic-visibility --seed {seed}",
                fault.name()
            );
            let broken = Arc::new(FaultyFactory::new(Arc::new(LocalFactory), fault));
            let report = run_suite(broken, &c, &mut |_| {}).expect("the suite runs");
            let p = property(&report, "atomic-visibility");
            assert_eq!(p.status, Status::Failed, "{repeat}:\n{}", report.render());
            assert_eq!(
                p.failure_kind,
                Some(seam_conformance::FailureKind::Litter),
                "{repeat}: {:?}",
                p.failure
            );
            let message = p.failure.as_deref().unwrap_or_default();
            assert!(
                message.contains("list_dir")
                    && message.contains(".stage-0001.tmp")
                    && message.contains(by),
                "{repeat}: {message}"
            );
            let trace = p.trace.as_ref().expect("a trace");
            assert!(
                trace.steps.len() <= 4,
                "{repeat}: {} steps",
                trace.steps.len()
            );
        }
    }
}
