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
//! The I/O is written against directory handles (`*at` calls on a held descriptor with
//! single-component names), so a sandboxing provider can run the same logic beneath a directory
//! it opened with `RESOLVE_BENEATH`.
//!
//! All I/O runs inline on the calling task: a page-cached read costs microseconds, a thread hop
//! costs more. Callers that must keep an executor thread free wrap calls in `spawn_blocking`.

mod config;
mod edit;
mod errors;
#[cfg(feature = "faults")]
mod faults;
mod fs;
mod list;
mod locks;
mod paths;
mod publish;
mod read;
mod stream;
mod version;

pub use config::{Durability, LocalConfig, Staging};
#[cfg(feature = "faults")]
pub use faults::Fault;
pub use fs::LocalFileSystem;
pub use version::version_token;
