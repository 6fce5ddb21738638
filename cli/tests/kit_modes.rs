//! Storage without permission bits. A kit store that keeps none and says so in its world
//! (`"modes": false`) passes the full default run at a fresh seed: no mode is given to it or
//! compared, `modes` is not claimed for it, and the report says why no permission bits were
//! generated. Beside it, at the same seed, `claims` catches both ways of getting the declaration
//! wrong: claiming `modes` while keeping none (the world's mode 640 reads back as none), and
//! saying none while keeping them (a snapshot that reports modes).

#[path = "support/seeds.rs"]
mod seeds;
use seeds::{check_at, fresh_seed};

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::python_or_skip;

use std::path::Path;

fn provider(variant: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/adapters/restricted/kit_no_modes.py")
        .canonicalize()
        .expect("the script");
    format!("exec:python3 {} {variant}", script.display())
        .trim_end()
        .to_string()
}

#[test]
fn a_store_without_permission_bits_that_says_so_passes_and_both_wrong_declarations_are_caught() {
    if !python_or_skip() {
        return;
    }
    let seed = fresh_seed();
    let repeat = |p: &str| format!("repeat with: seam check --provider '{p}' --seed {seed}");

    let good = provider("");
    let (code, out) = check_at(&good, seed, &[]);
    assert_eq!(code, Some(0), "{}\n{out}", repeat(&good));
    assert!(out.contains("RESULT: pass"), "{out}");
    assert!(
        out.contains("claims: read_bytes, cancel_points, namespace\n"),
        "modes is not claimed for it: {out}"
    );
    assert!(
        out.contains(
            "  - permission bits and chmod: the storage keeps none (its world says \"modes\": false), so none is compared"
        ),
        "{out}"
    );
    assert!(out.contains("\n  claims                 passed"), "{out}");
    assert!(!out.contains("UNREACHED claim.modes"), "{out}");

    let undeclared = provider("--undeclared");
    let (code, out) = check_at(&undeclared, seed, &["claims"]);
    assert_eq!(code, Some(1), "{}\n{out}", repeat(&undeclared));
    assert!(
        out.contains(
            "FAILED claims [claim]: modes is claimed, but the world gave \"mode-640\" mode 640 and reads back no mode: a storage that keeps no permission bits says so"
        ),
        "{out}"
    );

    let resets = provider("--resets");
    let (code, out) = check_at(&resets, seed, &["claims"]);
    assert_eq!(code, Some(1), "{}\n{out}", repeat(&resets));
    assert!(
        out.contains(
            "FAILED claims [claim]: the world says the storage keeps no permission bits (\"modes\": false), yet reports mode 600 for "
        ),
        "{out}"
    );
}
