//! A stream's flow control as the client keeps it. The server promised, in `initialize`, at
//! most `stream_window` chunks in flight; the client grants one more as each is taken. A server
//! that sends past what it was granted ignores flow control — the backend that would put a
//! whole 1 GiB file into a client's memory — and the client ends that stream with an error that
//! says so, rather than buffering without bound.
//!
//! Credit is counted *before* its grant is sent, so the count is never less than what the server
//! can have seen: a chunk past `window + granted` is proof, never a matter of timing.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// One stream's chunks received and credit granted.
pub(crate) struct Credit {
    /// The window the server announced; `None` when it announced none (nothing is checked).
    window: Option<u64>,
    received: AtomicU64,
    granted: AtomicU64,
    /// Why the stream was ended, once it was.
    broken: Mutex<Option<String>>,
}

impl Credit {
    pub(crate) fn new(window: Option<u64>) -> Self {
        Self {
            window: window.filter(|w| *w > 0),
            received: AtomicU64::new(0),
            granted: AtomicU64::new(0),
            broken: Mutex::new(None),
        }
    }

    /// Counts a grant of one chunk; call before the grant is sent.
    pub(crate) fn grant(&self) {
        self.granted.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts a chunk that arrived; `false` (and the reason kept) when it is past the window.
    pub(crate) fn arrived(&self) -> bool {
        let received = self.received.fetch_add(1, Ordering::SeqCst) + 1;
        let granted = self.granted.load(Ordering::SeqCst);
        let Some(window) = self.window else {
            return true;
        };
        if received <= window.saturating_add(granted) {
            return true;
        }
        let mut broken = self.broken.lock().unwrap_or_else(|p| p.into_inner());
        broken.get_or_insert_with(|| {
            format!(
                "the server sent chunk {received} of the stream when it had been granted {} \
                 (a window of {window} and {granted} more): it ignores stream/credit",
                window.saturating_add(granted)
            )
        });
        false
    }

    /// Why the stream was ended, if it was.
    pub(crate) fn broken(&self) -> Option<String> {
        self.broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::Credit;

    #[test]
    fn chunks_within_the_window_and_the_grants_pass_and_the_next_one_does_not() {
        let c = Credit::new(Some(2));
        assert!(c.arrived() && c.arrived());
        c.grant();
        assert!(c.arrived());
        assert!(c.broken().is_none());
        assert!(!c.arrived());
        let why = c.broken().expect("a reason");
        assert!(
            why.contains("chunk 4") && why.contains("granted 3"),
            "{why}"
        );
    }

    #[test]
    fn without_a_window_nothing_is_checked() {
        let c = Credit::new(None);
        assert!((0..100).all(|_| c.arrived()));
        let zero = Credit::new(Some(0));
        assert!((0..100).all(|_| zero.arrived()));
    }
}
