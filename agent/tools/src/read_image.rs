//! The `read_image` tool: an image file, returned as an image block the model can look at.
//!
//! It exists only where the composition has somewhere to send images (an [`ImageSink`]: an
//! image-capable model route, an attachment store); without one the tool is not registered at
//! all, so a text-only model is never offered it. The extension declares the format and the
//! bytes must agree; the size cap is checked against the stat before anything is read, and the
//! provider's `read_bytes` enforces it again (never reading past it) against a file that grows.

use crate::args::Args;
use crate::exec::Exec;
use crate::image_format::{ImageType, extension};
use crate::output::{ContentBlock, ErrorCode, ToolError, ToolOutput, ToolResult};
use crate::paths::{resolve, stat_regular};
use crate::tool::{PromptSection, Tool, ToolEffects};
use base64::Engine as _;
use seam::{FsError, FsErrorCode, FsObservation};
use serde_json::{Value, json};
use std::sync::Arc;

/// The default byte cap of one image: 20 MiB (the seed's attachment store default).
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Where images go: the composition's statement that it can carry images to the model, with
/// its limits.
pub trait ImageSink: Send + Sync {
    /// The largest image, in bytes, it takes (inclusive). Default 20 MiB.
    fn max_bytes(&self) -> u64 {
        DEFAULT_MAX_IMAGE_BYTES
    }

    /// Whether this deployment takes images of this format. Default: all four.
    fn accepts(&self, image_type: ImageType) -> bool {
        let _ = image_type;
        true
    }
}

/// `read_image`.
pub struct ReadImageTool {
    sink: Arc<dyn ImageSink>,
    schema: Value,
}

impl std::fmt::Debug for ReadImageTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadImageTool")
            .field("max_bytes", &self.sink.max_bytes())
            .finish_non_exhaustive()
    }
}

impl ReadImageTool {
    /// A read_image tool sending to `sink`.
    pub fn new(sink: Arc<dyn ImageSink>) -> Self {
        Self {
            sink,
            schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "type": "string",
                        "description": "Path of the PNG/JPEG/WebP/GIF image to read, resolved by the filesystem backend."
                    }
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ReadImageTool {
    fn name(&self) -> &'static str {
        "read_image"
    }

    fn description(&self) -> &str {
        "Read a PNG/JPEG/WebP/GIF file and return the image itself. Use this tool directly instead of installing image libraries or creating thumbnails merely to inspect an image. Independent files may be read concurrently in small batches. Requires the current model to accept image input."
    }

    fn schema(&self) -> &Value {
        &self.schema
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&crate::output_schemas::READ_IMAGE)
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn effects(&self) -> ToolEffects {
        ToolEffects::READ_ONLY
    }

    fn prompt_section(&self) -> Option<PromptSection> {
        None
    }

    async fn execute(&self, args: &Value, exec: &Exec) -> ToolResult {
        let args = Args::new(args);
        let path = args.file_path()?;
        let Some(declared) = ImageType::from_path(path) else {
            return Err(ToolError::arguments(format!(
                "cannot read \"{path}\": read_image only accepts PNG/JPEG/WebP/GIF paths"
            )));
        };
        let media = declared.media_type();
        if !self.sink.accepts(declared) {
            return Err(ToolError::arguments(format!(
                "cannot read \"{path}\": {media} images are not accepted by this deployment"
            )));
        }

        let target = resolve(exec, path, false).await?;
        let display = &target.display_path;
        let info = stat_regular(exec, &target).await?;
        let cap = self.sink.max_bytes();
        if let Some(size) = info.size
            && size > cap
        {
            return Err(FsError::new(
                FsErrorCode::TooLarge,
                format!("cannot read \"{display}\": {size} bytes exceeds the {cap}-byte limit"),
            )
            .into());
        }
        let bytes = exec.fs.read_bytes(&target, cap, &exec.signal).await?;

        if ImageType::sniff(&bytes) != Some(declared) {
            let ext = extension(path).unwrap_or_default();
            return Err(ToolError::image(
                ErrorCode::ImageTypeMismatch,
                format!(
                    "cannot read \"{display}\": the {ext} extension declares {media}, but the bytes use a different image format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, or convert it to one of those formats"
                ),
            ));
        }
        let Some((width, height)) = declared.dimensions(&bytes) else {
            return Err(ToolError::image(
                ErrorCode::ImageMalformed,
                format!("cannot read \"{display}\": the {media} header is truncated or malformed"),
            ));
        };

        exec.gate.observed(
            &target,
            &FsObservation::Present {
                version: info.version,
            },
            exec.actor(),
        );
        let size = bytes.len();
        let text = format!(
            "<path>{display}</path>\n<type>image</type>\n<content>\n{media} image, {width}x{height} px, {size} bytes\n</content>"
        );
        Ok(ToolOutput {
            content: vec![
                ContentBlock::Text(text),
                ContentBlock::Image {
                    data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                    media_type: media.to_string(),
                },
            ],
            metadata: json!({
                "path": display,
                "media_type": media,
                "width": width,
                "height": height,
                "bytes": size,
            }),
        })
    }
}
