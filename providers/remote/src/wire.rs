//! The contract's values as the protocol spells them (`docs/protocol.md` §3, §5), both ways.

use crate::frame::Frame;
use seam::{
    FsError, FsErrorCode, FsInfo, FsPathInfo, FsTarget, FsTargetKey, FsVersion, SandboxMode,
    SandboxPolicy, WriteIntent,
};
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
pub fn error_object(code: i64, message: &str, data: Option<Value>) -> Value {
    let mut e = json!({ "code": code, "message": message });
    if let Some(d) = data {
        e["data"] = d;
    }
    e
}

/// A contract failure as a JSON-RPC error.
pub fn fs_error_object(e: &FsError) -> Value {
    error_object(
        FS_ERROR,
        e.message(),
        Some(json!({ "fs": e.code().as_str() })),
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
pub fn target_json(fs: &dyn seam::FileSystem, t: &FsTarget) -> Value {
    json!({
        "key": t.key.as_str(),
        "display_path": t.display_path,
        "process_path": fs.process_path(t),
        "file_url": fs.file_url(t),
    })
}

/// A target as the server reads it back (key and display path).
pub fn target_in(v: &Value) -> Option<FsTarget> {
    Some(FsTarget {
        key: FsTargetKey::new(v.get("key")?.as_str()?),
        display_path: v.get("display_path")?.as_str()?.to_string(),
    })
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
pub fn target_from_server(v: &Value) -> Option<FsTarget> {
    let key = v.get("key")?.as_str()?;
    let process = v.get("process_path")?.as_str()?;
    let url = v.get("file_url")?.as_str()?;
    Some(FsTarget {
        key: client_key(key, process, url),
        display_path: v.get("display_path")?.as_str()?.to_string(),
    })
}

/// A target as the client sends it to the server.
pub fn target_to_server(t: &FsTarget) -> Value {
    let (_, _, server_key) = unpack_key(&t.key);
    json!({ "key": server_key, "display_path": t.display_path })
}

/// A sandbox policy's JSON.
pub fn sandbox_json(p: &SandboxPolicy) -> Value {
    json!({ "mode": p.mode.as_str(), "workspace_root": p.workspace_root })
}

/// A sandbox policy from JSON (`None` for null or absent; `Err` for a malformed one).
pub fn sandbox_in(v: Option<&Value>) -> Result<Option<SandboxPolicy>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let mode = v
                .get("mode")
                .and_then(Value::as_str)
                .and_then(SandboxMode::from_name)
                .ok_or("sandbox.mode must be read-only, workspace-write or danger-full-access")?;
            let root = v
                .get("workspace_root")
                .and_then(Value::as_str)
                .ok_or("sandbox.workspace_root must be a string")?;
            Ok(Some(SandboxPolicy {
                mode,
                workspace_root: root.to_string(),
            }))
        }
    }
}

/// A write guard's JSON.
pub fn intent_json(i: &WriteIntent) -> Value {
    match i {
        WriteIntent::CreateIfAbsent => json!({ "create_if_absent": true }),
        WriteIntent::ReplaceIfVersion { version } => {
            json!({ "replace_if_version": version.as_str() })
        }
    }
}

/// A write guard from JSON.
pub fn intent_in(v: Option<&Value>) -> Result<Option<WriteIntent>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            if v.get("create_if_absent").and_then(Value::as_bool) == Some(true) {
                Ok(Some(WriteIntent::CreateIfAbsent))
            } else if let Some(version) = v.get("replace_if_version").and_then(Value::as_str) {
                Ok(Some(WriteIntent::ReplaceIfVersion {
                    version: FsVersion::new(version),
                }))
            } else {
                Err("expected must be {\"create_if_absent\": true} or {\"replace_if_version\": \"<version>\"}".into())
            }
        }
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

/// `Info` from JSON.
pub fn info_in(v: &Value) -> Option<Option<FsInfo>> {
    if v.is_null() {
        return Some(None);
    }
    serde_json::from_value(v.clone()).ok().map(Some)
}

/// `lstat`'s info from JSON.
pub fn path_info_in(v: &Value) -> Option<Option<FsPathInfo>> {
    if v.is_null() {
        return Some(None);
    }
    serde_json::from_value(v.clone()).ok().map(Some)
}
