//! The composition: which tools exist, their schemas and descriptions, parallel safety, and the
//! system-prompt sections (snapshotted, so a changed text is a reviewed change).

mod support;

use insta::assert_snapshot;
use seam_tools::{EDIT_PROMPT, GLOB_PROMPT, GREP_PROMPT, READ_PROMPT, WRITE_PROMPT};
use support::Harness;

#[test]
fn registers_read_write_edit_and_the_provider_s_search() {
    let h = Harness::bare();
    assert_eq!(h.tools.names(), ["read", "write", "edit", "glob", "grep"]);
}

#[test]
fn reads_and_searches_are_parallel_safe_while_write_and_edit_are_exclusive() {
    let h = Harness::bare();
    let safe: Vec<_> = h
        .tools
        .tools()
        .iter()
        .map(|t| (t.name(), t.parallel_safe()))
        .collect();
    assert_eq!(
        safe,
        [
            ("read", true),
            ("write", false),
            ("edit", false),
            ("glob", true),
            ("grep", true)
        ]
    );
}

#[test]
fn effects_say_which_tools_only_look_and_which_replace_content() {
    let h = Harness::bare();
    let tools = seam_tools::Toolset::builder(h.fs.as_ref())
        .str_replace_editor()
        .build();
    let effects: Vec<_> = tools
        .tools()
        .iter()
        .map(|t| {
            let e = t.effects();
            (t.name(), e.read_only, e.destructive, e.idempotent)
        })
        .collect();
    assert_eq!(
        effects,
        [
            ("read", true, false, true),
            ("write", false, true, true),
            ("edit", false, true, false),
            ("glob", true, false, true),
            ("grep", true, false, true),
            ("str_replace_editor", false, true, false),
        ]
    );
    for t in tools.tools() {
        assert_eq!(
            t.effects().read_only,
            t.parallel_safe(),
            "{}: a tool that only looks runs beside others, one that changes runs alone",
            t.name()
        );
    }
}

#[test]
fn prompt_sections_per_tool_with_the_seed_texts() {
    let h = Harness::bare();
    let sections: Vec<_> = h
        .tools
        .prompt_sections()
        .iter()
        .map(|s| (s.id, s.order, s.text))
        .collect();
    assert_eq!(
        sections,
        [
            ("tool:read", 100, READ_PROMPT),
            ("tool:write", 101, WRITE_PROMPT),
            ("tool:edit", 102, EDIT_PROMPT),
            ("tool:glob", 103, GLOB_PROMPT),
            ("tool:grep", 104, GREP_PROMPT),
        ]
    );
    assert_snapshot!("system_prompt", h.tools.system_prompt());
}

#[test]
fn descriptions_and_schemas() {
    let h = Harness::bare();
    let mut out = String::new();
    for t in h.tools.tools() {
        out.push_str(&format!(
            "## {}\n{}\n{}\n\n",
            t.name(),
            t.description(),
            serde_json::to_string_pretty(t.schema()).expect("json")
        ));
    }
    assert_snapshot!("tools", out);
}

#[test]
fn the_editor_s_schema_is_the_seed_s_standalone_one() {
    let h = Harness::bare();
    let tools = seam_tools::Toolset::builder(h.fs.as_ref())
        .str_replace_editor()
        .build();
    let editor = tools.get("str_replace_editor").expect("registered last");
    let schema = editor.schema();
    assert_eq!(
        schema["properties"]["command"]["enum"],
        serde_json::json!(["view", "create", "str_replace", "insert"]),
        "no undo_edit"
    );
    let mut properties: Vec<&str> = schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    properties.sort_unstable();
    assert_eq!(
        properties,
        [
            "command",
            "file_text",
            "insert_line",
            "new_str",
            "old_str",
            "path",
            "view_range"
        ],
        "no replace_all"
    );
    assert_eq!(schema["required"], serde_json::json!(["command", "path"]));
    assert!(editor.prompt_section().is_none(), "no prompt section");
    assert!(!editor.description().is_empty());
}
