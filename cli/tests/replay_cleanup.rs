//! `seam replay` of an `exec:` trace stops the adapter the way `seam check` does — its input
//! closes and it removes its own cases — whether the trace departs or not: TMPDIR is left as it
//! was found. (Killed first, as replay once did, the adapter left its case directory behind on
//! every replay.)

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

/// A two-step trace the mode-resetting adapter departs from at step 1 (it was found by
/// `seam check` at seed 1) and the correct adapter follows.
const TRACE: &str = r#"{
  "seam_trace": 3,
  "provider": "exec:python3 broken/resets_mode.py --test-control",
  "property": "sequences",
  "seed": 1,
  "configuration": "default",
  "steps": [
    {"op": "write", "path": "e/m", "content": "", "guard": "none",
     "interfere": {"competitor": {"file": "theirs\n"}}},
    {"op": "write", "path": "e/m", "content": "", "guard": {"replace_if_version": "target"}}
  ],
  "failure": {"step": 1, "message": "mode 644, the model says mode 600", "kind": "bytes-on-disk"}
}"#;

fn adapter(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/adapters")
        .join(name)
        .canonicalize()
        .expect("the adapter")
}

/// Replays the trace on `adapter` with a TMPDIR of its own; returns the exit code, what was
/// said, and what is left in that TMPDIR.
fn replay(adapter: &Path) -> (Option<i32>, String, Vec<String>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let trace = dir.path().join("trace.json");
    std::fs::write(&trace, TRACE).expect("trace");
    let provider = format!("exec:python3 {} --test-control", adapter.display());
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .arg("replay")
        .arg(&trace)
        .args(["--provider", &provider])
        .env("TMPDIR", &tmp)
        .current_dir(dir.path())
        .output()
        .expect("run seam");
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let left = walk(&tmp);
    (out.status.code(), said, left)
}

fn walk(dir: &Path) -> Vec<String> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir)
        .expect("read tmp")
        .filter_map(Result::ok)
    {
        all.push(e.path().display().to_string());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            all.extend(walk(&e.path()));
        }
    }
    all
}

#[test]
fn a_departing_replay_of_an_exec_trace_leaves_tmpdir_as_it_found_it() {
    if !python_or_skip() {
        return;
    }
    let (code, said, left) = replay(&adapter("broken/resets_mode.py"));
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("the provider departs from the model at step 1"),
        "{said}"
    );
    assert!(said.contains(" mode 644, the model says "), "{said}");
    assert!(left.is_empty(), "left behind: {left:?}\n{said}");
}

#[test]
fn a_passing_replay_of_an_exec_trace_leaves_tmpdir_as_it_found_it() {
    if !python_or_skip() {
        return;
    }
    let (code, said, left) = replay(&adapter("python/seam_adapter.py"));
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("the provider follows the model through all 2 steps"),
        "{said}"
    );
    assert!(left.is_empty(), "left behind: {left:?}\n{said}");
}
