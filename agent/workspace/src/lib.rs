//! Workspaces and sessions for the seam's tools: where an agent works, and how far it may write.
//!
//! A harness runs many agent sessions over one machine. Each needs two answers on every tool
//! call, and they must agree: *where do relative paths start* and *what may this call change*.
//! This crate gives both from one place.
//!
//! * [`Registry`] — durable records of workspaces, each a canonical root (two spellings of one
//!   directory are one workspace). Records live in one file that is only ever replaced whole,
//!   by compare-and-swap through the [`seam::FileSystem`] contract: concurrent registrations
//!   from several processes all land, a crash leaves the old or the new file, and a corrupt or
//!   newer-format file is refused by name, never reset.
//! * [`Session`] — an agent's immutable cwd, admitted only when its real path lies inside a
//!   registered workspace, and the mode its user last chose.
//! * [`PolicyService`] — per call: an approved override, else the session's mode, else the
//!   deployment default; the root is the session's cwd. The result feeds both the sandbox
//!   provider's [`seam::SandboxPolicy`] and the tools' `Exec::cwd`.
//!
//! Every failure is a [`WorkspaceError`] with a stable `WS_*` code.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use seam::{SandboxMode, Signal};
//! use seam_workspace::{PolicyService, Registry};
//! use std::sync::Arc;
//!
//! let home = tempfile::tempdir().unwrap();
//! let project = home.path().join("project");
//! std::fs::create_dir(&project).unwrap();
//! let home_path = home.path().to_str().unwrap().to_string();
//! let fs = Arc::new(seam_local::LocalFileSystem::new(seam_local::LocalConfig::new(home_path.clone())));
//! let registry = Registry::new(fs, format!("{home_path}/registry.json"));
//! let signal = Signal::none();
//!
//! let added = registry.add(project.to_str().unwrap(), None, &signal).await.unwrap();
//! assert!(added.created);
//! assert_eq!(added.workspace.title, "project");
//!
//! let session = registry.session(project.to_str().unwrap(), &signal).await.unwrap();
//! session.set_mode(Some(SandboxMode::WorkspaceWrite));
//! let call = PolicyService::default().resolve(Some(&session), None).unwrap();
//! assert_eq!(call.policy.mode, SandboxMode::WorkspaceWrite);
//! assert_eq!(call.cwd, call.policy.workspace_root);
//! # });
//! ```

mod clock;
mod error;
mod policy;
mod record;
mod registry;
mod session;

pub use clock::{Clock, SystemClock};
pub use error::{WorkspaceError, WorkspaceErrorCode};
pub use policy::{CallPolicy, ModeRequest, ModeSource, PolicyService};
pub use record::{FORMAT, Workspace};
pub use registry::{Added, DEFAULT_MAX_ATTEMPTS, Registry};
pub use session::Session;
