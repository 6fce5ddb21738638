//! The contract's calls over the wire (`docs/protocol.md` §6): each method's parameters and
//! answer. Content travels as payload segments, named by [`PayloadRef`]s; an absent optional
//! member means `None`.

use super::values::{DirEntry, PayloadRef, Target, TargetRef, WriteGuard};
use schemars::JsonSchema;
use seam::{
    CreateDirOptions, CreateDirOutcome, FsInfo, FsPathInfo, FsVersion, RemoveOptions,
    RemoveOutcome, RenameOptions, RenameOutcome, SandboxPolicy, WriteOperation,
};
use serde::{Deserialize, Serialize};

/// Parameters naming a path, resolved against `cwd` (or the server's) when relative.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PathParams {
    /// The path as the caller spelled it.
    pub path: String,
    /// The directory a relative path is resolved against.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// Parameters naming a target `resolve` gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TargetParams {
    /// The target.
    pub target: TargetRef,
}

/// `read_bytes`: a target and the most bytes the caller takes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadBytesParams {
    /// The target.
    pub target: TargetRef,
    /// A file larger than this is `FS_TOO_LARGE`.
    pub max_bytes: u64,
}

/// Whether a mutation's request asks to see its cancel points (only to a server that claims
/// `cancel_points`; `docs/protocol.md`, "Checkpoints").
fn no_checkpoints(wants: &bool) -> bool {
    !*wants
}

/// `write_text`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WriteTextParams {
    /// The target.
    pub target: TargetRef,
    /// The new content (UTF-8).
    pub content: PayloadRef,
    /// The guard.
    #[serde(default)]
    pub expected: Option<WriteGuard>,
    /// The call's sandbox policy.
    #[serde(default)]
    pub sandbox: Option<SandboxPolicy>,
    /// Show the call's cancel points to the client.
    #[serde(default, skip_serializing_if = "no_checkpoints")]
    pub checkpoints: bool,
}

/// `edit_text`: a literal replacement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditTextParams {
    /// The target.
    pub target: TargetRef,
    /// The text to find (UTF-8).
    pub old_string: PayloadRef,
    /// Its replacement (UTF-8).
    pub new_string: PayloadRef,
    /// Replace every occurrence, not exactly one.
    #[serde(default)]
    pub replace_all: bool,
    /// The version the file must still be at.
    #[serde(default)]
    pub expected: Option<FsVersion>,
    /// The call's sandbox policy.
    #[serde(default)]
    pub sandbox: Option<SandboxPolicy>,
    /// Show the call's cancel points to the client.
    #[serde(default, skip_serializing_if = "no_checkpoints")]
    pub checkpoints: bool,
}

/// `create_dir` (only with the `namespace` claim).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreateDirParams {
    /// The directory's path.
    pub path: String,
    /// The directory a relative path is resolved against.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the caller asks (absent: the defaults).
    #[serde(default)]
    pub request: Option<CreateDirOptions>,
    /// The call's sandbox policy.
    #[serde(default)]
    pub sandbox: Option<SandboxPolicy>,
    /// Show the call's cancel points to the client.
    #[serde(default, skip_serializing_if = "no_checkpoints")]
    pub checkpoints: bool,
}

/// `remove` (only with the `namespace` claim).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RemoveParams {
    /// The entry's path (a final link is removed, not followed).
    pub path: String,
    /// The directory a relative path is resolved against.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the caller asks (absent: the defaults).
    #[serde(default)]
    pub request: Option<RemoveOptions>,
    /// The call's sandbox policy.
    #[serde(default)]
    pub sandbox: Option<SandboxPolicy>,
    /// Show the call's cancel points to the client.
    #[serde(default, skip_serializing_if = "no_checkpoints")]
    pub checkpoints: bool,
}

/// `rename` (only with the `namespace` claim).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RenameParams {
    /// The entry's path.
    pub from: String,
    /// Its new path.
    pub to: String,
    /// The directory relative paths are resolved against.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the caller asks (absent: the defaults).
    #[serde(default)]
    pub request: Option<RenameOptions>,
    /// The call's sandbox policy.
    #[serde(default)]
    pub sandbox: Option<SandboxPolicy>,
    /// Show the call's cancel points to the client.
    #[serde(default, skip_serializing_if = "no_checkpoints")]
    pub checkpoints: bool,
}

/// `read_text`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TextAnswer {
    /// The UTF-8 text, without a BOM.
    pub text: PayloadRef,
}

/// `read_bytes`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BytesAnswer {
    /// The bytes.
    pub bytes: PayloadRef,
}

/// `write_text`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WriteAnswer {
    /// Created or replaced.
    pub operation: WriteOperation,
    /// The new version.
    pub version: FsVersion,
    /// The text replaced, when within the diff-basis limit.
    pub before: Option<PayloadRef>,
    /// The text written.
    pub after: PayloadRef,
}

/// `edit_text`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditAnswer {
    /// The new version.
    pub version: FsVersion,
    /// The text before the edit.
    pub before: PayloadRef,
    /// The text after it.
    pub after: PayloadRef,
}

/// The last answer of `stream_text`, after its chunks (`docs/protocol.md`, "stream_text").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StreamEnd {
    /// Always `true`: the stream finished.
    pub end: bool,
}

methods! {
    /// A path to a target.
    Resolve = "resolve", PathParams => Target;
    /// A target's info, `null` when absent.
    Stat = "stat", TargetParams => Option<FsInfo>;
    /// A path's info without following its final link, `null` when absent.
    Lstat = "lstat", PathParams => Option<FsPathInfo>;
    /// A whole file as text.
    ReadText = "read_text", TargetParams => TextAnswer;
    /// A whole file as bytes.
    ReadBytes = "read_bytes", ReadBytesParams => BytesAnswer;
    /// A file as text in chunks (`stream/start`, `stream/chunk`…, then this answer).
    StreamText = "stream_text", TargetParams => StreamEnd;
    /// A directory's children.
    ListDir = "list_dir", TargetParams => Vec<DirEntry>;
    /// A whole-file write.
    WriteText = "write_text", WriteTextParams => WriteAnswer;
    /// A literal edit.
    EditText = "edit_text", EditTextParams => EditAnswer;
    /// A new directory.
    CreateDir = "create_dir", CreateDirParams => CreateDirOutcome;
    /// An entry removed.
    Remove = "remove", RemoveParams => RemoveOutcome;
    /// An entry moved.
    Rename = "rename", RenameParams => RenameOutcome;
}
