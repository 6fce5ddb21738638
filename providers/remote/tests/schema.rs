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
    match first_difference(&old, generated, "") {
        Some(path) => said.push(format!("first difference at {path}")),
        None => said.push("the same schema, written differently".to_string()),
    }
    Some(said.join("; "))
}

/// The JSON path of the first place where `a` and `b` differ (members in order), naming the
/// method or definition it is in: `/methods/read_bytes/params`, `/$defs/ReadBytesParams/…`.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in y {
                match x.get(k) {
                    None => return Some(format!("{at}/{k} (only in the types)")),
                    Some(w) => {
                        if let Some(p) = first_difference(w, v, &format!("{at}/{k}")) {
                            return Some(p);
                        }
                    }
                }
            }
            x.keys()
                .find(|k| !y.contains_key(*k))
                .map(|k| format!("{at}/{k} (only in the file)"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (w, v))| first_difference(w, v, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{at}: file {a}, types {b}")),
    }
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
    changed["$defs"]["ReadBytesParams"]["properties"]["max_bytes"]["type"] = Value::Null;
    let said = drift(&text(&changed), &generated).expect("a changed type is drift");
    assert!(
        said.contains("first difference at /$defs/ReadBytesParams/properties/max_bytes/type"),
        "{said}"
    );
    assert!(drift(&text(&generated), &generated).is_none());
}

/// The schema is generated from the same lists of methods and notifications as the code, so
/// what can drift is the document: every name the types define must be in `docs/protocol.md`.
#[test]
fn every_method_and_notification_the_types_define_is_in_the_document() {
    let protocol_md = std::fs::read_to_string(docs().join("protocol.md")).expect("protocol.md");
    let names: Vec<&str> = methods()
        .iter()
        .map(|c| c.name)
        .chain(notifications().iter().map(|n| n.name))
        .collect();
    let missing: Vec<&&str> = names
        .iter()
        .filter(|name| !protocol_md.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/protocol.md never names {missing:?}"
    );
    // Nothing named twice, and the contract's twelve calls, the five world/* methods, the
    // handshake and the checkpoint are all there, with the four notifications.
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "a name defined twice: {names:?}");
    assert_eq!(
        (methods().len(), notifications().len()),
        (12 + 5 + 2, 4),
        "{names:?}"
    );
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
