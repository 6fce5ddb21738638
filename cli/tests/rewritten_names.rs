//! Names a store rewrites. A kit store that keeps every name in Unicode NFC — as some macOS
//! volumes and several object stores do — is caught by `sequences` at fresh seeds with a trace
//! of at most four steps: the gate draws `é` both precomposed and decomposed (`e` + U+0301), two
//! names to the contract. Beside it, the kit's own dict example passes at the same seed. (When
//! the only non-ASCII name drawn was the precomposed one, already NFC, it passed.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::caught_at_fresh_seeds_beside;
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
    if python_or_skip() {
        // The departure is about the decomposed spelling of the name.
        caught_at_fresh_seeds_beside(
            &kit_example("fixtures/adapters/broken/kit_nfc_names.py"),
            &kit_example("conformance/kits/python/examples/dict_backend.py"),
            &["e\\u{301}"],
        );
    }
}
