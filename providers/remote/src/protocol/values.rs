//! The values the methods share (`docs/protocol.md` §5): payload references, targets, the
//! write guard, listing entries. The contract's own values (`FsInfo`, `FsVersion`, the
//! namespace options and outcomes, `SandboxPolicy`) travel as the contract serialises them.

use schemars::JsonSchema;
use seam::{FsKind, FsVersion, WriteIntent};
use serde::{Deserialize, Serialize};

/// A reference to a payload segment of the frame that carries it: `{"$payload": i}`, the
/// i-th segment (from 0). Several references may name one segment; each gets its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PayloadRef {
    /// The segment's index.
    #[serde(rename = "$payload")]
    pub payload: u32,
}

impl PayloadRef {
    /// The reference to segment `i`.
    pub fn to(i: usize) -> Self {
        Self {
            payload: u32::try_from(i).unwrap_or(u32::MAX),
        }
    }
}

/// A target as the server gives it (`resolve`, a listing's entries): its opaque key and
/// display path, with the contract's path facts, so that `process_path`, `file_url` and
/// `contains` cost no round trip. A server must give canonical process paths.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The server's opaque identity of the object (two spellings of one object share it).
    pub key: String,
    /// The path as the caller spelled it.
    pub display_path: String,
    /// The contract's `process_path`.
    pub process_path: String,
    /// The contract's `file_url`.
    pub file_url: String,
}

/// A target as the client sends it back: the server reads its key and display path (a client
/// may send the whole [`Target`] it was given; the other members are ignored).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TargetRef {
    /// The key the server gave.
    pub key: String,
    /// The display path the server gave.
    pub display_path: String,
}

/// The guard of `write_text` (`expected`): `{"create_if_absent": true}` or
/// `{"replace_if_version": "<version>"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WriteGuard {
    /// Create the file only if nothing is at the path.
    CreateIfAbsent {
        /// Always `true`.
        create_if_absent: bool,
    },
    /// Replace the file only if it is still at this version.
    ReplaceIfVersion {
        /// The version the caller read.
        replace_if_version: FsVersion,
    },
}

impl WriteGuard {
    /// The contract's guard as the wire spells it.
    pub fn of(intent: &WriteIntent) -> Self {
        match intent {
            WriteIntent::CreateIfAbsent => Self::CreateIfAbsent {
                create_if_absent: true,
            },
            WriteIntent::ReplaceIfVersion { version } => Self::ReplaceIfVersion {
                replace_if_version: version.clone(),
            },
        }
    }

    /// The contract's guard; `Err` for `{"create_if_absent": false}`, which guards nothing.
    pub fn intent(&self) -> Result<WriteIntent, String> {
        match self {
            Self::CreateIfAbsent {
                create_if_absent: true,
            } => Ok(WriteIntent::CreateIfAbsent),
            Self::CreateIfAbsent { .. } => Err(
                "expected must be {\"create_if_absent\": true} or {\"replace_if_version\": \"<version>\"}"
                    .into(),
            ),
            Self::ReplaceIfVersion { replace_if_version } => Ok(WriteIntent::ReplaceIfVersion {
                version: replace_if_version.clone(),
            }),
        }
    }
}

/// One child in a `list_dir` answer, in the contract's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DirEntry {
    /// The child's name in its directory.
    pub name: String,
    /// Its kind after following links (a broken link is `other`).
    pub kind: FsKind,
    /// A target for the child.
    pub target: Target,
    /// The child's version; `null` for a broken link.
    pub version: Option<FsVersion>,
    /// Byte size, for regular files only.
    pub size: Option<u64>,
}
