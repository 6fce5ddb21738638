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
