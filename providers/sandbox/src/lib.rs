//! # seam-sandbox — the local provider behind a mode fence
//!
//! [`SandboxFileSystem`] is [`seam_local::LocalFileSystem`] with the sandbox modes of the
//! contract ([`seam::SandboxMode`]): `read-only` denies every mutation, `workspace-write` lets a
//! mutation through only beneath a writable root (the workspace root, `/tmp` and the OS temp
//! directory, each by its real path; a root that does not exist matches nothing),
//! `danger-full-access` lets everything through. A denial is `FS_SANDBOX_DENIED` with the
//! contract's text, and changes nothing. The per-call [`seam::SandboxPolicy`] wins over the
//! deployment default for that call.
//!
//! **Reads**, as in the seed, are not fenced by default: right for a harness whose model has a
//! shell of its own anyway. A deployment that exposes one directory and nothing else (an MCP
//! server) confines them too ([`SandboxConfig::with_confined_reads`], claimed as
//! [`seam::Capability::ReadFence`]): under `read-only` and `workspace-write`, `stat`, `lstat`,
//! reads, listings and searches see only what lies beneath the workspace and temp roots, by the
//! same confined walk as mutations (a listing shows a link that leads out as nothing there);
//! a read that would leave is `FS_SANDBOX_DENIED` ([`seam::FsError::read_denied`]) and returns
//! nothing of the outside. Reads have no per-call policy: the deployment's mode and roots decide.
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
