//! A power cut under any backend whose storage is a directory.
//!
//! Killing a backend's process shows whether its writes are atomic, not whether they are
//! durable: what it never synced survives a process kill in the page cache. This crate mounts
//! a FUSE file system over a backing directory that passes every operation through and keeps,
//! beside what readers see, the **durable image**: each file's data as of its last `fsync`, each
//! directory's entries as of its last `fsync` (the rules are written down once, in [`image`]).
//! [`Mounted::cut`] stops serving — every later operation fails with `EIO` — and hands back the
//! image; [`Image::materialize`] writes what survived into a fresh directory, where the backend
//! is started again and looked at.
//!
//! Unlike a layer that applies namespace operations at once (LazyFS), a rename, link or unlink
//! here survives only when its directory was synced; `renameat2` with `RENAME_NOREPLACE` or
//! `RENAME_EXCHANGE`, hard links and extended attributes pass through (attributes are not kept
//! in the image). The kernel's FUSE has no `O_TMPFILE` for a file system that does not implement
//! it, and `fuser` 0.18 does not: an `open(O_TMPFILE)` under the layer fails with `EOPNOTSUPP`,
//! and a backend that stages that way must fall back (the local provider does, to a private
//! directory).
//!
//! Mounting needs `/dev/fuse` and the right to mount (root, here): [`available`] tries once and
//! says why not, and the caller reports the property as not run with that reason.

mod abort;
pub mod image;
mod layer;
mod nodes;

pub use image::{Durable, Image, Materialized, NodeId};
pub use layer::Counters;

use layer::{Inner, Layer};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The root's node number.
pub const ROOT: NodeId = 1;

/// Why the layer could not be mounted.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// FUSE cannot be mounted here (no device, no right to mount).
    #[error("FUSE cannot be mounted here: {0}")]
    NoFuse(String),
    /// The backing directory could not be read.
    #[error("the backing directory {path}: {source}")]
    Backing {
        /// The directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The process is on its way out ([`detach_all`] was called): no mount is made any more.
    #[error("the process is stopping: no FUSE mount is made any more")]
    Stopping,
    /// The mount itself failed (no right to mount, a mount point that is not a directory...).
    #[error("mounting FUSE at {path} failed: {source}")]
    Mount {
        /// The mount point.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// Whether the layer can be mounted here: `Err(why)` when it cannot (the reason a property
/// that needs it gives for not running). The first call mounts the layer once over an empty
/// directory and unmounts it (no device, no right to mount, a kernel without FUSE: each says
/// so); later calls repeat its answer.
pub fn available() -> Result<(), String> {
    static PROBED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

fn probe() -> Result<(), String> {
    std::fs::metadata("/dev/fuse").map_err(|e| format!("/dev/fuse: {e}"))?;
    let dir = std::env::temp_dir().join(format!("seam-powercut-probe-{}", std::process::id()));
    // Listed while it lives, so that a process interrupted meanwhile removes it too.
    live().made.push(dir.clone());
    let (backing, mnt) = (dir.join("backing"), dir.join("mnt"));
    let made = std::fs::create_dir_all(&backing).and_then(|()| std::fs::create_dir_all(&mnt));
    let result = match made {
        Err(e) => Err(format!(
            "a directory to try a mount in ({}): {e}",
            dir.display()
        )),
        Ok(()) => mount_unprobed(&backing, &mnt)
            .map_err(|e| e.to_string())
            .and_then(Mounted::unmount),
    };
    let _ = std::fs::remove_dir_all(&dir);
    live().made.retain(|d| d != &dir);
    result
}

/// What the layer counted so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// Operations served before the cut.
    pub ops: u64,
    /// File syncs seen.
    pub file_syncs: u64,
    /// Directory syncs seen.
    pub dir_syncs: u64,
    /// Operations refused after the cut.
    pub refused: u64,
}

/// The layer, mounted.
pub struct Mounted {
    session: Option<fuser::BackgroundSession>,
    inner: Arc<Mutex<Inner>>,
    counters: Arc<Counters>,
    mountpoint: PathBuf,
}

/// Mounts the layer over `backing` at `mountpoint` (an existing empty directory). Everything
/// in `backing` now is durable.
pub fn mount(backing: &Path, mountpoint: &Path) -> Result<Mounted, MountError> {
    available().map_err(MountError::NoFuse)?;
    mount_unprobed(backing, mountpoint)
}

/// The mount points of the layers mounted and not yet unmounted, so that a process on its way
/// out (interrupted) can detach them all: a FUSE mount whose process is gone stays behind as a
/// dead mount point ("Transport endpoint is not connected") that nothing can remove.
struct Live {
    /// Each mount point, with its FUSE connection's number when it could be read.
    points: Vec<(PathBuf, Option<u64>)>,
    /// Directories of the crate's own (the probe's), removed by [`detach_all`].
    made: Vec<PathBuf>,
    closed: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    points: Vec::new(),
    made: Vec::new(),
    closed: false,
});

fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Aborts and detaches every layer this process has mounted and not yet unmounted, and mounts
/// none from here on ([`mount`] fails with [`MountError::Stopping`]); returns how many it
/// detached. For a process on its way out (interrupted, or leaving calls it gave up on): every
/// request to the layers fails at once from here on — a process that exits with a file under
/// a layer open would otherwise never end (see the `abort` module) — and the mount points are
/// plain empty directories that can be removed. The directory a first [`available`] is trying
/// a mount in goes too.
pub fn detach_all() -> usize {
    let mut live = live();
    live.closed = true;
    let points = std::mem::take(&mut live.points);
    let connections: Vec<u64> = points.iter().filter_map(|(_, c)| *c).collect();
    abort::abort(&connections);
    for (point, _) in &points {
        let _ = rustix::mount::unmount(point, rustix::mount::UnmountFlags::DETACH);
    }
    for dir in std::mem::take(&mut live.made) {
        let _ = std::fs::remove_dir_all(dir);
    }
    points.len()
}

fn mount_unprobed(backing: &Path, mountpoint: &Path) -> Result<Mounted, MountError> {
    // Held until the mount is listed, so that `detach_all` either sees it or stops it.
    let mut live = live();
    if live.closed {
        return Err(MountError::Stopping);
    }
    let nodes = nodes::Nodes::new(backing).map_err(|source| MountError::Backing {
        path: backing.to_path_buf(),
        source,
    })?;
    let counters = Arc::new(Counters::default());
    let layer = Layer::new(nodes, counters.clone());
    let inner = layer.inner.clone();
    let mut config = fuser::Config::default();
    config.mount_options = vec![
        fuser::MountOption::FSName("seam-powercut".into()),
        fuser::MountOption::Subtype("seam-powercut".into()),
    ];
    config.n_threads = Some(1);
    let session =
        fuser::spawn_mount(layer, mountpoint, &config).map_err(|source| MountError::Mount {
            path: mountpoint.to_path_buf(),
            source,
        })?;
    // Read through the mount: answered by the session just started.
    let connection = abort::connection_of(mountpoint);
    live.points.push((mountpoint.to_path_buf(), connection));
    Ok(Mounted {
        session: Some(session),
        inner,
        counters,
        mountpoint: mountpoint.to_path_buf(),
    })
}

impl Mounted {
    /// Where the layer is mounted: the directory the backend is given.
    pub fn path(&self) -> &Path {
        &self.mountpoint
    }

    /// What the layer counted so far.
    pub fn counted(&self) -> Counted {
        Counted {
            ops: self.counters.ops.load(Ordering::Relaxed),
            file_syncs: self.counters.file_syncs.load(Ordering::Relaxed),
            dir_syncs: self.counters.dir_syncs.load(Ordering::Relaxed),
            refused: self.counters.refused.load(Ordering::Relaxed),
        }
    }

    /// Cuts the power: the operation in progress finishes, every later one fails with `EIO`.
    /// Returns what survives (the same image every time it is called).
    pub fn cut(&self) -> Image {
        match self.inner.lock() {
            Ok(mut inner) => {
                inner.cut = true;
                inner.nodes.image.clone()
            }
            Err(poisoned) => {
                let mut inner = poisoned.into_inner();
                inner.cut = true;
                inner.nodes.image.clone()
            }
        }
    }

    /// Cuts the power once `ops` more operations have been served: the one after them is
    /// refused, and every one after it. A point inside whatever the backend does next, drawn
    /// by the caller, that does not depend on the machine's speed.
    pub fn cut_after(&self, ops: u64) {
        let mut inner = match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        inner.cut_at = self
            .counters
            .ops
            .load(Ordering::Relaxed)
            .saturating_add(ops);
    }

    /// Cuts the power right after the `syncs`-th `fsync`/`fdatasync` of a file or directory
    /// from now (that sync is kept; every operation after it is refused). The durable image
    /// changes only at syncs, so these are the points where what survives differs.
    pub fn cut_after_syncs(&self, syncs: u64) {
        let mut inner = match self.inner.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        inner.syncs_left = Some(syncs.max(1));
    }

    /// Whether the power is cut (by [`Mounted::cut`], or at the point [`Mounted::cut_after`]
    /// or [`Mounted::cut_after_syncs`] set).
    pub fn is_cut(&self) -> bool {
        match self.inner.lock() {
            Ok(inner) => inner.cut,
            Err(poisoned) => poisoned.into_inner().cut,
        }
    }

    /// What would survive a cut now, without cutting.
    pub fn image(&self) -> Image {
        match self.inner.lock() {
            Ok(inner) => inner.nodes.image.clone(),
            Err(poisoned) => poisoned.into_inner().nodes.image.clone(),
        }
    }

    /// Cuts the power (if it was not cut) and detaches the mount at once. The session ends once
    /// nothing holds a file under it open; until then it answers `EIO` on a thread of its own
    /// (a backend that leaked a descriptor keeps it), and nothing waits for it. `Err` if the
    /// unmount itself failed.
    pub fn unmount(mut self) -> Result<(), String> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), String> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let _ = self.cut();
        // Detached at once, even with files under it still open (a backend that was not
        // dropped yet): the session ends when the last of them is closed. Listed until it is
        // detached, so that a process interrupted meanwhile detaches it (its connection is
        // still its own then: a session alive keeps its number).
        let detached =
            rustix::mount::unmount(&self.mountpoint, rustix::mount::UnmountFlags::DETACH);
        live().points.retain(|(p, _)| p != &self.mountpoint);
        detached.map_err(|e| format!("unmounting {}: {e}", self.mountpoint.display()))?;
        // The session ends when nothing holds a file under the mount any more. A backend that
        // leaked a descriptor when the disk failed under it keeps it alive: it is left to end
        // on its own thread (answering `EIO` to whatever still comes), and nothing waits for it
        // — no verdict depends on how fast the kernel lets a session go.
        std::thread::Builder::new()
            .name("seam-powercut-session".into())
            .spawn(move || {
                let _ = session.join();
            })
            .map_err(|e| format!("starting the session's end: {e}"))?;
        Ok(())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
