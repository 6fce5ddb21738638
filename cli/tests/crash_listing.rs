//! Litter a reader sees after a crash. `crash` lists the file's directory with a fresh instance
//! right after the kill, before anyone writes there: an adapter whose listing shows its own staged
//! files (`fixtures/adapters/broken/lists_its_staging.py`) is caught there at fresh seeds, beside
//! the adapter it was made from passing the same property at the same seed. (The listing used to
//! come only after the next writer had swept, and the shipped disk providers all listed a killed
//! writer's staging until then.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::fresh_seed;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

use std::path::Path;
use std::process::Command;

fn adapter(path: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .canonicalize()
        .expect("the script");
    format!("exec:python3 {} --test-control", script.display())
}

fn crash(provider: &str, seed: u64) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider", provider, "--seed", &seed.to_string()])
        .args(["--property", "crash"])
        .current_dir(dir.path())
        .output()
        .expect("run seam");
    (
        out.status.code(),
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
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
        let (code, said) = crash(&broken, seed);
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
        let (code, said) = crash(&good, seed);
        assert!(
            said.contains("\n  crash                  passed"),
            "{good} at seed {seed}:\n{said}"
        );
        assert_eq!(code, Some(3), "only one property was asked for: {said}");
    }
}
