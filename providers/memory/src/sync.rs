//! Every synchronisation primitive this crate uses, and nothing else.
//!
//! The store's correctness rests on one lock, so it is worth model-checking: a checker such as
//! loom replaces these types with instrumented ones under a cfg of its own. Keeping every
//! `Mutex` and `Arc` behind this one module means that swap touches this file only.

#[cfg(not(seam_loom))]
pub(crate) use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

// Under `--cfg seam_loom` (the model-checking build, `tests/loom.rs`), loom's instrumented types.
#[cfg(seam_loom)]
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(seam_loom)]
pub(crate) use std::sync::PoisonError;
