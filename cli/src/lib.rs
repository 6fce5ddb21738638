//! The composition root of seam as a library: the shipped providers as the conformance suite
//! sees them ([`providers`]), the shipped agent side — tools and policy — as it sees it
//! ([`agent`]), and the privilege-dropping runner the permission property needs when the suite
//! runs as root ([`unprivileged`]). The `seam` binary is built on it, and so are
//! the tests that check the shipped providers (one local factory, not one per test crate).

pub mod agent;
pub mod case_dirs;
pub mod interrupt;
pub mod providers;
pub mod remote;
pub mod shell;
pub mod table;
pub mod unprivileged;
pub mod world_client;

/// The README's Rust example, compiled as a doctest (`cargo test -p seam-cli --doc`): this crate
/// is the one that depends on both the suite and a provider to stand in for the reader's own.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
