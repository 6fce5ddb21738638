//! The vocabulary every provider speaks and every consumer reads.
//!
//! Keys and versions are opaque on purpose: a remote backend mints them in another process,
//! so consumers may compare them for equality and pass them back, never parse them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The identity of a file as its backend sees it. Two spellings of one file share one key.
///
/// Backend-minted and opaque: the local provider uses the real path, a remote one whatever its
/// server chooses. Compare keys for equality; do not parse them.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FsTargetKey(String);

impl FsTargetKey {
    /// Wraps a backend-minted identity. Only backends should call this.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key's text, for backends and for logging.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for FsTargetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FsTargetKey({:?})", self.0)
    }
}

/// A freshness token. It changes on every change of a file's content or identity, by any
/// writer, and is never reused for a different state of the same file.
///
/// Opaque: compare for equality, hand it back as a guard, never interpret it.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct FsVersion(String);

impl FsVersion {
    /// Wraps a backend-minted token. Only backends should call this.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token's text, for backends and for logging.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for FsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FsVersion({:?})", self.0)
    }
}

/// What [`crate::FileSystem::resolve`] returns and every other operation consumes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FsTarget {
    /// The backend's identity of the file (opaque).
    pub key: FsTargetKey,
    /// The lexically normalised absolute path, for the model and for messages only
    /// (`..` collapsed textually, links not followed).
    pub display_path: String,
}

/// What a path leads to after following links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Anything else: sockets, FIFOs, devices, and (in listings) broken links.
    Other,
}

/// What a path names without following its final link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FsPathKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (live or dangling).
    Symlink,
    /// Anything else.
    Other,
}

/// Metadata from [`crate::FileSystem::stat`]; `None` from `stat` means absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FsInfo {
    /// The freshness token of the object.
    pub version: FsVersion,
    /// Its kind, after following links.
    pub kind: FsKind,
    /// Byte size of a regular file; `None` for every other kind.
    pub size: Option<u64>,
}

/// Metadata from [`crate::FileSystem::lstat`], the only shape that can say `symlink`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FsPathInfo {
    /// The freshness token of the entry itself (of the link, for a link).
    pub version: FsVersion,
    /// Its kind, without following a final link.
    pub kind: FsPathKind,
    /// Byte size of a regular file, or the length of a link's text; `None` otherwise.
    pub size: Option<u64>,
}

/// One child in a [`crate::FileSystem::list_dir`] listing. Listing never reads content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsDirEntry {
    /// The child's name within its directory.
    pub name: String,
    /// Its kind after following links; a broken link is [`FsKind::Other`].
    pub kind: FsKind,
    /// A target for the child, derived from the listed directory's identity.
    pub target: FsTarget,
    /// The child's version; absent for a broken link.
    pub version: Option<FsVersion>,
    /// Byte size, for regular files only.
    pub size: Option<u64>,
}

/// What a caller believes about a file before it mutates it: the guard of a write.
///
/// Omitting the intent altogether (`None`) is the third state: create or overwrite
/// unconditionally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WriteIntent {
    /// Create the file only if nothing is at the path; publication itself must not replace.
    CreateIfAbsent,
    /// Replace the file only if it still has this version.
    ReplaceIfVersion {
        /// The version the caller last saw.
        version: FsVersion,
    },
}

/// What a caller has seen of a file: reported to the [`crate::Gate`] after reads and mutations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FsObservation {
    /// The file exists at this version.
    Present {
        /// The version observed.
        version: FsVersion,
    },
    /// Nothing was at the path.
    Absent,
}

/// Whether a write created a file or replaced one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum WriteOperation {
    /// No file was at the path before.
    Create,
    /// A file was replaced (also when the content is identical).
    Update,
}

/// The result of [`crate::FileSystem::write_text`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteOutcome {
    /// Create or update.
    pub operation: WriteOperation,
    /// The new version; equal to what a fresh `stat` returns.
    pub version: FsVersion,
    /// The prior text, LF-normalised, for a diff; `None` for a create, for a prior file that was
    /// not text, or when either side is at or over the backend's diff-basis limit.
    pub before: Option<String>,
    /// The written content, LF-normalised (the bytes on disk are exactly what was given).
    pub after: String,
}

/// A literal replacement requested of [`crate::FileSystem::edit_text`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditRequest {
    /// The text to find (CRLF is treated as LF).
    pub old_string: String,
    /// The replacement, inserted literally (no `$&` or `$1` interpretation).
    pub new_string: String,
    /// Replace every non-overlapping match instead of requiring exactly one.
    pub replace_all: bool,
}

/// The result of [`crate::FileSystem::edit_text`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditOutcome {
    /// The new version; equal to what a fresh `stat` returns.
    pub version: FsVersion,
    /// The text before the edit, LF-normalised and without a BOM.
    pub before: String,
    /// The text after the edit, LF-normalised and without a BOM.
    pub after: String,
}
