//! The per-target critical section: inside one process, check-and-publish of a key is never
//! interleaved with another mutation of the same key. The guard is owned (it holds the table by
//! `Arc`) because it travels with the mutation onto the blocking pool: if the caller's future is
//! dropped mid-write, the write still finishes under the lock, and only then releases it.
//! Entries disappear when the last holder leaves, so the table does not grow with every file
//! ever touched.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

type Table = HashMap<String, Arc<AsyncMutex<()>>>;

#[derive(Default)]
pub(crate) struct Locks {
    table: Mutex<Table>,
}

/// Held while a mutation of one key runs.
pub(crate) struct KeyGuard {
    locks: Arc<Locks>,
    key: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Locks {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for the key's lock (asynchronously) and returns an owned guard.
    pub async fn lock(self: &Arc<Self>, key: &str) -> KeyGuard {
        let mutex = self
            .table()
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(AsyncMutex::new(())))
            .clone();
        // Dropping this future while it waits leaves a table entry with one more strong count
        // than holders only until `mutex` is dropped here, so nothing leaks.
        let guard = mutex.lock_owned().await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn entries_are_released_after_use() {
        let locks = Arc::new(Locks::default());
        {
            let _a = locks.lock("/k").await;
            assert_eq!(locks.live(), 1);
        }
        assert_eq!(locks.live(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_key_is_exclusive_and_a_guard_may_leave_its_task() {
        let locks = Arc::new(Locks::default());
        let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
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
        let locks = Arc::new(Locks::default());
        let held = locks.lock("/k").await;
        let waiter = locks.lock("/k");
        let timed_out = tokio::time::timeout(std::time::Duration::from_millis(5), waiter).await;
        assert!(timed_out.is_err(), "the key was held");
        drop(held);
        assert_eq!(locks.live(), 0);
    }
}
