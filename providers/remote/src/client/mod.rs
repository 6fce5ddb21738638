//! The client: one connection, many requests in flight, and [`RemoteFileSystem`], the contract
//! over it.
//!
//! The connection's reading and writing run on a small runtime of its own, so a
//! `RemoteFileSystem` can be awaited from any executor (and its blocking helpers called from
//! plain threads, as the suite's `World` is).

mod connection;
mod fs;

pub use connection::Connection;
pub use fs::RemoteFileSystem;

use std::path::PathBuf;

/// Where a server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    /// `unix:PATH`
    Unix(PathBuf),
    /// `tcp://HOST:PORT` (or `tcp:HOST:PORT`)
    Tcp(String),
    /// `exec:COMMAND` — a child process (run by `sh -c`) speaking on its stdin and stdout.
    Exec(String),
}

impl std::str::FromStr for Address {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err("unix: needs a socket path".into());
            }
            Ok(Address::Unix(PathBuf::from(p)))
        } else if let Some(a) = s.strip_prefix("tcp://").or_else(|| s.strip_prefix("tcp:")) {
            if !a.contains(':') {
                return Err(format!("tcp address {a:?} needs HOST:PORT"));
            }
            Ok(Address::Tcp(a.to_string()))
        } else if let Some(c) = s.strip_prefix("exec:") {
            if c.trim().is_empty() {
                return Err("exec: needs a command".into());
            }
            Ok(Address::Exec(c.to_string()))
        } else {
            Err(format!(
                "{s:?} is not a server address (unix:PATH, tcp://HOST:PORT or exec:COMMAND)"
            ))
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
            Address::Tcp(a) => write!(f, "tcp://{a}"),
            Address::Exec(c) => write!(f, "exec:{c}"),
        }
    }
}

/// Why talking to a server failed (outside the contract's own errors).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The server could not be reached or started.
    #[error("cannot connect to {address}: {reason}")]
    Connect {
        /// Where.
        address: String,
        /// Why.
        reason: String,
    },
    /// The connection closed.
    #[error("the connection to the server closed")]
    Closed,
    /// The server answered with an error.
    #[error("{message} (error {code})")]
    Server {
        /// JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The server answered something this client cannot read.
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// What a server answered, as JSON cut at 300 bytes (for a message saying it is malformed).
pub(crate) fn quoted(answer: &serde_json::Value) -> String {
    let mut said = answer.to_string();
    if said.len() > 300 {
        let mut cut = 300;
        while !said.is_char_boundary(cut) {
            cut -= 1;
        }
        said.truncate(cut);
        said.push('…');
    }
    said
}
