//! Names a store rewrites. A kit store that keeps every name in Unicode NFC — as some macOS
//! volumes and several object stores do — is caught by `sequences` at fresh seeds with a trace
//! of at most four steps: the gate draws `é` both precomposed and decomposed (`e` + U+0301), two
//! names to the contract. Beside it, the kit's own dict example passes at the same seed. (When
//! the only non-ASCII name drawn was the precomposed one, already NFC, it passed.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::{fresh_seed, sequences};
use std::path::Path;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

fn kit_example(path: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .canonicalize()
        .expect("the script");
    format!("exec:python3 {}", script.display())
}

#[test]
fn a_store_that_keeps_names_in_nfc_is_caught_at_fresh_seeds_beside_one_that_keeps_them_as_given() {
    if !python_or_skip() {
        return;
    }
    for _ in 0..3 {
        let seed = fresh_seed();
        let repeat = format!(
            "repeat with: seam check --provider 'exec:python3 fixtures/adapters/broken/kit_nfc_names.py' --property sequences --seed {seed}"
        );
        let (code, said, steps) = sequences(
            &kit_example("fixtures/adapters/broken/kit_nfc_names.py"),
            seed,
        );
        assert_eq!(code, Some(1), "{repeat}\n{said}");
        let failed = said
            .lines()
            .find(|l| l.starts_with("FAILED sequences"))
            .unwrap_or_else(|| panic!("{repeat}\n{said}"));
        // The departure is about the two spellings of the name.
        assert!(
            failed.contains("e\\u{301}") || failed.contains("\"é\""),
            "{repeat}\n{failed}"
        );
        let steps = steps.unwrap_or_else(|| panic!("no trace saved: {repeat}\n{said}"));
        assert!(steps <= 4, "{steps} steps: {repeat}\n{said}");

        let (code, said, steps) = sequences(
            &kit_example("conformance/kits/python/examples/dict_backend.py"),
            seed,
        );
        assert!(
            said.contains("\n  sequences              passed"),
            "the dict example at seed {seed}:\n{said}"
        );
        assert_eq!(code, Some(3), "{said}");
        assert_eq!(steps, None, "{said}");
    }
}
