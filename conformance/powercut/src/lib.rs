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
//! `RENAME_EXCHANGE`, hard links and extended attributes pass through. The kernel's FUSE has no
//! `O_TMPFILE` for a file system that does not implement it, and `fuser` does not: an
//! `open(O_TMPFILE)` under the layer fails with `EOPNOTSUPP`, and a backend that stages that
//! way must fall back (the local provider does, to a private directory).
//!
//! Mounting needs `/dev/fuse` and the right to mount (root, here): [`available`] tries once and
//! says why not, and the caller reports the property as not run with that reason.

pub mod image;
mod layer;
mod nodes;

pub use image::{Durable, Image, Materialized, NodeId};
pub use layer::Counters;

use layer::{Inner, Layer};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    /// The FUSE connection's number (the minor of the mount's device), for aborting it.
    connection: Option<u32>,
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

fn mount_unprobed(backing: &Path, mountpoint: &Path) -> Result<Mounted, MountError> {
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
    let connection = rustix::fs::stat(mountpoint)
        .ok()
        .map(|st| rustix::fs::minor(st.st_dev));
    Ok(Mounted {
        session: Some(session),
        connection,
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

    /// Whether the power is cut (by [`Mounted::cut`], or at the point [`Mounted::cut_after`]
    /// set).
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

    /// Cuts the power (if it was not cut) and unmounts. The session ends once nothing holds a
    /// file under the mount open; a backend that still does (one that leaked a descriptor when
    /// the disk failed under it) has its connection aborted, as a disk that is gone would,
    /// through the FUSE control file system (mounted at `/sys/fs/fuse/connections` if it is
    /// not). `Err` if the session still did not end within ten seconds, or the unmount failed.
    pub fn unmount(mut self) -> Result<(), String> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), String> {
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        let _ = self.cut();
        // Detached at once, even with files under it still open (a backend that was not
        // dropped yet): the session ends when the last of them is closed.
        rustix::mount::unmount(&self.mountpoint, rustix::mount::UnmountFlags::DETACH)
            .map_err(|e| format!("unmounting {}: {e}", self.mountpoint.display()))?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("seam-powercut-unmount".into())
            .spawn(move || {
                let _ = tx.send(session.join());
            })
            .map_err(|e| format!("starting the unmount: {e}"))?;
        let mut aborted = false;
        let ended = match rx.recv_timeout(Duration::from_millis(500)) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Some(connection) = self.connection {
                    abort(connection)?;
                    aborted = true;
                }
                rx.recv_timeout(Duration::from_secs(10))
            }
            other => other.map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
        };
        match ended {
            Ok(Ok(())) => Ok(()),
            // The session's read of an aborted connection fails so: the end asked for.
            Ok(Err(e)) if aborted && e.raw_os_error() == Some(rustix::io::Errno::CONNABORTED.raw_os_error()) => Ok(()),
            Ok(Err(e)) => Err(format!("unmounting {}: {e}", self.mountpoint.display())),
            Err(_) => Err(format!(
                "the FUSE session at {} did not end within 10 s of its unmount (a file under it still open?)",
                self.mountpoint.display()
            )),
        }
    }
}

/// Where the kernel's FUSE control file system lives.
const FUSECTL: &str = "/sys/fs/fuse/connections";

/// Aborts FUSE connection `connection`: every request still waiting, and every later one,
/// fails, and the session's reads end.
fn abort(connection: u32) -> Result<(), String> {
    let dir = Path::new(FUSECTL).join(connection.to_string());
    if !dir.exists() {
        rustix::mount::mount(
            "fusectl",
            FUSECTL,
            "fusectl",
            rustix::mount::MountFlags::empty(),
            None,
        )
        .map_err(|e| format!("mounting the FUSE control file system at {FUSECTL}: {e}"))?;
    }
    std::fs::write(dir.join("abort"), b"1")
        .map_err(|e| format!("aborting FUSE connection {connection}: {e}"))
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
