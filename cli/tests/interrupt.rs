//! A run stopped by SIGINT (Ctrl-C) or SIGTERM (a CI runner, `timeout`) — `seam check` or
//! `seam replay` — leaves TMPDIR as it found it and no process of its own behind: the remote
//! server it started, an adapter over `exec:` (killed with its shell if it does not stop on
//! SIGTERM), and every case directory go with it; it prints no report and saves no trace, and
//! exits with the shell's status for the signal. Each run is stopped in the middle, once
//! everything it starts is there.

#[path = "support/fuse.rs"]
mod fuse;
use fuse::fuse_or_skip;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

use rustix::process::{Pid, Signal, kill_process};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Everything under `dir`, as paths relative to it.
fn everything_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap_or(&p).display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The mount points under `dir` (this process sees the mounts the run made: same namespace).
fn mounts_under(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|point| point.starts_with(&needle))
        .map(str::to_string)
        .collect()
}

/// The processes (other than this one) whose command line or environment names `dir`.
fn processes_naming(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let name = p.file_name().to_string_lossy().to_string();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        // A zombie has no command line and is not running.
        let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        if cmdline.is_empty() {
            continue;
        }
        let environ = std::fs::read(p.path().join("environ")).unwrap_or_default();
        let seen = |b: &[u8]| String::from_utf8_lossy(b).contains(&needle);
        if seen(&cmdline) || seen(&environ) {
            out.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    out
}

/// The processes naming `dir` still running once none is left or `within` has passed.
fn still_running_after(dir: &Path, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    let mut left = processes_naming(dir);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = processes_naming(dir);
    }
    left
}

/// The run directory in `tmp`, once it or its `private/` holds an entry starting with each of
/// `wanted`.
fn run_dir_with(tmp: &Path, wanted: &[&str]) -> Option<PathBuf> {
    let run = std::fs::read_dir(tmp)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("seam-check-"))
        })?;
    // The cases' directories are made in the run directory's `private/` (beside its `tmp`
    // link), the server's, the adapters' and the crash children's in the run directory.
    let names: Vec<String> = [run.clone(), run.join("private")]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    wanted
        .iter()
        .all(|w| names.iter().any(|n| n.starts_with(w)))
        .then_some(run)
}

/// A two-step trace (what `seam replay` runs; `--provider` names the adapter).
const TRACE: &str = r#"{
  "seam_trace": 3,
  "provider": "local",
  "property": "sequences",
  "seed": 1,
  "configuration": "default",
  "steps": [
    {"op": "write", "path": "a", "content": "x\n", "guard": "none"},
    {"op": "read_text", "path": "a"}
  ],
  "failure": {"step": 1, "message": "none", "kind": "outcome"}
}"#;

/// The adapter that starts slowly, ignores SIGTERM and takes 30 s to exit.
fn slow_to_stop() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/adapters/slow/slow_to_stop.py")
        .canonicalize()
        .expect("the adapter");
    format!("exec:python3 {}", script.display())
}

fn kit_example() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/kits/python/examples/dict_backend.py")
        .canonicalize()
        .expect("the kit's example");
    format!("exec:python3 {}", script.display())
}

/// `seam check` over `providers`.
fn check(providers: &[String]) -> Vec<String> {
    let mut args = vec!["check".to_string()];
    for p in providers {
        args.extend(["--provider".to_string(), p.clone()]);
    }
    args
}

/// Runs seam with `args` and its own TMPDIR (and working directory, where traces would be
/// saved), waits until its run directory holds `wanted` (and, with `ready`, until what it and
/// its adapters said includes that), sends `signal`, and checks what it leaves.
fn interrupted(args: &[String], wanted: &[&str], ready: Option<&str>, signal: Signal, status: i32) {
    let tmp = tempfile::tempdir().expect("a TMPDIR for the run");
    // What it says goes to files beside, not pipes: a process it left running would hold a
    // pipe open, and reading it would never end.
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let out = tempfile::NamedTempFile::new().expect("an output file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(args)
        .env("TMPDIR", tmp.path())
        .env("SEAM_SLOW_START", "3")
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.reopen().expect("the output")))
        .stderr(Stdio::from(log.reopen().expect("the log")))
        .spawn()
        .expect("seam starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut run = None;
    while run.is_none() && Instant::now() < deadline {
        if let Ok(Some(s)) = child.try_wait() {
            panic!("seam check ended before it was interrupted ({s})");
        }
        run = run_dir_with(tmp.path(), wanted).filter(|_| {
            ready.is_none_or(|r| {
                std::fs::read_to_string(log.path()).is_ok_and(|said| said.contains(r))
            })
        });
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = run.unwrap_or_else(|| {
        let _ = child.kill();
        panic!(
            "no run directory holding {wanted:?} within 120 s: {:?}",
            everything_in(tmp.path())
        )
    });
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("a pid")).expect("a pid");
    kill_process(pid, signal).expect("the signal is sent");
    let deadline = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("seam check did not exit within 60 s of {signal:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let said = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert_eq!(exit.code(), Some(status), "{said}");
    // No verdict of what was cut short: no report, no replayed step.
    let printed = std::fs::read_to_string(out.path()).unwrap_or_default();
    assert!(
        !printed.contains("RESULT") && !printed.contains('✓') && !printed.contains('✗'),
        "{printed}"
    );
    assert!(
        said.contains(
            "stopping the backends this run started and removing its temporary directories"
        ),
        "{said}"
    );
    assert!(
        !run.exists(),
        "{} is left: {:?}\n{said}",
        run.display(),
        everything_in(&run)
    );
    // The processes it started go with it (an adapter stopping on SIGTERM may take a moment).
    let left = still_running_after(tmp.path(), Duration::from_secs(10));
    assert!(left.is_empty(), "still running: {left:#?}\n{said}");
    assert_eq!(
        mounts_under(tmp.path()),
        Vec::<String>::new(),
        "mounted in TMPDIR still\n{said}"
    );
    assert_eq!(
        everything_in(tmp.path()),
        Vec::<String>::new(),
        "TMPDIR is not as the run found it\n{said}"
    );
}

/// In the middle of a power cut: the layer the run mounted is detached, and its backing
/// directory, mount point and survivors go with the run directory (a FUSE mount left behind
/// by a process that is gone is a dead mount point nothing can remove).
#[test]
fn ctrl_c_in_a_power_cut_detaches_the_layer_and_removes_its_directories() {
    if !fuse_or_skip("ctrl_c_in_a_power_cut_detaches_the_layer_and_removes_its_directories") {
        return;
    }
    let mut args = check(&["local".into()]);
    args.extend(["--property".into(), "power-loss".into()]);
    interrupted(&args, &["power-loss-"], None, Signal::INT, 130);
}

#[test]
fn ctrl_c_stops_the_server_it_started_and_removes_every_directory_it_made() {
    interrupted(
        &check(&["local".into(), "remote".into()]),
        &["case-", "serve-"],
        None,
        Signal::INT,
        130,
    );
}

#[test]
fn sigterm_kills_an_adapter_that_will_not_stop_with_the_shell_that_runs_it() {
    if python_or_skip() {
        // Once the interpreter runs under the shell: the shell dies of SIGTERM at once, the
        // interpreter ignores it, and only a SIGKILL to the group stops it.
        interrupted(
            &check(&[slow_to_stop()]),
            &["exec-"],
            Some("ignores SIGTERM"),
            Signal::TERM,
            143,
        );
    }
}

#[test]
fn ctrl_c_stops_a_replay_and_the_adapter_it_started() {
    if python_or_skip() {
        let dir = tempfile::tempdir().expect("a directory for the trace");
        let trace = dir.path().join("trace.json");
        std::fs::write(&trace, TRACE).expect("the trace");
        let args = vec![
            "replay".to_string(),
            trace.display().to_string(),
            "--provider".to_string(),
            format!("{} --test-control", slow_to_stop()),
        ];
        interrupted(&args, &["exec-"], Some("ignores SIGTERM"), Signal::INT, 130);
    }
}

#[test]
fn sigterm_stops_an_adapter_it_started_and_leaves_tmpdir_as_it_found_it() {
    if python_or_skip() {
        interrupted(
            &check(&[kit_example()]),
            &["exec-"],
            Some("serves the whole run from one process"),
            Signal::TERM,
            143,
        );
    }
}

/// Not interrupted: a run that ends as usual closes its adapter's input and, after half a
/// second, kills what is left of it — the adapter under the shell too, not the shell alone.
#[test]
fn a_run_that_ends_kills_an_adapter_that_does_not_stop_at_the_end_of_its_input() {
    if !python_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().expect("a TMPDIR for the run");
    // To a file, not a pipe: an adapter left running would hold a pipe open past seam's end.
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let status = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(check(&[slow_to_stop()]))
        .args(["--property", "claims"])
        .env("TMPDIR", tmp.path())
        .env("SEAM_SLOW_START", "0")
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log.reopen().expect("the log")))
        .status()
        .expect("seam runs");
    let said = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert_eq!(status.code(), Some(3), "one property: incomplete\n{said}");
    assert!(said.contains("ignores SIGTERM"), "{said}");
    // Its adapter sleeps 30 s once its input ends; a few seconds is plenty for the kill.
    let left = still_running_after(tmp.path(), Duration::from_secs(5));
    assert!(left.is_empty(), "still running: {left:#?}\n{said}");
}
