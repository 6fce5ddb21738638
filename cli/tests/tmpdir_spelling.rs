//! A TMPDIR as users write it. The shipped disk providers are given their case roots spelled
//! through the run directory's link, and every key the gate expects is the real path; a TMPDIR
//! written with `.`, `..` or `//` once made the display path keep that spelling while the
//! provider (rightly) collapsed it, and `local` was red on three properties for it.

use std::process::Command;

fn check_with_tmpdir(tmpdir: &str, seed: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider", "local", "--seed", seed])
        .args(["--property", "path-facts", "--property", "bad-input"])
        .args(["--property", "sequences", "--cases", "16"])
        .env("TMPDIR", tmpdir)
        .output()
        .expect("seam runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // Three of the core properties: incomplete, never a failure.
    (!stdout.contains("FAILED"), stdout)
}

#[test]
fn a_tmpdir_written_with_dots_and_double_slashes_changes_no_verdict() {
    let base = tempfile::tempdir().expect("tempdir");
    let real = base.path().join("real");
    std::fs::create_dir(&real).expect("dir");
    let root = base.path().display().to_string();
    let seed = format!("{}", std::process::id());
    for spelled in [
        format!("{root}/./real"),
        format!("{root}/gone/../real"),
        format!("{root}//real"),
    ] {
        if spelled.contains("/gone/") {
            std::fs::create_dir_all(base.path().join("gone")).expect("dir");
        }
        let (clean, stdout) = check_with_tmpdir(&spelled, &seed);
        assert!(clean, "TMPDIR={spelled}:\n{stdout}");
        assert!(stdout.contains("path-facts             passed"), "{stdout}");
        assert!(stdout.contains("sequences              passed"), "{stdout}");
    }
    let left: Vec<_> = std::fs::read_dir(&real).expect("real").collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}
