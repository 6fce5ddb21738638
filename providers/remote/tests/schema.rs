//! The wire protocol is defined once, in `seam_remote::protocol`: the JSON Schema checked in
//! beside `docs/protocol.md` (`docs/protocol.schema.json`, which the kits check their messages
//! against) must be the one those types generate, and every method they define must be in the
//! schema and in the document. After changing a type, write the schema again with
//! `SEAM_WRITE_SCHEMA=1 cargo test -p seam-remote --test schema`.

use seam_remote::protocol::{methods, notifications, schema};
use serde_json::Value;
use std::path::PathBuf;

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// The schema as it is written to the file: pretty, with a final newline.
fn text(schema: &Value) -> String {
    let mut s = serde_json::to_string_pretty(schema).expect("a schema is JSON");
    s.push('\n');
    s
}

/// Where `checked_in` departs from `generated`, if it does: the first line that differs, and
/// the methods and notifications one has and the other has not.
fn drift(checked_in: &str, generated: &Value) -> Option<String> {
    let want = text(generated);
    if checked_in == want {
        return None;
    }
    let names = |v: &Value, what: &str| -> Vec<String> {
        v.get(what)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let old: Value = serde_json::from_str(checked_in).unwrap_or(Value::Null);
    let mut said = Vec::new();
    for what in ["methods", "notifications"] {
        let (have, want) = (names(&old, what), names(generated, what));
        let missing: Vec<_> = want.iter().filter(|n| !have.contains(n)).collect();
        let extra: Vec<_> = have.iter().filter(|n| !want.contains(n)).collect();
        if !missing.is_empty() {
            said.push(format!("{what} missing from the file: {missing:?}"));
        }
        if !extra.is_empty() {
            said.push(format!(
                "{what} in the file that the types no longer define: {extra:?}"
            ));
        }
    }
    let line = checked_in
        .lines()
        .zip(want.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| checked_in.lines().count().min(want.lines().count()));
    said.push(format!(
        "first difference at line {}: file {:?}, types {:?}",
        line + 1,
        checked_in.lines().nth(line).unwrap_or("(end)"),
        want.lines().nth(line).unwrap_or("(end)")
    ));
    Some(said.join("; "))
}

#[test]
fn the_checked_in_schema_is_the_one_the_types_generate() {
    let path = docs().join("protocol.schema.json");
    let generated = schema();
    if std::env::var_os("SEAM_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, text(&generated)).expect("write the schema");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if let Some(why) = drift(&checked_in, &generated) {
        panic!(
            "{} is not what the protocol's types generate ({why}); write it again with \
             SEAM_WRITE_SCHEMA=1 cargo test -p seam-remote --test schema",
            path.display()
        );
    }
}

#[test]
fn a_method_left_out_of_the_file_or_changed_in_it_is_found() {
    let generated = schema();
    let mut without = generated.clone();
    let removed = without["methods"]
        .as_object_mut()
        .and_then(|m| m.remove("rename"));
    assert!(removed.is_some(), "the schema has rename");
    let said = drift(&text(&without), &generated).expect("a method missing is drift");
    assert!(
        said.contains("methods missing from the file: [\"rename\"]"),
        "{said}"
    );
    let mut changed = generated.clone();
    changed["methods"]["resolve"]["params"] = Value::Null;
    assert!(drift(&text(&changed), &generated).is_some());
    assert!(drift(&text(&generated), &generated).is_none());
}

#[test]
fn every_method_and_notification_is_in_the_schema_and_in_the_document() {
    let generated = schema();
    let protocol_md = std::fs::read_to_string(docs().join("protocol.md")).expect("protocol.md");
    let mut names = Vec::new();
    for call in methods() {
        assert!(
            generated["methods"].get(call.name).is_some(),
            "{} is not in the schema",
            call.name
        );
        names.push(call.name);
    }
    for note in notifications() {
        assert!(
            generated["notifications"].get(note.name).is_some(),
            "{} is not in the schema",
            note.name
        );
        names.push(note.name);
    }
    for name in &names {
        assert!(
            protocol_md.contains(&format!("`{name}`")),
            "docs/protocol.md never names `{name}`"
        );
    }
    // Nothing named twice, and the contract's twelve calls, the five world/* methods, the
    // handshake and the checkpoint are all there.
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "a name defined twice: {names:?}");
    assert_eq!(methods().len(), 12 + 5 + 2, "{names:?}");
}

#[test]
fn every_definition_a_schema_refers_to_is_in_it() {
    let generated = schema();
    let defs = generated["$defs"].as_object().expect("$defs");
    let mut refs = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&generated, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        let name = r
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("a reference outside $defs: {r}"));
        assert!(defs.contains_key(name), "{r} is not defined");
    }
}
