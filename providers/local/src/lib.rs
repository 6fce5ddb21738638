//! # seam-local — the seam on the local disk
//!
//! [`LocalFileSystem`] implements [`seam::FileSystem`] on the host filesystem (Linux), following
//! every rule of the contract and the places where seam deliberately goes further than its seed:
//!
//! * **keys** are real paths; a missing path's key is the real path of its nearest existing
//!   ancestor plus the missing suffix, so it is stable across creation;
//! * **versions** come from `statx`: device, inode, size, and mtime and ctime in full nanoseconds,
//!   so a same-size rewrite whose mtime was restored still changes the token;
//! * **publication** stages content where no one else can read it (an `O_TMPFILE` inode, or a
//!   private 0700 directory holding a 0600 file), fsyncs it, renames it into place (or publishes
//!   with `renameat2(RENAME_NOREPLACE)` when nothing may be replaced), fsyncs the directory, and
//!   sweeps staging that a killed writer left behind;
//! * **symlinks** are written through, never replaced, and never used to create a file;
//! * **edits** change only the bytes of the matched regions (mixed line endings stay mixed, a BOM
//!   stays);
//! * **every failure is coded**: no raw OS error escapes.
//!
//! Mutations, listings, stream chunks and whole-file reads over 64 KiB run on tokio's blocking
//! pool, so a durable write never parks an async worker (and the tasks beside it) in fsync;
//! `resolve`, `stat`, `lstat` and small reads stay inline, where a hop would cost more than the
//! call (see `docs/performance.md`). Outside a tokio runtime everything runs inline.
//!
//! Every path operation runs beneath a held handle of the root directory (`/`), never from the
//! process's working directory; staging, publication and sweeping then work on the parent
//! directory's descriptor with single-component names.

pub mod atomic;
mod beneath;
mod config;
mod core;
mod edit;
mod errors;
mod existing;
mod fs;
mod list;
mod locks;
mod namespace;
mod offload;
mod parents;
mod paths;
mod publish;
mod read;
mod reads;
mod root;
mod search;
mod stage;
mod stream;
mod sweep;
mod version;
mod write;
mod xlock;

pub use beneath::{Confinement, is_escape};
pub use config::{Durability, LocalConfig, Staging};
pub use fs::LocalFileSystem;
pub use namespace::{Within, entry_key, entry_parent};
pub use paths::real_path;
pub use version::version_token;
