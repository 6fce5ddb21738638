//! The processes this process started for the wire — adapters spoken to over `exec:` — that are
//! still running. Each is killed when its connection is dropped; a connection that is never
//! dropped (a call into it hung, and the thread that made it was given up) would leave its
//! adapter running after this process exits, so a program that gives calls up can stop what is
//! left with [`stop_all`] before it exits.

use std::sync::Mutex;

static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<u32>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records a process this process started (its id), until [`forget`].
pub fn track(pid: u32) {
    running().push(pid);
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
