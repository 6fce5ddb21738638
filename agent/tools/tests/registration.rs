//! The composition: which tools exist, their schemas and descriptions, parallel safety, and the
//! system-prompt sections (snapshotted, so a changed text is a reviewed change).

mod support;

use insta::assert_snapshot;
use seam_tools::{EDIT_PROMPT, READ_PROMPT, WRITE_PROMPT};
use support::Harness;

#[test]
fn registers_read_write_and_edit() {
    let h = Harness::bare();
    assert_eq!(h.tools.names(), ["read", "write", "edit"]);
}

#[test]
fn read_is_parallel_safe_while_write_and_edit_are_exclusive() {
    let h = Harness::bare();
    let safe: Vec<_> = h
        .tools
        .tools()
        .iter()
        .map(|t| (t.name(), t.parallel_safe()))
        .collect();
    assert_eq!(safe, [("read", true), ("write", false), ("edit", false)]);
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
