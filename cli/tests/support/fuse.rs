//! Whether a test that needs a FUSE mount (the power-loss layer) can run here.

/// `true` where the power-loss layer can be mounted. Where it cannot, the test fails saying
/// why, unless `SEAM_SKIP_FUSE=1` asks to skip it knowingly (then `false`).
pub fn fuse_or_skip(test: &str) -> bool {
    match seam_powercut::available() {
        Ok(()) => true,
        Err(why) => {
            assert!(
                std::env::var_os("SEAM_SKIP_FUSE").is_some(),
                "{test}: FUSE cannot be mounted here ({why}); set SEAM_SKIP_FUSE=1 to skip knowingly"
            );
            eprintln!("{test}: skipped (SEAM_SKIP_FUSE): {why}");
            false
        }
    }
}
