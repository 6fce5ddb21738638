//! Every tool's structured content keeps the shape its output schema promises: each tool is
//! called for real (the local provider on a temp dir, every tool of the extended set, every
//! grep renderer, the dry runs), and what it returned as metadata is checked against its
//! schema by a small validator of the JSON Schema subset the schemas use (types, properties,
//! required, enum, items). A tool whose metadata drifts from its schema fails here — an MCP
//! client would otherwise receive `structuredContent` that breaks the `outputSchema` it was
//! given.

mod support;

use seam_tools::{ImageSink, Toolset};
use serde_json::{Value, json};
use std::sync::Arc;
use support::Harness;

struct AnyImage;
impl ImageSink for AnyImage {}

/// Why `value` does not fit `schema` (the subset the tools use), or `None`.
fn misfit(schema: &Value, value: &Value, at: &str) -> Option<String> {
    if let Some(types) = schema.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let fits =
            allowed.contains(&actual) || (actual == "integer" && allowed.contains(&"number"));
        if !fits {
            return Some(format!("{at}: {actual} where the schema says {allowed:?}"));
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        return Some(format!("{at}: {value} is not one of {options:?}"));
    }
    if let Value::Object(fields) = value {
        if let Some(Value::Array(required)) = schema.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(r) {
                    return Some(format!("{at}: {r} is required and missing"));
                }
            }
        }
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (k, v) in fields {
                if let Some(s) = props.get(k)
                    && let Some(m) = misfit(s, v, &format!("{at}.{k}"))
                {
                    return Some(m);
                }
            }
        }
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for (i, v) in values.iter().enumerate() {
            if let Some(m) = misfit(items, v, &format!("{at}[{i}]")) {
                return Some(m);
            }
        }
    }
    None
}

#[test]
fn the_validator_catches_a_misfit() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}, "k": {"enum": ["a"]}}, "required": ["n"]});
    assert!(misfit(&schema, &json!({"n": 1}), "$").is_none());
    assert!(misfit(&schema, &json!({}), "$").is_some());
    assert!(misfit(&schema, &json!({"n": "1"}), "$").is_some());
    assert!(misfit(&schema, &json!({"n": 1, "k": "b"}), "$").is_some());
    assert!(
        misfit(
            &json!({"type": "array", "items": {"type": "string"}}),
            &json!(["a", 1]),
            "$"
        )
        .is_some()
    );
}

#[tokio::test]
async fn every_tools_metadata_fits_its_output_schema() {
    let h = Harness::with_policy();
    std::fs::create_dir_all(h.path("src")).expect("mkdir");
    h.put("a.txt", "one\ntwo\n");
    h.put("src/lib.rs", "fn alpha() {}\nfn beta() {}\n");
    h.put("pic.png", support::images::png(2, 3));
    let tools = Toolset::builder(h.fs.as_ref())
        .image_sink(Arc::new(AnyImage))
        .str_replace_editor()
        .extended()
        .build();
    let exec = h.exec();
    let calls: Vec<(&str, Value)> = vec![
        ("read", json!({"file_path": "a.txt"})),
        ("read_image", json!({"file_path": "pic.png"})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("grep", json!({"pattern": "fn"})),
        ("grep", json!({"pattern": "fn", "output_mode": "count"})),
        (
            "grep",
            json!({"pattern": "zeta", "output_mode": "files_with_matches"}),
        ),
        ("grep", json!({"pattern": "fn", "-A": 1, "head_limit": 1})),
        ("list", json!({})),
        ("tree", json!({"depth": 2})),
        ("info", json!({"file_path": "a.txt"})),
        ("info", json!({"file_path": "nothing.txt"})),
        ("read_many", json!({"file_paths": ["a.txt", "nope.txt"]})),
        ("roots", json!({})),
        (
            "edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "2", "dry_run": true}),
        ),
        (
            "edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"}),
        ),
        (
            "write",
            json!({"file_path": "b.txt", "content": "b\n", "dry_run": true}),
        ),
        ("write", json!({"file_path": "b.txt", "content": "b\n"})),
        (
            "str_replace_editor",
            json!({"command": "view", "path": h.display("a.txt")}),
        ),
        (
            "str_replace_editor",
            json!({"command": "create", "path": h.display("c.txt"), "file_text": "c\n"}),
        ),
        (
            "create_directory",
            json!({"path": "made/deep", "dry_run": true}),
        ),
        ("create_directory", json!({"path": "made/deep"})),
        (
            "move",
            json!({"source": "b.txt", "destination": "made/b.txt", "dry_run": true}),
        ),
        (
            "move",
            json!({"source": "b.txt", "destination": "made/b.txt"}),
        ),
        ("delete", json!({"path": "made/b.txt", "dry_run": true})),
        ("delete", json!({"path": "made/b.txt"})),
        ("delete", json!({"path": "made/deep"})),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (name, args) in calls {
        let tool = tools.get(name).unwrap_or_else(|| panic!("no {name}"));
        let schema = tool
            .output_schema()
            .unwrap_or_else(|| panic!("{name} declares no output schema"));
        let out = tool
            .execute(&args, &exec)
            .await
            .unwrap_or_else(|e| panic!("{name} {args}: {e}"));
        if let Some(m) = misfit(schema, &out.metadata, "$") {
            panic!(
                "{name} {args}: its metadata does not fit its schema: {m}\n{}",
                out.metadata
            );
        }
        seen.insert(name);
    }
    let all: std::collections::BTreeSet<&str> = tools.names().into_iter().collect();
    assert_eq!(seen, all, "every tool was called");
}
