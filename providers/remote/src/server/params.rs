//! What the methods of a connection read and say outside the calls themselves: their
//! parameters, which calls carry content, the token's comparison, the case a `world/case`
//! asks for, and the server's description in `initialize`. Below the connection and its
//! methods, which both use them.

use super::{Server, invalid};
use crate::frame::Frame;
use crate::protocol::control::{Description, Limits};
use crate::protocol::test_control::{CaseParams, Durability};
use crate::protocol::values::PayloadRef;
use crate::protocol::{self, Method};
use crate::wire;
use crate::world::CaseSpec;
use seam::FileSystem;
use serde_json::Value;

/// Whether an answer to `method` may carry file content (or a listing as large as a
/// directory): such calls run under the connection's budget and content permits.
pub(super) fn returns_content(method: &str) -> bool {
    matches!(
        method,
        "read_text" | "read_bytes" | "write_text" | "edit_text" | "list_dir"
    )
}

/// The parameters of method `M`, read (`-32602` naming the method when they are not its).
pub(super) fn params_of<M: Method>(params: &Value) -> Result<M::Params, Value> {
    protocol::decode(params).map_err(|e| invalid(format!("{}: bad parameters: {e}", M::NAME)))
}

/// The answer of method `M`, as its `result`.
pub(super) fn answer<M: Method>(answer: &M::Answer) -> Result<Value, Value> {
    Ok(protocol::encode(answer))
}

/// A text parameter carried as a payload segment.
pub(super) fn text_param(
    frame: &Frame,
    reference: PayloadRef,
    name: &str,
) -> Result<String, Value> {
    let bytes = frame.segment(reference).ok_or_else(|| {
        invalid(format!(
            "{name} must be a payload reference {{\"$payload\": i}} to a segment of the frame"
        ))
    })?;
    String::from_utf8(bytes).map_err(|_| invalid(format!("{name} must be UTF-8")))
}

pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What `world/case` and `world/reopen` ask of the backend over a case directory at `root`.
pub(super) fn case_spec(root: &str, params: &CaseParams) -> CaseSpec {
    CaseSpec {
        root: root.to_string(),
        workspace: params.workspace.clone(),
        durable: params.durability != Durability::None,
        diff_basis_max_bytes: params.diff_basis_max_bytes.unwrap_or(10 * 1024 * 1024),
        seed: params.seed,
        configuration: params.configuration.clone(),
        confine_reads: params.confine_reads,
    }
}

/// The `initialize` answer.
pub(super) fn describe(server: &Server, fs: &dyn FileSystem, cwd: Option<&str>) -> Description {
    let caps = fs.capabilities();
    Description {
        protocol: wire::PROTOCOL,
        server: Some(server.name.clone()),
        capabilities: seam::Capability::ALL
            .into_iter()
            .filter(|c| caps.has(*c))
            .map(|c| c.name().to_string())
            .collect(),
        sandbox_mode: fs.sandbox_mode(),
        cwd: cwd.map(str::to_string),
        test_control: server.cases.is_some(),
        limits: Limits {
            max_line: Some(server.limits.max_line as u64),
            max_payload: Some(server.limits.max_payload),
            stream_window: Some(u64::from(server.window)),
            answer_budget: Some(server.connection_limits.answer_budget),
            diff_basis_max_bytes: None,
        },
        volatile: false,
        listening: false,
    }
}
