//! Fresh seeds for the tests that sweep them: different at every run of the tests, printed by
//! the tests that use them with the command that repeats the run; and one property run at one.

#![allow(dead_code)]

use std::process::Command;

/// A fresh seed.
pub fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() >> 16
}

/// Runs `seam check` on `provider` at `seed`, only the properties `only` (all when empty), in a
/// fresh directory; returns the exit code and what was said (stdout, then stderr).
pub fn check_at(provider: &str, seed: u64, only: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seam"));
    cmd.args(["check", "--provider", provider, "--seed", &seed.to_string()])
        .current_dir(dir.path());
    for p in only {
        cmd.args(["--property", p]);
    }
    let out = cmd.output().expect("run seam");
    (
        out.status.code(),
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Runs `sequences` on `provider` at `seed`; returns the exit code, what was said, and the
/// steps of the trace it saved (if it saved one).
pub fn sequences(provider: &str, seed: u64) -> (Option<i32>, String, Option<usize>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider", provider, "--seed", &seed.to_string()])
        .args(["--property", "sequences", "--trace-dir", "traces"])
        .current_dir(dir.path())
        .output()
        .expect("run seam");
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let steps = std::fs::read_dir(dir.path().join("traces"))
        .ok()
        .and_then(|mut d| d.next())
        .and_then(Result::ok)
        .map(|e| {
            let trace: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(e.path()).expect("trace"))
                    .expect("a trace is JSON");
            trace["steps"].as_array().expect("steps").len()
        });
    (out.status.code(), said, steps)
}

/// `broken` is caught by `sequences` at three fresh seeds — its FAILED line carrying every one
/// of `reason`, its trace at most four steps — beside `good` passing at the same seeds.
pub fn caught_at_fresh_seeds_beside(broken: &str, good: &str, reason: &[&str]) {
    for _ in 0..3 {
        let seed = fresh_seed();
        let repeat = format!(
            "repeat with: seam check --provider '{broken}' --property sequences --seed {seed}"
        );
        let (code, said, steps) = sequences(broken, seed);
        assert_eq!(code, Some(1), "{repeat}\n{said}");
        let failed = said
            .lines()
            .find(|l| l.starts_with("FAILED sequences"))
            .unwrap_or_else(|| panic!("{repeat}\n{said}"));
        assert!(
            reason.iter().all(|r| failed.contains(r)),
            "{reason:?}: {repeat}\n{failed}"
        );
        let steps = steps.unwrap_or_else(|| panic!("no trace saved: {repeat}\n{said}"));
        assert!(steps <= 4, "{steps} steps: {repeat}\n{said}");

        let (code, said, steps) = sequences(good, seed);
        assert!(
            said.contains("\n  sequences              passed"),
            "{good} at seed {seed}:\n{said}"
        );
        // Only `sequences` was asked for: incomplete, never failed, and no trace.
        assert_eq!(code, Some(3), "{said}");
        assert_eq!(steps, None, "{said}");
    }
}
