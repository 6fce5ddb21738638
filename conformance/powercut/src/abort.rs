//! Aborting the layer's connections, for a process on its way out.
//!
//! The layer is served by a thread of the process that mounted it. A process that exits with a
//! file under a layer still open (a backend interrupted in the middle of a write) closes it
//! once its last thread is gone, and closing a file on FUSE sends a `FLUSH` that the kernel
//! waits for without a timeout and without letting a signal interrupt it — the thread that
//! would answer is the one that just died, and the process never ends. Detaching the mount
//! does not help (the open file keeps the connection), so the connections are aborted
//! first, through the FUSE control file system (`fusectl`): every request then fails at once.
//! Where `fusectl` is not mounted at `/sys/fs/fuse/connections` it is mounted for the moment
//! in a directory of its own (the layer's mounts need the same right).

use std::path::{Path, PathBuf};

/// The FUSE connection's number (its control directory's name) of the file system mounted at
/// `point`: the kernel's own encoding of its device number.
pub(crate) fn connection_of(point: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(point).ok()?.dev();
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    Some((u64::from(major) << 20) | u64::from(minor))
}

/// Aborts the connections numbered `connections`; returns how many it could.
pub(crate) fn abort(connections: &[u64]) -> usize {
    if connections.is_empty() {
        return 0;
    }
    let system = Path::new("/sys/fs/fuse/connections");
    if connections
        .iter()
        .all(|c| system.join(c.to_string()).exists())
    {
        return write_aborts(system, connections);
    }
    let own: PathBuf = std::env::temp_dir().join(format!("seam-fusectl-{}", std::process::id()));
    if std::fs::create_dir(&own).is_err() {
        return 0;
    }
    let done = match rustix::mount::mount(
        "fusectl",
        &own,
        "fusectl",
        rustix::mount::MountFlags::empty(),
        None,
    ) {
        Ok(()) => {
            let done = write_aborts(&own, connections);
            let _ = rustix::mount::unmount(&own, rustix::mount::UnmountFlags::DETACH);
            done
        }
        Err(_) => 0,
    };
    let _ = std::fs::remove_dir(&own);
    done
}

fn write_aborts(control: &Path, connections: &[u64]) -> usize {
    connections
        .iter()
        .filter(|c| std::fs::write(control.join(c.to_string()).join("abort"), b"1").is_ok())
        .count()
}
