//! The atomic-write utility against the real disk, test for test with the seed's (§9.3), plus
//! what the seed could not do: a lock released when its holder is killed.
//!
//! Not carried over, on purpose: the two `EPERM` tests (a Windows exclusive-create quirk an
//! `flock` does not have) and the seed's "empty runtime invariant" registration (no such
//! registry here).

use seam_local::Durability;
use seam_local::atomic::{
    AtomicWrite, AtomicWriteError, lock_path, with_file_lock, write_file_atomic,
};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("meta")
        .permissions()
        .mode()
        & 0o7777
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn creates_the_file_and_its_parents_with_exactly_the_stated_mode() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("a/b/settings.json");
    let options = AtomicWrite {
        mode: 0o640,
        dir_mode: Some(0o750),
        durability: Durability::Full,
    };
    write_file_atomic(&file, b"{\"k\":1}\n", &options).expect("write");
    assert_eq!(std::fs::read(&file).expect("read back"), b"{\"k\":1}\n");
    assert_eq!(mode(&file), 0o640, "the stated mode, not the umask's");
    assert_eq!(mode(&tmp.path().join("a")), 0o750);
    assert_eq!(mode(&tmp.path().join("a/b")), 0o750);
    assert_eq!(names(&tmp.path().join("a/b")), ["settings.json"]);
}

#[test]
fn replaces_existing_content_and_narrows_a_wider_permission_file_to_the_stated_mode() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("creds");
    std::fs::write(&file, b"old secret, long enough to differ\n").expect("seed");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    write_file_atomic(&file, b"new\n", &AtomicWrite::new(0o600)).expect("write");
    assert_eq!(std::fs::read(&file).expect("read back"), b"new\n");
    assert_eq!(mode(&file), 0o600);
    assert_eq!(names(tmp.path()), ["creds"]);
}

#[test]
fn replaces_a_symlinked_target_itself_without_writing_through_to_the_referent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let referent = tmp.path().join("referent");
    std::fs::write(&referent, b"untouched\n").expect("referent");
    let link = tmp.path().join("config");
    std::os::unix::fs::symlink(&referent, &link).expect("link");
    write_file_atomic(&link, b"mine\n", &AtomicWrite::new(0o600)).expect("write");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_file(),
        "the link itself was replaced by a regular file"
    );
    assert_eq!(std::fs::read(&link).expect("read"), b"mine\n");
    assert_eq!(std::fs::read(&referent).expect("read"), b"untouched\n");
}

#[test]
fn leaves_no_temp_sibling_and_fails_when_the_rename_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A non-empty directory where the file should go: the rename cannot replace it.
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).expect("dir");
    std::fs::write(target.join("inside"), b"x").expect("inside");
    let err = write_file_atomic(&target, b"content\n", &AtomicWrite::new(0o600))
        .expect_err("a directory is not replaced");
    assert!(matches!(err, AtomicWriteError::Io { .. }), "{err}");
    assert!(err.to_string().starts_with("atomic-write: "), "{err}");
    assert_eq!(names(tmp.path()), ["target"], "nothing staged is left");
    assert_eq!(names(&target), ["inside"]);
}

#[test]
fn rejects_an_invalid_parent_hierarchy_before_running_the_operation() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("plain");
    std::fs::write(&file, b"x").expect("file");
    let mut ran = false;
    let err = with_file_lock(&file.join("below"), Duration::from_secs(1), || ran = true)
        .expect_err("a file is not a directory");
    assert!(matches!(err, AtomicWriteError::Io { .. }), "{err}");
    assert!(!ran, "the operation did not run");
}

#[test]
fn waits_for_the_caller_stated_limit_rather_than_a_default() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("state.json");
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let path = file.clone();
    let holder = std::thread::spawn(move || {
        with_file_lock(&path, Duration::from_secs(1), || {
            held_tx.send(()).expect("held");
            release_rx.recv().expect("release");
        })
        .expect("the holder gets the lock");
    });
    held_rx.recv().expect("the holder holds it");

    let started = Instant::now();
    let mut ran = false;
    let err = with_file_lock(&file, Duration::from_millis(50), || ran = true)
        .expect_err("held by the other thread");
    // It gave up at the caller's 50 ms, not at some default of seconds: the bound is loose so
    // that a loaded machine's scheduling cannot trip it, tight enough that a default would.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!ran);
    assert_eq!(
        err.to_string(),
        format!(
            "atomic-write: timed out waiting for the writer lock at {}",
            lock_path(&file).display()
        )
    );

    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        release_tx.send(()).expect("release");
    });
    let value = with_file_lock(&file, Duration::from_secs(10), || {
        write_file_atomic(&file, b"after\n", &AtomicWrite::new(0o600)).map(|()| 7)
    })
    .expect("gets the lock after release")
    .expect("write");
    assert_eq!(value, 7);
    assert_eq!(std::fs::read(&file).expect("read"), b"after\n");
    holder.join().expect("holder");
    releaser.join().expect("releaser");
    assert_eq!(mode(&lock_path(&file)), 0o600);
}

/// The child of the next test: takes the lock and sleeps until it is killed.
#[test]
fn lock_holder_process() {
    let Ok(path) = std::env::var("SEAM_LOCK_HOLDER") else {
        return;
    };
    with_file_lock(Path::new(&path), Duration::from_secs(5), || {
        std::fs::write(format!("{path}.held"), b"").expect("say so");
        std::thread::sleep(Duration::from_secs(600));
    })
    .expect("lock");
}

#[test]
fn a_lock_whose_holder_was_killed_is_free_at_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("store.json");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "lock_holder_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SEAM_LOCK_HOLDER", &file)
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn");
    let held = tmp.path().join("store.json.held");
    let start = Instant::now();
    while !held.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the child never held the lock"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        matches!(
            with_file_lock(&file, Duration::from_millis(30), || ()),
            Err(AtomicWriteError::LockTimeout { .. })
        ),
        "the live child holds it"
    );
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    // Free at once: one attempt, no wait (so a loaded machine cannot make it look held).
    with_file_lock(&file, Duration::ZERO, || ()).expect("free after the holder died");
    assert!(
        lock_path(&file).exists(),
        "the lock file stays; the lock did not"
    );
}
