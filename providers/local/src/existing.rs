//! What a mutation finds at its key before it decides anything: nothing, a regular file (opened,
//! so its bytes can be read without a second lookup), or a link — a live one swapped in after
//! resolution, or a dangling one that a write must never create through.

use crate::errors::{is_absent, os};
use crate::read::read_flags;
use crate::root::Root;
use crate::version::{Probe, probe_fd};
use rustix::io::Errno;
use seam::{FsError, Verb};
use std::fs::File;

pub(crate) enum Existing {
    Absent,
    /// A symlink sits at the key.
    Link(LinkState),
    /// A regular file; `file` is `None` when it exists but cannot be opened for reading.
    File {
        file: Option<File>,
        probe: Probe,
    },
}

/// Where a link at the key leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkState {
    /// To something that exists.
    Live,
    /// To nothing.
    Dangling,
    /// Round in a loop.
    Looping,
}

/// Looks at `key` without following a final link.
pub(crate) fn existing(
    root: &Root,
    key: &str,
    verb: Verb,
    display: &str,
) -> Result<Existing, FsError> {
    match root.open(key, read_flags(false)) {
        Ok(fd) => {
            let probe = probe_fd(&fd).map_err(|e| os(e, verb, display))?;
            if probe.is_file() {
                Ok(Existing::File {
                    file: Some(File::from(fd)),
                    probe,
                })
            } else {
                Err(FsError::not_regular_file(verb, display))
            }
        }
        Err(e) if is_absent(e) => Ok(Existing::Absent),
        // ELOOP from a no-follow open: a link at the key, or a loop on the way to it.
        Err(Errno::LOOP) => match root.probe(key, false) {
            Ok(Some(p)) if p.kind == rustix::fs::FileType::Symlink => match root.probe(key, true) {
                Ok(Some(_)) => Ok(Existing::Link(LinkState::Live)),
                Ok(None) => Ok(Existing::Link(LinkState::Dangling)),
                Err(Errno::LOOP) => Ok(Existing::Link(LinkState::Looping)),
                Err(e) => Err(os(e, verb, display)),
            },
            Ok(_) => Err(os(Errno::LOOP, verb, display)),
            Err(e) => Err(os(e, verb, display)),
        },
        Err(Errno::NXIO) => Err(FsError::not_regular_file(verb, display)),
        Err(Errno::ACCESS) => match root.probe(key, false) {
            Ok(Some(probe)) if probe.is_file() => Ok(Existing::File { file: None, probe }),
            Ok(Some(_)) => Err(FsError::not_regular_file(verb, display)),
            Ok(None) => Ok(Existing::Absent),
            Err(e) => Err(os(e, verb, display)),
        },
        Err(e) => Err(os(e, verb, display)),
    }
}
