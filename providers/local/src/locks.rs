//! The per-target critical section: inside one process, check-and-publish of a key is never
//! interleaved with another mutation of the same key. Entries disappear when the last holder
//! leaves, so the table does not grow with every file ever touched.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

#[derive(Default)]
pub(crate) struct Locks {
    table: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
}

/// Held while a mutation of one key runs.
pub(crate) struct KeyGuard<'a> {
    locks: &'a Locks,
    key: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Locks {
    fn table(&self) -> MutexGuard<'_, HashMap<String, Arc<AsyncMutex<()>>>> {
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub async fn lock(&self, key: &str) -> KeyGuard<'_> {
        let mutex = self
            .table()
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(AsyncMutex::new(())))
            .clone();
        let guard = mutex.lock_owned().await;
        KeyGuard {
            locks: self,
            key: key.to_string(),
            guard: Some(guard),
        }
    }

    /// How many keys have a live entry (for tests: zero when idle).
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.table().len()
    }
}

impl Drop for KeyGuard<'_> {
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
        let locks = Locks::default();
        {
            let _a = locks.lock("/k").await;
            assert_eq!(locks.live(), 1);
        }
        assert_eq!(locks.live(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_key_is_exclusive() {
        let locks = Arc::new(Locks::default());
        let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let locks = locks.clone();
            let counter = counter.clone();
            tasks.push(tokio::spawn(async move {
                let _g = locks.lock("/same").await;
                let before = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::task::yield_now().await;
                counter.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                before
            }));
        }
        for t in tasks {
            assert_eq!(t.await.expect("task"), 0, "someone else held the key");
        }
        assert_eq!(locks.live(), 0);
    }
}
