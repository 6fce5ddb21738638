//! `dry_run` for `write` and `edit`: what the call would change, as a unified diff, with nothing
//! changed. The gate is asked as for the real call (a file never read is `FS_NOT_OBSERVED`
//! here too) and the edit is applied to the file's current text by the contract's own literal
//! edit, so a dry run fails where the call would. What it cannot foresee it says: the sandbox
//! decides when the call runs, and the file may change before then (the real call is guarded by
//! the version it was read at).

use crate::diff::{BoundedDiff, bounded};
use crate::exec::Exec;
use crate::output::{ContentBlock, ToolOutput, ToolResult};
use crate::paths::resolve;
use seam::{EditRequest, FsError, FsKind, Verb};
use serde_json::json;

/// The argument.
pub const DRY_RUN: &str = "dry_run";

/// The schema of the argument.
pub(crate) fn schema_field() -> serde_json::Value {
    json!({
        "type": "boolean",
        "description": "Show what this call would change, as a unified diff, and change nothing."
    })
}

/// A unified diff of `path` from its hunks (bounded: what is not shown is counted, with the line
/// where it starts).
fn unified(path: &str, created: bool, diff: &BoundedDiff) -> String {
    let from = if created { "/dev/null" } else { path };
    let mut out = format!("--- {from}\n+++ {path}");
    for h in &diff.hunks {
        out.push_str(&format!(
            "\n@@ -{},{} +{},{} @@",
            h.old_start, h.old_lines, h.new_start, h.new_lines
        ));
        for line in &h.lines {
            out.push('\n');
            out.push_str(line);
        }
    }
    if !diff.complete {
        let shown = diff
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| !l.starts_with(' '))
            .count();
        let rest = (diff.added + diff.removed).saturating_sub(shown);
        out.push_str(&format!(
            "\n… {rest} more changed lines not shown ({} added and {} removed in all); the new text goes on from line {}",
            diff.added,
            diff.removed,
            diff.rest_from_line.unwrap_or(1)
        ));
    }
    out
}

fn answer(
    tool: &str,
    path: &str,
    operation: &str,
    before: Option<&str>,
    after: &str,
) -> ToolResult {
    // A new file is diffed against nothing (every line added).
    let created = before.is_none();
    let diff = bounded(Some(before.unwrap_or("")), after);
    let text = if diff.hunks.is_empty() {
        format!("Dry run: {tool} would leave {path} as it is (nothing was changed).")
    } else {
        format!(
            "Dry run: {tool} would {operation} {path} (nothing was changed; the sandbox and the file's version are checked when the call runs).\n\n{}",
            unified(path, created, &diff)
        )
    };
    Ok(ToolOutput {
        content: vec![ContentBlock::Text(text)],
        metadata: json!({
            "dry_run": true,
            "path": path,
            "operation": operation,
            "diffs": diff.hunks_json(),
            "changes": diff.summary_json(),
        }),
    })
}

/// The current text of a file, `None` when nothing is there, an error for what a write may not
/// replace (a directory) — as the write itself would fail.
async fn current(
    exec: &Exec,
    target: &seam::FsTarget,
    verb: Verb,
) -> Result<Option<String>, FsError> {
    match exec.fs.stat(target, &exec.signal).await? {
        None => Ok(None),
        Some(info) if info.kind != FsKind::File => {
            Err(FsError::not_regular_file(verb, &target.display_path))
        }
        Some(_) => match exec.fs.read_text(target, &exec.signal).await {
            Ok(text) => Ok(Some(text)),
            // A binary file: replaced whole, no text to diff against.
            Err(e) if e.code() == seam::FsErrorCode::NotText && verb == Verb::Write => {
                Ok(Some(String::new()))
            }
            Err(e) => Err(e),
        },
    }
}

/// `write` with `dry_run`.
pub(crate) async fn write(exec: &Exec, path: &str, content: &str) -> ToolResult {
    let target = resolve(exec, path, true).await?;
    exec.gate.write_intent(&target, exec.actor()).await?;
    let before = current(exec, &target, Verb::Write).await?;
    let after = seam::text::lf_normalize(content);
    let (operation, before) = match &before {
        None => ("create", None),
        Some(b) => ("update", Some(seam::text::lf_normalize(b))),
    };
    answer(
        "write",
        &target.display_path,
        operation,
        before.as_deref(),
        &after,
    )
}

/// `edit` with `dry_run`.
pub(crate) async fn edit(exec: &Exec, path: &str, request: &EditRequest) -> ToolResult {
    let target = resolve(exec, path, true).await?;
    let display = target.display_path.clone();
    exec.gate.edit_intent(&target, exec.actor()).await?;
    let Some(text) = current(exec, &target, Verb::Edit).await? else {
        return Err(FsError::changed_since_read(Verb::Edit, &display).into());
    };
    let edited =
        seam::edit::literal_edit(text.into_bytes(), request).map_err(|f| f.into_error(&display))?;
    let (before, after) = edited.into_before_after();
    answer("edit", &display, "update", Some(&before), &after)
}
