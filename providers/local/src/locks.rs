//! The per-target critical section: inside one process, check-and-publish of a key is never
//! interleaved with another mutation of the same key. The guard is owned (it holds the table)
//! because it travels with the mutation onto the blocking pool: if the caller's future is
//! dropped mid-write, the write still finishes under the lock, and only then releases it.
//! Entries disappear when the last holder leaves, so the table does not grow with every file
//! ever touched. (Across processes, [`crate::xlock`] adds an `flock`.)
//!
//! The table is model-checked with loom: under `--cfg seam_loom` its `Mutex` and `Arc` are
//! loom's and the per-key lock is a small loom-scheduled one (`sync` below); the table's own
//! logic — who inserts, who clones under the table lock, who removes the last entry — is the
//! same code either way (`loom_checks` at the bottom; run by `seam-memory-loom`'s
//! `loom_run` test).

use std::collections::HashMap;

/// The synchronisation the table is built from: std's and tokio's, or loom's under
/// `--cfg seam_loom`.
#[cfg(not(seam_loom))]
mod sync {
    pub(super) use std::sync::{Arc, Mutex, MutexGuard};
    pub(super) use tokio::sync::{Mutex as KeyMutex, OwnedMutexGuard as KeyHeld};

    /// Waits for a key's lock.
    pub(super) async fn hold(m: Arc<KeyMutex<()>>) -> KeyHeld<()> {
        m.lock_owned().await
    }
}

#[cfg(seam_loom)]
mod sync {
    use loom::sync::Condvar;
    pub(super) use loom::sync::{Arc, Mutex, MutexGuard};

    /// A key's lock under loom: a flag and a condition variable loom schedules.
    #[derive(Default)]
    pub(super) struct KeyMutex<T> {
        held: Mutex<bool>,
        freed: Condvar,
        _value: std::marker::PhantomData<T>,
    }

    /// A held key lock; released on drop.
    pub(super) struct KeyHeld<T>(Arc<KeyMutex<T>>);

    impl<T> KeyMutex<T> {
        pub(super) fn new(_: T) -> Self {
            Self {
                held: Mutex::new(false),
                freed: Condvar::new(),
                _value: std::marker::PhantomData,
            }
        }
    }

    impl<T> Drop for KeyHeld<T> {
        fn drop(&mut self) {
            let mut held = self.0.held.lock().unwrap_or_else(|p| p.into_inner());
            *held = false;
            self.0.freed.notify_one();
        }
    }

    /// Waits for a key's lock (blocking the loom thread, which loom schedules).
    pub(super) async fn hold(m: Arc<KeyMutex<()>>) -> KeyHeld<()> {
        {
            let mut held = m.held.lock().unwrap_or_else(|p| p.into_inner());
            while *held {
                held = m.freed.wait(held).unwrap_or_else(|p| p.into_inner());
            }
            *held = true;
        }
        KeyHeld(m)
    }
}

use sync::{Arc, KeyHeld, KeyMutex, Mutex, MutexGuard};

type Table = HashMap<String, Arc<KeyMutex<()>>>;

/// The table of keys being mutated. Cheap to clone: clones share the table.
#[derive(Clone, Default)]
pub(crate) struct Locks {
    table: Arc<Mutex<Table>>,
}

/// Held while a mutation of one key runs.
pub(crate) struct KeyGuard {
    locks: Locks,
    key: String,
    guard: Option<KeyHeld<()>>,
}

impl Locks {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for the key's lock (asynchronously) and returns an owned guard.
    pub async fn lock(&self, key: &str) -> KeyGuard {
        let mutex = self
            .table()
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(KeyMutex::new(())))
            .clone();
        // Dropping this future while it waits leaves a table entry with one more strong count
        // than holders only until `mutex` is dropped here, so nothing leaks.
        let guard = sync::hold(mutex).await;
        KeyGuard {
            locks: self.clone(),
            key: key.to_string(),
            guard: Some(guard),
        }
    }

    /// How many keys have a live entry (zero when idle).
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.table().len()
    }
}

impl Drop for KeyGuard {
    fn drop(&mut self) {
        self.guard.take();
        let mut table = self.locks.table();
        if let Some(m) = table.get(&self.key)
            && Arc::strong_count(m) == 1
        {
            table.remove(&self.key);
        }
    }
}

#[cfg(all(test, not(seam_loom)))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn entries_are_released_after_use() {
        let locks = Locks::default();
        {
            let _a = locks.lock("/k").await;
            assert_eq!(locks.live(), 1);
        }
        assert_eq!(locks.live(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_key_is_exclusive_and_a_guard_may_leave_its_task() {
        let locks = Locks::default();
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let locks = locks.clone();
            let counter = counter.clone();
            tasks.push(tokio::spawn(async move {
                let g = locks.lock("/same").await;
                let counter2 = counter.clone();
                tokio::task::spawn_blocking(move || {
                    let _g = g;
                    let before = counter2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    std::thread::yield_now();
                    counter2.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    before
                })
                .await
                .expect("blocking task")
            }));
        }
        for t in tasks {
            assert_eq!(t.await.expect("task"), 0, "someone else held the key");
        }
        assert_eq!(locks.live(), 0);
    }

    #[tokio::test]
    async fn a_waiter_dropped_before_it_gets_the_lock_leaves_nothing_behind() {
        let locks = Locks::default();
        let held = locks.lock("/k").await;
        let waiter = locks.lock("/k");
        let timed_out = tokio::time::timeout(std::time::Duration::from_millis(5), waiter).await;
        assert!(timed_out.is_err(), "the key was held");
        drop(held);
        assert_eq!(locks.live(), 0);
    }
}

/// The table under every interleaving loom explores: one holder per key at a time, and an
/// empty table once everyone has left — with two and three holders of one key, and two keys.
#[cfg(all(test, seam_loom))]
mod loom_checks {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static EXPLORED: AtomicUsize = AtomicUsize::new(0);
    const PREEMPTIONS: usize = 3;

    /// Runs a future that only ever waits on loom-scheduled locks.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
            loom::thread::yield_now();
        }
    }

    fn scenario(keys: &'static [&'static str]) {
        let before = EXPLORED.load(Ordering::Relaxed);
        // Bounded preemptions: three holders with a condition variable have more schedules
        // than a test run can walk; every bug loom has found in practice needs two or three.
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(PREEMPTIONS);
        model.check(move || {
            EXPLORED.fetch_add(1, Ordering::Relaxed);
            let locks = Locks::default();
            let inside = Arc::new(loom::sync::atomic::AtomicUsize::new(0));
            let threads: Vec<_> = keys
                .iter()
                .map(|key| {
                    let (locks, inside) = (locks.clone(), inside.clone());
                    loom::thread::spawn(move || {
                        let _g = block_on(locks.lock(key));
                        if *key == "/same" {
                            let was = inside.fetch_add(1, loom::sync::atomic::Ordering::SeqCst);
                            assert_eq!(was, 0, "two holders of one key");
                            inside.fetch_sub(1, loom::sync::atomic::Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().expect("holder");
            }
            assert_eq!(locks.live(), 0, "the table did not empty");
        });
        println!(
            "lock table {keys:?}: {} interleavings explored (at most {PREEMPTIONS} preemptions)",
            EXPLORED.load(Ordering::Relaxed) - before
        );
    }

    #[test]
    fn one_key_two_holders() {
        scenario(&["/same", "/same"]);
    }

    /// Three holders of one key: the case where removing an entry that a waiter still holds
    /// would let a newcomer make a second lock for the same key.
    #[test]
    fn one_key_three_holders() {
        scenario(&["/same", "/same", "/same"]);
    }

    #[test]
    fn two_keys_two_holders() {
        scenario(&["/same", "/other"]);
    }
}
