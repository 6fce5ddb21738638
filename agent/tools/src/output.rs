//! What a tool call returns: content blocks for the model, metadata for a UI, or a coded error.
//!
//! A harness decides what to do next by the error's code (re-read, read first, ask for wider
//! access), so the `{ name, code }` pair travels with the failure instead of being folded into
//! its text.

use seam::{FsError, FsErrorCode};
use serde_json::Value;

/// One block of a tool's answer to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContentBlock {
    /// Plain text.
    Text(String),
    /// An image, base64-encoded.
    Image {
        /// The base64 (standard alphabet, padded) encoding of the image's bytes.
        data: String,
        /// Its media type, e.g. `image/png`.
        media_type: String,
    },
}

/// A successful tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// What the model sees, in order.
    pub content: Vec<ContentBlock>,
    /// Structured facts for a UI (never shown to the model): a read's window, a mutation's
    /// outcome and diff hunks. `Value::Null` when a tool has none.
    pub metadata: Value,
}

impl ToolOutput {
    /// Text for the model, with structured facts for a UI.
    pub fn with_text(text: String, metadata: Value) -> Self {
        Self {
            content: vec![ContentBlock::Text(text)],
            metadata,
        }
    }

    /// The text blocks, joined: what the model reads.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text(t) = block {
                out.push_str(t);
            }
        }
        out
    }
}

/// The machine-readable code of a failed tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A failure of the filesystem contract (also a policy refusal, which uses its codes).
    Fs(FsErrorCode),
    /// `read_image`: the bytes are not the format the extension declares.
    ImageTypeMismatch,
    /// `read_image`: the bytes start like the declared format but its header is unreadable.
    ImageMalformed,
    /// `glob` / `grep`: the pattern does not compile.
    SearchInvalidPattern,
    /// `glob` / `grep`: the search could not run (the backend offers none).
    SearchFailed,
    /// A refusal by the composition around the tools (a workspace rule, say), under the
    /// composition's own stable name.
    Composition(&'static str),
}

impl ErrorCode {
    /// The stable name: `FS_*` for filesystem codes, `IMAGE_*` for image checks, `SEARCH_*`
    /// for search failures.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Fs(code) => code.as_str(),
            ErrorCode::ImageTypeMismatch => "IMAGE_TYPE_MISMATCH",
            ErrorCode::ImageMalformed => "IMAGE_MALFORMED",
            ErrorCode::SearchInvalidPattern => "SEARCH_INVALID_PATTERN",
            ErrorCode::SearchFailed => "SEARCH_FAILED",
            ErrorCode::Composition(name) => name,
        }
    }
}

/// A failed tool call: a name (the kind of failure), an optional code, and the message the
/// model reads as `Error: <message>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    name: &'static str,
    code: Option<ErrorCode>,
    message: String,
}

impl ToolError {
    /// A bad argument, caught before any I/O. No code (as in the seed: a plain error).
    pub fn arguments(message: impl Into<String>) -> Self {
        Self {
            name: "ArgumentError",
            code: None,
            message: message.into(),
        }
    }

    /// A search that could not run or whose pattern does not compile (`SearchError`).
    pub fn search(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            name: "SearchError",
            code: Some(code),
            message: message.into(),
        }
    }

    /// A refused or impossible sandbox escalation. No code.
    pub fn escalation(message: impl Into<String>) -> Self {
        Self {
            name: "EscalationError",
            code: None,
            message: message.into(),
        }
    }

    /// An image that fails the image checks.
    pub fn image(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            name: "ImageError",
            code: Some(code),
            message: message.into(),
        }
    }

    /// A refusal by the composition before the tool ran (`code` is its stable name, such as
    /// `WS_ESCALATION_REFUSED`).
    pub fn composition(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            name: "CompositionError",
            code: Some(ErrorCode::Composition(code)),
            message: message.into(),
        }
    }

    /// A coded filesystem failure, as the tool reports it (remedies already appended).
    pub fn fs(err: FsError) -> Self {
        Self {
            name: "FsError",
            code: Some(ErrorCode::Fs(err.code())),
            message: err.message().to_string(),
        }
    }

    /// The kind of failure: `FsError`, `ArgumentError`, `EscalationError`, `ImageError` or
    /// `SearchError`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The code, when the failure has one.
    pub fn code(&self) -> Option<ErrorCode> {
        self.code
    }

    /// The filesystem code, when the failure is a filesystem one.
    pub fn fs_code(&self) -> Option<FsErrorCode> {
        match self.code {
            Some(ErrorCode::Fs(code)) => Some(code),
            _ => None,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What the model reads: `Error: <message>`.
    pub fn render(&self) -> String {
        format!("Error: {}", self.message)
    }
}

impl From<FsError> for ToolError {
    fn from(err: FsError) -> Self {
        ToolError::fs(err)
    }
}

/// The result of a tool call.
pub type ToolResult = Result<ToolOutput, ToolError>;
