//! Whether the interpreters the adapter tests need are here: a test without them fails, unless
//! it is skipped knowingly (`SEAM_SKIP_PYTHON=1`, `SEAM_SKIP_NODE=1`), and then says so.

#![allow(dead_code)]

use std::process::Command;

fn present_or_skip(program: &str, args: &[&str], skip: &str, what: &str) -> bool {
    if Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    assert!(
        std::env::var_os(skip).is_some(),
        "{what} is not on the PATH: install it, or set {skip}=1 to skip this test knowingly"
    );
    eprintln!("SKIPPED: no {what} ({skip} is set)");
    false
}

/// `python3` is here (or the test is skipped knowingly).
pub fn python_or_skip() -> bool {
    present_or_skip("python3", &["--version"], "SEAM_SKIP_PYTHON", "python3")
}

/// `python3 -m pip` is here.
pub fn pip_or_skip() -> bool {
    present_or_skip(
        "python3",
        &["-m", "pip", "--version"],
        "SEAM_SKIP_PYTHON",
        "pip",
    )
}

/// `node` is here.
pub fn node_or_skip() -> bool {
    present_or_skip("node", &["--version"], "SEAM_SKIP_NODE", "node")
}

/// `npm` is here.
pub fn npm_or_skip() -> bool {
    present_or_skip("npm", &["--version"], "SEAM_SKIP_NODE", "npm")
}
