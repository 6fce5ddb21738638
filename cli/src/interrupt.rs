//! What a command does when it is interrupted (SIGINT from a terminal's Ctrl-C, SIGTERM from a
//! CI runner or `timeout`): a run makes temporary directories and starts processes — case
//! directories, the remote server, adapters over `exec:` — and a user who stops it expects
//! neither to outlive it. The backends it started are asked to stop (and killed if they do not
//! within a moment), the run directory is removed with everything in it, and the command exits
//! with the shell's status for the signal (130, 143). A second signal meanwhile changes nothing:
//! the cleanup is bounded by the grace it gives the processes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set when a signal came: the cleanup is under way, and it ends the process.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether the command was interrupted (its cleanup is under way): what it sees now is no fact
/// about the backend, and not worth showing.
pub fn is_interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// `code`, unless the command was interrupted: then the cleanup under way exits the process
/// (with the signal's status), and this waits for it — a command whose backends the cleanup
/// stopped ends early, and must not exit first with what it made of that.
pub fn unless_interrupted<T>(code: T) -> T {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park_timeout(Duration::from_secs(1));
    }
    code
}

/// How long processes the command started get to stop by themselves.
const GRACE: Duration = Duration::from_secs(2);

/// Watches for SIGINT and SIGTERM on a thread of its own for the rest of the process's life.
/// Call it once, first thing, in a command that makes a run directory. Where the signals cannot
/// be watched, says so and goes on: the command then runs as before, without the cleanup.
pub fn clean_up_when_interrupted() {
    let started = std::thread::Builder::new()
        .name("seam-interrupt".into())
        .spawn(|| {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("seam: cannot watch for interrupts ({e}): Ctrl-C will leave the run's temporary directories");
                    return;
                }
            };
            let code = rt.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    eprintln!("seam: cannot watch for interrupts: Ctrl-C will leave the run's temporary directories");
                    return None;
                };
                tokio::select! {
                    _ = int.recv() => Some(("SIGINT", 130)),
                    _ = term.recv() => Some(("SIGTERM", 143)),
                }
            });
            if let Some((name, code)) = code {
                INTERRUPTED.store(true, Ordering::SeqCst);
                eprintln!(
                    "seam: {name}: stopping the backends this run started and removing its temporary directories"
                );
                // No directory made from here on, so nothing is started again meanwhile (a
                // server found stopped is restarted in a directory of its own); then the
                // processes, which may still remove what they made (a socket in the run
                // directory); then the run directory.
                seam_conformance::case_dirs::closing();
                let stopped = seam_remote::children::terminate_all(GRACE);
                // The power-loss layers' mount points, so that they can be removed (a FUSE
                // mount whose process is gone is a dead mount point nothing can remove).
                seam_powercut::detach_all();
                let removed = seam_conformance::case_dirs::interrupted();
                eprintln!(
                    "seam: stopped {stopped} process(es), removed the run directory ({removed} case director(ies) in it); exiting"
                );
                std::process::exit(code);
            }
        });
    if let Err(e) = started {
        eprintln!(
            "seam: cannot watch for interrupts ({e}): Ctrl-C will leave the run's temporary directories"
        );
    }
}
