//! The kits' low layer, `serve`, as their READMEs show it ("Gating an implementation you already
//! have"): each kit's `examples/serve_backend` — a backend object of the author's own over a
//! dict or a Map, the protocol left to the kit — passes the whole default `seam check` at a fresh
//! seed, claiming what the README says it claims, with the properties it cannot run said so.

#[path = "support/seeds.rs"]
mod seeds;
use seeds::fresh_seed;
use std::path::Path;
use std::process::Command;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::{node_or_skip, python_or_skip};

fn check(interpreter: &str, example: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/kits")
        .join(example)
        .canonicalize()
        .expect("the example");
    let lines = std::fs::read_to_string(&script)
        .expect("the example")
        .lines()
        .count();
    assert!(
        lines <= 300,
        "{example} is {lines} lines: a teaching example"
    );
    let seed = fresh_seed();
    let provider = format!("exec:{interpreter} {}", script.display());
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args([
            "check",
            "--provider",
            &provider,
            "--seed",
            &seed.to_string(),
        ])
        .current_dir(dir.path())
        .output()
        .expect("run seam");
    let said = String::from_utf8_lossy(&out.stdout);
    let repeat = format!("repeat with: seam check --provider '{provider}' --seed {seed}");
    assert_eq!(out.status.code(), Some(0), "{repeat}\n{said}");
    assert!(said.contains("RESULT: pass"), "{repeat}\n{said}");
    assert!(!said.contains("UNREACHED"), "{repeat}\n{said}");
    assert!(
        said.contains("claims: read_bytes, cancel_points\n"),
        "{repeat}\n{said}"
    );
    for property in ["claims", "bad-input", "cas-races", "sequences", "policy"] {
        assert!(
            said.contains(&format!("\n  {property:<22} passed")),
            "{property}: {repeat}\n{said}"
        );
    }
}

#[test]
fn the_python_kits_serve_example_passes_the_whole_gate_at_a_fresh_seed() {
    if python_or_skip() {
        check("python3", "python/examples/serve_backend.py");
    }
}

#[test]
fn the_js_kits_serve_example_passes_the_whole_gate_at_a_fresh_seed() {
    if node_or_skip() {
        check("node", "js/examples/serve_backend.js");
    }
}
