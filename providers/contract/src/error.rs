//! Typed failures. Every failure of every operation carries one of thirteen stable codes,
//! because a harness decides what to tell the model (re-read, read first, give up) by code,
//! and a raw OS error that escapes uncoded is a decision nobody made.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// The thirteen stable failure codes. They serialise as their `FS_*` names.
///
/// `#[non_exhaustive]`: a code may be added in a minor release, so a `match` needs a wildcard
/// arm. What each code means for each operation is documented on [`crate::FileSystem`]'s
/// methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FsErrorCode {
    /// Nothing at the path, a blank path, or a path through a regular file.
    #[serde(rename = "FS_NOT_FOUND")]
    NotFound,
    /// A directory operation on something that is not a directory.
    #[serde(rename = "FS_NOT_DIRECTORY")]
    NotDirectory,
    /// Content is binary (NUL) or not strict UTF-8.
    #[serde(rename = "FS_NOT_TEXT")]
    NotText,
    /// A file operation on a directory, a dangling link, or another non-regular entry.
    #[serde(rename = "FS_NOT_REGULAR_FILE")]
    NotRegularFile,
    /// Content exceeds the caller's byte cap.
    #[serde(rename = "FS_TOO_LARGE")]
    TooLarge,
    /// The operating system refused access (EACCES, EPERM).
    #[serde(rename = "FS_PERMISSION_DENIED")]
    PermissionDenied,
    /// A sandbox fence refused a mutation; nothing changed.
    #[serde(rename = "FS_SANDBOX_DENIED")]
    SandboxDenied,
    /// Any other failure of the storage.
    #[serde(rename = "FS_IO_ERROR")]
    IoError,
    /// A guarded mutation found the file changed or gone since the caller saw it.
    #[serde(rename = "FS_STALE_VERSION")]
    StaleVersion,
    /// A create-if-absent found a file there, or an edit was not preceded by a read.
    #[serde(rename = "FS_NOT_OBSERVED")]
    NotObserved,
    /// An edit's text matched more than once and `replace_all` was not set.
    #[serde(rename = "FS_AMBIGUOUS_EDIT")]
    AmbiguousEdit,
    /// An edit's text is empty or matched nowhere.
    #[serde(rename = "FS_EDIT_NOT_FOUND")]
    EditNotFound,
    /// The operation was cancelled before it committed; it left no trace.
    #[serde(rename = "FS_ABORTED")]
    Aborted,
}

impl FsErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [FsErrorCode; 13] = [
        Self::NotFound,
        Self::NotDirectory,
        Self::NotText,
        Self::NotRegularFile,
        Self::TooLarge,
        Self::PermissionDenied,
        Self::SandboxDenied,
        Self::IoError,
        Self::StaleVersion,
        Self::NotObserved,
        Self::AmbiguousEdit,
        Self::EditNotFound,
        Self::Aborted,
    ];

    /// The stable `FS_*` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "FS_NOT_FOUND",
            Self::NotDirectory => "FS_NOT_DIRECTORY",
            Self::NotText => "FS_NOT_TEXT",
            Self::NotRegularFile => "FS_NOT_REGULAR_FILE",
            Self::TooLarge => "FS_TOO_LARGE",
            Self::PermissionDenied => "FS_PERMISSION_DENIED",
            Self::SandboxDenied => "FS_SANDBOX_DENIED",
            Self::IoError => "FS_IO_ERROR",
            Self::StaleVersion => "FS_STALE_VERSION",
            Self::NotObserved => "FS_NOT_OBSERVED",
            Self::AmbiguousEdit => "FS_AMBIGUOUS_EDIT",
            Self::EditNotFound => "FS_EDIT_NOT_FOUND",
            Self::Aborted => "FS_ABORTED",
        }
    }

    /// Parses an `FS_*` name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for FsErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A coded failure: a stable [`FsErrorCode`], a message for people (it names the path when there
/// is one), and optionally the underlying cause.
#[derive(Clone, thiserror::Error)]
#[error("{message}")]
pub struct FsError {
    code: FsErrorCode,
    message: String,
    #[source]
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
}

impl FsError {
    /// A failure with a code and a message.
    pub fn new(code: FsErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            source: None,
        }
    }

    /// The same failure with its underlying cause attached.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The stable code.
    pub fn code(&self) -> FsErrorCode {
        self.code
    }

    /// The message for people.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same code and cause with a different message (used to append remedies).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }
}

impl fmt::Debug for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("FsError");
        d.field("code", &self.code).field("message", &self.message);
        if let Some(source) = &self.source {
            d.field("source", &source.to_string());
        }
        d.finish()
    }
}

impl PartialEq for FsError {
    /// Two failures are equal when code and message are; causes are diagnostics only.
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message
    }
}

impl Eq for FsError {}

#[derive(Serialize, Deserialize)]
struct WireError {
    code: FsErrorCode,
    message: String,
}

impl Serialize for FsError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireError {
            code: self.code,
            message: self.message.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FsError {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = WireError::deserialize(deserializer)?;
        Ok(FsError::new(wire.code, wire.message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_stable_names_and_round_trip() {
        for code in FsErrorCode::ALL {
            let json = serde_json::to_string(&code).expect("serialise");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            let back: FsErrorCode = serde_json::from_str(&json).expect("parse");
            assert_eq!(back, code);
            assert_eq!(FsErrorCode::from_name(code.as_str()), Some(code));
        }
        assert_eq!(FsErrorCode::from_name("FS_NOPE"), None);
    }

    #[test]
    fn an_error_crosses_a_wire_with_code_and_message() {
        let err = FsError::new(
            FsErrorCode::StaleVersion,
            "cannot write \"/x\": file changed",
        )
        .with_source(std::io::Error::other("inner"));
        let json = serde_json::to_string(&err).expect("serialise");
        assert_eq!(
            json,
            r#"{"code":"FS_STALE_VERSION","message":"cannot write \"/x\": file changed"}"#
        );
        let back: FsError = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, err);
        assert_eq!(back.code(), FsErrorCode::StaleVersion);
    }

    #[test]
    fn the_cause_is_chained() {
        use std::error::Error as _;
        let err =
            FsError::new(FsErrorCode::IoError, "outer").with_source(std::io::Error::other("inner"));
        assert_eq!(
            err.source().map(|s| s.to_string()),
            Some("inner".to_string())
        );
        assert_eq!(err.to_string(), "outer");
    }
}
