//! The registry across real processes.
//!
//! * **Concurrent registration.** Several processes each register their own directories in one
//!   registry at the same moment: every record lands. Beside it, the same race run by a naive
//!   writer (read, change, atomic rename, no version guard) loses records — so the race is real
//!   at this concurrency and the passing run is not luck.
//! * **Crashes.** A process saving in a loop is killed with SIGKILL at random moments: the file
//!   is then always a whole registry (old or new), the next save gets in at once, and it sweeps
//!   the staging the dead one left.
//!
//! The children are this test binary run again (`child_process` does nothing unless
//! `SEAM_CHILD` names a role).

mod support;

use seam::Signal;
use seam_local::{LocalConfig, LocalFileSystem};
use seam_workspace::Registry;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use support::{mkdir, registry_at, runtime, s};

/// Processes registering at once.
const PROCESSES: usize = 4;
/// Workspaces each registers.
const EACH: usize = 12;
/// Kills of the crash test.
const KILLS: usize = 60;

fn spawn(role: &str, dir: &Path, id: usize) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SEAM_CHILD", role)
        .env("SEAM_CHILD_DIR", dir)
        .env("SEAM_CHILD_ID", id.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the child")
}

fn registry_file(dir: &Path) -> PathBuf {
    dir.join("state").join("workspaces.json")
}

/// Waits for `go` (so every child starts its race together).
fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "never told to go"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn child_process() {
    let Ok(role) = std::env::var("SEAM_CHILD") else {
        return;
    };
    let dir = PathBuf::from(std::env::var("SEAM_CHILD_DIR").expect("dir"));
    let id: usize = std::env::var("SEAM_CHILD_ID")
        .expect("id")
        .parse()
        .expect("id");
    match role.as_str() {
        "registrar" => registrar(&dir, id),
        "naive" => naive(&dir, id),
        "saver" => saver(&dir),
        other => panic!("unknown role {other}"),
    }
}

/// Registers `EACH` directories of its own through the registry.
fn registrar(dir: &Path, id: usize) {
    let registry = registry_at(dir, &registry_file(dir));
    let rt = runtime();
    wait_for(&dir.join("go"));
    for k in 0..EACH {
        let root = s(&dir.join(format!("ws-{id}-{k}")));
        let added = rt
            .block_on(registry.add(&root, None, &Signal::none()))
            .expect("register");
        assert!(added.created);
    }
}

/// The same job done the naive way: read the file, add, write a temp file and rename it over
/// (atomic, but with no version guard).
fn naive(dir: &Path, id: usize) {
    let file = registry_file(dir);
    wait_for(&dir.join("go"));
    for k in 0..EACH {
        let root = s(&dir.join(format!("ws-{id}-{k}")));
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
        doc["workspaces"]
            .as_array_mut()
            .expect("array")
            .push(serde_json::json!({"id": format!("ws-{id}-{k}"), "root": root, "title": "t", "created_at_ms": 0, "updated_at_ms": 0}));
        let tmp = file.with_extension(format!("tmp-{id}"));
        std::fs::write(&tmp, serde_json::to_vec(&doc).expect("json")).expect("write");
        std::fs::rename(&tmp, &file).expect("rename");
    }
}

/// Saves forever: adds and removes a handful of workspaces, durably, until killed.
fn saver(dir: &Path) {
    let registry = registry_at(dir, &registry_file(dir));
    let rt = runtime();
    let roots: Vec<String> = (0..6).map(|k| s(&dir.join(format!("w{k}")))).collect();
    for i in 0.. {
        let root = &roots[i % roots.len()];
        if i % 3 == 2 {
            let _ = rt.block_on(registry.remove(root, &Signal::none()));
        } else {
            rt.block_on(registry.add(root, Some(&format!("save {i}")), &Signal::none()))
                .expect("save");
        }
    }
}

/// Runs `role` in `PROCESSES` children started together, on a registry file that exists first
/// (`seeded`) or that the race creates; returns the roots wanted and the roots on disk after.
fn race(role: &str, seeded: bool) -> (Vec<String>, Vec<String>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = std::fs::canonicalize(tmp.path()).expect("canonical");
    let mut wanted = Vec::new();
    for id in 0..PROCESSES {
        for k in 0..EACH {
            wanted.push(mkdir(&dir.join(format!("ws-{id}-{k}"))));
        }
    }
    if seeded {
        std::fs::create_dir_all(dir.join("state")).expect("state");
        std::fs::write(registry_file(&dir), b"{\"format\":1,\"workspaces\":[]}\n").expect("seed");
    }
    let children: Vec<Child> = (0..PROCESSES).map(|id| spawn(role, &dir, id)).collect();
    std::fs::write(dir.join("go"), b"").expect("go");
    for mut c in children {
        assert!(c.wait().expect("wait").success(), "a {role} child failed");
    }
    let doc = support::on_disk(&registry_file(&dir));
    let mut got: Vec<String> = doc["workspaces"]
        .as_array()
        .expect("array")
        .iter()
        .map(|w| w["root"].as_str().expect("root").to_string())
        .collect();
    got.sort();
    wanted.sort();
    drop(tmp);
    (wanted, got)
}

#[test]
fn processes_registering_at_once_lose_nothing_where_a_naive_writer_loses_records() {
    let (wanted, got) = race("registrar", true);
    assert_eq!(got, wanted, "records lost or duplicated by the registry");
    // The first save creates the file: several processes race to create it (one wins, the
    // others lose create-if-absent and re-apply to the winner's file).
    let (wanted, got) = race("registrar", false);
    assert_eq!(got, wanted, "records lost creating the registry");

    // The same race without the version guard: lost records in at least one of three runs.
    let mut lost = 0;
    for _ in 0..3 {
        // The naive writer needs an existing file (it cannot create one safely either).
        let (wanted, got) = race("naive", true);
        lost = wanted.len() - got.len();
        if lost > 0 {
            break;
        }
    }
    assert!(
        lost > 0,
        "the naive writer lost nothing in three runs: this race does not exercise the guard"
    );
    eprintln!(
        "{} processes × {EACH} registrations: none lost; the naive writer lost {lost}",
        PROCESSES
    );
}

#[test]
fn a_save_killed_at_any_moment_leaves_a_whole_registry_and_no_lock_or_staging_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_path = std::fs::canonicalize(dir.path()).expect("canonical");
    for k in 0..6 {
        mkdir(&dir_path.join(format!("w{k}")));
    }
    let file = registry_file(&dir_path);
    let rt = runtime();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut saw_a_file = 0;
    let mut contents = std::collections::HashSet::new();
    for kill in 0..KILLS {
        let mut child = spawn("saver", &dir_path, kill);
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        std::thread::sleep(Duration::from_millis(5 + (seed >> 33) % 40));
        let _ = child.kill();
        let status = child.wait().expect("wait");
        assert!(!status.success(), "kill {kill}: the saver ended by itself");
        if file.exists() {
            saw_a_file += 1;
            // Whole: it parses, as a registry, from a fresh reader.
            let list = rt
                .block_on(registry_at(&dir_path, &file).list(&Signal::none()))
                .unwrap_or_else(|e| panic!("kill {kill}: the registry is not whole: {e}"));
            assert!(list.len() <= 6, "kill {kill}: {} records", list.len());
            contents.insert(std::fs::read(&file).expect("read"));
        }
    }
    assert!(
        saw_a_file > KILLS / 2,
        "the saver rarely got a save in: {saw_a_file}"
    );
    // The saver was saving when it died, not idle: almost every kill found another file.
    assert!(
        contents.len() > KILLS / 2,
        "only {} distinct registries in {KILLS} kills",
        contents.len()
    );
    // The next save: in at once (no lock outlives a process), and it sweeps the dead one's
    // staging (its clock says the staging is old enough to be abandoned).
    let later: Arc<LocalFileSystem> = Arc::new(LocalFileSystem::new(
        LocalConfig::new(s(&dir_path)).with_clock(|| SystemTime::now() + Duration::from_secs(3600)),
    ));
    let registry = Registry::new(later, s(&file));
    // No lock outlives its process: the registry file's lock is free (asked without waiting,
    // so a loaded machine cannot make this look like a held lock).
    if file.exists() {
        let f = std::fs::File::open(&file).expect("open for the lock check");
        assert!(
            rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok(),
            "a lock outlived its process"
        );
    }
    rt.block_on(registry.add(
        &s(&dir_path.join("w0")),
        Some("after the crashes"),
        &Signal::none(),
    ))
    .expect("the next save gets in");
    let mut left: Vec<String> = std::fs::read_dir(dir_path.join("state"))
        .expect("state dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec!["workspaces.json".to_string()],
        "staging left after the sweep"
    );
    eprintln!(
        "{KILLS} kills mid-save: every registry whole ({} distinct)",
        contents.len()
    );
}
