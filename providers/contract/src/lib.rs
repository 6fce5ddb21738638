//! # seam — one filesystem contract for agent harnesses
//!
//! An agent harness lets a model read, write and edit files through one abstract filesystem,
//! and then runs that model against very different storage: the local disk, a sandboxed disk,
//! a remote VM. If those backends disagree on what a version token means, whether a guarded
//! write can lose an update, or which bytes an edit keeps, the agent's safety rules silently
//! stop holding. This crate is the contract they all implement, and nothing else: it names no
//! backend and performs no I/O. Its documentation is the specification; `seam-conformance`
//! checks a backend against it.
//!
//! * [`FileSystem`] — the object-safe async trait (resolve, stat, lstat, read, stream, list,
//!   guarded write, literal edit, three facts about paths, and — claimed apart — the namespace
//!   operations: make a directory, guarded remove, atomic guarded rename). Each method documents its rules
//!   and every error it may return; the trait documents the rules all methods share.
//! * The vocabulary: [`FsTarget`] (an opaque [`FsTargetKey`] plus a display path),
//!   [`FsVersion`] (an opaque freshness token), [`WriteIntent`], outcomes and listings.
//! * [`FsError`] with the thirteen stable [`FsErrorCode`]s, and one constructor per failure of
//!   the contract ([`FsError::not_found`], [`FsError::changed_since_read`], …): the message texts
//!   are contract too, so no backend copies a string.
//! * The shared rules, as pure functions: [`paths`] (display paths, refusals, `file:` URLs,
//!   containment), [`text`] (what is text, BOM, line endings), [`edit`] (the byte-faithful
//!   literal edit).
//! * [`Capabilities`] — what a backend claims beyond the core ([`Capability`]).
//! * [`Gate`] — the hooks (write-intent, edit-intent, observed) through which a policy such as
//!   read-before-write reaches the tools. [`BareGate`] decides nothing, so a provider alone is a
//!   complete, unconstrained store.
//! * [`Signal`] — per-operation cancellation: a mutation cancelled before its commit point
//!   leaves no trace, one that committed is reported as committed ([`signal`]).
//! * [`Layer`] — a wrapper around a backend (a spy, a lock, a fault) that states only what it
//!   changes; every call it does not override reaches the backend beneath unchanged.
//!
//! ## Example: compare-and-swap through the contract
//!
//! A caller never parses keys or versions; it hands a version back as a guard. Here a toy
//! backend (one flat directory in memory, the whole implementation hidden in this example's
//! source) shows the flow every backend must support:
//!
//! ```
//! # use seam::*;
//! # use std::collections::HashMap;
//! # use std::sync::Mutex;
//! # #[derive(Default)]
//! # struct Toy { files: Mutex<HashMap<String, (String, u64)>>, next: Mutex<u64> }
//! # impl Toy {
//! #     fn bump(&self) -> u64 { let mut n = self.next.lock().unwrap(); *n += 1; *n }
//! # }
//! # fn v(n: u64) -> FsVersion { FsVersion::new(n.to_string()) }
//! # #[async_trait::async_trait]
//! # impl FileSystem for Toy {
//! #     fn capabilities(&self) -> Capabilities { Capabilities::none() }
//! #     async fn resolve(&self, path: &str, o: ResolveOptions<'_>, s: &Signal) -> Result<FsTarget, FsError> {
//! #         s.check(Verb::Resolve)?;
//! #         let display = paths::display_path(path, o.cwd.unwrap_or("/"), Verb::Resolve)?;
//! #         Ok(FsTarget { key: FsTargetKey::new(display.clone()), display_path: display })
//! #     }
//! #     fn process_path(&self, t: &FsTarget) -> String { t.key.as_str().to_string() }
//! #     fn file_url(&self, t: &FsTarget) -> String { paths::file_url(t.key.as_str()) }
//! #     fn contains(&self, p: &FsTarget, c: &FsTarget) -> bool { paths::is_within(p.key.as_str(), c.key.as_str()) }
//! #     async fn stat(&self, t: &FsTarget, s: &Signal) -> Result<Option<FsInfo>, FsError> {
//! #         s.check(Verb::Stat)?;
//! #         Ok(self.files.lock().unwrap().get(t.key.as_str()).map(|(c, n)| FsInfo { version: v(*n), kind: FsKind::File, size: Some(c.len() as u64) }))
//! #     }
//! #     async fn lstat(&self, _: &str, _: ResolveOptions<'_>, _: &Signal) -> Result<Option<FsPathInfo>, FsError> { unimplemented!() }
//! #     async fn read_text(&self, t: &FsTarget, s: &Signal) -> Result<String, FsError> {
//! #         s.check(Verb::Read)?;
//! #         self.files.lock().unwrap().get(t.key.as_str()).map(|(c, _)| c.clone()).ok_or_else(|| FsError::not_found(Verb::Read, &t.display_path))
//! #     }
//! #     async fn stream_text(&self, _: &FsTarget, _: &Signal) -> Result<TextStream, FsError> { unimplemented!() }
//! #     async fn read_bytes(&self, _: &FsTarget, _: u64, _: &Signal) -> Result<Vec<u8>, FsError> { unimplemented!() }
//! #     async fn list_dir(&self, _: &FsTarget, _: &Signal) -> Result<Vec<FsDirEntry>, FsError> { unimplemented!() }
//! #     async fn write_text(&self, t: &FsTarget, content: &str, guard: Option<&WriteIntent>, _: Option<&SandboxPolicy>, s: &Signal) -> Result<WriteOutcome, FsError> {
//! #         s.check(Verb::Write)?;
//! #         let n = self.bump();
//! #         let mut files = self.files.lock().unwrap();
//! #         let d = &t.display_path;
//! #         let before = match (files.get(t.key.as_str()), guard) {
//! #             (Some(_), Some(WriteIntent::CreateIfAbsent)) => return Err(FsError::exists_not_observed(d)),
//! #             (None, Some(WriteIntent::ReplaceIfVersion { .. })) => return Err(FsError::no_longer_exists(d)),
//! #             (Some((_, m)), Some(WriteIntent::ReplaceIfVersion { version })) if &v(*m) != version => return Err(FsError::changed_since_read(Verb::Write, d)),
//! #             (prior, _) => prior.map(|(c, _)| c.clone()),
//! #         };
//! #         let operation = if before.is_some() { WriteOperation::Update } else { WriteOperation::Create };
//! #         files.insert(t.key.as_str().to_string(), (content.to_string(), n));
//! #         Ok(WriteOutcome { operation, version: v(n), before, after: content.to_string() })
//! #     }
//! #     async fn edit_text(&self, _: &FsTarget, _: &EditRequest, _: Option<&FsVersion>, _: Option<&SandboxPolicy>, _: &Signal) -> Result<EditOutcome, FsError> { unimplemented!() }
//! # }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let fs: std::sync::Arc<dyn FileSystem> = std::sync::Arc::new(Toy::default());
//! let none = Signal::none();
//! let notes = fs.resolve("notes.md", ResolveOptions { cwd: Some("/w") }, &none).await?;
//! assert_eq!(notes.display_path, "/w/notes.md");
//!
//! // Create only if nothing is there; remember the version we wrote.
//! let mine = fs
//!     .write_text(&notes, "v1\n", Some(&WriteIntent::CreateIfAbsent), None, &none)
//!     .await?;
//!
//! // Someone else rewrites the file behind our back...
//! fs.write_text(&notes, "theirs\n", None, None, &none).await?;
//!
//! // ...so replacing at the version we saw fails, and their text survives.
//! let guard = WriteIntent::ReplaceIfVersion { version: mine.version };
//! let err = fs
//!     .write_text(&notes, "v2\n", Some(&guard), None, &none)
//!     .await
//!     .unwrap_err();
//! assert_eq!(err.code(), FsErrorCode::StaleVersion);
//! assert_eq!(err.message(), "cannot write \"/w/notes.md\": file changed since it was read");
//! assert_eq!(fs.read_text(&notes, &none).await?, "theirs\n");
//!
//! // A cancelled call fails with FS_ABORTED and changes nothing.
//! let cancelled = Signal::new();
//! cancelled.cancel();
//! let err = fs.write_text(&notes, "x", None, None, &cancelled).await.unwrap_err();
//! assert_eq!(err.message(), "write aborted");
//! # Ok::<(), FsError>(())
//! # }).unwrap();
//! ```
//!
//! `docs/writing-a-backend.md` in the repository walks through a complete backend that passes
//! `seam check`.

mod capabilities;
pub mod edit;
mod error;
mod filesystem;
mod gate;
mod layer;
mod messages;
mod namespace;
pub mod paths;
mod sandbox;
pub mod search;
pub mod signal;
pub mod text;
mod types;
mod verb;

pub use capabilities::{Capabilities, Capability};
pub use error::{FsError, FsErrorCode};
pub use filesystem::{FileSystem, ResolveOptions, TextStream};
pub use gate::{Actor, BareGate, Gate, check_event_target, check_observation};
pub use layer::Layer;
pub use messages::LOOP_DETAIL;
pub use namespace::{
    CreateDirOptions, CreateDirOutcome, RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome,
};
pub use sandbox::{SandboxMode, SandboxPolicy};
pub use search::{Search, SearchError};
pub use signal::{CancelPoint, Checkpoint, Signal};
pub use types::{
    EditOutcome, EditRequest, FsDirEntry, FsInfo, FsKind, FsObservation, FsPathInfo, FsPathKind,
    FsTarget, FsTargetKey, FsVersion, WriteIntent, WriteOperation, WriteOutcome,
};
pub use verb::Verb;
