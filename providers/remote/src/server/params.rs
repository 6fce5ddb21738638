//! What the methods of a connection read and say outside the calls themselves: their
//! parameters, which calls carry content, the token's comparison, the case a `world/case`
//! asks for, and the server's description in `initialize`. Below the connection and its
//! methods, which both use them.

use super::{Server, invalid};
use crate::frame::Frame;
use crate::wire;
use crate::world::CaseSpec;
use seam::FileSystem;
use serde_json::{Value, json};

/// Whether an answer to `method` may carry file content (or a listing as large as a
/// directory): such calls run under the connection's budget and content permits.
pub(super) fn returns_content(method: &str) -> bool {
    matches!(
        method,
        "read_text" | "read_bytes" | "write_text" | "edit_text" | "list_dir"
    )
}

pub(super) fn str_param<'a>(params: &'a Value, name: &str) -> Result<&'a str, Value> {
    params
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("{name} must be a string")))
}

/// An object parameter of a known shape; absent is its default.
pub(super) fn object_param<T: serde::de::DeserializeOwned + Default>(
    params: &Value,
    name: &str,
) -> Result<T, Value> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| invalid(format!("{name} is not a valid request: {e}"))),
    }
}

/// A text parameter carried as a payload segment.
pub(super) fn text_param(params: &Value, frame: &mut Frame, name: &str) -> Result<String, Value> {
    let bytes = params
        .get(name)
        .and_then(|r| frame.take(r))
        .ok_or_else(|| {
            invalid(format!(
                "{name} must be a payload reference {{\"$payload\": i}}"
            ))
        })?;
    String::from_utf8(bytes).map_err(|_| invalid(format!("{name} must be UTF-8")))
}

pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What `world/case` and `world/reopen` ask of the backend over a case directory at `root`.
pub(super) fn case_spec(root: &str, params: &Value) -> CaseSpec {
    CaseSpec {
        root: root.to_string(),
        workspace: params
            .get("workspace")
            .and_then(Value::as_str)
            .map(str::to_string),
        durable: params.get("durability").and_then(Value::as_str) != Some("none"),
        diff_basis_max_bytes: params
            .get("diff_basis_max_bytes")
            .and_then(Value::as_u64)
            .unwrap_or(10 * 1024 * 1024),
        seed: params.get("seed").and_then(Value::as_u64).unwrap_or(0),
        configuration: params
            .get("configuration")
            .and_then(Value::as_str)
            .map(str::to_string),
        confine_reads: params.get("confine_reads").and_then(Value::as_bool) == Some(true),
    }
}

/// The `initialize` answer.
pub(super) fn describe(server: &Server, fs: &dyn FileSystem, cwd: Option<&str>) -> Value {
    let caps = fs.capabilities();
    let claimed: Vec<&str> = seam::Capability::ALL
        .into_iter()
        .filter(|c| caps.has(*c))
        .map(seam::Capability::name)
        .collect();
    json!({
        "protocol": wire::PROTOCOL,
        "server": server.name,
        "capabilities": claimed,
        "sandbox_mode": fs.sandbox_mode().map(|m| m.as_str()),
        "cwd": cwd,
        "test_control": server.cases.is_some(),
        "limits": {
            "max_line": server.limits.max_line,
            "max_payload": server.limits.max_payload,
            "stream_window": server.window,
            "answer_budget": server.connection_limits.answer_budget,
        },
    })
}
