//! `str_replace_editor`: the Anthropic-style editor (`view`, `create`, `str_replace`, `insert`)
//! with the seed's texts, through the contract and the gate like the other tools.
//!
//! What it keeps from the seed: absolute paths only; `view` numbers lines `cat -n` style (width
//! 6, two spaces, tabs kept) and lists a directory two levels deep without hidden entries,
//! `node_modules` or `__pycache__`; output past 16,000 characters is clipped with the seed's
//! `<response clipped>` note; `create` never overwrites; `str_replace` matches the raw text
//! (no line-ending normalisation) and needs exactly one match; `insert` splits on `\n`. Every
//! mutation is published with a version guard — the policy's observed version, or the tool's own
//! `stat` on a bare gate — so a concurrent change is never overwritten. A sandbox denial is the
//! `[sandbox: …]` marker, with no escalation.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ToolError, ToolOutput, ToolResult};
use crate::tool::{PromptSection, Tool, ToolEffects};
use seam::{
    FsError, FsErrorCode, FsKind, FsObservation, FsTarget, FsVersion, ResolveOptions, Verb,
    WriteIntent,
};
use serde_json::{Value, json};

/// Output past this many characters (UTF-16 units, as the seed counts) is clipped.
pub const EDITOR_MAX_OUTPUT_CHARS: usize = 16_000;

/// What a clipped output ends with.
pub const CLIPPED: &str = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

/// `str_replace_editor`.
#[derive(Debug)]
pub struct StrReplaceEditorTool {
    schema: Value,
}

impl Default for StrReplaceEditorTool {
    fn default() -> Self {
        Self::new()
    }
}

impl StrReplaceEditorTool {
    /// The editor.
    pub fn new() -> Self {
        Self {
            schema: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"]},
                    "path": {"type": "string", "description": "Absolute path to a file or directory."},
                    "file_text": {"type": "string", "description": "create: the new file's content."},
                    "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0: at the top)."},
                    "new_str": {"type": "string", "description": "str_replace: the replacement; insert: the text to insert."},
                    "old_str": {"type": "string", "description": "str_replace: the exact text to replace (must occur once)."},
                    "view_range": {"type": "array", "items": {"type": "integer"}, "description": "view: [first, last] lines, 1-based; -1 as last means the end."}
                },
                "required": ["command", "path"],
                "additionalProperties": false
            }),
        }
    }
}

fn error(code: FsErrorCode, message: String) -> ToolError {
    ToolError::fs(FsError::new(code, message))
}

/// Clips `text` past the cap (counted in UTF-16 units) with the seed's note.
pub(crate) fn clip(text: String) -> String {
    if text.encode_utf16().count() <= EDITOR_MAX_OUTPUT_CHARS {
        return text;
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in text.char_indices() {
        units += c.len_utf16();
        if units > EDITOR_MAX_OUTPUT_CHARS {
            break;
        }
        end = i + c.len_utf8();
    }
    format!("{}{CLIPPED}", &text[..end])
}

/// `view_range` against `n` lines: the 1-based inclusive range, or the seed's complaint.
fn view_range(range: &Value, n: usize) -> Result<(usize, usize), ToolError> {
    let bad = || ToolError::arguments("Invalid `view_range`. It should be a list of two integers.");
    let items = range.as_array().filter(|a| a.len() == 2).ok_or_else(bad)?;
    let (a, b) = match (items[0].as_i64(), items[1].as_i64()) {
        (Some(a), Some(b)) => (a, b),
        _ => return Err(bad()),
    };
    let n_i = n as i64;
    if a < 1 || a > n_i {
        return Err(ToolError::arguments(format!(
            "Invalid `view_range`: [{a}, {b}]. Its first element `{a}` should be within the range of lines of the file: [1, {n}]"
        )));
    }
    if b == -1 {
        return Ok((a as usize, n));
    }
    if b > n_i {
        return Err(ToolError::arguments(format!(
            "Invalid `view_range`: [{a}, {b}]. Its second element `{b}` should be smaller than the number of lines in the file: `{n}`"
        )));
    }
    if b < a {
        return Err(ToolError::arguments(format!(
            "Invalid `view_range`: [{a}, {b}]. Its second element `{b}` should be larger or equal than its first `{a}`"
        )));
    }
    Ok((a as usize, b as usize))
}

/// The 1-based line each non-overlapping occurrence of `needle` starts on.
fn match_lines(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle)
        .map(|(i, _)| text[..i].matches('\n').count() + 1)
        .collect()
}

impl StrReplaceEditorTool {
    async fn target(exec: &Exec, path: &str) -> Result<FsTarget, ToolError> {
        exec.fs
            .resolve(path, ResolveOptions::default(), &exec.signal)
            .await
            .map_err(ToolError::fs)
    }

    /// The file at `t` for a mutation: its version, or the seed's texts for nothing there (the
    /// absence recorded with the gate) and for a directory.
    async fn existing_file(exec: &Exec, t: &FsTarget) -> Result<FsVersion, ToolError> {
        let p = &t.display_path;
        match exec.fs.stat(t, &exec.signal).await.map_err(ToolError::fs)? {
            None => {
                exec.gate.observed(t, &FsObservation::Absent, exec.actor());
                Err(error(
                    FsErrorCode::NotFound,
                    format!("The path {p} does not exist. Please provide a valid path."),
                ))
            }
            Some(i) if i.kind == FsKind::Directory => Err(error(
                FsErrorCode::NotRegularFile,
                format!(
                    "The path {p} is a directory and only the `view` command can be used on directories"
                ),
            )),
            Some(i) => Ok(i.version),
        }
    }

    /// The file's text as `str_replace` and `insert` match it (raw: no line-ending
    /// normalisation), and whether a BOM leads it on disk, so that publication puts it back and
    /// the edit changes only what it replaced. A backend without `read_bytes` gives the text
    /// alone: its BOM, if any, is not known and so not kept.
    async fn raw_text(exec: &Exec, t: &FsTarget) -> Result<(String, bool), ToolError> {
        if !exec.fs.capabilities().read_bytes {
            let text = exec
                .fs
                .read_text(t, &exec.signal)
                .await
                .map_err(ToolError::fs)?;
            return Ok((text, false));
        }
        let bytes = exec
            .fs
            .read_bytes(t, u64::MAX, &exec.signal)
            .await
            .map_err(ToolError::fs)?;
        let bom = bytes.starts_with(seam::text::BOM);
        let text = seam::text::decode_for_read(bytes)
            .map_err(|e| ToolError::fs(e.into_error(Verb::Read, &t.display_path)))?;
        Ok((text, bom))
    }

    /// A sandbox denial as the seed's marker; anything else as it is.
    fn denial(exec: &Exec, e: FsError) -> ToolError {
        if e.code() == FsErrorCode::SandboxDenied {
            let mode = exec
                .sandbox
                .as_ref()
                .map(|p| p.mode)
                .or_else(|| exec.fs.sandbox_mode());
            if let Some(mode) = mode {
                return error(
                    FsErrorCode::SandboxDenied,
                    format!("[sandbox: file access denied under {} mode]", mode.as_str()),
                );
            }
        }
        ToolError::fs(e)
    }

    /// Publishes `text` over `t` only if it is still at `version`, and records what it wrote.
    async fn publish(
        exec: &Exec,
        t: &FsTarget,
        text: &str,
        version: FsVersion,
    ) -> Result<(), ToolError> {
        let out = exec
            .fs
            .write_text(
                t,
                text,
                Some(&WriteIntent::ReplaceIfVersion { version }),
                exec.sandbox.as_ref(),
                &exec.signal,
            )
            .await
            .map_err(|e| Self::denial(exec, e))?;
        exec.gate.observed(
            t,
            &FsObservation::Present {
                version: out.version,
            },
            exec.actor(),
        );
        Ok(())
    }

    async fn view(&self, exec: &Exec, args: &Args<'_>, t: &FsTarget) -> ToolResult {
        let p = &t.display_path;
        let info = match exec.fs.stat(t, &exec.signal).await.map_err(ToolError::fs)? {
            None => {
                exec.gate.observed(t, &FsObservation::Absent, exec.actor());
                return Err(error(
                    FsErrorCode::NotFound,
                    format!("The path {p} does not exist. Please provide a valid path."),
                ));
            }
            Some(i) => i,
        };
        match info.kind {
            FsKind::Directory => {
                if args.get("view_range").is_some() {
                    return Err(ToolError::arguments(
                        "The `view_range` parameter is not allowed when `path` points to a directory.",
                    ));
                }
                let mut rows = vec![format!("d\t{p}")];
                let mut queue = vec![(t.clone(), 1)];
                while let Some((dir, depth)) = queue.pop() {
                    let entries = exec
                        .fs
                        .list_dir(&dir, &exec.signal)
                        .await
                        .map_err(ToolError::fs)?;
                    for e in entries {
                        if e.name.starts_with('.')
                            || e.name == "node_modules"
                            || e.name == "__pycache__"
                        {
                            continue;
                        }
                        let tag = match e.kind {
                            FsKind::Directory => "d",
                            FsKind::File => "f",
                            _ => "?",
                        };
                        rows.push(format!("{tag}\t{}", e.target.display_path));
                        if e.kind == FsKind::Directory && depth < 2 {
                            queue.push((e.target, depth + 1));
                        }
                    }
                }
                rows.sort_by(|a, b| a[2..].encode_utf16().cmp(b[2..].encode_utf16()));
                let listing = rows.join("\n");
                Ok(ToolOutput::with_text(
                    clip(format!(
                        "Here're the files and directories up to 2 levels deep in {p}, excluding hidden items, node_modules, and Python cache directories:\n{listing}\n"
                    )),
                    json!({ "path": p }),
                ))
            }
            FsKind::File => {
                let text = exec
                    .fs
                    .read_text(t, &exec.signal)
                    .await
                    .map_err(ToolError::fs)?;
                exec.gate.observed(
                    t,
                    &FsObservation::Present {
                        version: info.version,
                    },
                    exec.actor(),
                );
                let lines: Vec<&str> = text.split('\n').collect();
                let (first, last, range) = match args.get("view_range") {
                    None => (1, lines.len(), String::new()),
                    Some(r) => {
                        let (a, b) = view_range(r, lines.len())?;
                        let shown_b = if r.as_array().and_then(|v| v[1].as_i64()) == Some(-1) {
                            -1
                        } else {
                            b as i64
                        };
                        (a, b, format!(" with view_range=[{a}, {shown_b}]"))
                    }
                };
                let numbered: Vec<String> = lines[first - 1..last]
                    .iter()
                    .enumerate()
                    .map(|(i, l)| format!("{:>6}  {l}", first + i))
                    .collect();
                Ok(ToolOutput::with_text(
                    clip(format!(
                        "Here's the content of {p} with line numbers (which has a total of {} lines){range}:\n{}\n",
                        lines.len(),
                        numbered.join("\n")
                    )),
                    json!({ "path": p }),
                ))
            }
            _ => Err(error(
                FsErrorCode::NotRegularFile,
                format!("cannot view \"{p}\": not a regular file or directory"),
            )),
        }
    }
}

#[async_trait::async_trait]
impl Tool for StrReplaceEditorTool {
    fn name(&self) -> &'static str {
        "str_replace_editor"
    }

    fn description(&self) -> &str {
        "View, create and edit files. `view` shows a file with line numbers or a directory two levels deep; `create` makes a new file (never overwrites); `str_replace` replaces exactly one verbatim occurrence of `old_str`; `insert` adds `new_str` after line `insert_line`. Paths are absolute."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::EDITOR)
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects {
            read_only: false,
            destructive: true,
            // `insert` and some replacements apply again.
            idempotent: false,
        }
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        None
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let command = args.non_empty_string("command")?;
        let path = args.path("path")?;
        if !path.starts_with('/') {
            // The guess is the path beneath the session's working directory: `/<path>` would
            // send the model out of the workspace (and into a sandbox refusal).
            let guess = match exec.cwd.as_deref() {
                Some(cwd) => format!("{}/{path}", cwd.trim_end_matches('/')),
                None => format!("/{path}"),
            };
            return Err(ToolError::arguments(format!(
                "The path {path} is not an absolute path, it should start with `/`. Maybe you meant {guess}?"
            )));
        }
        match command {
            "view" => {
                let t = Self::target(exec, path).await?;
                self.view(exec, &args, &t).await
            }
            "create" => {
                let Some(text) = args.get("file_text").and_then(Value::as_str) else {
                    return Err(ToolError::arguments(
                        "Parameter `file_text` is required for command: create",
                    ));
                };
                let t = Self::target(exec, path).await?;
                let p = t.display_path.clone();
                if exec
                    .fs
                    .stat(&t, &exec.signal)
                    .await
                    .map_err(ToolError::fs)?
                    .is_some()
                {
                    return Err(ToolError::arguments(format!(
                        "File already exists at: {p}. Cannot overwrite files using command `create`."
                    )));
                }
                let intent = exec
                    .gate
                    .write_intent(&t, exec.actor())
                    .await
                    .map_err(ToolError::fs)?
                    .unwrap_or(WriteIntent::CreateIfAbsent);
                let out = exec
                    .fs
                    .write_text(&t, text, Some(&intent), exec.sandbox.as_ref(), &exec.signal)
                    .await
                    .map_err(|e| Self::denial(exec, e))?;
                exec.gate.observed(
                    &t,
                    &FsObservation::Present {
                        version: out.version,
                    },
                    exec.actor(),
                );
                Ok(ToolOutput::with_text(
                    format!("New file created successfully at: {p}"),
                    json!({ "path": p }),
                ))
            }
            "str_replace" | "insert" => {
                let t = Self::target(exec, path).await?;
                let observed = exec
                    .gate
                    .edit_intent(&t, exec.actor())
                    .await
                    .map_err(ToolError::fs)?;
                let p = t.display_path.clone();
                let new_str = args.get("new_str").and_then(Value::as_str);
                let result = if command == "str_replace" {
                    let old = match args.get("old_str").and_then(Value::as_str) {
                        None => {
                            return Err(ToolError::arguments(
                                "Parameter `old_str` is required for command: str_replace",
                            ));
                        }
                        Some("") => {
                            return Err(ToolError::arguments(
                                "Parameter `old_str` is empty for command: str_replace",
                            ));
                        }
                        Some(o) => o,
                    };
                    let version = Self::existing_file(exec, &t).await?;
                    let (text, bom) = Self::raw_text(exec, &t).await?;
                    let lines = match_lines(&text, old);
                    match lines.len() {
                        0 => {
                            return Err(error(
                                FsErrorCode::EditNotFound,
                                format!(
                                    "No replacement was performed, old_str `{old}` did not appear verbatim in {p}."
                                ),
                            ));
                        }
                        1 => {}
                        _ => {
                            let at: Vec<String> = lines.iter().map(usize::to_string).collect();
                            return Err(error(
                                FsErrorCode::AmbiguousEdit,
                                format!(
                                    "No replacement was performed. Multiple occurrences of old_str `{old}` in lines [{}]. Please ensure it is unique",
                                    at.join(", ")
                                ),
                            ));
                        }
                    }
                    (version, bom, text.replacen(old, new_str.unwrap_or(""), 1))
                } else {
                    let Some(line) = args.get("insert_line").and_then(Value::as_i64) else {
                        return Err(ToolError::arguments(
                            "Parameter `insert_line` is required for command: insert",
                        ));
                    };
                    let Some(new_str) = new_str else {
                        return Err(ToolError::arguments(
                            "Parameter `new_str` is required for command: insert",
                        ));
                    };
                    let version = Self::existing_file(exec, &t).await?;
                    let (text, bom) = Self::raw_text(exec, &t).await?;
                    let lines: Vec<&str> = text.split('\n').collect();
                    let k = usize::try_from(line).ok().filter(|k| *k <= lines.len());
                    let Some(k) = k else {
                        return Err(ToolError::arguments(format!(
                            "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, {}]",
                            lines.len()
                        )));
                    };
                    let mut out: Vec<&str> = lines[..k].to_vec();
                    out.extend(new_str.split('\n'));
                    out.extend(&lines[k..]);
                    (version, bom, out.join("\n"))
                };
                let (own, bom, text) = result;
                let text = if bom { format!("\u{FEFF}{text}") } else { text };
                Self::publish(exec, &t, &text, observed.unwrap_or(own)).await?;
                Ok(ToolOutput::with_text(
                    format!("The file {p} has been edited successfully."),
                    json!({ "path": p }),
                ))
            }
            other => Err(ToolError::arguments(format!(
                "Unrecognized command {other}. The allowed commands for the str_replace_editor tool are: view, create, str_replace, insert"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_numbered_by_the_line_they_start_on() {
        assert_eq!(match_lines("a\nxa\n\na", "a"), vec![1, 2, 4]);
        assert_eq!(match_lines("aaaa", "aa"), vec![1, 1], "non-overlapping");
    }

    #[test]
    fn clipping_counts_utf16_units() {
        let short = "é".repeat(EDITOR_MAX_OUTPUT_CHARS);
        assert_eq!(clip(short.clone()), short);
        let long = "🦀".repeat(EDITOR_MAX_OUTPUT_CHARS); // two units each
        let clipped = clip(long);
        let kept = clipped.strip_suffix(CLIPPED).expect("clipped");
        assert_eq!(kept.chars().count(), EDITOR_MAX_OUTPUT_CHARS / 2);
    }
}
