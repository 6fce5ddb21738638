//! A connection's byte budget: what the server holds for one client at a time.
//!
//! A client that sends requests and never reads the answers must not make the server hold an
//! unbounded amount of memory for it. Every byte the server keeps for a connection — a request's
//! payload while its call runs, an answer waiting for the socket — is *held* against the
//! connection's budget by a [`Held`] guard, and given back when the guard drops (the payload
//! when its call ends, the answer once it is written or the connection is gone). While the held
//! bytes are at or over the limit the server reads no further request from that connection and
//! starts no call that returns content, so the client's sends stall once the socket buffers fill:
//! backpressure the client feels, instead of memory the server loses.
//!
//! The bound is therefore the budget plus what was admitted before the limit was seen: one frame
//! (at most `max_payload`) and the answers of the content calls already running (at most
//! [`CONTENT_CALLS`] of them per connection).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Notify;

/// Calls that may return file content (reads, and mutations with their before and after texts)
/// run at most this many at once per connection, and each starts only while the connection is
/// under its budget.
pub const CONTENT_CALLS: usize = 4;

/// The default budget of one connection: 16 MiB.
pub const DEFAULT_ANSWER_BUDGET: u64 = 16 * 1024 * 1024;

/// One connection's budget.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: u64,
    held: Mutex<u64>,
    freed: Notify,
    /// The most ever held at once (for tests and logs).
    peak: AtomicU64,
}

impl Budget {
    pub(crate) fn new(limit: u64) -> Self {
        Self {
            limit,
            held: Mutex::new(0),
            freed: Notify::new(),
            peak: AtomicU64::new(0),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, u64> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds `bytes` against the budget until the guard drops. Never waits: what is already in
    /// memory is counted, and the waiting is done before more is let in ([`Budget::below`]).
    pub(crate) fn hold(self: &std::sync::Arc<Self>, bytes: u64) -> Held {
        if bytes > 0 {
            let mut held = self.held();
            *held = held.saturating_add(bytes);
            self.peak.fetch_max(*held, Ordering::Relaxed);
        }
        Held {
            budget: Some(self.clone()),
            bytes,
        }
    }

    /// Waits until less than the limit is held.
    pub(crate) async fn below(&self) {
        loop {
            // Registered before the check, so a release between the two is not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if *self.held() < self.limit {
                return;
            }
            freed.await;
        }
    }

    /// Bytes held now.
    #[cfg(test)]
    pub(crate) fn now(&self) -> u64 {
        *self.held()
    }

    fn release(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        {
            let mut held = self.held();
            *held = held.saturating_sub(bytes);
        }
        self.freed.notify_waiters();
    }
}

/// Bytes held against a connection's budget, given back on drop.
#[derive(Debug, Default)]
pub(crate) struct Held {
    budget: Option<std::sync::Arc<Budget>>,
    bytes: u64,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(b) = self.budget.take() {
            b.release(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn a_waiter_goes_on_once_enough_is_given_back() {
        let b = Arc::new(Budget::new(10));
        let a = b.hold(6);
        b.below().await; // 6 < 10
        let c = b.hold(6);
        assert_eq!(b.now(), 12);
        let waiting = tokio::spawn({
            let b = b.clone();
            async move { b.below().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "12 held of 10: it waits");
        drop(a);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .expect("joined");
        drop(c);
        assert_eq!(b.now(), 0);
        assert_eq!(b.peak.load(Ordering::Relaxed), 12);
    }
}
