//! The server's test control (`docs/protocol.md` §7): a fresh case directory per connection and
//! out-of-band changes and read-backs of it with plain `std::fs`, exactly what the suite's
//! `DiskWorld` does on a local root. Refused unless the server was started for testing.

use crate::frame::Frame;
use crate::protocol::test_control::{Effect, Entry, EntryMode, Snapshot};
use crate::protocol::values::PayloadRef;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What the suite asks for one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseSpec {
    /// The case's directory (absolute, canonical).
    pub root: String,
    /// A fencing backend's default workspace, relative to `root`.
    pub workspace: Option<String>,
    /// Fully durable mutations (fsync) or not.
    pub durable: bool,
    /// The diff-basis limit the backend must use.
    pub diff_basis_max_bytes: u64,
    /// The case's seed (a backend may seed its own choices with it).
    pub seed: u64,
    /// The backend configuration the suite asks for (one the server's backend declares), if
    /// any.
    pub configuration: Option<String>,
    /// Deploy a fencing backend with its reads confined too, if it can (claiming
    /// [`seam::Capability::ReadFence`]); others ignore it.
    pub confine_reads: bool,
}

/// Makes the backend for one case (the composition decides which: `seam serve --provider`).
pub trait CaseMaker: Send + Sync {
    /// A fresh backend over `spec.root`.
    fn make(&self, spec: &CaseSpec) -> Result<std::sync::Arc<dyn seam::FileSystem>, String>;
}

fn rel_path(root: &Path, rel: &str) -> Result<PathBuf, String> {
    if rel.is_empty() || rel.starts_with('/') || rel.split('/').any(|c| c == "..") {
        return Err(format!(
            "world path {rel:?} must be relative and stay in the case"
        ));
    }
    Ok(root.join(rel))
}

fn parents(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(parent)?;
    }
    Ok(())
}

/// `world/apply`: one effect on the case directory.
pub fn apply(root: &Path, effect: &Effect, frame: &Frame) -> Result<(), String> {
    let (name, rel) = match effect {
        Effect::CreateFile { path, .. } => ("create_file", path),
        Effect::RewriteFile { path, .. } => ("rewrite_file", path),
        Effect::CreateDir { path } => ("create_dir", path),
        Effect::Symlink { path, .. } => ("symlink", path),
        Effect::Remove { path } => ("remove", path),
        Effect::Chmod { path, .. } => ("chmod", path),
        Effect::Mkfifo { path } => ("mkfifo", path),
    };
    let path = rel_path(root, rel)?;
    let io = |e: std::io::Error| format!("world/apply {name}: {e}");
    let bytes_of = |r: PayloadRef| {
        frame
            .segment(r)
            .ok_or("bytes must be a payload reference to a segment of the frame")
    };
    match effect {
        Effect::CreateFile { bytes, mode, .. } => {
            let bytes = bytes_of(*bytes)?;
            let mode = mode.ok_or("mode must be a number")?;
            parents(&path).map_err(io)?;
            // A new inode, as a person's editor that saves by rename makes.
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path).map_err(io)?,
                Ok(_) => std::fs::remove_file(&path).map_err(io)?,
                Err(_) => {}
            }
            std::fs::write(&path, bytes).map_err(io)?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(io)?;
        }
        Effect::RewriteFile {
            bytes,
            restore_mtime,
            ..
        } => {
            let bytes = bytes_of(*bytes)?;
            let before = std::fs::metadata(&path)
                .map_err(io)?
                .modified()
                .map_err(io)?;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&path)
                .map_err(io)?;
            std::io::Write::write_all(&mut f, &bytes).map_err(io)?;
            if *restore_mtime {
                f.set_modified(before).map_err(io)?;
            }
        }
        Effect::CreateDir { .. } => {
            parents(&path).map_err(io)?;
            std::fs::DirBuilder::new()
                .mode(0o755)
                .create(&path)
                .map_err(io)?;
        }
        Effect::Symlink { target, .. } => {
            parents(&path).map_err(io)?;
            std::os::unix::fs::symlink(target, &path).map_err(io)?;
        }
        Effect::Remove { .. } => match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path).map_err(io)?,
            Ok(_) => std::fs::remove_file(&path).map_err(io)?,
            Err(e) => return Err(io(e)),
        },
        Effect::Chmod { mode, .. } => {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode)).map_err(io)?;
        }
        Effect::Mkfifo { .. } => {
            parents(&path).map_err(io)?;
            rustix::fs::mknodat(
                rustix::fs::CWD,
                path.as_path(),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .map_err(|e| io(e.into()))?;
        }
    }
    Ok(())
}

/// `world/snapshot`: every entry under the case, sorted by relative path, file bytes as
/// payload segments.
pub fn snapshot(root: &Path, out: &mut Frame) -> Result<Snapshot, String> {
    let mut entries = Vec::new();
    walk(root, root, &mut entries).map_err(|e| format!("world/snapshot: {e}"))?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut listed = Vec::with_capacity(entries.len());
    for (rel, entry) in entries {
        let entry = match entry {
            Snap::File(bytes, mode) => Entry::File {
                bytes: out.attach_ref(bytes),
                mode: Some(mode),
            },
            Snap::Dir(mode) => Entry::Dir { mode: Some(mode) },
            Snap::Link(target) => Entry::Symlink { target },
            Snap::Other => Entry::Other,
        };
        listed.push((rel, entry));
    }
    Ok(Snapshot { entries: listed })
}

enum Snap {
    File(Vec<u8>, u32),
    Dir(u32),
    Link(String),
    Other,
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Snap)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .map_err(std::io::Error::other)?
            .to_string_lossy()
            .into_owned();
        let meta = std::fs::symlink_metadata(&path)?;
        let mode = meta.mode() & 0o7777;
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(&path)?.to_string_lossy().into_owned();
            out.push((rel, Snap::Link(target)));
        } else if ft.is_dir() {
            out.push((rel, Snap::Dir(mode)));
            walk(root, &path, out)?;
        } else if ft.is_file() {
            out.push((rel, Snap::File(std::fs::read(&path)?, mode)));
        } else {
            out.push((rel, Snap::Other));
        }
    }
    Ok(())
}

/// `world/entry_mode`: kind and mode of an absolute path, not following a final link.
pub fn entry_mode(path: &str) -> Result<Option<EntryMode>, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(EntryMode {
            is_dir: m.is_dir(),
            mode: Some(m.mode() & 0o7777),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("world/entry_mode: {e}")),
    }
}
