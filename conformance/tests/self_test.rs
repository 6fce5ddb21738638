//! The suite's self-test: deliberately broken variants of the local provider, each of which the
//! suite must catch with a shrunk trace of at most 8 steps. A suite that passes a broken provider
//! is itself broken.

mod support;

use seam_conformance::{SequenceConfig, Status, SuiteConfig, run_suite};
use seam_local::Fault;
use support::LocalFactory;

/// The longest counterexample we accept after shrinking.
const MAX_TRACE: usize = 8;

fn catch(fault: Fault, property: &str) {
    let config = SuiteConfig {
        sequences: SequenceConfig {
            cases: 256,
            seed: 7,
            ..SequenceConfig::default()
        },
        only: vec![property.to_string()],
        ..SuiteConfig::default()
    };
    let report =
        run_suite(&LocalFactory::broken(fault), &config, &mut |_| {}).expect("the suite runs");
    let p = report
        .properties
        .iter()
        .find(|p| p.name == property)
        .expect("the property ran");
    println!("== {} caught by {property}", fault.name());
    println!("{}", p.failure.as_deref().unwrap_or("(no failure)"));
    assert_eq!(
        p.status,
        Status::Failed,
        "{} was not caught:\n{}",
        fault.name(),
        report.render()
    );
    if let Some(trace) = &p.trace {
        println!(
            "shrunk trace: {} steps (from {})",
            trace.steps.len(),
            p.shrunk_from
                .map_or("a fixed scenario".to_string(), |n| n.to_string())
        );
        for (i, s) in trace.steps.iter().enumerate() {
            println!("  {i:>2}. {}", seam_conformance::describe(s));
        }
        assert!(
            trace.steps.len() <= MAX_TRACE,
            "{}: trace of {} steps",
            fault.name(),
            trace.steps.len()
        );
    }
}

#[test]
fn catches_a_version_token_without_ctime() {
    catch(Fault::VersionWithoutCtime, "sequences");
}

#[test]
fn catches_create_if_absent_that_checks_then_renames() {
    catch(Fault::CheckThenRename, "sequences");
}

#[test]
fn catches_an_edit_that_normalises_line_endings() {
    catch(Fault::EditNormalisesEndings, "sequences");
}

#[test]
fn catches_locale_ordered_listings() {
    catch(Fault::LocaleOrderedListing, "sequences");
}

#[test]
fn catches_a_write_that_replaces_a_dangling_link() {
    catch(Fault::ReplacesDanglingLink, "sequences");
}

#[test]
fn catches_a_bom_dropped_on_edit() {
    catch(Fault::DropsBomOnEdit, "sequences");
}

#[test]
fn catches_world_readable_staging() {
    catch(Fault::WorldReadableStaging, "sequences");
    catch(Fault::WorldReadableStaging, "staging-private");
}

#[test]
fn catches_an_ignored_version_guard() {
    catch(Fault::IgnoresVersionGuard, "sequences");
}

#[test]
fn catches_an_edit_that_samples_nul_like_a_read() {
    catch(Fault::EditSamplesNul, "sequences");
}
