//! The server's test control (`docs/protocol.md` §7): a fresh case directory per connection and
//! out-of-band changes and read-backs of it with plain `std::fs`, exactly what the suite's
//! `DiskWorld` does on a local root. Refused unless the server was started for testing.

use crate::frame::Frame;
use serde_json::{Value, json};
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

fn str_param<'a>(params: &'a Value, name: &str) -> Result<&'a str, String> {
    params
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{name} must be a string"))
}

fn mode_param(params: &Value) -> Result<u32, String> {
    params
        .get("mode")
        .and_then(Value::as_u64)
        .and_then(|m| u32::try_from(m).ok())
        .ok_or_else(|| "mode must be a number".to_string())
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
pub fn apply(root: &Path, params: &Value, frame: &mut Frame) -> Result<Value, String> {
    let effect = str_param(params, "effect")?;
    let path = rel_path(root, str_param(params, "path")?)?;
    let io = |e: std::io::Error| format!("world/apply {effect}: {e}");
    match effect {
        "create_file" => {
            let bytes = params
                .get("bytes")
                .and_then(|r| frame.take(r))
                .ok_or("bytes must be a payload reference")?;
            let mode = mode_param(params)?;
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
        "rewrite_file" => {
            let bytes = params
                .get("bytes")
                .and_then(|r| frame.take(r))
                .ok_or("bytes must be a payload reference")?;
            let restore = params
                .get("restore_mtime")
                .and_then(Value::as_bool)
                .unwrap_or(false);
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
            if restore {
                f.set_modified(before).map_err(io)?;
            }
        }
        "create_dir" => {
            parents(&path).map_err(io)?;
            std::fs::DirBuilder::new()
                .mode(0o755)
                .create(&path)
                .map_err(io)?;
        }
        "symlink" => {
            parents(&path).map_err(io)?;
            std::os::unix::fs::symlink(str_param(params, "target")?, &path).map_err(io)?;
        }
        "remove" => match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path).map_err(io)?,
            Ok(_) => std::fs::remove_file(&path).map_err(io)?,
            Err(e) => return Err(io(e)),
        },
        "chmod" => {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode_param(params)?))
                .map_err(io)?;
        }
        "mkfifo" => {
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
        other => return Err(format!("unknown effect {other:?}")),
    }
    Ok(json!({}))
}

/// `world/snapshot`: every entry under the case, sorted by relative path, file bytes as
/// payload segments.
pub fn snapshot(root: &Path, out: &mut Frame) -> Result<Value, String> {
    let mut entries = Vec::new();
    walk(root, root, &mut entries).map_err(|e| format!("world/snapshot: {e}"))?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut listed = Vec::with_capacity(entries.len());
    for (rel, entry) in entries {
        let value = match entry {
            Snap::File(bytes, mode) => {
                json!({ "kind": "file", "bytes": out.attach(bytes), "mode": mode })
            }
            Snap::Dir(mode) => json!({ "kind": "dir", "mode": mode }),
            Snap::Link(target) => json!({ "kind": "symlink", "target": target }),
            Snap::Other => json!({ "kind": "other" }),
        };
        listed.push(json!([rel, value]));
    }
    Ok(json!({ "entries": listed }))
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
pub fn entry_mode(params: &Value) -> Result<Value, String> {
    let path = str_param(params, "path")?;
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(json!({ "is_dir": m.is_dir(), "mode": m.mode() & 0o7777 })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
        Err(e) => Err(format!("world/entry_mode: {e}")),
    }
}
