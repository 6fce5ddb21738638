//! What a mutation finds at its key before it decides anything: nothing, a regular file (opened,
//! so its bytes can be read without a second lookup), or a link — a live one swapped in after
//! resolution, or a dangling one that a write must never create through.

use crate::errors::{is_absent, os};
use crate::read::open_read;
use crate::version::{Probe, probe_at, probe_fd};
use rustix::io::Errno;
use seam::{FsError, Verb};
use std::fs::File;

pub(crate) enum Existing {
    Absent,
    /// A symlink sits at the key.
    Link {
        dangling: bool,
    },
    /// A regular file; `file` is `None` when it exists but cannot be opened for reading.
    File {
        file: Option<File>,
        probe: Probe,
    },
}

/// Looks at `key` without following a final link.
pub(crate) fn existing(key: &str, verb: Verb, display: &str) -> Result<Existing, FsError> {
    match open_read(rustix::fs::CWD, key, false) {
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
        Err(Errno::LOOP) => match probe_at(rustix::fs::CWD, key, true) {
            Ok(followed) => Ok(Existing::Link {
                dangling: followed.is_none(),
            }),
            Err(e) => Err(os(e, verb, display)),
        },
        Err(Errno::NXIO) => Err(FsError::not_regular_file(verb, display)),
        Err(Errno::ACCESS) => match probe_at(rustix::fs::CWD, key, false) {
            Ok(Some(probe)) if probe.is_file() => Ok(Existing::File { file: None, probe }),
            Ok(Some(_)) => Err(FsError::not_regular_file(verb, display)),
            Ok(None) => Ok(Existing::Absent),
            Err(e) => Err(os(e, verb, display)),
        },
        Err(e) => Err(os(e, verb, display)),
    }
}
