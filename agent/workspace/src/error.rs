//! One error type with a stable code per failure, so a harness can branch on the code and show
//! the message — the same shape as the contract's `FsError`.

use seam::FsError;

/// The stable code of a [`WorkspaceError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WorkspaceErrorCode {
    /// No workspace has that id (or that root, for a lookup by path).
    NotFound,
    /// A root that does not exist, is not a directory, or has no canonical path.
    InvalidRoot,
    /// A session cwd that lies in no registered workspace.
    NotMember,
    /// A wider mode asked for without an approval.
    EscalationRefused,
    /// A call with neither a session nor a configured workspace: no root to fence to.
    NoRoot,
    /// The registry file is not a registry (bad JSON, bad fields). Nothing was changed.
    RegistryCorrupt,
    /// The registry file was written by a newer format than this build reads. Nothing was
    /// changed.
    RegistryFormat,
    /// Other writers kept changing the registry between every read and write; gave up.
    Contended,
    /// The storage under the registry failed (the filesystem error is the source).
    Store,
}

impl WorkspaceErrorCode {
    /// The stable name, `WS_*`.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceErrorCode::NotFound => "WS_NOT_FOUND",
            WorkspaceErrorCode::InvalidRoot => "WS_INVALID_ROOT",
            WorkspaceErrorCode::NotMember => "WS_NOT_MEMBER",
            WorkspaceErrorCode::EscalationRefused => "WS_ESCALATION_REFUSED",
            WorkspaceErrorCode::NoRoot => "WS_NO_ROOT",
            WorkspaceErrorCode::RegistryCorrupt => "WS_REGISTRY_CORRUPT",
            WorkspaceErrorCode::RegistryFormat => "WS_REGISTRY_FORMAT",
            WorkspaceErrorCode::Contended => "WS_CONTENDED",
            WorkspaceErrorCode::Store => "WS_STORE",
        }
    }
}

impl std::fmt::Display for WorkspaceErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused or failed workspace operation: a code and a message for a person.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct WorkspaceError {
    code: WorkspaceErrorCode,
    message: String,
    #[source]
    source: Option<FsError>,
}

impl WorkspaceError {
    /// An error with `code` and `message`.
    pub fn new(code: WorkspaceErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            source: None,
        }
    }

    /// A storage failure while doing `what` (for example `read the registry /x.json`).
    pub fn store(what: &str, source: FsError) -> Self {
        Self {
            code: WorkspaceErrorCode::Store,
            message: format!("cannot {what}: {} ({})", source.message(), source.code()),
            source: Some(source),
        }
    }

    /// The stable code.
    pub fn code(&self) -> WorkspaceErrorCode {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The filesystem error underneath a [`WorkspaceErrorCode::Store`] failure.
    pub fn fs_error(&self) -> Option<&FsError> {
        self.source.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::WorkspaceErrorCode as C;

    #[test]
    fn the_codes_keep_their_stable_names() {
        let names: Vec<&str> = [
            C::NotFound,
            C::InvalidRoot,
            C::NotMember,
            C::EscalationRefused,
            C::NoRoot,
            C::RegistryCorrupt,
            C::RegistryFormat,
            C::Contended,
            C::Store,
        ]
        .into_iter()
        .map(C::as_str)
        .collect();
        assert_eq!(
            names,
            [
                "WS_NOT_FOUND",
                "WS_INVALID_ROOT",
                "WS_NOT_MEMBER",
                "WS_ESCALATION_REFUSED",
                "WS_NO_ROOT",
                "WS_REGISTRY_CORRUPT",
                "WS_REGISTRY_FORMAT",
                "WS_CONTENDED",
                "WS_STORE",
            ]
        );
    }
}
