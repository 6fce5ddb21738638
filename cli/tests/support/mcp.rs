//! An MCP client for the tests: `seam mcp` started as a child process and spoken to through
//! rmcp, as Claude Code or Codex would.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::Path;

pub type Client = RunningService<RoleClient, ()>;

/// `seam mcp --root ROOT EXTRA...`, initialised.
pub async fn serve(root: &Path, extra: &[&str]) -> Client {
    let mut args = vec![std::ffi::OsString::from("--root"), root.into()];
    args.extend(extra.iter().map(std::ffi::OsString::from));
    serve_args(&args).await
}

/// `seam mcp ARGS...`, initialised.
pub async fn serve_args(args: &[std::ffi::OsString]) -> Client {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_seam")).configure(|c| {
        c.arg("mcp").args(args);
    });
    let transport = TokioChildProcess::new(command).expect("spawn seam mcp");
    ().serve(transport).await.expect("MCP initialisation")
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .expect("tools/call answered")
}

/// The text of a result, and whether it was an error.
pub fn text(r: &CallToolResult) -> (bool, String) {
    let text = r
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (r.is_error == Some(true), text)
}

pub fn ok(r: &CallToolResult) -> String {
    let (error, text) = text(r);
    assert!(!error, "expected success, got: {text}");
    text
}

pub fn refused(r: &CallToolResult, code: &str) -> String {
    let (error, text) = text(r);
    assert!(error, "expected {code}, got success: {text}");
    assert!(
        text.starts_with(&format!("Error [{code}]: ")),
        "expected {code}: {text}"
    );
    let meta = r.meta.as_ref().expect("_meta on an error");
    assert_eq!(
        meta.0.get("seam/error").and_then(|e| e.get("code")),
        Some(&json!(code))
    );
    text
}

pub fn disk(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).expect("read back")
}
