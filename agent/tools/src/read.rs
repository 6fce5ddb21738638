//! The `read` tool: one window of a text file, line-numbered, with a footer that says how to go
//! on.
//!
//! One `stat` per call, taken before the content: its version is what the call reports to the
//! gate as observed, so if the file changes between the stat and the read, the next guarded
//! mutation fails stale (fail-closed). A missing file is reported as observed absent before the
//! call fails, so a later write may (re)create it. Large files and files of unknown size are
//! streamed (see [`crate::config::DEFAULT_STREAM_MIN_SIZE`] for why the threshold is 1 MiB),
//! and the window never holds more than the page it returns.

use crate::args::Args;
use crate::config::ReadConfig;
use crate::exec::Exec;
use crate::output::{ContentBlock, ToolError, ToolOutput, ToolResult};
use crate::paths::{resolve, stat_regular};
use crate::read_render::render_read;
use crate::tool::{PromptSection, Tool, ToolEffects};
use crate::window::{WindowSpec, Windower};
use seam::{FsError, FsErrorCode, FsObservation, TextStream};
use serde_json::{Value, json};

/// The read tool's system-prompt guidance.
pub const READ_PROMPT: &str = "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files.";

/// `read`.
#[derive(Debug)]
pub struct ReadTool {
    config: ReadConfig,
    schema: Value,
}

impl ReadTool {
    /// A read tool with these limits.
    pub fn new(config: ReadConfig) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "Path to read, resolved by the filesystem backend."
                },
                "offset": {
                    "type": "number",
                    "description": "1-based first line to return. Defaults to 1."
                },
                "limit": {
                    "type": "number",
                    "description": format!("Maximum number of lines to return. Defaults to {}.", config.limit)
                }
            },
            "required": ["file_path"],
            "additionalProperties": false
        });
        Self { config, schema }
    }
}

async fn next_chunk(stream: &mut TextStream) -> Option<Result<String, FsError>> {
    std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await
}

#[async_trait::async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &'static str {
        "read"
    }

    fn description(&self) -> &str {
        "Read a UTF-8 text file and return line-numbered content."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::READ)
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects::READ_ONLY
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        Some(PromptSection {
            id: "tool:read",
            order: 100,
            text: READ_PROMPT,
        })
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = args.file_path()?;
        let offset = args.optional_positive_integer("offset")?.unwrap_or(1);
        let max_limit = self.config.limit.get();
        let limit = match args.optional_positive_integer("limit")? {
            Some(l) if l > max_limit => {
                return Err(ToolError::arguments(format!(
                    "limit must be less than or equal to {max_limit}"
                )));
            }
            Some(l) => l,
            None => max_limit,
        };

        let target = resolve(exec, path, false).await?;
        let display = &target.display_path;
        let info = stat_regular(exec, &target).await?;

        let mut windower = Windower::new(WindowSpec {
            offset,
            limit,
            max_line_chars: self.config.max_line_chars.get(),
            max_bytes: self.config.max_bytes.get(),
        });
        let stream = info
            .size
            .is_none_or(|size| size >= self.config.stream_min_size.get());
        if stream {
            let mut chunks = exec.fs.stream_text(&target, &exec.signal).await?;
            while let Some(chunk) = next_chunk(&mut chunks).await {
                windower.push(&chunk?);
            }
        } else {
            let text = exec.fs.read_text(&target, &exec.signal).await?;
            windower.push(&text);
        }
        let window = windower.finish();
        let total = window.total_lines;
        if !window.truncated_by_bytes && offset > total && !(total == 0 && offset == 1) {
            return Err(FsError::new(
                FsErrorCode::NotFound,
                format!("offset {offset} is out of range for \"{display}\" ({total} lines)"),
            )
            .into());
        }

        exec.gate.observed(
            &target,
            &FsObservation::Present {
                version: info.version,
            },
            exec.actor(),
        );
        Ok(ToolOutput {
            content: vec![ContentBlock::Text(render_read(display, &window, limit))],
            metadata: json!({
                "path": display,
                "offset": offset,
                "end_line": window.end_line(),
                "total_lines": total,
                "truncated_by_bytes": window.truncated_by_bytes,
                "streamed": stream,
            }),
        })
    }
}
