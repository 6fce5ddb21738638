//! # seam-mcp — the seam's tools behind an MCP server
//!
//! The reference MCP filesystem server lets a model overwrite a file it never read, loses an
//! update when two writers race, writes in place (a crash leaves half a file), and checks
//! containment on a path string a symlink can defeat. The tools of `seam-tools` do none of
//! that, but only a harness that links them in could use them. This crate puts a
//! [`Toolset`](seam_tools::Toolset) in front of any MCP client — Claude Code, Codex, Gemini CLI,
//! Cursor — over stdio.
//!
//! It composes nothing itself: the caller hands it the toolset and the [`Exec`](seam_tools::Exec)
//! every call runs in (the provider, the gate — the observation policy, for `seam mcp` — the
//! session's owner, cwd and sandbox policy). One [`SeamMcp`] is one MCP session, so one owner:
//! what the client read is what it may replace.
//!
//! What the MCP side adds:
//!
//! * every tool is listed with its schema, description and annotations taken from
//!   [`ToolEffects`](seam_tools::ToolEffects) (`readOnlyHint`, `destructiveHint`,
//!   `idempotentHint`; `openWorldHint` is false: the tools touch only the filesystem);
//! * a failed call is a tool error (`isError: true`) whose text starts with its code,
//!   `Error [FS_STALE_VERSION]: …`, so the model and the client both see it; unknown tools and
//!   malformed requests are protocol errors;
//! * a tool that only looks runs beside other calls, one that changes the world runs alone (the
//!   seed harness's scheduling);
//! * a client's `notifications/cancelled` cancels the call's [`Signal`](seam::Signal), which the
//!   provider honours at its cancel points (`FS_ABORTED`); the call is never dropped half-way;
//! * over-cap `glob` / `grep` results are saved by [`SpillDir`], off the executor's threads;
//! * every message gets an answer: an over-size one an error naming the limit
//!   ([`SessionLimits`]), an unparsable one `-32700`, bad parameters or an argument the tool's
//!   schema does not have `-32602` — and the session goes on; while the session holds its limit
//!   of unanswered requests, nothing more is read (the client's pipe fills, the server does
//!   not grow).
//!
//! ```no_run
//! use seam::FileSystem;
//! use seam_mcp::SeamMcp;
//! use seam_tools::{Exec, Toolset};
//! use std::sync::Arc;
//!
//! # async fn run() -> Result<(), seam_mcp::McpError> {
//! let fs: Arc<dyn FileSystem> =
//!     Arc::new(seam_local::LocalFileSystem::new(seam_local::LocalConfig::new("/srv/project")));
//! let tools = Toolset::builder(fs.as_ref()).str_replace_editor().build();
//! let exec = Exec::new(fs).with_cwd("/srv/project");
//! SeamMcp::new(tools, exec).serve_stdio().await
//! # }
//! ```

mod convert;
mod inflight;
mod roots;
mod server;
mod spill;
mod transport;

pub use convert::{error_text, listed};
pub use inflight::{DEFAULT_MAX_MESSAGE, SessionLimits};
pub use roots::{RootsBinder, path_of_file_url};
pub use server::{CallContext, McpError, SeamMcp};
pub use spill::SpillDir;
