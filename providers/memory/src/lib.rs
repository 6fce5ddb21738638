//! # seam-memory — the seam in memory
//!
//! A second, independent implementation of the contract: no disk, no operating system, nothing
//! shared with the local provider or the reference model. It exists for three reasons.
//!
//! * **A virtual backend.** An agent harness can run against a world that lives in the process
//!   (tests, previews, dry runs) and still get every promise of the contract: versions that
//!   change on every change and are never reused, compare-and-swap writes and edits with one
//!   winner, links written through and never replaced, typed errors with the contract's texts.
//! * **A second witness.** The conformance suite holds every backend to the reference model; a
//!   backend whose storage is a plain tree shows which answers come from the contract and which
//!   from an operating system's habits.
//! * **Something small enough to model-check.** All shared state is one [`MemoryStore`]: one
//!   lock around one tree, with one counter that mints every version. Every lock and `Arc` the
//!   crate uses comes from one module, so a model checker can swap them for instrumented ones.
//!
//! The pieces:
//!
//! * [`MemoryStore`] — the namespace, rooted at `/`, cheap to clone (clones share it);
//! * [`MemoryFileSystem`] — the provider over a store; [`MemoryFileSystem::share`] opens a
//!   second instance over the same store, exactly as safe as one (one lock);
//! * [`MemoryWorld`] — out-of-band access to a store: make files, directories, links and FIFO
//!   stand-ins behind the providers' backs, and read everything back.
//!
//! ```
//! use seam::{FileSystem, ResolveOptions, Signal, WriteIntent};
//! use seam_memory::{MemoryConfig, MemoryFileSystem, MemoryStore};
//!
//! let store = MemoryStore::new();
//! store.world().create_dir_all("/work")?;
//! let fs = MemoryFileSystem::new(store.clone(), MemoryConfig::new("/work"));
//! # let rt = tokio::runtime::Builder::new_current_thread().build()?;
//! # rt.block_on(async {
//! let none = Signal::none();
//! let notes = fs.resolve("notes.md", ResolveOptions::default(), &none).await?;
//! let mine = fs.write_text(&notes, "v1\n", Some(&WriteIntent::CreateIfAbsent), None, &none).await?;
//!
//! // Someone edits the file behind the provider's back...
//! store.world().rewrite_file("/work/notes.md", b"theirs\n".to_vec())?;
//!
//! // ...so a write guarded by the version we saw fails, and their text survives.
//! let guard = WriteIntent::ReplaceIfVersion { version: mine.version };
//! let err = fs.write_text(&notes, "v2\n", Some(&guard), None, &none).await.unwrap_err();
//! assert_eq!(err.code(), seam::FsErrorCode::StaleVersion);
//! assert_eq!(fs.read_text(&notes, &none).await?, "theirs\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Permission bits are kept (new files 0600, a replaced or edited file keeps its bits), so a
//! snapshot is honest, but not enforced: there are no users to enforce them against, so the
//! provider does not claim [`seam::Capability::Permissions`]. It claims symlinks, `read_bytes`,
//! cancel points and shared storage (instances over one store are linearizable together);
//! staging has no name in memory, so it does not claim the staging probe.

mod fs;
mod namespace;
mod store;
mod stream;
mod sync;
mod tree;
mod world;

pub use fs::{DEFAULT_DIFF_BASIS_MAX_BYTES, MemoryConfig, MemoryFileSystem};
pub use store::MemoryStore;
pub use world::{EntryInfo, MemoryEntry, MemoryKind, MemoryWorld};
