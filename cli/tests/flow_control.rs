//! Stream flow control over the wire. An adapter that sends every chunk of a `stream_text` at
//! once, past the window of 8 it announced, is caught by `sequences` at fresh seeds with a short
//! trace that names `stream/credit` — the gate reads long streams slowly, and the client counts
//! what it granted — beside the same adapter honouring the window passing at the same seed.
//! (Before, nothing compared the chunks in flight with the window, and it passed.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::{fresh_seed, sequences};
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
    if !python_or_skip() {
        return;
    }
    for _ in 0..3 {
        let seed = fresh_seed();
        let repeat = format!(
            "repeat with: seam check --provider 'exec:python3 fixtures/adapters/broken/ignores_credit.py --test-control' --property sequences --seed {seed}"
        );
        let (code, said, steps) = sequences(&python(&adapter("broken/ignores_credit.py")), seed);
        assert_eq!(code, Some(1), "{repeat}\n{said}");
        let failed = said
            .lines()
            .find(|l| l.starts_with("FAILED sequences"))
            .unwrap_or_else(|| panic!("{repeat}\n{said}"));
        assert!(
            failed.contains("(stream_text ") && failed.contains("it ignores stream/credit"),
            "{repeat}\n{failed}"
        );
        // Shrunk to the read of a long file and what made it.
        let steps = steps.unwrap_or_else(|| panic!("no trace saved: {repeat}\n{said}"));
        assert!(steps <= 4, "{steps} steps: {repeat}\n{said}");

        let (code, said, steps) = sequences(&python(&adapter("python/seam_adapter.py")), seed);
        assert!(
            said.contains("\n  sequences              passed"),
            "the honest adapter at seed {seed}:\n{said}"
        );
        // Only `sequences` was asked for: incomplete, never failed, and no trace.
        assert_eq!(code, Some(3), "{said}");
        assert_eq!(steps, None, "{said}");
    }
}
