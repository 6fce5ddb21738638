//! # seam-conformance — the gate a filesystem backend must pass
//!
//! A backend for an agent harness makes promises that are easy to state and hard to keep:
//! versions that change on every change and are never reused, compare-and-swap writes that cannot
//! lose an update, edits that keep every untouched byte, typed errors, atomic publication,
//! symlinks that are written through and never replaced. This crate checks them.
//!
//! * A reference model (`seam-model`) and the provider run the same generated sequences of
//!   operations — with symlink aliases, `..` and absolute spellings, CRLF/LF/mixed text, BOMs,
//!   NULs, invalid UTF-8, external edits behind the provider's back, cancellations inside a
//!   mutation and competitors that appear mid-write — and after every step the suite checks the
//!   outcome, the version laws, key identity, and every byte and mode on disk ([`World`]).
//! * Targeted properties cover what sequences reach only by luck: staging privacy and
//!   no-clobber, symlink identity, bad input, CAS races between threads, and permission errors
//!   as a real unprivileged user.
//! * A failure is shrunk to a minimal sequence and written as a JSON [`Trace`] that [`replay`]
//!   (and `seam replay`) runs against any provider.
//!
//! ## Gating your own backend
//!
//! Implement [`Factory`] (a fresh provider plus a [`World`] for its storage per case) and call
//! [`run_suite`] from a test:
//!
//! ```no_run
//! use seam_conformance::{run_suite, Factory, SuiteConfig};
//! # fn my_factory() -> Box<dyn Factory> { unimplemented!() }
//! let report = run_suite(my_factory().as_ref(), &SuiteConfig::default(), &mut |_| {})
//!     .expect("the suite ran");
//! assert!(report.passed(), "{}", report.render());
//! ```
//!
//! The suite never names a concrete provider: it only sees what the factory hands it.

mod factory;
mod generate;
mod harness;
mod laws;
pub mod properties;
mod report;
mod sequences;
mod stats;
mod step;
mod suite;
mod trace;
mod world;

pub use factory::{CaseDurability, CaseOptions, Factory, Subject};
pub use generate::text_corpus;
pub use harness::{Harness, MessageCheck, NEVER_ISSUED, StepRecord};
pub use laws::Laws;
pub use properties::permissions::{CaseOutcome, PermissionCase, Unprivileged, run_cases};
pub use report::{PropertyResult, Report, Status, junit_document};
pub use sequences::{
    Progress, SequenceConfig, SequenceFailure, SequenceOutcome, run_sequences, run_steps, runtime,
};
pub use stats::Stats;
pub use step::{Interfere, Op, ROOT_TOKEN, Step, VersionRef, WriteGuard, describe, render_path};
pub use suite::{PROPERTIES, SuiteConfig, SuiteProgress, run_suite};
pub use trace::{ReplayOutcome, TRACE_FORMAT, Trace, TraceError, TraceFailure, replay};
pub use world::{DiskWorld, EntryMode, World};
