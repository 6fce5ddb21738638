//! `list_dir`: direct children in byte order of their names, each probed through the listed
//! directory's descriptor (so a re-pointed link cannot swap the directory mid-listing), with child
//! keys derived from the directory's identity. A broken or looping link is `other` with no
//! version; a permission failure on any child fails the listing. The provider's own staging
//! (in use, or left by a killed writer and not swept yet) is not listed.

use crate::errors::os;
use crate::paths::key_of;
use crate::root::Root;
use crate::version::probe_at;
use rustix::fd::AsFd;
use rustix::fs::{FileType, OFlags};
use rustix::io::Errno;
use seam::{FsDirEntry, FsError, FsKind, FsTarget, FsTargetKey, Signal, Verb};

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

/// Lists `target` in byte order of the names.
pub(crate) fn list_dir(
    root: &Root,
    target: &FsTarget,
    signal: &Signal,
) -> Result<Vec<FsDirEntry>, FsError> {
    let display = target.display_path.as_str();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let dir = match root.open(target.key.as_str(), flags) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(FsError::not_found(Verb::List, display)),
        // ENOTDIR: the object is not a directory — or the path runs through a file, and then
        // there is nothing there at all.
        Err(Errno::NOTDIR) => {
            return match root.probe(target.key.as_str(), true) {
                Ok(Some(_)) => Err(FsError::not_a_directory(display)),
                Ok(None) => Err(FsError::not_found(Verb::List, display)),
                Err(e) => Err(os(e, Verb::List, display)),
            };
        }
        Err(e) => return Err(os(e, Verb::List, display)),
    };
    let mut names: Vec<(Vec<u8>, FileType)> = Vec::new();
    let entries = rustix::fs::Dir::read_from(&dir).map_err(|e| os(e, Verb::List, display))?;
    for entry in entries {
        let entry = entry.map_err(|e| os(e, Verb::List, display))?;
        let name = entry.file_name().to_bytes();
        // Staging — a live writer's, or what a killed one left until the next writer here
        // sweeps it — is the provider's, never the directory's content.
        if name == b"." || name == b".." || crate::sweep::is_staging(dir.as_fd(), name) {
            continue;
        }
        names.push((name.to_vec(), entry.file_type()));
    }
    signal.check(Verb::List)?;
    names.sort_by(|a, b| a.0.cmp(&b.0));
    // Children are keyed under the directory's real path *now*: a target resolved while its
    // path was missing (or before a link was re-pointed) carries a key that is not canonical.
    let dir_key = key_of(target.key.as_str()).unwrap_or_else(|_| target.key.as_str().to_string());
    let mut out = Vec::with_capacity(names.len());
    for (raw, dtype) in names {
        signal.check(Verb::List)?;
        let name = String::from_utf8_lossy(&raw).into_owned();
        let child_display = if display == "/" {
            format!("/{name}")
        } else {
            format!("{display}/{name}")
        };
        let is_link = match dtype {
            FileType::Symlink => true,
            FileType::Unknown => matches!(
                probe_at(&dir, raw.as_slice(), false),
                Ok(Some(p)) if p.kind == FileType::Symlink
            ),
            _ => false,
        };
        // Beneath a confining root, a link is followed only as far as the root allows: one
        // that leads out is listed as nothing there (`other`, no version, no size), keyed by
        // its own path — nothing of the outside is shown.
        let (probe, out_of_reach) = if is_link && root.is_confined() {
            match root.probe(&child_key(&dir_key, &name, false), true) {
                Ok(p) => (p, false),
                Err(Errno::XDEV) => (None, true),
                Err(Errno::LOOP) => (None, false),
                Err(e) => return Err(os(e, Verb::List, &child_display)),
            }
        } else {
            match probe_at(&dir, raw.as_slice(), true) {
                Ok(p) => (p, false),
                Err(Errno::LOOP) => (None, false),
                Err(e) => return Err(os(e, Verb::List, &child_display)),
            }
        };
        out.push(FsDirEntry {
            target: FsTarget {
                key: FsTargetKey::new(child_key(&dir_key, &name, is_link && !out_of_reach)),
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
