//! `list_dir`: direct children in byte order of their names, each probed through the listed
//! directory's descriptor (so a re-pointed link cannot swap the directory mid-listing), with child
//! keys derived from the directory's identity. A broken or looping link is `other` with no
//! version; a permission failure on any child fails the listing.

use crate::errors::{fail, os};
use crate::paths::key_of;
use crate::version::Minter;
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;
use seam::{FsDirEntry, FsError, FsErrorCode, FsKind, FsTarget, FsTargetKey, Signal, Verb};

fn child_key(parent_key: &str, name: &str, is_link: bool) -> String {
    let plain = if parent_key == "/" {
        format!("/{name}")
    } else {
        format!("{parent_key}/{name}")
    };
    if is_link {
        key_of(&plain).unwrap_or(plain)
    } else {
        plain
    }
}

/// Lists `target`, sorting names with `order` (byte order unless a fault says otherwise).
pub(crate) fn list_dir(
    minter: Minter,
    target: &FsTarget,
    signal: &Signal,
    locale_order: bool,
) -> Result<Vec<FsDirEntry>, FsError> {
    let display = target.display_path.as_str();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let dir = match rustix::fs::openat(rustix::fs::CWD, target.key.as_str(), flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(fail(FsErrorCode::NotFound, "list", display, "not found")),
        Err(Errno::NOTDIR) => {
            return Err(fail(
                FsErrorCode::NotDirectory,
                "list",
                display,
                "not a directory",
            ));
        }
        Err(e) => return Err(os(e, "list", display)),
    };
    let mut names: Vec<(Vec<u8>, FileType)> = Vec::new();
    let entries = rustix::fs::Dir::read_from(&dir).map_err(|e| os(e, "list", display))?;
    for entry in entries {
        let entry = entry.map_err(|e| os(e, "list", display))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        names.push((name.to_vec(), entry.file_type()));
    }
    signal.check(Verb::List)?;
    if locale_order {
        names.sort_by(|a, b| {
            let la = a.0.to_ascii_lowercase();
            let lb = b.0.to_ascii_lowercase();
            la.cmp(&lb).then_with(|| a.0.cmp(&b.0))
        });
    } else {
        names.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let mut out = Vec::with_capacity(names.len());
    for (raw, dtype) in names {
        signal.check(Verb::List)?;
        let name = String::from_utf8_lossy(&raw).into_owned();
        let child_display = if display == "/" {
            format!("/{name}")
        } else {
            format!("{display}/{name}")
        };
        let probe = match minter.probe_at(&dir, raw.as_slice(), true) {
            Ok(p) => p,
            Err(Errno::LOOP) => None,
            Err(e) => return Err(os(e, "list", &child_display)),
        };
        let is_link = match dtype {
            FileType::Symlink => true,
            FileType::Unknown => matches!(
                minter.probe_at(&dir, raw.as_slice(), false),
                Ok(Some(p)) if p.kind == FileType::Symlink
            ),
            _ => false,
        };
        out.push(FsDirEntry {
            target: FsTarget {
                key: FsTargetKey::new(child_key(target.key.as_str(), &name, is_link)),
                display_path: child_display,
            },
            name,
            kind: probe.as_ref().map_or(FsKind::Other, |p| p.fs_kind()),
            size: probe.as_ref().filter(|p| p.is_file()).map(|p| p.size),
            version: probe.map(|p| p.version),
        });
    }
    Ok(out)
}
