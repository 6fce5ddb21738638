//! The composition root of seam as a library: the shipped providers by name ([`table`], over
//! each provider's test-world crate, and [`providers`] for what else a name builds), the shipped agent side — tools and policy — as it sees it
//! ([`agent`]), and the privilege-dropping runner the permission property needs when the suite
//! runs as root ([`unprivileged`]). The `seam` binary is built on it, and so are
//! the tests that check the shipped providers (one local factory, not one per test crate).

pub mod agent;
pub mod interrupt;
pub mod providers;
pub mod table;
pub mod unprivileged;

/// The README's Rust example, compiled as a doctest (`cargo test -p seam-cli --doc`): this crate
/// is the one that depends on both the suite and a provider to stand in for the reader's own.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
