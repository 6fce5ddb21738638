//! Runs the loom model checks (`tests/loom.rs`) from the ordinary test run.
//!
//! They need the whole dependency graph compiled with `--cfg seam_loom` (so the memory store's
//! locks are loom's), which an ordinary build cannot be; so this test runs that build — this
//! crate and its few dependencies, in `target/loom` beside the ordinary target directory so
//! neither invalidates the other — and fails if any interleaving fails. Set `SEAM_SKIP_LOOM=1`
//! to skip it knowingly (it says so).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_memory_store_passes_its_loom_model_checks() {
    if std::env::var_os("SEAM_SKIP_LOOM").is_some() {
        eprintln!("SKIPPED: SEAM_SKIP_LOOM is set; the loom model checks did not run");
        return;
    }
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
        .args([
            "test",
            "-p",
            "seam-memory-loom",
            "--test",
            "loom",
            "--target-dir",
        ])
        .arg(&target)
        .args(["--", "--nocapture", "--test-threads=1"])
        .env("RUSTFLAGS", flags.trim())
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in stdout.lines().filter(|l| l.contains("interleavings")) {
        println!("{line}");
    }
    assert!(
        out.status.success(),
        "the loom checks failed:\n{stdout}\n{}",
        stderr
            .lines()
            .rev()
            .take(60)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
    let scenarios = stdout.matches("interleavings explored").count();
    assert_eq!(scenarios, 6, "every scenario ran and reported:\n{stdout}");
}
