//! # seam-model — the reference model of the seam
//!
//! A provider is fast and clever; this crate is neither. It is the contract written as the
//! plainest Rust we could manage — a tree of files, directories and symlinks in `BTreeMap`s, a
//! global counter for versions, literal edits done character by character — so that when it and a
//! provider disagree, the model is easy to believe. The conformance suite runs both on the same
//! operations and compares every outcome, every version and every byte on disk.
//!
//! It is pure: no I/O, no async, no provider. Paths are strings in the provider's world (the
//! model is told the display path of its root), so expected messages and display paths are
//! exactly what a provider must produce.
//!
//! What the model predicts, in brief ("The contract in brief" in docs/contract.md has it in full):
//!
//! * resolution: lexical display path, realpath-like keys with a 40-link limit, missing suffixes
//!   appended to the nearest existing ancestor;
//! * decoding: NUL in the first 8192 bytes (reads) or anywhere (edits) is binary, strict UTF-8,
//!   a leading BOM is hidden from reads and kept by edits;
//! * the write guard matrix and the edit rules, including byte-faithful replacement;
//! * versions: a fresh number on every change of a file, link or other object; directories carry
//!   two counters (entries changed / touched by a mutation) because backends may legitimately
//!   differ on whether an in-place rewrite of a child touches the directory;
//! * the sandbox fence of a backend that claims sandbox modes: the call's policy over the
//!   deployment default, the writable root by its real path, and containment decided by a walk
//!   beneath the root that may not leave it (`..` above it, a link that leads out).

mod beneath;
mod edit;
mod model;
mod observation;
mod path;
mod text;
mod tree;
mod walk;
mod world;

pub use edit::{EditError, EditResult, apply_literal_edit};
pub use model::{
    CallFence, CreateDirResult, EditOutcomeModel, Entry, EntryAt, FenceCase, FenceVerdict, Guard,
    Info, Interference, Model, ModelConfig, ModelError, MutationResult, PathInfo, RenameResult,
    Resolved, Version, WriteResult,
};
pub use observation::{Observations, Seen};
pub use path::Key;
pub use text::{
    DIFF_BASIS_DEFAULT, NUL_SAMPLE_BYTES, NotText, STYLE_SAMPLE_CHARS, decode_for_edit,
    decode_for_read, diff_basis, lf_normalize,
};
pub use tree::{Outline, SnapEntry};
pub use world::{Change, Competitor, WorldEffect, WorldOp};
