//! Stream flow control over the wire. An adapter that sends every chunk of a `stream_text` at
//! once, past the window of 8 it announced, is caught by `sequences` at fresh seeds with a short
//! trace that names `stream/credit` — the gate reads long streams slowly, and the client counts
//! what it granted — beside the same adapter honouring the window passing at the same seed.
//! (Before, nothing compared the chunks in flight with the window, and it passed.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::caught_at_fresh_seeds_beside;
use std::path::{Path, PathBuf};

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

fn python(adapter: &Path) -> String {
    format!("exec:python3 {} --test-control", adapter.display())
}

fn adapter(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/adapters")
        .join(name)
        .canonicalize()
        .expect("the adapter")
}

#[test]
fn an_adapter_that_ignores_stream_credit_is_caught_at_fresh_seeds_beside_one_that_honours_it() {
    if python_or_skip() {
        caught_at_fresh_seeds_beside(
            &python(&adapter("broken/ignores_credit.py")),
            &python(&adapter("python/seam_adapter.py")),
            &["(stream_text ", "it ignores stream/credit"],
        );
    }
}
