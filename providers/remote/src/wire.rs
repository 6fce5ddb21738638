//! The contract's values as the protocol spells them (`docs/protocol.md` §3, §5), both ways.

use crate::frame::Frame;
use crate::protocol::control::{ErrorData, ErrorObject};
use crate::protocol::values::{Target, TargetRef};
use seam::{FsError, FsErrorCode, FsTarget, FsTargetKey};
use serde_json::{Map, Value, json};

/// JSON-RPC error code of a contract failure (`data.fs` holds the `FS_*` code).
pub const FS_ERROR: i64 = -32010;
/// The line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Not a request, or a bad payload list.
pub const INVALID_REQUEST: i64 = -32600;
/// Unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Bad parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// A TCP connection without the right token.
pub const UNAUTHORIZED: i64 = -32001;
/// A method before `initialize`.
pub const NOT_INITIALIZED: i64 = -32002;
/// A frame over the limits.
pub const TOO_LARGE: i64 = -32003;
/// A connection refused: the server is at its connection cap or out of descriptors.
pub const BUSY: i64 = -32004;

/// The protocol version this crate speaks.
pub const PROTOCOL: u64 = 1;

/// A JSON-RPC error as a value.
pub fn error_object(code: i64, message: &str, data: Option<ErrorData>) -> Value {
    crate::protocol::encode(&ErrorObject {
        code,
        message: message.to_string(),
        data,
    })
}

/// A contract failure as a JSON-RPC error.
pub fn fs_error_object(e: &FsError) -> Value {
    error_object(
        FS_ERROR,
        e.message(),
        Some(ErrorData {
            fs: e.code().as_str().to_string(),
        }),
    )
}

/// A response frame.
pub fn response(id: &Value, outcome: Result<Value, Value>) -> Frame {
    let mut json = Map::new();
    json.insert("jsonrpc".into(), json!("2.0"));
    json.insert("id".into(), id.clone());
    match outcome {
        Ok(result) => json.insert("result".into(), result),
        Err(error) => json.insert("error".into(), error),
    };
    Frame::new(json)
}

/// A request (with an id) or notification (without) frame.
pub fn message(id: Option<u64>, method: &str, params: Value) -> Frame {
    let mut json = Map::new();
    json.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = id {
        json.insert("id".into(), json!(id));
    }
    json.insert("method".into(), json!(method));
    json.insert("params".into(), params);
    Frame::new(json)
}

/// A target as the server sends it: its key and display path, with the path facts.
pub fn target_json(fs: &dyn seam::FileSystem, t: &FsTarget) -> Target {
    Target {
        key: t.key.as_str().to_string(),
        display_path: t.display_path.clone(),
        process_path: fs.process_path(t),
        file_url: fs.file_url(t),
    }
}

/// A target as the server reads it back (key and display path).
pub fn target_in(t: &TargetRef) -> FsTarget {
    FsTarget {
        key: FsTargetKey::new(t.key.as_str()),
        display_path: t.display_path.clone(),
    }
}

/// The three strings a client-side key packs: the server's key and the target's path facts,
/// so a target carries everything `process_path`, `file_url` and `contains` need without a
/// round trip (`\0` cannot occur in any of them).
pub fn client_key(server_key: &str, process_path: &str, file_url: &str) -> FsTargetKey {
    FsTargetKey::new(format!("{process_path}\0{file_url}\0{server_key}"))
}

/// `(process_path, file_url, server_key)` of a client-side key; a key this crate did not mint
/// is taken as a server key with itself as its process path.
pub fn unpack_key(key: &FsTargetKey) -> (&str, &str, &str) {
    let k = key.as_str();
    let mut parts = k.splitn(3, '\0');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(p), Some(u), Some(s)) => (p, u, s),
        _ => (k, k, k),
    }
}

/// A target as the client reads it from the server.
pub fn target_from_server(t: Target) -> FsTarget {
    FsTarget {
        key: client_key(&t.key, &t.process_path, &t.file_url),
        display_path: t.display_path,
    }
}

/// A target as the client sends it to the server.
pub fn target_to_server(t: &FsTarget) -> TargetRef {
    let (_, _, server_key) = unpack_key(&t.key);
    TargetRef {
        key: server_key.to_string(),
        display_path: t.display_path.clone(),
    }
}

/// A contract failure from a JSON-RPC error; anything else is a protocol failure described as
/// `FS_IO_ERROR` naming the method.
pub fn error_in(e: &Value, method: &str) -> FsError {
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)");
    let fs = e
        .get("data")
        .and_then(|d| d.get("fs"))
        .and_then(Value::as_str)
        .and_then(FsErrorCode::from_name);
    match (e.get("code").and_then(Value::as_i64), fs) {
        (Some(FS_ERROR), Some(code)) => FsError::new(code, message),
        (code, _) => FsError::new(
            FsErrorCode::IoError,
            format!(
                "remote {method} failed: {message} (protocol error {})",
                code.map_or("?".to_string(), |c| c.to_string())
            ),
        ),
    }
}
