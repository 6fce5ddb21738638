//! # seam — one filesystem contract for agent harnesses
//!
//! An agent harness lets a model read, write and edit files through one abstract filesystem,
//! and then runs that model against very different storage: the local disk, a sandboxed disk,
//! a remote VM. If those backends disagree on what a version token means, whether a guarded
//! write can lose an update, or which bytes an edit keeps, the agent's safety rules silently
//! stop holding. This crate is the contract they all implement, and nothing else: it names
//! no backend and performs no I/O.
//!
//! The pieces:
//!
//! * [`FileSystem`] — the object-safe async trait every provider implements (resolve, stat,
//!   lstat, read, stream, list, guarded write, literal edit, and a few facts about paths).
//! * The vocabulary: [`FsTarget`] (an opaque [`FsTargetKey`] plus a display path),
//!   [`FsVersion`] (an opaque freshness token), [`WriteIntent`], outcomes and listings.
//! * [`FsError`] with the thirteen stable [`FsErrorCode`]s. Every failure carries one; the codes
//!   serialise as their `FS_*` names so they can cross a wire.
//! * [`Gate`] — the hooks (write-intent, edit-intent, observed) through which a policy such as
//!   read-before-write reaches the tools. [`BareGate`] decides nothing, so a provider alone is a
//!   complete, unconstrained store.
//! * [`Signal`] — per-operation cancellation with the guarantee that a mutation cancelled
//!   before its commit point leaves no trace, and one that committed is reported as committed.
//!
//! The behavioural rules (what each operation must do, byte for byte) are written down in the
//! workspace's `SPEC.md` summary in the README and checked by `seam-conformance`.

mod capabilities;
mod error;
mod filesystem;
mod gate;
mod sandbox;
mod signal;
pub mod text;
mod types;

pub use capabilities::Capabilities;
pub use error::{FsError, FsErrorCode};
pub use filesystem::{FileSystem, ResolveOptions, TextStream};
pub use gate::{Actor, BareGate, Gate, check_event_target, check_observation};
pub use sandbox::{SandboxMode, SandboxPolicy};
pub use signal::{CancelPoint, Checkpoint, Signal, Verb};
pub use types::{
    EditOutcome, EditRequest, FsDirEntry, FsInfo, FsKind, FsObservation, FsPathInfo, FsPathKind,
    FsTarget, FsTargetKey, FsVersion, WriteIntent, WriteOperation, WriteOutcome,
};
