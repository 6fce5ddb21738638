//! From OS errors to coded failures. Every path out of the provider goes through here, so no
//! raw errno escapes: EACCES/EPERM are `FS_PERMISSION_DENIED`, a symlink loop is `FS_IO_ERROR`
//! with a fixed text (so the message is the same on every machine), the rest `FS_IO_ERROR` with
//! the OS's own words.

use rustix::io::Errno;
use seam::{FsError, Verb};

/// Maps an OS error of an operation on `display`.
pub(crate) fn os(err: Errno, verb: Verb, display: &str) -> FsError {
    let io = std::io::Error::from(err);
    let mapped = match err {
        Errno::ACCESS | Errno::PERM => FsError::permission_denied(verb, display),
        Errno::LOOP => FsError::symlink_loop(verb, display),
        Errno::NAMETOOLONG => FsError::io(verb, display, "file name too long"),
        _ => FsError::io(verb, display, &io.to_string()),
    };
    mapped.with_source(io)
}

/// Maps a `std::io::Error` the same way.
pub(crate) fn io(err: std::io::Error, verb: Verb, display: &str) -> FsError {
    match err.raw_os_error() {
        Some(raw) => os(Errno::from_raw_os_error(raw), verb, display),
        None => FsError::io(verb, display, &err.to_string()).with_source(err),
    }
}

/// Whether an errno means "nothing there" for a probe.
pub(crate) fn is_absent(err: Errno) -> bool {
    matches!(err, Errno::NOENT | Errno::NOTDIR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::FsErrorCode;

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
            let e = os(errno, Verb::Write, "/x/y");
            assert_eq!(e.code(), code, "{errno:?}");
            assert!(
                e.message().starts_with("cannot write \"/x/y\": "),
                "{}",
                e.message()
            );
        }
        assert_eq!(
            os(Errno::LOOP, Verb::List, "/l").message(),
            "cannot list \"/l\": too many levels of symbolic links"
        );
        let e = io(std::io::Error::other("custom"), Verb::Read, "/z");
        assert_eq!(
            (e.code(), e.message()),
            (FsErrorCode::IoError, "cannot read \"/z\": custom")
        );
    }
}
