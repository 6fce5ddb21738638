//! Why a check failed, as a type. A report says which rule of the contract a backend broke, and
//! the suite's own self-test asserts that each deliberately broken variant is caught *for its
//! own reason* — not merely that something failed.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of a failed check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FailureKind {
    /// Success where the contract says failure, a failure where it says success, another code,
    /// or a different success value (text, listing, kind, size, create vs update).
    Outcome,
    /// The right code with another message text.
    Message,
    /// A version token broke a law: kept across a change, changed without one, reused.
    VersionLaw,
    /// Keys: one object under two keys, or one key for two objects; a wrong display path.
    KeyIdentity,
    /// A mutation returned a version that a fresh `stat` does not.
    FreshStat,
    /// The bytes, kind or mode of an entry on disk differ from what the contract says.
    BytesOnDisk,
    /// An entry on disk that should not be there (staging left behind, a stray write).
    Litter,
    /// Staging was visible with the wrong mode while it existed, or a staging name was clobbered.
    Staging,
    /// An edit's result broke the literal-edit law checked against the raw bytes.
    EditLaw,
    /// A write's bytes on disk are not its content, or it changed something else.
    WriteLaw,
    /// A listing is not the directory's children in byte order.
    ListingLaw,
    /// `process_path`, `file_url` or `contains` said something false.
    PathFacts,
    /// A capability claim is contradicted by behaviour (in either direction).
    Claim,
    /// A concurrent race had zero or several winners, or a loser with the wrong code.
    Race,
    /// Operations that ran at the same time had outcomes (or left a state) that no sequential
    /// order of them explains: a lost update, a guard that held against nothing.
    Linearizability,
    /// A reader saw a file part-way through a change: empty, truncated or mixed bytes.
    TornRead,
    /// After the backend was killed mid-mutation, a file held neither its old nor its new
    /// content (or lost its mode), the next writer could not write it at the version read, or
    /// what the killed one left behind was never swept.
    Crash,
    /// After a power cut, a mutation that had answered was not there whole (the backend
    /// claims `durable`), a file held neither what it held before the mutation in flight nor
    /// what that mutation wrote, a listing showed what a cut publication left, or the next
    /// writer did not sweep it.
    PowerLoss,
    /// A sandbox fence let through what it must deny, or changed something while denying.
    Sandbox,
    /// Through the agent surface, a session changed a file it had not observed at its current
    /// version, was refused what it had observed, or the remedy after a stale change failed.
    Policy,
    /// Two providers that must behave alike answered one step differently (a differential run).
    Differential,
    /// The provider held a lock across a checkpoint, so the world could not be changed there.
    Checkpoint,
    /// A provider call did not return within the call timeout.
    Timeout,
    /// The provider panicked.
    Panic,
    /// The test setup failed (the factory, or the world carrying out a change).
    Setup,
    /// A fixed scenario drifted: a step meant to provoke a code no longer does.
    Scenario,
}

impl FailureKind {
    /// A stable kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Outcome => "outcome",
            FailureKind::Message => "message",
            FailureKind::VersionLaw => "version-law",
            FailureKind::KeyIdentity => "key-identity",
            FailureKind::FreshStat => "fresh-stat",
            FailureKind::BytesOnDisk => "bytes-on-disk",
            FailureKind::Litter => "litter",
            FailureKind::Staging => "staging",
            FailureKind::EditLaw => "edit-law",
            FailureKind::WriteLaw => "write-law",
            FailureKind::ListingLaw => "listing-law",
            FailureKind::PathFacts => "path-facts",
            FailureKind::Claim => "claim",
            FailureKind::Race => "race",
            FailureKind::Linearizability => "linearizability",
            FailureKind::TornRead => "torn-read",
            FailureKind::Crash => "crash",
            FailureKind::PowerLoss => "power-loss",
            FailureKind::Sandbox => "sandbox",
            FailureKind::Policy => "policy",
            FailureKind::Differential => "differential",
            FailureKind::Checkpoint => "checkpoint",
            FailureKind::Timeout => "timeout",
            FailureKind::Panic => "panic",
            FailureKind::Setup => "setup",
            FailureKind::Scenario => "scenario",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed check: its kind and what happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Why, as a type.
    pub kind: FailureKind,
    /// What happened, for people.
    pub message: String,
}

impl Failure {
    /// A failure of `kind`. A message is bounded (see `excerpt`): a report stays readable
    /// whatever values went into it.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: crate::excerpt::bounded(message.into()),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.kind, self.message)
    }
}

impl std::error::Error for Failure {}

/// The result of one check.
pub type Check = Result<(), Failure>;

/// Shorthand constructors, so checks read like sentences.
pub(crate) fn fail(kind: FailureKind, message: impl Into<String>) -> Failure {
    Failure::new(kind, message)
}
