//! Directories of the suite's own: what a property lays out beside the backend it checks (the
//! `power-loss` property's backing directory, mount point and survivors).
//!
//! The composition decides where they go. A command that removes what it made when it is
//! interrupted (the CLI's run directory) hands the suite a [`Scratch`] that makes them there;
//! without one they are plain temporary directories in `TMPDIR`, removed when dropped.

use std::path::Path;
use std::sync::Arc;

/// A directory of the suite's own, removed when dropped.
pub trait ScratchDir: Send {
    /// Where it is.
    fn path(&self) -> &Path;
}

/// Makes the suite's directories ([`crate::SuiteConfig::scratch`]).
pub trait Scratch: Send + Sync {
    /// A fresh, empty directory whose name starts with `prefix`.
    fn make(&self, prefix: &str) -> std::io::Result<Box<dyn ScratchDir>>;
}

impl ScratchDir for tempfile::TempDir {
    fn path(&self) -> &Path {
        tempfile::TempDir::path(self)
    }
}

/// A directory from `scratch`, or a temporary one in `TMPDIR` without one.
pub(crate) fn make(
    scratch: Option<&Arc<dyn Scratch>>,
    prefix: &str,
) -> std::io::Result<Box<dyn ScratchDir>> {
    match scratch {
        Some(scratch) => scratch.make(prefix),
        None => Ok(Box::new(tempfile::Builder::new().prefix(prefix).tempdir()?)),
    }
}
