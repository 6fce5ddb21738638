//! Where a planted hang waits: until its test releases it.
//!
//! A hang the suite gives up on keeps its thread, and with it the case it was running and that
//! case's directory, for as long as it hangs; a test process that exits meanwhile leaves the
//! directory in TMPDIR (nothing of a process runs at its exit to remove it). So a planted hang
//! is not forever: it waits here until the test that planted it has its verdict and calls
//! [`Hangs::release`]; the thread then finishes its case and the case's directory goes with it.
//! Released, a hang waits no more: a call that meets it later goes on at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

#[derive(Default)]
struct State {
    released: bool,
    /// The tasks waiting, woken on release.
    wakers: Vec<Waker>,
}

/// The hangs one test planted (shared by the broken subjects it made).
#[derive(Default)]
pub struct Hangs {
    state: Mutex<State>,
    released: Condvar,
}

impl Hangs {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ends every hang, now and to come.
    pub fn release(&self) {
        let wakers = {
            let mut state = self.state();
            state.released = true;
            std::mem::take(&mut state.wakers)
        };
        self.released.notify_all();
        for waker in wakers {
            waker.wake();
        }
    }

    /// Whether [`Hangs::release`] was called.
    pub fn is_released(&self) -> bool {
        self.state().released
    }

    /// Blocks the calling thread until released (a backend that hangs on its executor's thread).
    pub fn block(&self) {
        let mut state = self.state();
        while !state.released {
            state = self.released.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Pending until released (a backend whose future never completes).
    pub fn wait(&self) -> impl Future<Output = ()> + Send + '_ {
        Released(self)
    }
}

struct Released<'a>(&'a Hangs);

impl Future for Released<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.0.state();
        if state.released {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::Hangs;
    use std::sync::Arc;

    /// Polls `f` on this thread, parked between wake-ups, until it completes.
    fn block_on(f: impl std::future::Future<Output = ()>) {
        struct Unpark(std::thread::Thread);
        impl std::task::Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = std::task::Context::from_waker(&waker);
        let mut f = std::pin::pin!(f);
        while f.as_mut().poll(&mut cx).is_pending() {
            std::thread::park();
        }
    }

    #[test]
    fn a_blocked_thread_and_a_waiting_task_go_on_once_released_and_not_before() {
        let hangs = Arc::new(Hangs::default());
        let (done, finished) = std::sync::mpsc::channel();
        let blocked = {
            let (hangs, done) = (hangs.clone(), done.clone());
            std::thread::spawn(move || {
                hangs.block();
                let _ = done.send("thread");
            })
        };
        let waiting = {
            let hangs = hangs.clone();
            std::thread::spawn(move || {
                block_on(hangs.wait());
                let _ = done.send("task");
            })
        };
        assert!(
            finished
                .recv_timeout(std::time::Duration::from_millis(200))
                .is_err(),
            "a hang ended before it was released"
        );
        assert!(!hangs.is_released());
        hangs.release();
        let within = std::time::Duration::from_secs(10);
        let mut ended = vec![
            finished
                .recv_timeout(within)
                .expect("one ended once released"),
            finished
                .recv_timeout(within)
                .expect("the other ended once released"),
        ];
        ended.sort_unstable();
        assert_eq!(ended, ["task", "thread"]);
        blocked.join().expect("the thread");
        waiting.join().expect("the task's thread");
        // Released, a hang met later does not wait.
        hangs.block();
        block_on(hangs.wait());
    }
}
