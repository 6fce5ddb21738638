//! What a server allows: the connections it serves at once (from the descriptor limit), what
//! each may hold, and how little a connection may send before `initialize` succeeded. Below
//! the server and the accept loop, which both read them.

use std::time::Duration;

/// Descriptors kept back from the connection cap for the calls' own files and the runtime.
pub const RESERVED_DESCRIPTORS: u64 = 64;

/// The most connections served at once when the descriptor limit allows more.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// How long a connection has to complete `initialize` by default.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest line accepted before `initialize` succeeded (`initialize` itself is small).
pub const HANDSHAKE_MAX_LINE: usize = 64 * 1024;

/// The largest payload accepted before `initialize` succeeded: none is needed, so a frame that
/// announces more is refused before a byte of it is read.
pub const HANDSHAKE_MAX_PAYLOAD: u64 = 4 * 1024;

/// What a server allows each connection, and how many connections it serves at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Bytes one connection may hold in the server — request payloads whose calls run, answers
    /// not yet written — before the server stops reading its requests (see `docs/protocol.md`
    /// §2).
    pub answer_budget: u64,
    /// Connections served at once; more are refused with `-32004`.
    pub max_connections: usize,
    /// How long a connection has to complete `initialize`; then it is closed.
    pub handshake_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            answer_budget: crate::budget::DEFAULT_ANSWER_BUDGET,
            max_connections: Self::for_descriptors(descriptor_limit()),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        }
    }
}

impl ConnectionLimits {
    /// The connection cap a descriptor limit of `soft` leaves room for: the limit less
    /// [`RESERVED_DESCRIPTORS`], at least one, at most [`DEFAULT_MAX_CONNECTIONS`].
    pub fn for_descriptors(soft: Option<u64>) -> usize {
        match soft {
            Some(n) => usize::try_from(n.saturating_sub(RESERVED_DESCRIPTORS))
                .unwrap_or(usize::MAX)
                .clamp(1, DEFAULT_MAX_CONNECTIONS),
            None => DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// This process's soft limit on open descriptors (`None`: unlimited or unknown).
pub fn descriptor_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_the_reserve_to_the_calls() {
        assert_eq!(ConnectionLimits::for_descriptors(Some(128)), 64);
        assert_eq!(ConnectionLimits::for_descriptors(Some(10)), 1);
        assert_eq!(
            ConnectionLimits::for_descriptors(Some(1 << 20)),
            DEFAULT_MAX_CONNECTIONS
        );
        assert_eq!(
            ConnectionLimits::for_descriptors(None),
            DEFAULT_MAX_CONNECTIONS
        );
    }
}
