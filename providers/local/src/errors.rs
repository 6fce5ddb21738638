//! From OS errors to coded failures. Every path out of the provider goes through here, so no
//! raw errno escapes: EACCES/EPERM are `FS_PERMISSION_DENIED`, a symlink loop is `FS_IO_ERROR`
//! with a fixed text (so the message is the same on every machine), the rest `FS_IO_ERROR` with
//! the OS's own words.

use rustix::io::Errno;
use seam::{FsError, FsErrorCode};

/// The text for ELOOP, fixed so messages can be pinned.
pub(crate) const LOOP_TEXT: &str = "too many levels of symbolic links";

/// `cannot <verb> "<display>": <detail>` with a code.
pub(crate) fn fail(code: FsErrorCode, verb: &str, display: &str, detail: &str) -> FsError {
    FsError::new(code, format!("cannot {verb} \"{display}\": {detail}"))
}

/// Maps an OS error of an operation on `display`.
pub(crate) fn os(err: Errno, verb: &str, display: &str) -> FsError {
    let io = std::io::Error::from(err);
    let mapped = match err {
        Errno::ACCESS | Errno::PERM => fail(
            FsErrorCode::PermissionDenied,
            verb,
            display,
            "permission denied",
        ),
        Errno::LOOP => fail(FsErrorCode::IoError, verb, display, LOOP_TEXT),
        Errno::NAMETOOLONG => fail(FsErrorCode::IoError, verb, display, "file name too long"),
        _ => fail(FsErrorCode::IoError, verb, display, &io.to_string()),
    };
    mapped.with_source(io)
}

/// Maps a `std::io::Error` the same way.
pub(crate) fn io(err: std::io::Error, verb: &str, display: &str) -> FsError {
    match err.raw_os_error() {
        Some(raw) => os(Errno::from_raw_os_error(raw), verb, display),
        None => fail(FsErrorCode::IoError, verb, display, &err.to_string()).with_source(err),
    }
}

/// Whether an errno means "nothing there" for a probe.
pub(crate) fn is_absent(err: Errno) -> bool {
    matches!(err, Errno::NOENT | Errno::NOTDIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_errno_gets_a_code_and_names_the_path() {
        let cases = [
            (Errno::ACCESS, FsErrorCode::PermissionDenied),
            (Errno::PERM, FsErrorCode::PermissionDenied),
            (Errno::LOOP, FsErrorCode::IoError),
            (Errno::NOSPC, FsErrorCode::IoError),
            (Errno::IO, FsErrorCode::IoError),
        ];
        for (errno, code) in cases {
            let e = os(errno, "write", "/x/y");
            assert_eq!(e.code(), code, "{errno:?}");
            assert!(
                e.message().starts_with("cannot write \"/x/y\": "),
                "{}",
                e.message()
            );
        }
        assert_eq!(
            os(Errno::LOOP, "list", "/l").message(),
            "cannot list \"/l\": too many levels of symbolic links"
        );
        let e = io(std::io::Error::other("custom"), "read", "/z");
        assert_eq!(
            (e.code(), e.message()),
            (FsErrorCode::IoError, "cannot read \"/z\": custom")
        );
    }
}
