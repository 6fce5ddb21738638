//! The protocol's JSON Schema, generated from its types: each method's `params` and `result`,
//! each notification's `params`, the error every failed request is answered with, and the
//! definitions they share under `$defs`.

use super::control::ErrorObject;
use super::{methods, notifications};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The schema of the whole protocol, as checked in at `docs/protocol.schema.json`.
pub fn schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut calls = Map::new();
    for call in methods() {
        let params = (call.params)(&mut generator);
        let result = (call.answer)(&mut generator);
        calls.insert(
            call.name.to_string(),
            json!({ "params": params, "result": result }),
        );
    }
    let mut notes = Map::new();
    for note in notifications() {
        let params = (note.params)(&mut generator);
        notes.insert(note.name.to_string(), json!({ "params": params }));
    }
    let error = generator.subschema_for::<ErrorObject>();
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "The seam wire protocol",
        "description": "Each method's params and result, each notification's params and the error a failed request is answered with, as JSON Schemas (docs/protocol.md). A {\"$payload\": i} value names the i-th payload segment of the frame that carries it. Generated from seam-remote's protocol module; do not edit by hand.",
        "protocol": crate::wire::PROTOCOL,
        "methods": calls,
        "notifications": notes,
        "error": error,
        "$defs": defs,
    })
}
