//! Litter a reader sees after a crash. `crash` lists the file's directory with a fresh instance
//! right after the kill, before anyone writes there: an adapter whose listing shows its own staged
//! files (`fixtures/adapters/broken/lists_its_staging.py`) is caught there at fresh seeds, beside
//! the adapter it was made from passing the same property at the same seed. (The listing used to
//! come only after the next writer had swept, and the shipped disk providers all listed a killed
//! writer's staging until then.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::{check_at, fresh_seed};

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

use std::path::Path;

fn adapter(path: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .canonicalize()
        .expect("the script");
    format!("exec:python3 {} --test-control", script.display())
}

#[test]
fn an_adapter_that_lists_its_staging_is_caught_by_crash_before_the_next_write() {
    if !python_or_skip() {
        return;
    }
    let broken = adapter("fixtures/adapters/broken/lists_its_staging.py");
    let good = adapter("fixtures/adapters/python/seam_adapter.py");
    for _ in 0..2 {
        let seed = fresh_seed();
        let repeat =
            format!("repeat with: seam check --provider '{broken}' --property crash --seed {seed}");
        let (code, said) = check_at(&broken, seed, &["crash"]);
        assert_eq!(code, Some(1), "{repeat}\n{said}");
        let failed = said
            .lines()
            .find(|l| l.starts_with("FAILED crash [litter]: "))
            .unwrap_or_else(|| panic!("{repeat}\n{said}"));
        assert!(
            failed.contains(
                "a fresh instance's listing right after the kill, before any write, shows more than the file: [\".seam-"
            ),
            "{repeat}\n{failed}"
        );
        let (code, said) = check_at(&good, seed, &["crash"]);
        assert!(
            said.contains("\n  crash                  passed"),
            "{good} at seed {seed}:\n{said}"
        );
        assert_eq!(code, Some(3), "only one property was asked for: {said}");
    }
}
