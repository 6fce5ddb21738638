//! Mutations confined beneath a directory: the same mechanics as every local mutation (guard,
//! staging, publication, parents, sweep), with every path operation resolved beneath a held
//! handle of that directory, one component at a time, so that nothing — `..`, a link of any
//! kind, a directory swapped for a link while the mutation runs — can take it outside. A
//! confining provider (the sandbox) decides *whether* a mutation may happen; this makes sure
//! that the one it allowed happens *there*.

use crate::root::Root;
use rustix::io::Errno;
use seam::FsError;
use std::error::Error as _;
use std::sync::Arc;

/// A directory that mutations can be confined beneath.
#[derive(Debug)]
pub struct Confinement {
    root: Root,
    path: String,
}

impl Confinement {
    /// Holds the directory at `path` (a real, absolute path) open.
    pub fn open(path: &str) -> std::io::Result<Self> {
        let root = Root::confined(path).map_err(std::io::Error::from)?;
        Ok(Self {
            root,
            path: path.to_string(),
        })
    }

    /// The directory's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn root(&self) -> &Root {
        &self.root
    }

    /// Whether the walk to the directory at `key` (a real path beneath this confinement; links
    /// on the way and at the end followed) would leave it. A directory that is missing, or a
    /// file, does not lead out: the operation that goes there says what it is. A look, not a
    /// guarantee — what a confined operation then does is held beneath the root regardless —
    /// so it serves only to decide which of two denials to name.
    pub fn leads_out(&self, key: &str) -> bool {
        matches!(self.root.open_dir(key), Err(Errno::XDEV))
    }
}

/// Whether a mutation beneath a [`Confinement`] failed because it would have left it.
pub fn is_escape(error: &FsError) -> bool {
    let Some(source) = error.source() else {
        return false;
    };
    // The source is held shared (`Arc<dyn Error>`), which is itself what `source()` shows.
    let io = source.downcast_ref::<std::io::Error>().or_else(|| {
        source
            .downcast_ref::<Arc<dyn std::error::Error + Send + Sync>>()
            .and_then(|inner| inner.downcast_ref::<std::io::Error>())
    });
    io.and_then(std::io::Error::raw_os_error)
        .is_some_and(|raw| raw == Errno::XDEV.raw_os_error())
}
