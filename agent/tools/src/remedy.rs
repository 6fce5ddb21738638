//! Remedies: the next step, appended to the two failures a model can fix by itself.
//!
//! A stale version means someone else changed the file: re-read it, then retry. "Not observed"
//! means the model never read it: read it, then retry. The code stays the same, so a harness can
//! still branch on it; the original error is kept as the cause.

use seam::{FsError, FsErrorCode};

/// ` — re-read the file, then retry` (space, U+2014, space).
pub const STALE_REMEDY: &str = " — re-read the file, then retry";
/// ` — read the file, then retry`.
pub const NOT_OBSERVED_REMEDY: &str = " — read the file, then retry";

/// The error with its remedy appended, or unchanged when its code has none.
pub fn with_remedy(err: FsError) -> FsError {
    let suffix = match err.code() {
        FsErrorCode::StaleVersion => STALE_REMEDY,
        FsErrorCode::NotObserved => NOT_OBSERVED_REMEDY,
        _ => return err,
    };
    let message = format!("{}{suffix}", err.message());
    FsError::new(err.code(), message).with_source(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn stale_and_not_observed_get_their_remedy_and_keep_code_and_cause() {
        let e = with_remedy(FsError::new(
            FsErrorCode::StaleVersion,
            "cannot write \"/a\": file changed since it was read",
        ));
        assert_eq!(e.code(), FsErrorCode::StaleVersion);
        assert_eq!(
            e.message(),
            "cannot write \"/a\": file changed since it was read — re-read the file, then retry"
        );
        assert_eq!(
            e.source().map(|s| s.to_string()),
            Some("cannot write \"/a\": file changed since it was read".into())
        );
        let e = with_remedy(FsError::new(
            FsErrorCode::NotObserved,
            "edit requires reading \"/a\" first",
        ));
        assert_eq!(e.code(), FsErrorCode::NotObserved);
        assert_eq!(
            e.message(),
            "edit requires reading \"/a\" first — read the file, then retry"
        );
    }

    #[test]
    fn other_codes_pass_through_unchanged() {
        for code in FsErrorCode::ALL {
            if matches!(code, FsErrorCode::StaleVersion | FsErrorCode::NotObserved) {
                continue;
            }
            let e = FsError::new(code, "m");
            let out = with_remedy(e.clone());
            assert_eq!(out, e);
            assert!(out.source().is_none());
        }
    }
}
