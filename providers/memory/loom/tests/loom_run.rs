//! Runs the loom model checks from the ordinary test run: the memory store's
//! (`tests/loom.rs` here) and the local provider's per-target lock table (`loom_checks` in
//! `seam-local`'s `src/locks.rs`).
//!
//! They need the dependency graph compiled with `--cfg seam_loom` (so the locks under test are
//! loom's), which an ordinary build cannot be; so this test runs that build, in `target/loom`
//! beside the ordinary target directory so neither invalidates the other, and fails if any
//! interleaving fails. A cfg of our own, not `loom`: tokio has a `loom` cfg of its own that
//! would change tokio. Set `SEAM_SKIP_LOOM=1` to skip it knowingly (it says so).

use std::path::PathBuf;
use std::process::Command;

/// Runs `cargo test ARGS` under `--cfg seam_loom`; returns the lines that report interleavings.
fn loom_build(args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../../target"))
        .join("loom");
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    flags.push_str(" --cfg seam_loom");
    let out = Command::new(cargo)
        .current_dir(&manifest)
        .arg("test")
        .args(args)
        .arg("--target-dir")
        .arg(&target)
        .args(["--", "--nocapture", "--test-threads=1"])
        .env("RUSTFLAGS", flags.trim())
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(60).collect();
    assert!(
        out.status.success(),
        "the loom checks ({args:?}) failed:\n{stdout}\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    stdout
        .lines()
        .filter(|l| l.contains("interleavings explored"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_memory_store_and_the_local_lock_table_pass_their_loom_model_checks() {
    if std::env::var_os("SEAM_SKIP_LOOM").is_some() {
        eprintln!("SKIPPED: SEAM_SKIP_LOOM is set; the loom model checks did not run");
        return;
    }
    let memory = loom_build(&["-p", "seam-memory-loom", "--test", "loom"]);
    let table = loom_build(&["-p", "seam-local", "--lib", "loom_checks"]);
    for line in memory.iter().chain(&table) {
        println!("{line}");
    }
    assert_eq!(
        memory.len(),
        6,
        "every memory scenario ran and reported: {memory:?}"
    );
    assert_eq!(
        table.len(),
        3,
        "every lock-table scenario ran and reported: {table:?}"
    );
}
