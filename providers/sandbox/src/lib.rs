//! # seam-sandbox — the local provider behind a mode fence
//!
//! [`SandboxFileSystem`] is [`seam_local::LocalFileSystem`] with the sandbox modes of the
//! contract ([`seam::SandboxMode`]): `read-only` denies every mutation, `workspace-write` lets a
//! mutation through only beneath a writable root (the workspace root, `/tmp` and the OS temp
//! directory, each by its real path; a root that does not exist matches nothing),
//! `danger-full-access` lets everything through. Reads are never fenced. A denial is
//! `FS_SANDBOX_DENIED` with the contract's text, and changes nothing. The per-call
//! [`seam::SandboxPolicy`] wins over the deployment default for that call.
//!
//! **The fence holds on the opened object, not on a path string.** Every published escape from
//! an agent's file sandbox checked a path and then opened another object. Here a mutation under
//! `workspace-write` is allowed by its key (the real path it was resolved to) lying beneath a
//! writable root, and then runs with every path operation — finding what is there, creating
//! parents, staging, publishing, the edit's read — resolved beneath a held handle of that root,
//! one component at a time, following no link the kernel chooses
//! ([`seam_local::Confinement`]). A `..`, an absolute or relative link, a chain, a dangling
//! link, or a directory swapped for a link while the mutation runs cannot take it out: that is
//! `FS_SANDBOX_DENIED`, with nothing changed inside or outside.
//!
//! **Hard links.** A write or edit through a hard link whose other name is outside the roots
//! replaces the name inside with a new file (publication is a rename of fresh content); the
//! file outside keeps its bytes. Nothing outside changes.

mod config;
mod fence;
mod fs;

pub use config::SandboxConfig;
pub use fs::SandboxFileSystem;
