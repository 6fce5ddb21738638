//! What a session holds for its client: requests read and not yet answered.
//!
//! Every request the transport reads takes a place here, with its bytes, until it is answered
//! (its response written to the client) — or, for a tool call the client cancelled, whose
//! response the MCP layer drops, until the call itself ends. While [`Inflight::room`] says no,
//! the transport reads nothing more: a client that sends without reading answers, or sends huge
//! arguments by the hundred, stalls on its own pipe instead of growing the server.

use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::Notify;

/// The bounds of one session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// The longest message read (one JSON line); a longer one is answered with an error that
    /// names this limit, and the session goes on.
    pub max_message: usize,
    /// Requests read and not yet answered.
    pub max_requests: usize,
    /// Bytes of such requests held at once.
    pub max_held: u64,
}

/// 32 MiB: the longest message by default.
pub const DEFAULT_MAX_MESSAGE: usize = 32 * 1024 * 1024;

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_message: DEFAULT_MAX_MESSAGE,
            max_requests: 64,
            max_held: 2 * DEFAULT_MAX_MESSAGE as u64,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// Bytes per request id (its JSON text).
    open: HashMap<String, u64>,
    held: u64,
}

/// The requests a session holds.
#[derive(Debug)]
pub(crate) struct Inflight {
    limits: SessionLimits,
    state: Mutex<State>,
    changed: Notify,
}

/// A request id as a map key: its JSON text (`7`, `"a"`).
pub(crate) fn key(id: &impl serde::Serialize) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

impl Inflight {
    pub(crate) fn new(limits: SessionLimits) -> Self {
        Self {
            limits,
            state: Mutex::new(State::default()),
            changed: Notify::new(),
        }
    }

    pub(crate) fn limits(&self) -> SessionLimits {
        self.limits
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until another request may be read.
    pub(crate) async fn room(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let s = self.state();
                if s.open.len() < self.limits.max_requests && s.held < self.limits.max_held {
                    return;
                }
            }
            changed.await;
        }
    }

    /// A request was read: held until [`Inflight::done`] with its id.
    pub(crate) fn opened(&self, id: String, bytes: u64) {
        let mut s = self.state();
        if let Some(old) = s.open.insert(id, bytes) {
            // The same id twice: the client's mistake, counted once.
            s.held = s.held.saturating_sub(old);
        }
        s.held = s.held.saturating_add(bytes);
    }

    /// The request is answered (or will never be): its place is free.
    pub(crate) fn done(&self, id: &str) {
        let freed = {
            let mut s = self.state();
            match s.open.remove(id) {
                Some(bytes) => {
                    s.held = s.held.saturating_sub(bytes);
                    true
                }
                None => false,
            }
        };
        if freed {
            self.changed.notify_waiters();
        }
    }

    /// Requests held now.
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.state().open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn reading_waits_for_an_answer_at_the_limits() {
        let f = Arc::new(Inflight::new(SessionLimits {
            max_message: 10,
            max_requests: 2,
            max_held: 100,
        }));
        f.opened("1".into(), 10);
        f.room().await;
        f.opened("2".into(), 10);
        let waiting = tokio::spawn({
            let f = f.clone();
            async move { f.room().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "two open of two: it waits");
        f.done("7"); // not open: changes nothing
        assert_eq!(f.open(), 2);
        f.done("1");
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .expect("joined");
        // Bytes count too.
        f.done("2");
        f.opened("3".into(), 100);
        let waiting = tokio::spawn({
            let f = f.clone();
            async move { f.room().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "100 bytes of 100: it waits");
        f.done("3");
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .expect("joined");
    }
}
