//! The test control a server started for testing serves (`docs/protocol.md` §7): a case per
//! connection, its storage changed and read back behind the backend's back. Paths of effects
//! and snapshot entries are relative to the case's root; new directories are 0755.

use super::control::Description;
use super::values::PayloadRef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether a case's mutations are fully durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Every mutation is fsynced.
    #[default]
    Full,
    /// None is.
    None,
}

/// What `world/case` (and `world/reopen`) ask of the case's backend.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CaseParams {
    /// A fencing backend's default workspace, relative to the case's root.
    #[serde(default)]
    pub workspace: Option<String>,
    /// Fully durable or not.
    #[serde(default)]
    pub durability: Durability,
    /// The diff-basis limit the backend must use (default 10 MiB).
    #[serde(default)]
    pub diff_basis_max_bytes: Option<u64>,
    /// The case's seed.
    #[serde(default)]
    pub seed: u64,
    /// The configuration of the backend the suite asks for, one the server declares.
    #[serde(default)]
    pub configuration: Option<String>,
    /// Deploy a fencing backend with its reads confined too (it claims `read_fence`).
    #[serde(default)]
    pub confine_reads: bool,
    /// `world/case`: an existing directory (absolute) the gate chose to keep the case in;
    /// `world/reopen`: the root of the case to open a second backend over.
    #[serde(default)]
    pub root: Option<String>,
}

/// What a world can do (absent members mean `true`, as protocol 1 asked of every world).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Abilities {
    /// It can make a FIFO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifos: Option<bool>,
    /// After `rewrite_file` it can put the file's mtime back exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_mtime: Option<bool>,
    /// The storage keeps permission bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<bool>,
}

/// `world/case`'s and `world/reopen`'s answer: the case's backend, where the case is, and what
/// its world can do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CaseAnswer {
    /// The case's backend, as `initialize` describes one.
    #[serde(flatten)]
    pub description: Description,
    /// The case's root (absolute).
    pub root: String,
    /// What the world can do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<Abilities>,
}

/// One change of the case's storage behind the backend's back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// A new file (a new inode; missing parents made).
    CreateFile {
        /// Where.
        path: String,
        /// Its bytes.
        bytes: PayloadRef,
        /// Its mode (absent for a world without modes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// New bytes in an existing file (the same inode).
    RewriteFile {
        /// Where.
        path: String,
        /// The bytes.
        bytes: PayloadRef,
        /// Put the mtime back as it was.
        #[serde(default)]
        restore_mtime: bool,
    },
    /// A new directory.
    CreateDir {
        /// Where.
        path: String,
    },
    /// A symbolic link.
    Symlink {
        /// Where.
        path: String,
        /// Its text, as given.
        target: String,
    },
    /// An entry removed (recursively).
    Remove {
        /// Where.
        path: String,
    },
    /// New permission bits.
    Chmod {
        /// Where.
        path: String,
        /// The mode.
        mode: u32,
    },
    /// A FIFO.
    Mkfifo {
        /// Where.
        path: String,
    },
}

/// `world/apply`'s answer: nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Applied {}

/// No parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoParams {}

/// One entry of a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A regular file.
    File {
        /// Its bytes.
        bytes: PayloadRef,
        /// Its mode (absent for a world without modes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// A directory.
    Dir {
        /// Its mode (absent for a world without modes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// A symbolic link.
    Symlink {
        /// Its text.
        target: String,
    },
    /// Anything else (a FIFO, a socket, a device).
    Other,
}

/// `world/snapshot`'s answer: every entry under the case, sorted by relative path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    /// `[relative path, entry]` pairs.
    pub entries: Vec<(String, Entry)>,
}

/// `world/entry_mode`'s parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EntryModeParams {
    /// An absolute path.
    pub path: String,
}

/// Kind and mode of one entry, not following a final link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EntryMode {
    /// Whether it is a directory.
    pub is_dir: bool,
    /// Its permission bits (absent for a world without modes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

methods! {
    /// A fresh case (or one in the gate's directory) and a fresh backend over it.
    WorldCase = "world/case", CaseParams => CaseAnswer;
    /// A second, independent backend over a case this server made.
    WorldReopen = "world/reopen", CaseParams => CaseAnswer;
    /// One change of the case's storage.
    WorldApply = "world/apply", Effect => Applied;
    /// Every entry of the case.
    WorldSnapshot = "world/snapshot", NoParams => Snapshot;
    /// Kind and mode of an absolute path, `null` when absent.
    WorldEntryMode = "world/entry_mode", EntryModeParams => Option<EntryMode>;
}
