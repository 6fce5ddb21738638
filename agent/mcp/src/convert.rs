//! Between the tools' vocabulary and MCP's: a [`Tool`] becomes a listed tool with annotations,
//! a [`ToolResult`] becomes a call result. Kept apart from the server so the mapping is tested
//! without a transport.

use rmcp::model::{CallToolResult, ContentBlock as McpBlock, JsonObject, ToolAnnotations};
use seam_tools::{ContentBlock, Tool, ToolError, ToolResult};
use serde_json::{Value, json};
use std::sync::Arc;

/// `tool` as an MCP client lists it: name, description, input schema and annotations.
pub fn listed(tool: &dyn Tool) -> rmcp::model::Tool {
    let schema: JsonObject = match tool.schema() {
        Value::Object(o) => o.clone(),
        // Every tool's schema is an object; an MCP client requires one.
        _ => JsonObject::new(),
    };
    let effects = tool.effects();
    let annotations = ToolAnnotations::new()
        .read_only(effects.read_only)
        .destructive(!effects.read_only && effects.destructive)
        .idempotent(effects.idempotent)
        .open_world(false);
    let mut listed = rmcp::model::Tool::new(
        tool.name(),
        tool.description().to_string(),
        Arc::new(schema),
    );
    listed.annotations = Some(annotations);
    if let Some(Value::Object(output)) = tool.output_schema() {
        listed.output_schema = Some(Arc::new(output.clone()));
    }
    listed
}

/// The text a failed call answers with: `Error [CODE]: message` when the failure has a code
/// (`FS_*`, `IMAGE_*`, `SEARCH_*`), else the tools' own `Error: message`.
pub fn error_text(e: &ToolError) -> String {
    match e.code() {
        Some(code) => format!("Error [{}]: {}", code.as_str(), e.message()),
        None => e.render(),
    }
}

/// A tool's result as MCP's: content blocks in order (images as image blocks); the tool's
/// metadata, when it has some, once — as `structuredContent` when the tool declares its shape
/// (`structured`), else under `_meta["seam/metadata"]` (never both: an answer carries each fact
/// once); a failure as a tool error whose `_meta["seam/error"]` carries its kind and code for a
/// client that branches on them.
pub(crate) fn call_result(result: ToolResult, structured: bool) -> CallToolResult {
    match result {
        Ok(out) => {
            let blocks = out
                .content
                .into_iter()
                .map(|b| match b {
                    ContentBlock::Text(t) => McpBlock::text(t),
                    ContentBlock::Image { data, media_type } => McpBlock::image(data, media_type),
                })
                .collect();
            let mut result = CallToolResult::success(blocks);
            if structured && out.metadata.is_object() {
                result.structured_content = Some(out.metadata);
            } else if !out.metadata.is_null() {
                result.meta = Some(meta("seam/metadata", out.metadata));
            }
            result
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![McpBlock::text(error_text(&e))]);
            result.meta = Some(meta(
                "seam/error",
                json!({ "name": e.name(), "code": e.code().map(|c| c.as_str()) }),
            ));
            result
        }
    }
}

fn meta(key: &str, value: Value) -> rmcp::model::MetaObject {
    let mut object = JsonObject::new();
    object.insert(key.to_string(), value);
    object.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::{FsError, FsErrorCode};
    use seam_tools::ToolOutput;

    #[test]
    fn a_coded_failure_leads_with_its_code_and_an_uncoded_one_reads_as_the_tools_say() {
        let stale = ToolError::fs(FsError::new(
            FsErrorCode::StaleVersion,
            "changed since read",
        ));
        assert_eq!(
            error_text(&stale),
            "Error [FS_STALE_VERSION]: changed since read"
        );
        let bad = ToolError::arguments("file_path is required");
        assert_eq!(error_text(&bad), "Error: file_path is required");

        let result = call_result(Err(stale), true);
        assert_eq!(result.is_error, Some(true));
        let meta = result.meta.expect("meta");
        assert_eq!(
            meta.0.get("seam/error"),
            Some(&json!({"name": "FsError", "code": "FS_STALE_VERSION"}))
        );
        let result = call_result(Err(bad), true);
        assert_eq!(
            result.meta.expect("meta").0.get("seam/error"),
            Some(&json!({"name": "ArgumentError", "code": null}))
        );
    }

    #[test]
    fn a_success_keeps_its_blocks_in_order_and_its_metadata_beside_them() {
        let out = ToolOutput {
            content: vec![
                ContentBlock::Text("a".into()),
                ContentBlock::Image {
                    data: "AAAA".into(),
                    media_type: "image/png".into(),
                },
            ],
            metadata: json!({"lines": 1}),
        };
        let result = call_result(Ok(out.clone()), false);
        assert!(
            result.structured_content.is_none(),
            "no schema, no structured content"
        );
        let structured = call_result(Ok(out), true);
        assert_eq!(structured.structured_content, Some(json!({"lines": 1})));
        assert!(
            structured.meta.is_none(),
            "structured content is not repeated under _meta"
        );
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.content.len(), 2);
        assert_eq!(
            result.content[0].as_text().map(|t| t.text.as_str()),
            Some("a")
        );
        assert!(
            matches!(&result.content[1], McpBlock::Image(i) if i.data == "AAAA" && i.mime_type == "image/png")
        );
        assert_eq!(
            result.meta.expect("meta").0.get("seam/metadata"),
            Some(&json!({"lines": 1}))
        );
        let bare = call_result(Ok(ToolOutput::with_text("b".into(), Value::Null)), true);
        assert!(bare.structured_content.is_none());
        assert!(bare.meta.is_none(), "no metadata, no _meta");
    }
}
