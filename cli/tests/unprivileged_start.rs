//! Run as root, `permission-denied` starts the backend again as `nobody`. When `nobody` cannot
//! execute the backend's command at all (an interpreter under root's home — pyenv, conda — or
//! behind a directory only root may enter), that is a fact of the machine, not a departure of
//! the backend: the property is reported as not run, with the reason and the remedy, in text,
//! JSON and JUnit — never FAILED. Beside it, the same adapter through an interpreter everyone
//! may run is checked and passes, so the refusal is what made the difference.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

/// The Python interpreter's own path (not a shim).
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn check(dir: &Path, interpreter: &str) -> (Option<i32>, String) {
    let adapter = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/adapters/python/seam_adapter.py")
        .canonicalize()
        .expect("the adapter");
    let provider = format!("exec:{interpreter} {} --test-control", adapter.display());
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider", &provider, "--seed", "1"])
        .args(["--property", "permission-denied"])
        .args(["--json", "r.json", "--junit", "r.xml"])
        .current_dir(dir)
        .output()
        .expect("run seam");
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

fn property_line(said: &str) -> &str {
    said.lines()
        .find(|l| l.trim_start().starts_with("permission-denied "))
        .unwrap_or_else(|| panic!("no permission-denied line in:\n{said}"))
}

#[test]
fn an_interpreter_nobody_may_execute_leaves_permission_denied_not_run_with_the_remedy() {
    if !python_or_skip() {
        return;
    }
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: only root starts the backend again as another user");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // The interpreter behind a directory only root may enter.
    let private = dir.path().join("private");
    std::fs::create_dir(&private).expect("private");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let hidden = private.join("python3");
    std::os::unix::fs::symlink(python(), &hidden).expect("link");
    let run = dir.path().join("hidden");
    std::fs::create_dir(&run).expect("run dir");
    let (code, said) = check(&run, &hidden.display().to_string());
    let line = property_line(&said);
    assert!(
        line.contains("NOT RUN: the backend could not be started as uid 65534 (nobody)"),
        "{said}"
    );
    assert!(line.contains("Permission denied"), "{said}");
    assert!(line.contains("/usr/bin/python3"), "the remedy: {said}");
    assert!(!said.contains("FAILED"), "{said}");
    // Only a non-core property was asked for: incomplete, not failed.
    assert_eq!(code, Some(3), "{said}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("r.json")).expect("json written"))
            .expect("valid json");
    let result = json[0]["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == "permission-denied")
        .expect("permission-denied in the JSON");
    assert_eq!(result["status"]["status"], "not_run", "{result}");
    let reason = result["status"]["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("(nobody)") && reason.contains("/usr/bin/python3"),
        "{reason}"
    );
    let xml = std::fs::read_to_string(run.join("r.xml")).expect("junit written");
    assert!(
        xml.contains("<skipped message=\"not run: the backend could not be started as uid 65534"),
        "{xml}"
    );

    // The same adapter through the interpreter itself, which everyone may run: checked.
    if !Path::new("/usr/bin/python3").exists() {
        eprintln!("the control needs /usr/bin/python3; not here");
        return;
    }
    let open = dir.path().join("open");
    std::fs::create_dir(&open).expect("open dir");
    let (code, said) = check(&open, "/usr/bin/python3");
    assert!(property_line(&said).contains(" passed "), "{said}");
    assert_eq!(code, Some(3), "{said}");
}

/// `seam check --provider local --property permission-denied` with `TMPDIR` set, from `binary`.
fn check_local(binary: &Path, tmp: &Path, dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(binary)
        .args(["check", "--provider", "local", "--seed", "1"])
        .args(["--property", "permission-denied"])
        .args(["--json", "r.json"])
        .env("TMPDIR", tmp)
        .current_dir(dir)
        .output()
        .expect("run seam");
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

fn left_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("the directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect()
}

/// A TMPDIR only root may enter (`mktemp -d` makes one): `nobody` cannot reach a case in it,
/// and every case would be refused for that directory, whatever the backend does. Not run,
/// naming the directory and the remedy — never a pass (it passed, refusing all twelve cases,
/// until the gate looked). Beside it, the same run with a TMPDIR others may pass through, from a
/// binary behind a directory only root may enter (run from a link in the run directory), is
/// checked and passes; neither leaves anything in TMPDIR.
#[test]
fn a_tmpdir_nobody_may_enter_leaves_permission_denied_not_run_with_the_remedy() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED: only root starts the backend again as another user");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let private = dir.path().join("private");
    std::fs::create_dir(&private).expect("private");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let binary = Path::new(env!("CARGO_BIN_EXE_seam"));
    let (code, said) = check_local(binary, &private, dir.path());
    let line = property_line(&said);
    assert!(
        line.contains("NOT RUN: uid 65534 (nobody), which permission cases must run as"),
        "{said}"
    );
    assert!(
        line.contains(&format!(
            "{} (mode 0700) lets no other user through",
            private.display()
        )),
        "{said}"
    );
    assert!(line.contains("TMPDIR=/tmp"), "the remedy: {said}");
    assert!(!said.contains("FAILED"), "{said}");
    assert_eq!(code, Some(3), "{said}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("r.json")).expect("json written"),
    )
    .expect("valid json");
    let result = json[0]["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == "permission-denied")
        .expect("permission-denied in the JSON");
    assert_eq!(result["status"]["status"], "not_run", "{result}");
    assert_eq!(left_in(&private), Vec::<String>::new());

    // The binary where only root may reach it, TMPDIR open to others: checked, and passed.
    let hidden = private.join("seam");
    if std::fs::hard_link(binary, &hidden).is_err() {
        std::fs::copy(binary, &hidden).expect("a copy of the binary");
    }
    let open = dir.path().join("open");
    std::fs::create_dir(&open).expect("open");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let (code, said) = check_local(&hidden, &open, dir.path());
    assert!(property_line(&said).contains(" passed "), "{said}");
    assert_eq!(code, Some(3), "{said}");
    assert_eq!(left_in(&open), Vec::<String>::new(), "{said}");
}
