//! The processes this process started for the wire — adapters spoken to over `exec:` — that are
//! still running. Each is killed when its connection is dropped; a connection that is never
//! dropped (a call into it hung, and the thread that made it was given up) would leave its
//! adapter running after this process exits, so a program that gives calls up can stop what is
//! left with [`stop_all`] before it exits.

use std::sync::Mutex;

static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Set by [`terminate_all`]: the program is on its way out, and a process started after it is
/// killed as soon as it is tracked.
static CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn running() -> std::sync::MutexGuard<'static, Vec<u32>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records a process this process started (its id), until [`forget`] — or, once
/// [`terminate_all`] has run, kills it (with its process group) there and then.
pub fn track(pid: u32) {
    let mut running = running();
    if CLOSED.load(std::sync::atomic::Ordering::SeqCst) {
        drop(running);
        if let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            && rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).is_err()
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        return;
    }
    running.push(pid);
}

/// The process was stopped or reaped: it is no longer ours to stop.
pub fn forget(pid: u32) {
    running().retain(|p| *p != pid);
}

/// Kills (SIGKILL) every process still tracked — with its process group, where it leads one
/// (an `exec:` adapter's shell and what it runs) — and forgets them; returns how many. A
/// tracked process has not been reaped, so its id cannot have been given to another process.
pub fn stop_all() -> usize {
    let pids = std::mem::take(&mut *running());
    for pid in &pids {
        if let Some(pid) = i32::try_from(*pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            && rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).is_err()
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    pids.len()
}

/// Asks every process still tracked to stop (SIGTERM, to its process group where it leads
/// one), gives them up to `grace` to leave — an adapter that stops on SIGTERM removes what it
/// made, as the kits do — kills (SIGKILL) whatever is still there, and forgets them all;
/// returns how many there were. For a command on its way out (interrupted): the processes are
/// reaped here, so nothing may wait for them afterwards.
pub fn terminate_all(grace: std::time::Duration) -> usize {
    use rustix::process::{Pid, Signal, WaitOptions, kill_process, kill_process_group, waitpid};
    let pids: Vec<Pid> = {
        let mut running = running();
        CLOSED.store(true, std::sync::atomic::Ordering::SeqCst);
        std::mem::take(&mut *running)
    }
    .into_iter()
    .filter_map(|p| i32::try_from(p).ok().and_then(Pid::from_raw))
    .collect();
    let send = |pid: Pid, signal: Signal| {
        if kill_process_group(pid, signal).is_err() {
            let _ = kill_process(pid, signal);
        }
    };
    for &pid in &pids {
        send(pid, Signal::TERM);
    }
    let deadline = std::time::Instant::now() + grace;
    let mut left = pids.clone();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        // Gone once reaped — here, or by whoever else waits for it (then there is no child to
        // wait for any more).
        left.retain(|&pid| matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None)));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for &pid in &left {
        send(pid, Signal::KILL);
        let _ = waitpid(Some(pid), WaitOptions::empty());
    }
    pids.len()
}
