//! The `seam` binary end to end: the main job, its files, its exit codes, replay, and the saved
//! counterexamples in `fixtures/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn seam(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run seam")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

#[test]
fn check_passes_on_the_local_provider_with_reports_and_real_permission_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = seam(
        &[
            "check",
            "--provider",
            "local",
            "--cases",
            "24",
            "--json",
            "r.json",
            "--junit",
            "r.xml",
        ],
        dir.path(),
    );
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    for property in seam_conformance::PROPERTIES {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{property} ")))
            .unwrap_or_else(|| panic!("{property} missing from:\n{stdout}"));
        assert!(line.contains(" passed "), "{line}");
    }
    // FS_PERMISSION_DENIED really happened, as an unprivileged user even when we are root.
    let codes = stdout
        .lines()
        .find(|l| l.starts_with("error codes:"))
        .expect("codes line");
    assert!(!codes.contains("FS_PERMISSION_DENIED 0"), "{codes}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("r.json")).expect("json written"),
    )
    .expect("valid json");
    assert_eq!(json[0]["provider"], "local");
    assert_eq!(json[0]["cases"], 24);
    let xml = std::fs::read_to_string(dir.path().join("r.xml")).expect("junit written");
    assert!(xml.starts_with("<?xml"));
    assert_eq!(
        xml.matches("<testcase ").count(),
        seam_conformance::PROPERTIES.len()
    );
    assert!(xml.contains("failures=\"0\""));
}

#[test]
fn a_broken_variant_fails_saves_a_trace_and_replays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = seam(
        &[
            "check",
            "--fault",
            "drops-bom-on-edit",
            "--property",
            "sequences",
            "--trace-dir",
            "t",
        ],
        dir.path(),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("RESULT: FAIL"));
    assert!(stdout.contains("replay it with: cargo run --release -p seam-cli -- replay"));
    let trace = dir.path().join("t/local+drops-bom-on-edit-sequences.json");
    assert!(trace.exists(), "{stdout}");
    let trace = trace.to_string_lossy().into_owned();
    let broken = seam(
        &["replay", &trace, "--fault", "drops-bom-on-edit"],
        dir.path(),
    );
    assert_eq!(broken.status.code(), Some(1), "{}", text(&broken.stdout));
    assert!(text(&broken.stdout).contains("DEPARTS"));
    let fixed = seam(&["replay", &trace, "--provider", "local"], dir.path());
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed.stdout));
}

#[test]
fn usage_errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("bad.json"), "{ not json").expect("write");
    std::fs::write(
        dir.path().join("future.json"),
        r#"{"seam_trace":99,"provider":"x","property":"p","seed":0,"steps":[]}"#,
    )
    .expect("write");
    let cases: &[&[&str]] = &[
        &["check", "--bogus"],
        &["check", "--provider", "nfs"],
        &["check", "--cases", "zero"],
        &["check", "--property", "nope"],
        &["check", "--fault", "nope"],
        &["replay", "missing.json"],
        &["replay", "bad.json"],
        &["replay", "future.json"],
        &["frobnicate"],
    ];
    for args in cases {
        let out = seam(args, dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("seam: "), "{args:?}: {stderr}");
    }
}

#[test]
fn every_saved_counterexample_passes_and_fault_traces_still_catch_their_fault() {
    let dir = fixtures().join("counterexamples");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("counterexamples dir") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        seen += 1;
        let p = path.to_string_lossy().into_owned();
        let ok = seam(&["replay", &p, "--provider", "local"], Path::new("."));
        assert_eq!(ok.status.code(), Some(0), "{p}:\n{}", text(&ok.stdout));
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if let Some(fault) = stem.strip_prefix("fault-") {
            let caught = seam(&["replay", &p, "--fault", fault], Path::new("."));
            assert_eq!(
                caught.status.code(),
                Some(1),
                "{p} no longer catches {fault}:\n{}",
                text(&caught.stdout)
            );
        }
    }
    assert!(seen >= 7, "only {seen} counterexamples");
}

#[test]
fn help_and_version_exit_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(seam(&["--help"], dir.path()).status.code(), Some(0));
    assert_eq!(seam(&["--version"], dir.path()).status.code(), Some(0));
    assert_eq!(
        seam(&["check", "--help"], dir.path()).status.code(),
        Some(0)
    );
}
