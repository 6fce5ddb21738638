//! The vocabulary of the namespace operations: [`crate::FileSystem::create_dir`],
//! [`crate::FileSystem::remove`] and [`crate::FileSystem::rename`].
//!
//! Agents do more to a tree than write files: they make directories, delete files and move them.
//! These three operations are a claim of their own ([`crate::Capability::Namespace`]) because a
//! store may not have them, and each carries the same kind of guard a write does — the version
//! the caller observed — so that a delete or a move can no more lose someone else's update than
//! a write can. All three work on the entry a path names, never on what a final link points to:
//! removing a link removes the link, moving a link moves the link.

use crate::{FsPathKind, FsVersion};
use serde::{Deserialize, Serialize};

/// How [`crate::FileSystem::create_dir`] treats what is already there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreateDirOptions {
    /// Also make missing parent directories (as `mkdir -p`). Without it a missing parent is
    /// `FS_NOT_FOUND`.
    #[serde(default)]
    pub parents: bool,
    /// An existing directory at the path is a success (`created: false`) instead of
    /// `FS_NOT_OBSERVED`.
    #[serde(default)]
    pub exist_ok: bool,
}

/// The result of [`crate::FileSystem::create_dir`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreateDirOutcome {
    /// Whether this call made the directory (`false`: it was there and `exist_ok` was set).
    pub created: bool,
    /// The directory's version now; equal to what a fresh `lstat` returns.
    pub version: FsVersion,
}

/// What a caller asks of [`crate::FileSystem::remove`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoveOptions {
    /// Remove only if the entry is still at this version (what `lstat` showed the caller: the
    /// link's own version for a link). `None` removes whatever is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_version: Option<FsVersion>,
    /// Also remove an empty directory. Never recursive: a directory with entries is refused.
    #[serde(default)]
    pub directory: bool,
}

/// The result of [`crate::FileSystem::remove`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemoveOutcome {
    /// What was removed (a link is removed as a link).
    pub kind: FsPathKind,
}

/// What a caller asks of [`crate::FileSystem::rename`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RenameOptions {
    /// Move only if the source entry is still at this version (its `lstat` version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_version: Option<FsVersion>,
    /// Replace an existing destination, only if it is at this version (its `lstat` version).
    /// `None` never replaces: an existing destination is `FS_NOT_OBSERVED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<FsVersion>,
}

/// The result of [`crate::FileSystem::rename`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RenameOutcome {
    /// What was moved.
    pub kind: FsPathKind,
    /// Whether an entry at the destination was replaced.
    pub replaced: bool,
    /// The moved entry's version at its new place; equal to what a fresh `lstat` of the
    /// destination returns.
    pub version: FsVersion,
}
