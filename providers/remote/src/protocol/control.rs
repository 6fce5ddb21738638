//! What the protocol says around the calls (`docs/protocol.md` §2, §4, §6): the handshake, a
//! stream's notifications and credit, cancellation, and the checkpoints a server shows the
//! client.

use super::{Note, Notification};
use schemars::JsonSchema;
use seam::{CancelPoint, SandboxMode};
use serde::{Deserialize, Serialize};

/// `initialize`'s parameters: the first request on every connection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InitializeParams {
    /// The protocol version the client speaks (1).
    pub protocol: u64,
    /// The client's name and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The server's token (required over TCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The client takes a `stream/chunk` of several segments.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream_segments: bool,
    /// The gate offers an `exec:` adapter a socket to serve the whole run from: it answers
    /// `"listening": true` if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
}

/// A server's limits, said in `initialize`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    /// Longest line, `\n` included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_line: Option<u64>,
    /// Largest payload of one frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_payload: Option<u64>,
    /// The chunks of a stream in flight before the client grants more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_window: Option<u64>,
    /// The bytes of answers a connection may hold before it waits for the client to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_budget: Option<u64>,
    /// The diff-basis limit of the backend, for a server that says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_basis_max_bytes: Option<u64>,
}

/// `initialize`'s answer: the backend the connection reaches (also the start of `world/case`'s
/// answer, for the case's backend).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Description {
    /// The protocol version the server speaks (a client refuses an answer without it).
    pub protocol: u64,
    /// The server's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// What the backend claims (`seam::Capability` names; a client ignores names it does not
    /// know).
    pub capabilities: Vec<String>,
    /// The backend's deployment sandbox mode, for a fencing backend.
    #[serde(default)]
    pub sandbox_mode: Option<SandboxMode>,
    /// The directory relative paths resolve against.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Whether `world/*` is served.
    #[serde(default)]
    pub test_control: bool,
    /// The server's limits.
    #[serde(default)]
    pub limits: Limits,
    /// The backend's storage dies with its process (not a directory).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub volatile: bool,
    /// The adapter took the `listen` offer and serves the run from one process.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub listening: bool,
}

/// A checkpoint of a mutation, shown to the client (a request the server sends, with an id of
/// its own making).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckpointParams {
    /// The id of the client's request the mutation answers.
    pub id: serde_json::Value,
    /// Where the mutation is.
    pub point: CancelPoint,
    /// The mutation's verb.
    pub verb: String,
    /// The path the mutation acts on.
    pub display_path: String,
    /// The staging paths that exist right now (for a server that claims `staging_probe`).
    #[serde(default)]
    pub staging: Vec<String>,
}

/// The client's answer to a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckpointAnswer {
    /// Cancel the mutation here.
    pub cancel: bool,
}

/// A JSON-RPC error, as every failed request is answered (`docs/protocol.md` §3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorObject {
    /// `-32010` for a contract failure; the JSON-RPC codes otherwise.
    pub code: i64,
    /// What went wrong (for a contract failure, the contract's text).
    pub message: String,
    /// For a contract failure, its code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ErrorData>,
}

/// What a contract failure carries beside its message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorData {
    /// The contract's error code (`FS_NOT_FOUND`, …).
    pub fs: String,
}

/// The parameters of a notification about one request (by its id).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AboutRequest {
    /// The request's id.
    pub id: serde_json::Value,
}

/// `stream/credit`: the client grants a stream more chunks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreditParams {
    /// The `stream_text` request's id.
    pub id: serde_json::Value,
    /// How many more chunks the server may send.
    pub chunks: u64,
}

macro_rules! notes {
    ($($(#[$doc:meta])* $ty:ident = $name:literal, $params:ty;)*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;

            impl Notification for $ty {
                const NAME: &'static str = $name;
                type Params = $params;
            }
        )*

        /// Every notification.
        pub(super) fn notes(out: &mut Vec<Note>) {
            $(out.push(Note::of::<$ty>());)*
        }
    };
}

notes! {
    /// A stream began (server to client): chunks follow.
    StreamStart = "stream/start", AboutRequest;
    /// One chunk of a stream (server to client): its text is the frame's payload segments,
    /// each whole characters.
    StreamChunk = "stream/chunk", AboutRequest;
    /// More credit for a stream (client to server).
    StreamCredit = "stream/credit", CreditParams;
    /// The client gave up a request (client to server): the server cancels it.
    Cancel = "$/cancel", AboutRequest;
}

methods! {
    /// The handshake.
    Initialize = "initialize", InitializeParams => Description;
    /// A mutation's checkpoint (server to client).
    Checkpoint = "checkpoint", CheckpointParams => CheckpointAnswer;
}
