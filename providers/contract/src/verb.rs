//! The verbs of the contract's messages. Every failure message names what the caller was
//! doing (`cannot write "/w/a": …`, `read aborted`), so the verb is part of the contract, not a
//! string each backend spells its own way.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The operation a message is about.
///
/// `read_text`, `stream_text` and `read_bytes` all say `read`; `write_text` says `write` and
/// `edit_text` says `edit`; `create_dir` says `mkdir`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    /// `resolve`
    Resolve,
    /// `stat`
    Stat,
    /// `lstat`
    Lstat,
    /// `list`
    List,
    /// `read` (read_text, stream_text, read_bytes)
    Read,
    /// `write`
    Write,
    /// `edit`
    Edit,
    /// `mkdir` (create_dir)
    Mkdir,
    /// `remove`
    Remove,
    /// `rename`
    Rename,
}

impl Verb {
    /// Every verb, in declaration order.
    pub const ALL: [Verb; 10] = [
        Verb::Resolve,
        Verb::Stat,
        Verb::Lstat,
        Verb::List,
        Verb::Read,
        Verb::Write,
        Verb::Edit,
        Verb::Mkdir,
        Verb::Remove,
        Verb::Rename,
    ];

    /// The verb as it appears in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Resolve => "resolve",
            Verb::Stat => "stat",
            Verb::Lstat => "lstat",
            Verb::List => "list",
            Verb::Read => "read",
            Verb::Write => "write",
            Verb::Edit => "edit",
            Verb::Mkdir => "mkdir",
            Verb::Remove => "remove",
            Verb::Rename => "rename",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
