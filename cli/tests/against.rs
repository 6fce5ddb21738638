//! `seam check --against PROVIDER`: any backend compared with any other, step by step, in normal
//! form (the `differential` property). A backend over the protocol that words "not found" its own
//! way passes `sequences` when messages are compared by code only, and is caught by the
//! comparison with the local provider alone; the real adapter, at the same seed, agrees with
//! local throughout. Both replay commands are printed, and the reference replays clean.

use std::path::Path;
use std::process::Command;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

fn adapter(path: &str) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/adapters")
        .join(path)
        .canonicalize()
        .expect("the adapter");
    format!("exec:python3 {} --test-control", file.display())
}

/// `seam check` in `dir`, code-only messages, 64 cases at seed 24228.
fn check(dir: &Path, provider: &str, properties: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seam"));
    cmd.args(["check", "--provider", provider, "--against", "local"])
        .args([
            "--messages",
            "code-only",
            "--seed",
            "24228",
            "--cases",
            "64",
        ])
        .args(["--json", "r.json"])
        .current_dir(dir);
    for p in properties {
        cmd.args(["--property", p]);
    }
    let out = cmd.output().expect("run seam");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_backend_against_local_is_caught_where_it_words_things_its_own_way() {
    if !python_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = adapter("broken/says_it_differently.py");
    let (code, out) = check(dir.path(), &broken, &["sequences", "differential"]);
    assert_eq!(code, Some(1), "{out}");
    // The model, comparing codes only, has nothing to say; the comparison does.
    assert!(out.contains("  sequences              passed"), "{out}");
    assert!(out.contains("  differential           FAILED"), "{out}");
    assert!(out.contains("compared with local"), "{out}");
    assert!(
        out.contains("FAILED differential [differential]: step ")
            && out.contains(": no such file\" }); local answered Err(FsError { code: NotFound, message: \"cannot ")
            && out.contains(": not found\" })"),
        "{out}"
    );
    // Shrunk to the read of nothing, and at most one step the shrinking kept beside it.
    let steps: usize = out
        .split("  minimal trace, ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no minimal trace: {out}"));
    assert!(steps <= 2, "{out}");
    // Both sides of the divergence can be replayed, and the reference follows the model.
    let reference = out
        .lines()
        .find_map(|l| l.strip_prefix("and on the reference: "))
        .unwrap_or_else(|| panic!("no replay command for the reference: {out}"));
    assert!(out.contains("replay it with: "), "{out}");
    assert!(
        reference.contains(" --provider local --messages code-only"),
        "{reference}"
    );
    let trace = std::fs::read_dir(dir.path().join("seam-failures"))
        .expect("traces")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-differential.json"))
        .expect("the differential trace");
    let replayed = Command::new(env!("CARGO_BIN_EXE_seam"))
        .arg("replay")
        .arg(&trace)
        .args(["--provider", "local", "--messages", "code-only"])
        .output()
        .expect("replay");
    let said = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!(
            "the provider follows the model through all {steps} steps"
        )),
        "{said}"
    );
    let report = std::fs::read_to_string(dir.path().join("r.json")).expect("json");
    assert!(report.contains("compared with local"), "{report}");

    // The same run of the real adapter agrees with local at every step.
    let real = adapter("python/seam_adapter.py");
    let (code, out) = check(dir.path(), &real, &["sequences", "differential"]);
    assert!(out.contains("  differential           passed"), "{out}");
    assert!(out.contains("  sequences              passed"), "{out}");
    assert_eq!(
        code,
        Some(3),
        "incomplete (core properties left out), nothing failed: {out}"
    );
}

/// A reference that cannot be named is a usage mistake, said before anything runs.
#[test]
fn an_unknown_reference_is_a_usage_mistake() {
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider", "memory", "--against", "nosuch"])
        .output()
        .expect("run seam");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--against: unknown provider \"nosuch\""),
        "{said}"
    );
}

/// An adapter can be the reference too: `--provider memory --against exec:…` compares the
/// in-memory provider with the Python kit's dict backend. Only what both worlds can do is
/// generated (the dict's world makes no FIFOs, memory's does), the two agree, and the adapter is
/// stopped as the protocol says — its stdin closed — leaving nothing in TMPDIR.
#[test]
fn an_adapter_can_be_the_reference() {
    if !python_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/kits/python/examples/dict_backend.py")
        .canonicalize()
        .expect("the example");
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider", "memory", "--against"])
        .arg(format!("exec:python3 {}", example.display()))
        .args([
            "--seed",
            "24228",
            "--cases",
            "64",
            "--property",
            "differential",
        ])
        .env("TMPDIR", &tmp)
        .current_dir(dir.path())
        .output()
        .expect("run seam");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "incomplete, nothing failed: {stdout}\n{stderr}"
    );
    assert!(
        out_has(&stdout, "  differential           passed"),
        "{stdout}"
    );
    assert!(stdout.contains("compared with exec:python3 "), "{stdout}");
    assert!(!stderr.contains("stopped 1 process"), "{stderr}");
    assert!(
        stderr.contains("dict_backend.py: served "),
        "the adapter ended by its stdin closing, and said so: {stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .expect("tmp")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn out_has(out: &str, line: &str) -> bool {
    out.lines().any(|l| l.starts_with(line))
}
