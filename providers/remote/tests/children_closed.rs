//! `children::terminate_all` is for a program on its way out: every process tracked before it
//! is stopped — a whole process group, not only its leader — and one tracked after it (started
//! meanwhile by a thread that did not know) is killed at once; one being started while it runs
//! (under [`starting`]) is waited for and stopped with the others, and none is started after
//! it. Its own test binary: the state is the process's.

use seam_remote::children::{starting, terminate_all, track};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A shell leading a group of its own that runs a `sleep` as its child and ignores SIGTERM,
/// as does the `sleep` under it.
fn stubborn() -> std::process::Child {
    Command::new("sh")
        .args(["-c", "trap '' TERM; sleep 30 & wait"])
        .process_group(0)
        .stdin(Stdio::null())
        .spawn()
        .expect("sh starts")
}

/// Whether anyone is left in the group `pgid` leads.
fn group_alive(pgid: u32) -> bool {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pgid).expect("pid")).expect("pid");
    rustix::process::test_kill_process_group(pid).is_ok()
}

#[test]
fn a_group_that_ignores_sigterm_is_killed_after_the_grace_and_a_late_one_at_once() {
    // Reaped by `terminate_all` (the handle is only for its id).
    let first = stubborn();
    let pgid = first.id();
    drop(first);
    track(pgid);
    // Another is being started on a thread of its own as the program is interrupted: it holds
    // the list for 300 ms before its process is up.
    let (held, is_held) = std::sync::mpsc::channel();
    let meanwhile = std::thread::spawn(move || {
        let guard = starting().expect("not closed yet");
        held.send(()).expect("the test waits");
        std::thread::sleep(Duration::from_millis(300));
        let child = stubborn();
        let id = child.id();
        guard.track(id);
        drop(child);
        id
    });
    is_held.recv().expect("the thread holds the list");
    // The shell is up and has started its child.
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    assert_eq!(
        terminate_all(Duration::from_millis(500)),
        2,
        "the one being started was not waited for"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "it did not wait for the group to stop by itself"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while group_alive(pgid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!group_alive(pgid), "the group it led is still running");
    let meanwhile = meanwhile.join().expect("the thread ends");
    while group_alive(meanwhile) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !group_alive(meanwhile),
        "the group started meanwhile is still running"
    );
    let refused = starting().err().expect("nothing is started after");
    assert_eq!(refused.kind(), std::io::ErrorKind::Interrupted, "{refused}");

    // Started after: killed as soon as it is tracked, its group with it.
    let mut late = stubborn();
    std::thread::sleep(Duration::from_millis(200));
    track(late.id());
    let status = late.wait().expect("the late one is reaped");
    assert_eq!(status.signal(), Some(9), "{status:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while group_alive(late.id()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!group_alive(late.id()), "the late group is still running");
}
