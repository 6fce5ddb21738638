//! A kit store whose `publish` shows half a file. The kits answer a connection's calls at once,
//! so `atomic-visibility` applies to a kit store: one that puts its bytes in two parts (the first
//! half visible, under a version of its own, for 20 ms) is caught there at fresh seeds, in each
//! language, with a torn read — beside the kit's own dict example passing the same property at
//! the same seed with reads answered mid-write. (While the kits answered one call at a time, the
//! property did not apply to either, and the broken store passed.)

#[path = "support/seeds.rs"]
mod seeds;
use seeds::{check_at, fresh_seed};

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::{node_or_skip, python_or_skip};

use std::path::Path;

fn script(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .canonicalize()
        .expect("the script")
        .display()
        .to_string()
}

fn caught_beside(broken: &str, good: &str) {
    for _ in 0..3 {
        let seed = fresh_seed();
        let repeat = format!(
            "repeat with: seam check --provider '{broken}' --property atomic-visibility --seed {seed}"
        );
        let (code, said) = check_at(broken, seed, &["atomic-visibility"]);
        assert_eq!(code, Some(1), "{repeat}\n{said}");
        let failed = said
            .lines()
            .find(|l| l.starts_with("FAILED atomic-visibility [torn-read]: "))
            .unwrap_or_else(|| panic!("{repeat}\n{said}"));
        assert!(
            failed.contains("no state the file ever had"),
            "{repeat}\n{failed}"
        );

        let (code, said) = check_at(good, seed, &["atomic-visibility"]);
        assert!(
            said.contains("\n  atomic-visibility      passed"),
            "{good} at seed {seed}:\n{said}"
        );
        assert_eq!(code, Some(3), "only one property was asked for: {said}");
        let paused: usize = said
            .lines()
            .find_map(|l| {
                l.trim_start()
                    .split_once(" reads answered while a mutation was paused at a checkpoint")?
                    .0
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no count of paused reads: {said}"));
        assert!(paused > 0, "{good} at seed {seed}:\n{said}");
    }
}

#[test]
fn a_python_store_that_publishes_in_two_parts_is_caught_by_atomic_visibility() {
    if python_or_skip() {
        caught_beside(
            &format!(
                "exec:python3 {}",
                script("fixtures/adapters/broken/kit_two_step_publish.py")
            ),
            &format!(
                "exec:python3 {}",
                script("conformance/kits/python/examples/dict_backend.py")
            ),
        );
    }
}

#[test]
fn a_js_store_that_publishes_in_two_parts_is_caught_by_atomic_visibility() {
    if node_or_skip() {
        caught_beside(
            &format!(
                "exec:node {}",
                script("fixtures/adapters/broken/kit_two_step_publish.js")
            ),
            &format!(
                "exec:node {}",
                script("conformance/kits/js/examples/dict_backend.js")
            ),
        );
    }
}
