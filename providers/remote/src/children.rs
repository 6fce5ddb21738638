//! The processes this process started for the wire — adapters spoken to over `exec:` — that are
//! still running. Each is killed when its connection is dropped; a connection that is never
//! dropped (a call into it hung, and the thread that made it was given up) would leave its
//! adapter running after this process exits, so a program that gives calls up can stop what is
//! left with [`stop_all`] before it exits.

use std::path::Path;
use std::sync::{Mutex, OnceLock};

static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// A directory a started process is given as its `TMPDIR`, removed when it is dropped — after
/// the process was reaped.
pub trait TempDir: Send + Sync {
    /// The directory.
    fn path(&self) -> &Path;
}

/// Makes a [`TempDir`] for a process about to be started.
pub type MakeTempDir = dyn Fn() -> std::io::Result<Box<dyn TempDir>> + Send + Sync;

static TEMP_DIRS: OnceLock<Box<MakeTempDir>> = OnceLock::new();

/// From now on, every process started for an `exec:` address is given a `TMPDIR` of its own,
/// made by `make` and removed once the process is reaped — so what an adapter leaves in its
/// temporary directory (its storage, when a property killed it; a probe file, when it was
/// stopped as it started) goes with it, and a program that keeps everything it makes in one
/// directory can hand its adapters a part of it. Without this, a started process inherits
/// this process's `TMPDIR`. Set once per program; `false` when it was set before.
pub fn give_temp_dirs(
    make: impl Fn() -> std::io::Result<Box<dyn TempDir>> + Send + Sync + 'static,
) -> bool {
    TEMP_DIRS.set(Box::new(make)).is_ok()
}

/// A directory for a process about to be started, when [`give_temp_dirs`] was called.
pub(crate) fn temp_dir() -> std::io::Result<Option<Box<dyn TempDir>>> {
    TEMP_DIRS.get().map(|make| make()).transpose()
}

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

/// The list held while a process is started ([`starting`]): a program interrupted meanwhile
/// waits for it, and finds the process tracked — a process started between an interruption's
/// look at the list and the program's exit would outlive it.
pub struct Starting(std::sync::MutexGuard<'static, Vec<u32>>);

impl Starting {
    /// Records the process just started (its id), until [`forget`].
    pub fn track(mut self, pid: u32) {
        self.0.push(pid);
    }
}

/// Holds the list for a process about to be started; `Err` once [`terminate_all`] has run
/// (the program is on its way out, and starts nothing more).
pub fn starting() -> std::io::Result<Starting> {
    let running = running();
    if CLOSED.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "the program is stopping: no process is started any more",
        ));
    }
    Ok(Starting(running))
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
/// one: an `exec:` adapter's shell and what it runs), gives them up to `grace` to leave — an
/// adapter that stops on SIGTERM removes what it made, as the kits do — kills (SIGKILL) every
/// one still there, and forgets them all; returns how many were tracked. A group is gone when
/// no process is left in it, not when its leader is: a shell that runs the adapter as its child
/// dies at once and leaves the adapter behind. From here on a process [`track`]ed is killed at
/// once. For a program on its way out (interrupted): the processes are reaped here, so nothing
/// may wait for them afterwards.
pub fn terminate_all(grace: std::time::Duration) -> usize {
    use rustix::process::{
        Pid, Signal, WaitOptions, kill_process, kill_process_group, test_kill_process_group,
        waitpid,
    };
    let pids: Vec<Pid> = {
        let mut running = running();
        CLOSED.store(true, std::sync::atomic::Ordering::SeqCst);
        std::mem::take(&mut *running)
    }
    .into_iter()
    .filter_map(|p| i32::try_from(p).ok().and_then(Pid::from_raw))
    .collect();
    // Each with whether it leads a group of its own (the signal reached one).
    let targets: Vec<(Pid, bool)> = pids
        .iter()
        .map(|&pid| {
            let group = kill_process_group(pid, Signal::TERM).is_ok();
            if !group {
                let _ = kill_process(pid, Signal::TERM);
            }
            (pid, group)
        })
        .collect();
    // Alive: an unreaped leader (reaped here as it goes; by whoever else waits for it, there is
    // no child to wait for any more), or anyone left in its group.
    let alive = |&(pid, group): &(Pid, bool)| {
        let leader = matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None));
        leader || (group && test_kill_process_group(pid).is_ok())
    };
    let deadline = std::time::Instant::now() + grace;
    let mut left = targets;
    while !left.is_empty() && std::time::Instant::now() < deadline {
        left.retain(alive);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    left.retain(alive);
    for &(pid, group) in &left {
        if !group || kill_process_group(pid, Signal::KILL).is_err() {
            let _ = kill_process(pid, Signal::KILL);
        }
        let _ = waitpid(Some(pid), WaitOptions::empty());
    }
    pids.len()
}
