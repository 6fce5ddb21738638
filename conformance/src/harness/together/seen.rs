//! What the calls of a group are and what they returned: a [`Job`] ready to run, a [`Done`]
//! call with its times, and [`Seen`], an outcome comparable with the model's (versions apart).

use super::super::show_bytes;
use crate::step::Op;
use seam::{
    FsError, FsErrorCode, FsKind, FsPathKind, FsTarget, FsVersion, SandboxPolicy, WriteIntent,
    WriteOperation,
};
use seam_model::{Guard, Resolved, Version};
use std::time::Instant;

/// What a call returned, comparable (versions apart).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Seen {
    Wrote {
        operation: WriteOperation,
        before: Option<String>,
        after: String,
    },
    Edited {
        before: String,
        after: String,
    },
    Read(Content),
    Stat(Option<(FsKind, Option<u64>)>),
    /// A listing: each entry's name, kind and size, in the order given.
    Listed(Vec<(String, FsKind, Option<u64>)>),
    Removed(FsPathKind),
    Renamed {
        kind: FsPathKind,
        replaced: bool,
    },
    Failed(FsErrorCode, String),
}

impl Seen {
    /// A listing, from its entries' names, kinds and sizes (the provider's and the model's alike).
    pub(super) fn listed(entries: impl Iterator<Item = (String, FsKind, Option<u64>)>) -> Self {
        Seen::Listed(entries.collect())
    }

    pub(super) fn show(&self) -> String {
        match self {
            Seen::Wrote {
                operation, after, ..
            } => format!("{operation:?} {}", show_bytes(after.as_bytes())),
            Seen::Edited { after, .. } => format!("edited {}", show_bytes(after.as_bytes())),
            Seen::Read(c) => c.show(),
            Seen::Stat(s) => format!("{s:?}"),
            Seen::Listed(entries) => format!(
                "the entries {:?}",
                entries.iter().map(|(n, ..)| n.as_str()).collect::<Vec<_>>()
            ),
            Seen::Removed(kind) => format!("removed ({kind:?})"),
            Seen::Renamed { kind, replaced } => format!(
                "renamed ({kind:?}{})",
                if *replaced { ", replacing" } else { "" }
            ),
            Seen::Failed(code, m) => format!("{code} {m:?}"),
        }
    }
}

/// What a read returned, kept small: a reader that loops over a 1 MiB file must not keep every
/// copy it read (the group is judged after it ran). Its length, its digest (the FNV-1a reports
/// print), and its start for reports; two contents are taken as the same when length and
/// digest agree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Content {
    pub(super) len: usize,
    pub(super) hash: u64,
    pub(super) head: Vec<u8>,
}

impl Content {
    pub(super) fn of(bytes: &[u8]) -> Self {
        Content {
            len: bytes.len(),
            hash: crate::excerpt::fnv64(bytes),
            head: bytes[..bytes.len().min(57)].to_vec(),
        }
    }

    pub(super) fn show(&self) -> String {
        if self.len <= self.head.len() {
            show_bytes(&self.head)
        } else {
            format!(
                "{:?}... ({} bytes, digest {:016x})",
                String::from_utf8_lossy(&self.head),
                self.len,
                self.hash
            )
        }
    }
}

/// One step of a group, ready to run: its target, and its guard resolved at the group's start.
#[derive(Clone)]
pub(super) struct Job {
    pub(super) op: Op,
    pub(super) target: FsTarget,
    pub(super) resolved: Resolved,
    pub(super) intent: Option<WriteIntent>,
    pub(super) edit_guard: Option<FsVersion>,
    pub(super) model_guard: Option<Guard>,
    pub(super) model_edit_guard: Option<Version>,
    /// A rename's destination, as an absolute display path.
    pub(super) to: Option<String>,
    /// A rename's replace guard (provider's, model's).
    pub(super) replace: Option<(FsVersion, Version)>,
    pub(super) policy: Option<SandboxPolicy>,
}

impl Job {
    pub(super) fn mutates(&self) -> bool {
        self.op.is_mutation()
    }
}

/// A call made and what came back.
#[derive(Clone, Debug)]
pub(super) struct Done {
    pub(super) lane: usize,
    pub(super) job: usize,
    pub(super) sent: Instant,
    pub(super) answered: Instant,
    pub(super) seen: Seen,
    pub(super) version: Option<FsVersion>,
}

pub(super) fn failed(e: &FsError) -> (Seen, Option<FsVersion>) {
    (Seen::Failed(e.code(), e.message().to_string()), None)
}
