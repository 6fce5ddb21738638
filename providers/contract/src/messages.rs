//! The contract's failure texts, as constructors.
//!
//! A harness shows these messages to a model and to people, and the conformance suite compares
//! them exactly, so they are part of the contract like the codes are. Every provider and the
//! reference model build their failures here; an author never copies a string. The texts follow
//! the TypeScript seed this project re-thinks: `cannot <verb> "<display path>": <detail>`, where
//! the display path is the caller's spelling, lexically normalised (see [`crate::paths`]).
//!
//! ```
//! use seam::{FsError, FsErrorCode, Verb};
//! let e = FsError::not_regular_file(Verb::Write, "/w/d");
//! assert_eq!(e.code(), FsErrorCode::NotRegularFile);
//! assert_eq!(e.message(), "cannot write \"/w/d\": not a regular file");
//! ```

use crate::{FsError, FsErrorCode, SandboxMode, Verb};

/// The detail of a symlink loop: fixed, so the message is the same on every platform.
pub const LOOP_DETAIL: &str = "too many levels of symbolic links";

impl FsError {
    /// The template every path-naming failure follows: `cannot <verb> "<display>": <detail>`.
    pub fn cannot(code: FsErrorCode, verb: Verb, display: &str, detail: &str) -> FsError {
        FsError::new(code, format!("cannot {verb} \"{display}\": {detail}"))
    }

    /// `FS_NOT_FOUND` for an empty or all-white-space path: `file_path must be a non-empty
    /// string`. It names no path, because there is none.
    pub fn blank_path() -> FsError {
        FsError::new(
            FsErrorCode::NotFound,
            "file_path must be a non-empty string",
        )
    }

    /// `FS_NOT_FOUND` for a path containing a NUL byte; `raw` is the path as given, made
    /// absolute ([`crate::paths::raw_display`]) but not normalised.
    pub fn nul_in_path(verb: Verb, raw: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotFound,
            verb,
            raw,
            "the path contains a NUL byte",
        )
    }

    /// `FS_NOT_FOUND` for a path with a component longer than [`crate::paths::NAME_MAX`] bytes.
    pub fn name_too_long(verb: Verb, raw: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotFound,
            verb,
            raw,
            "a path component is longer than 255 bytes",
        )
    }

    /// `FS_NOT_FOUND` when a parent segment is a regular file (resolve), or when a write would
    /// have to create through a file or a dangling link.
    pub fn parent_not_directory(verb: Verb, display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotFound,
            verb,
            display,
            "a parent path segment is not a directory",
        )
    }

    /// `FS_IO_ERROR` for a symlink loop (or a chain longer than the world allows).
    pub fn symlink_loop(verb: Verb, display: &str) -> FsError {
        Self::cannot(FsErrorCode::IoError, verb, display, LOOP_DETAIL)
    }

    /// `FS_NOT_FOUND`: nothing at the path (reads and listings).
    pub fn not_found(verb: Verb, display: &str) -> FsError {
        Self::cannot(FsErrorCode::NotFound, verb, display, "not found")
    }

    /// `FS_NOT_REGULAR_FILE`: a directory, FIFO, socket, device or dangling link where a regular
    /// file is needed.
    pub fn not_regular_file(verb: Verb, display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotRegularFile,
            verb,
            display,
            "not a regular file",
        )
    }

    /// `FS_NOT_DIRECTORY`: a listing of something that is not a directory.
    pub fn not_a_directory(display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotDirectory,
            Verb::List,
            display,
            "not a directory",
        )
    }

    /// `FS_NOT_TEXT`: a NUL byte where the decoding rules look for one.
    pub fn binary(verb: Verb, display: &str) -> FsError {
        Self::cannot(FsErrorCode::NotText, verb, display, "binary file")
    }

    /// `FS_NOT_TEXT`: not strict UTF-8.
    pub fn invalid_utf8(verb: Verb, display: &str) -> FsError {
        Self::cannot(FsErrorCode::NotText, verb, display, "invalid UTF-8 text")
    }

    /// `FS_TOO_LARGE`: a file of `size` bytes over a `read_bytes` cap of `max`.
    pub fn too_large(display: &str, size: u64, max: u64) -> FsError {
        Self::cannot(
            FsErrorCode::TooLarge,
            Verb::Read,
            display,
            &format!("{size} bytes exceeds the {max}-byte limit"),
        )
    }

    /// `FS_TOO_LARGE`: the file grew past the cap while it was read.
    pub fn grew_past_cap(display: &str, max: u64) -> FsError {
        Self::cannot(
            FsErrorCode::TooLarge,
            Verb::Read,
            display,
            &format!("content exceeds the {max}-byte limit"),
        )
    }

    /// `FS_STALE_VERSION`: a replace-if-version write found nothing at the path.
    pub fn no_longer_exists(display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::StaleVersion,
            Verb::Write,
            display,
            "file no longer exists",
        )
    }

    /// `FS_STALE_VERSION`: the file is not at the guarded version (or, for an edit, is gone).
    pub fn changed_since_read(verb: Verb, display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::StaleVersion,
            verb,
            display,
            "file changed since it was read",
        )
    }

    /// `FS_NOT_OBSERVED`: a create-if-absent found a file at the path.
    pub fn exists_not_observed(display: &str) -> FsError {
        FsError::new(
            FsErrorCode::NotObserved,
            format!("cannot overwrite existing \"{display}\" without reading it first"),
        )
    }

    /// `FS_NOT_OBSERVED`: a read-before-write policy refused an edit of a file its session never
    /// read: `edit requires reading "<path>" first`.
    pub fn edit_requires_read(display: &str) -> FsError {
        FsError::new(
            FsErrorCode::NotObserved,
            format!("edit requires reading \"{display}\" first"),
        )
    }

    /// `FS_NOT_OBSERVED`: a read-before-write policy refused a `remove` or a `rename` of a file
    /// its session never read: `<verb> requires reading "<path>" first`.
    pub fn requires_read(verb: Verb, display: &str) -> FsError {
        FsError::new(
            FsErrorCode::NotObserved,
            format!("{verb} requires reading \"{display}\" first"),
        )
    }

    /// `FS_EDIT_NOT_FOUND`: an edit's old string is empty.
    pub fn empty_old_string() -> FsError {
        FsError::new(
            FsErrorCode::EditNotFound,
            "old_string must be a non-empty string",
        )
    }

    /// `FS_EDIT_NOT_FOUND`: the old string occurs nowhere.
    pub fn old_string_not_found(display: &str) -> FsError {
        FsError::new(
            FsErrorCode::EditNotFound,
            format!("old_string was not found in \"{display}\""),
        )
    }

    /// `FS_AMBIGUOUS_EDIT`: the old string occurs `count` times and `replace_all` is off.
    pub fn ambiguous_edit(display: &str, count: usize) -> FsError {
        FsError::new(
            FsErrorCode::AmbiguousEdit,
            format!(
                "old_string matched {count} times in \"{display}\"; provide a more specific old_string or set replace_all to true"
            ),
        )
    }

    /// `FS_ABORTED`: `<verb> aborted`.
    pub fn aborted(verb: Verb) -> FsError {
        FsError::new(FsErrorCode::Aborted, format!("{verb} aborted"))
    }

    /// `FS_PERMISSION_DENIED`: the storage refused access (EACCES, EPERM).
    pub fn permission_denied(verb: Verb, display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::PermissionDenied,
            verb,
            display,
            "permission denied",
        )
    }

    /// `FS_IO_ERROR` with the storage's own words as the detail.
    pub fn io(verb: Verb, display: &str, detail: &str) -> FsError {
        Self::cannot(FsErrorCode::IoError, verb, display, detail)
    }

    /// `FS_IO_ERROR`: the backend does not offer this operation (an unclaimed
    /// [`crate::Capability::Namespace`] operation); nothing changed.
    pub fn not_supported(verb: Verb, display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::IoError,
            verb,
            display,
            "not supported by this backend",
        )
    }

    /// `FS_NOT_FOUND`: the parent directory of the path does not exist (a `create_dir` without
    /// `parents`, a `rename` whose destination directory is missing).
    pub fn parent_missing(verb: Verb, display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotFound,
            verb,
            display,
            "the parent directory does not exist",
        )
    }

    /// `FS_NOT_OBSERVED`: `create_dir` found a directory there and was not told it may.
    pub fn directory_exists(display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotObserved,
            Verb::Mkdir,
            display,
            "a directory is already there",
        )
    }

    /// `FS_NOT_DIRECTORY`: `create_dir` found a file, a link or another non-directory there.
    pub fn not_directory_in_the_way(display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::NotDirectory,
            Verb::Mkdir,
            display,
            "something that is not a directory is already there",
        )
    }

    /// `FS_NOT_REGULAR_FILE`: a `remove` without `directory`, or a replacing `rename`, met a
    /// directory.
    pub fn is_a_directory(verb: Verb, display: &str) -> FsError {
        Self::cannot(FsErrorCode::NotRegularFile, verb, display, "is a directory")
    }

    /// `FS_IO_ERROR`: `remove` of a directory that has entries (removal is never recursive).
    pub fn directory_not_empty(display: &str) -> FsError {
        Self::cannot(
            FsErrorCode::IoError,
            Verb::Remove,
            display,
            "directory not empty",
        )
    }

    /// `FS_NOT_OBSERVED`: a `rename` without a replace guard found something at the destination.
    pub fn destination_exists(display: &str) -> FsError {
        FsError::new(
            FsErrorCode::NotObserved,
            format!("cannot rename onto existing \"{display}\" without its observed version"),
        )
    }

    /// `FS_IO_ERROR`: a `rename` of a directory to itself or beneath itself.
    pub fn rename_into_itself(display: &str, to: &str) -> FsError {
        FsError::new(
            FsErrorCode::IoError,
            format!("cannot rename \"{display}\" into itself (\"{to}\")"),
        )
    }

    /// `FS_SANDBOX_DENIED`: the fence refused a mutation. Edits say `cannot write` too, as in
    /// the seed: the fence guards writing, whatever the tool.
    pub fn sandbox_denied(display: &str, mode: SandboxMode) -> FsError {
        Self::cannot(
            FsErrorCode::SandboxDenied,
            Verb::Write,
            display,
            &format!("file access denied under {} mode", mode.as_str()),
        )
    }

    /// `FS_SANDBOX_DENIED` for a read (`stat`, `lstat`, `list`, `read`) of something outside
    /// the roots a read-fencing provider lets its deployment see
    /// ([`crate::Capability::ReadFence`]).
    pub fn read_denied(verb: Verb, display: &str, mode: SandboxMode) -> FsError {
        Self::cannot(
            FsErrorCode::SandboxDenied,
            verb,
            display,
            &format!("outside the readable roots under {} mode", mode.as_str()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_follows_the_seed() {
        let d = "/w/a";
        let cases: Vec<(FsError, FsErrorCode, &str)> = vec![
            (
                FsError::blank_path(),
                FsErrorCode::NotFound,
                "file_path must be a non-empty string",
            ),
            (
                FsError::parent_not_directory(Verb::Resolve, d),
                FsErrorCode::NotFound,
                "cannot resolve \"/w/a\": a parent path segment is not a directory",
            ),
            (
                FsError::symlink_loop(Verb::List, d),
                FsErrorCode::IoError,
                "cannot list \"/w/a\": too many levels of symbolic links",
            ),
            (
                FsError::too_large(d, 5, 4),
                FsErrorCode::TooLarge,
                "cannot read \"/w/a\": 5 bytes exceeds the 4-byte limit",
            ),
            (
                FsError::no_longer_exists(d),
                FsErrorCode::StaleVersion,
                "cannot write \"/w/a\": file no longer exists",
            ),
            (
                FsError::changed_since_read(Verb::Edit, d),
                FsErrorCode::StaleVersion,
                "cannot edit \"/w/a\": file changed since it was read",
            ),
            (
                FsError::exists_not_observed(d),
                FsErrorCode::NotObserved,
                "cannot overwrite existing \"/w/a\" without reading it first",
            ),
            (
                FsError::ambiguous_edit(d, 3),
                FsErrorCode::AmbiguousEdit,
                "old_string matched 3 times in \"/w/a\"; provide a more specific old_string or set replace_all to true",
            ),
            (
                FsError::aborted(Verb::Edit),
                FsErrorCode::Aborted,
                "edit aborted",
            ),
            (
                FsError::sandbox_denied(d, SandboxMode::ReadOnly),
                FsErrorCode::SandboxDenied,
                "cannot write \"/w/a\": file access denied under read-only mode",
            ),
            (
                FsError::read_denied(Verb::List, d, SandboxMode::WorkspaceWrite),
                FsErrorCode::SandboxDenied,
                "cannot list \"/w/a\": outside the readable roots under workspace-write mode",
            ),
            (
                FsError::not_supported(Verb::Rename, d),
                FsErrorCode::IoError,
                "cannot rename \"/w/a\": not supported by this backend",
            ),
            (
                FsError::directory_exists(d),
                FsErrorCode::NotObserved,
                "cannot mkdir \"/w/a\": a directory is already there",
            ),
            (
                FsError::destination_exists(d),
                FsErrorCode::NotObserved,
                "cannot rename onto existing \"/w/a\" without its observed version",
            ),
            (
                FsError::rename_into_itself(d, "/w/a/b"),
                FsErrorCode::IoError,
                "cannot rename \"/w/a\" into itself (\"/w/a/b\")",
            ),
        ];
        for (e, code, text) in cases {
            assert_eq!((e.code(), e.message()), (code, text));
        }
    }
}
