//! # seam-remote — the seam over a wire
//!
//! The seed's remote backend paid four round trips for a model `read` and nine for an `edit`,
//! and had no way to put a backend written in another language through the same gate. This
//! crate is one documented protocol (`docs/protocol.md`: JSON-RPC 2.0, one JSON line per
//! message, file content as raw bytes after the line, many requests in flight, cancellation,
//! credit-based streaming) with both ends:
//!
//! * [`Server`] hosts any [`seam::FileSystem`] on a Unix socket (0600), TCP (a token is
//!   required before any method runs) or stdio — one task per request, so a slow call never
//!   holds up another; with test control it also offers the `world/*` methods the conformance
//!   suite drives a backend's storage with;
//! * [`RemoteFileSystem`] is the contract over a [`Connection`]: one round trip per contract
//!   call, path facts carried in the target (no round trip for `process_path`, `file_url`,
//!   `contains`).
//!
//! ```no_run
//! use seam::{FileSystem, ResolveOptions, Signal};
//! use seam_remote::{Address, Connection, RemoteFileSystem};
//! use std::sync::Arc;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let conn = Connection::connect(&"unix:/run/seam.sock".parse::<Address>()?, None)?;
//! let fs = RemoteFileSystem::new(Arc::new(conn));
//! let t = fs.resolve("notes.txt", ResolveOptions::default(), &Signal::none()).await?;
//! let text = fs.read_text(&t, &Signal::none()).await?;
//! # let _ = text;
//! # Ok(())
//! # }
//! ```

mod accept;
mod budget;
pub mod children;
mod client;
mod credit;
pub mod frame;
mod limits;
mod outbox;
pub mod protocol;
mod server;
mod shell;
pub mod wire;
pub mod world;

pub use budget::{CONTENT_CALLS, DEFAULT_ANSWER_BUDGET};
pub use client::{Address, Connection, RemoteError, RemoteFileSystem};
pub use limits::{
    ConnectionLimits, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, HANDSHAKE_MAX_LINE,
    HANDSHAKE_MAX_PAYLOAD, RESERVED_DESCRIPTORS, descriptor_limit,
};
pub use server::{DEFAULT_STREAM_WINDOW, Log, MAX_IN_FLIGHT, Server};
pub use shell::shell_word;
pub use world::{CaseMaker, CaseSpec};
