//! The shape of each seed tool's metadata, as a JSON schema ([`crate::Tool::output_schema`]): what
//! an MCP client receives as `structuredContent` beside the text. Written once, here, next to
//! each other, so that a change of a tool's metadata has one place to be said; the tests hold
//! every tool's real metadata to its schema.

use serde_json::{Value, json};
use std::sync::LazyLock;

fn diffs() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "old_start": {"type": "integer"},
                "old_lines": {"type": "integer"},
                "new_start": {"type": "integer"},
                "new_lines": {"type": "integer"},
                "lines": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["old_start", "old_lines", "new_start", "new_lines", "lines"]
        }
    })
}

pub(crate) static READ: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer"},
            "end_line": {"type": "integer"},
            "total_lines": {"type": "integer"},
            "truncated_by_bytes": {"type": "boolean"},
            "streamed": {"type": "boolean"}
        },
        "required": ["path", "offset", "end_line", "total_lines", "truncated_by_bytes", "streamed"]
    })
});

/// `write` and `edit`: the outcome, sized by what changed — the new version, the first hunks of
/// the diff (bounded: `crate::diff::DIFF_MAX_BYTES`) and the counts of the whole change (`null`
/// with no prior text to diff against); never the texts (a dry run has `dry_run` and no
/// version).
pub(crate) static MUTATION: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "operation": {"type": "string", "enum": ["create", "update"]},
            "version": {"type": "string"},
            "diffs": diffs(),
            "changes": {
                "type": ["object", "null"],
                "properties": {
                    "added": {"type": "integer"},
                    "removed": {"type": "integer"},
                    "complete": {"type": "boolean"},
                    "rest_from_line": {"type": ["integer", "null"]}
                },
                "required": ["added", "removed", "complete", "rest_from_line"]
            },
            "dry_run": {"type": "boolean"}
        },
        "required": ["path", "operation", "diffs", "changes"]
    })
});

pub(crate) static READ_IMAGE: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "media_type": {"type": "string"},
            "width": {"type": ["integer", "null"]},
            "height": {"type": ["integer", "null"]},
            "bytes": {"type": "integer"}
        },
        "required": ["path", "media_type", "bytes"]
    })
});

pub(crate) static GLOB: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "root": {"type": "string"},
            "total": {"type": "integer"}
        },
        "required": ["root", "total"]
    })
});

pub(crate) static GREP: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "root": {"type": "string"},
            "matches": {"type": "integer"},
            "complete": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
            "files": {"type": "integer"},
            "shown": {"type": "integer"}
        },
        "required": ["root", "matches", "complete"]
    })
});

pub(crate) static EDITOR: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"}
        },
        "required": ["path"]
    })
});

/// `create_directory`: the path, and whether the call made it (absent for a dry run).
pub(crate) static CREATE_DIRECTORY: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "created": {"type": "boolean"},
            "dry_run": {"type": "boolean"}
        },
        "required": ["path"]
    })
});

/// `delete`: the path and what was (or, for a dry run, would be) removed.
pub(crate) static DELETE: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "kind": {"enum": ["file", "directory", "symlink", "other"]},
            "dry_run": {"type": "boolean"}
        },
        "required": ["path", "kind"]
    })
});

/// `move`: both ends, what moved, and whether a destination file was replaced.
pub(crate) static MOVE: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "source": {"type": "string"},
            "destination": {"type": "string"},
            "kind": {"enum": ["file", "directory", "symlink", "other"]},
            "replaced": {"type": "boolean"},
            "dry_run": {"type": "boolean"}
        },
        "required": ["source", "destination", "kind"]
    })
});
