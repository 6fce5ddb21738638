//! The threads supervised work runs on, kept between pieces of work.
//!
//! Every generated case runs on a thread of its own ([`super::supervised`]), so that a call
//! that blocks its thread for good gives up that case alone. A run has thousands of cases, and
//! starting and ending a thread for each (its stack mapped and unmapped, the allocator's
//! per-thread heap made and abandoned) cost a short case more than the calls it made. So a
//! thread whose work returned waits for the next piece of work instead of ending
//! ([`IDLE_KEPT`] such threads at most). A thread given up on is never taken again: its work
//! is still running, and when it returns the thread finds nobody to wait for work from and
//! ends.

use std::sync::{Mutex, mpsc};

/// A piece of work, sent to a waiting thread.
pub(super) type Job = Box<dyn FnOnce() + Send>;

/// How many threads wait for work at most; more are ended as they come back.
const IDLE_KEPT: usize = 8;

/// The threads waiting for work: the sending end of each one's queue.
static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

fn idle() -> std::sync::MutexGuard<'static, Vec<mpsc::Sender<Job>>> {
    IDLE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A thread running `job`: one that was waiting, or a new one.
pub(super) fn run(mut job: Job) -> std::io::Result<Worker> {
    loop {
        let Some(waiting) = idle().pop() else {
            break;
        };
        match waiting.send(job) {
            Ok(()) => return Ok(Worker(waiting)),
            // Its thread is gone (it cannot be, short of an abort): the next one.
            Err(mpsc::SendError(back)) => job = back,
        }
    }
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("seam-supervised".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        })?;
    tx.send(job)
        .map_err(|_| std::io::Error::other("the new thread ended before its work"))?;
    Ok(Worker(tx))
}

/// A thread running a piece of work.
pub(super) struct Worker(mpsc::Sender<Job>);

impl Worker {
    /// Its work returned: the thread waits for more (or ends, when enough already wait).
    /// Dropping a worker instead (its work given up on) ends its thread when the work returns.
    pub(super) fn done(self) {
        let mut idle = idle();
        if idle.len() < IDLE_KEPT {
            idle.push(self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Job, run};
    use std::sync::mpsc;
    use std::time::Duration;

    fn on_thread() -> (Job, mpsc::Receiver<std::thread::ThreadId>) {
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(std::thread::current().id());
        });
        (job, rx)
    }

    #[test]
    fn a_thread_whose_work_returned_runs_the_next_and_one_given_up_on_never_does() {
        let wait = Duration::from_secs(10);
        let (job, ran) = on_thread();
        let worker = run(job).expect("a thread");
        let first = ran.recv_timeout(wait).expect("ran");
        worker.done();
        // Other tests of the crate may take the idle thread meanwhile: the same thread is seen
        // again within a few tries.
        let again = (0..64).any(|_| {
            let (job, ran) = on_thread();
            let worker = run(job).expect("a thread");
            let id = ran.recv_timeout(wait).expect("ran");
            worker.done();
            id == first
        });
        assert!(again, "a waiting thread is taken again");
        // Given up on: the work blocks, and the worker is dropped, never returned.
        let (release, blocked) = mpsc::channel::<()>();
        let (tx, started) = mpsc::channel();
        let stuck = run(Box::new(move || {
            let _ = tx.send(std::thread::current().id());
            let _ = blocked.recv();
        }))
        .expect("a thread");
        let stuck_id = started.recv_timeout(wait).expect("started");
        drop(stuck);
        for _ in 0..64 {
            let (job, ran) = on_thread();
            let worker = run(job).expect("a thread");
            assert_ne!(ran.recv_timeout(wait).expect("ran"), stuck_id);
            worker.done();
        }
        drop(release);
    }
}
