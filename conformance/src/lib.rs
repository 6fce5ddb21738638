//! # seam-conformance — the gate a filesystem backend must pass
//!
//! A backend for an agent harness makes promises that are easy to state and hard to keep:
//! versions that change on every change and are never reused, compare-and-swap writes that cannot
//! lose an update, edits that keep every untouched byte, typed errors, atomic publication,
//! symlinks that are written through and never replaced. This crate checks them.
//!
//! * A reference model (`seam-model`) and the provider run the same generated sequences of
//!   operations — with symlink aliases, `..` and absolute spellings, CRLF/LF/mixed text, BOMs,
//!   NULs at the edges of the sniff window, files across stream chunk boundaries, contents at the
//!   diff-basis limit, external edits behind the provider's back, targets reused after the world
//!   changed, cancellations before and inside a mutation, competitors that appear mid-write — and
//!   after every step the suite checks the outcome, the version laws, key identity, laws that do
//!   not trust the model, and every byte and mode on disk ([`World`]).
//! * Targeted properties ([`properties::registry`]) cover what sequences reach only by luck: every
//!   capability claim both ways, `process_path`/`file_url`/`contains`, bad input, symlink
//!   identity, staging privacy and no-clobber, CAS races between threads, permission errors as a
//!   real unprivileged user, sandbox modes.
//! * Given an agent surface ([`AgentFactory`]: the model-facing tools and the read-before-write
//!   policy, which the composition supplies), the `policy` property drives tool calls by two
//!   sessions and checks them against the model's observation gate.
//! * Every rule of the contract ([`Rule`]) is counted when a step exercised it in the situation
//!   that tells a right backend from a wrong one; the report lists the rules a run never reached,
//!   and such a run is *incomplete*, never a pass ([`Verdict`]).
//! * Every provider call runs under a hang limit and a panic guard: a hanging or panicking
//!   backend fails its property with the operation named, and the run goes on; a call that is
//!   only slow is a warning, never a failure ([`Timing`]).
//! * A failure is shrunk to a minimal sequence and written as a JSON [`Trace`] that [`replay`]
//!   (and `seam replay`) runs against any provider; it carries a typed [`FailureKind`].
//!
//! ## Gating your own backend
//!
//! Implement [`Factory`] (a fresh provider plus a [`World`] for its storage per case) and call
//! [`run_suite`] from a test:
//!
//! ```no_run
//! use seam_conformance::{run_suite, Factory, SuiteConfig};
//! use std::sync::Arc;
//! # fn my_factory() -> Arc<dyn Factory> { unimplemented!() }
//! let report = run_suite(my_factory(), &SuiteConfig::default(), &mut |_| {})
//!     .expect("the suite ran");
//! assert!(report.passed(), "{}", report.render());
//! ```
//!
//! `docs/writing-a-backend.md` in the repository walks through a complete example. The suite
//! never names a concrete provider: it only sees what the factory hands it.

mod agent;
pub mod case_dirs;
mod concurrent;
mod config;
mod excerpt;
mod factory;
mod failure;
mod generate;
mod harness;
mod laws;
pub mod properties;
mod report;
mod rules;
mod scratch;
mod sequences;
mod stats;
mod step;
mod suite;
pub mod timing;
mod trace;
mod unprivileged;
mod watch;
mod world;

pub use agent::{Agent, AgentError, AgentFactory};
pub use concurrent::AT_ONCE as CASES_AT_ONCE;
pub use factory::{
    CaseDurability, CaseOptions, DEFAULT_CONFIGURATION, DEPLOYMENT_WORKSPACE, Factory, Killable,
    NotKillable, NotPlaced, SUITE_DIFF_LIMIT, Subject,
};
pub use failure::{Failure, FailureKind};
pub use generate::text_corpus;
pub use harness::{Harness, HarnessConfig, MessageCheck, NEVER_ISSUED, StepRecord};
pub use laws::Laws;
pub use properties::permissions::{
    CaseOutcome, PermissionCase, Unprivileged, UnprivilegedError, run_cases,
};
pub use report::{
    Coverage, PropertyResult, Report, RuleLine, Skipped, Status, Verdict, junit_document,
};
pub use rules::Rule;
pub use scratch::{Scratch, ScratchDir};
pub use sequences::{
    Progress, SequenceConfig, SequenceFailure, SequenceOutcome, generated_cases,
    run_agent_sequences, run_agent_steps, run_sequences, run_steps, runtime,
};
pub use stats::Stats;
pub use step::{Interfere, Op, ROOT_TOKEN, Step, VersionRef, WriteGuard, describe, render_path};
pub use suite::{SuiteConfig, SuiteError, SuiteProgress, property_names, run_suite};
pub use timing::{Hang, Load, SlowCall, Slowness, Timing, TimingError};
pub use trace::{
    ReplayConfig, ReplayOutcome, TRACE_FORMAT, Trace, TraceError, TraceFailure, replay, replay_with,
};
pub use world::{DiskWorld, EntryMode, World};
