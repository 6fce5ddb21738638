//! # seam-tools — the file tools a model calls
//!
//! `read`, `write`, `edit`, `read_image`, `glob` and `grep`: what a model actually touches. They are built on
//! the contract alone — a [`seam::FileSystem`] to act on and a [`seam::Gate`] to ask for guards
//! — and contain no filesystem code and no policy. The tools validate arguments, resolve paths
//! against the session's cwd, fire the gate hooks (write-intent, edit-intent, observed), call
//! the provider, and render what the model reads: line-numbered windows with a footer that
//! says how to continue, exact success texts, and errors that carry their code plus the remedy
//! the model can act on (`— re-read the file, then retry`). With the observation policy as the
//! gate, a session can only replace or edit what it has seen at its current version; with
//! [`seam::BareGate`] the same tools are an unconstrained store.
//!
//! ```
//! use seam::FileSystem;
//! use seam_tools::{Exec, Toolset};
//! use serde_json::json;
//! use std::sync::Arc;
//!
//! # tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(async {
//! let dir = tempfile::tempdir().expect("tempdir");
//! let root = dir.path().to_string_lossy().into_owned();
//! let fs: Arc<dyn FileSystem> =
//!     Arc::new(seam_local::LocalFileSystem::new(seam_local::LocalConfig::new(root.clone())));
//! let tools = Toolset::builder(fs.as_ref()).build();
//! let exec = Exec::new(fs).with_cwd(root);
//!
//! let write = tools.get("write").expect("registered");
//! write.execute(&json!({"file_path": "notes.txt", "content": "one\ntwo\n"}), &exec).await.expect("written");
//! let read = tools.get("read").expect("registered");
//! let out = read.execute(&json!({"file_path": "notes.txt"}), &exec).await.expect("read");
//! assert!(out.text().contains("1: one\n2: two\n\n(End of file - total 2 lines)"));
//! # });
//! ```

mod args;
pub mod config;
pub mod diff;
mod dry_run;
mod edit;
mod editor;
mod exec;
mod glob;
mod grep;
mod grep_lines;
mod grep_output;
pub mod image_format;
mod info;
mod list;
mod namespace;
mod output;
mod output_schemas;
mod paths;
mod read;
pub mod read_image;
pub mod read_render;
pub mod remedy;
pub mod sandbox;
mod search;
mod tool;
mod toolset;
pub mod window;
mod write;

pub use config::ReadConfig;
pub use edit::{EDIT_PROMPT, EditTool};
pub use editor::{CLIPPED, EDITOR_MAX_OUTPUT_CHARS, StrReplaceEditorTool};
pub use exec::Exec;
pub use glob::{GLOB_MAX_RESULTS, GLOB_PROMPT, GlobTool};
pub use grep::{GREP_PROMPT, GrepTool};
pub use grep_lines::{GREP_MAX_LINE_BYTES, GREP_MAX_MATCHES};
pub use grep_output::GREP_MAX_CONTEXT;
pub use image_format::ImageType;
pub use info::{InfoTool, READ_MANY_MAX_FILES, ReadManyTool, RootsTool};
pub use list::{ListTool, TREE_MAX_DEPTH, TREE_MAX_ENTRIES, TreeTool};
pub use namespace::{CreateDirectoryTool, DeleteTool, MoveTool, NAMESPACE_PROMPT};
pub use output::{ContentBlock, ErrorCode, ToolError, ToolOutput, ToolResult};
pub use read::{READ_PROMPT, ReadTool};
pub use read_image::{ImageSink, ReadImageTool};
pub use sandbox::{Approval, Approver, EscalationRequest};
pub use search::SpillStore;
pub use tool::{PromptSection, Tool, ToolEffects};
pub use toolset::{Toolset, ToolsetBuilder};
pub use write::{WRITE_PROMPT, WriteTool};
