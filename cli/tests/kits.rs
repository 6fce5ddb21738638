//! The adapter kits through the gate: each kit's example — a complete backend over a dict (Python)
//! or a Map (JavaScript), the storage only — passes the full default `seam check`, served from one
//! process; a store with content hashes for versions (Python) and one whose directories keep their
//! version when entries change (JavaScript) are caught by `sequences`; each kit installs with its
//! ecosystem's tool (`pip install conformance/kits/python`, `npm install` of the packed `conformance/kits/js`) and works
//! from there, away from the repository; and each kit's own tests pass.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::{node_or_skip, npm_or_skip, pip_or_skip, python_or_skip};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository")
}

fn seam(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run seam");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_python_kits_dict_backend_passes_the_whole_gate() {
    if !python_or_skip() {
        return;
    }
    let example = repo().join("conformance/kits/python/examples/dict_backend.py");
    let lines = std::fs::read_to_string(&example)
        .expect("the example")
        .lines()
        .count();
    assert!(lines <= 200, "the example is {lines} lines");
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = format!("exec:python3 {}", example.display());
    let (code, out, err) = seam(
        dir.path(),
        &["check", "--provider", &provider, "--seed", "24228"],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("RESULT: pass"), "{out}");
    assert!(!out.contains("UNREACHED"), "{out}");
    assert!(
        out.contains("claims: modes, read_bytes, cancel_points, namespace\n"),
        "{out}"
    );
    for property in [
        "claims",
        "bad-input",
        "cas-races",
        "linearizable",
        "atomic-visibility",
        "sequences",
        "policy",
    ] {
        assert!(
            out.contains(&format!("\n  {property:<22} passed")),
            "{property}\n{out}"
        );
    }
    // Its storage dies with it, it says so, and the gate does not kill it to look.
    assert!(
        out.contains("  crash                  does not apply: nothing of the storage outlives the backend's process: the backend says its storage dies with its process"),
        "{out}"
    );
    assert!(
        err.contains(&format!(
            "seam: {provider} serves the whole run from one process"
        )),
        "{err}"
    );
    assert!(served(&err, "dict_backend.py") >= 100, "{err}");
    // The kit serves a connection's calls at once: reads were answered mid-write.
    assert!(paused_reads_served(&out) > 0, "{out}");
}

/// How many reads `atomic-visibility` saw answered while a mutation waited at a checkpoint.
fn paused_reads_served(out: &str) -> usize {
    out.lines()
        .find_map(|l| {
            l.trim_start()
                .split_once(" reads answered while a mutation was paused at a checkpoint")?
                .0
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no count of paused reads: {out}"))
}

/// How many connections the adapter `name` said it served in one process.
fn served(stderr: &str, name: &str) -> usize {
    stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!("{name}: served "))?
                .split_once(" connections in process ")?
                .0
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{name} did not say what it served: {stderr}"))
}

#[test]
fn a_store_whose_versions_are_content_hashes_is_caught() {
    if !python_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = repo().join("fixtures/adapters/broken/kit_hash_versions.py");
    let provider = format!("exec:python3 {}", broken.display());
    let (code, out, err) = seam(
        dir.path(),
        &[
            "check",
            "--provider",
            &provider,
            "--seed",
            "24228",
            "--property",
            "sequences",
        ],
    );
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(
        out.contains("FAILED sequences [version-law]: ")
            && out.contains(" was reused: it stood for change #"),
        "{out}"
    );
}

/// Installed with pip into a folder of its own, the kit works with no repository around it: the
/// example, copied elsewhere, finds the installed kit (its catalogue included) and passes.
#[test]
fn the_python_kit_installs_with_pip_and_works_from_there() {
    if !python_or_skip() {
        return;
    }
    if !pip_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let site = dir.path().join("site");
    let out = Command::new("python3")
        .args(["-m", "pip", "install", "--no-deps", "--quiet", "--target"])
        .arg(&site)
        .arg(repo().join("conformance/kits/python"))
        .output()
        .expect("pip");
    assert!(
        out.status.success(),
        "pip install conformance/kits/python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(site.join("seam_kit/catalogue.json").is_file());
    let example = dir.path().join("my_store.py");
    std::fs::copy(
        repo().join("conformance/kits/python/examples/dict_backend.py"),
        &example,
    )
    .expect("copy the example");
    let provider = format!(
        "exec:PYTHONPATH={} python3 {}",
        site.display(),
        example.display()
    );
    let (code, out, err) = seam(
        dir.path(),
        &[
            "check",
            "--provider",
            &provider,
            "--seed",
            "7",
            "--cases",
            "32",
            "--property",
            "claims",
            "--property",
            "sequences",
        ],
    );
    assert_eq!(code, Some(3), "incomplete, nothing failed: {out}\n{err}");
    assert!(out.contains("\n  sequences              passed"), "{out}");
    // And it was the installed kit that ran, not one found in the repository.
    let probe = Command::new("python3")
        .args(["-c", "import seam_kit; print(seam_kit.__file__)"])
        .env("PYTHONPATH", &site)
        .current_dir(dir.path())
        .output()
        .expect("python3");
    assert!(
        String::from_utf8_lossy(&probe.stdout).starts_with(&site.display().to_string()),
        "{}",
        String::from_utf8_lossy(&probe.stdout)
    );
}

#[test]
fn the_python_kits_own_tests_pass() {
    if !python_or_skip() {
        return;
    }
    let out = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "discover",
            "-s",
            "conformance/kits/python/tests",
        ])
        .current_dir(repo())
        .output()
        .expect("python3");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("\nOK") && said.contains("Ran 30 tests"),
        "{said}"
    );
}

#[test]
fn the_js_kits_map_backend_passes_the_whole_gate() {
    if !node_or_skip() {
        return;
    }
    let example = repo().join("conformance/kits/js/examples/dict_backend.js");
    let lines = std::fs::read_to_string(&example)
        .expect("the example")
        .lines()
        .count();
    assert!(lines <= 200, "the example is {lines} lines");
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = format!("exec:node {}", example.display());
    let (code, out, err) = seam(
        dir.path(),
        &["check", "--provider", &provider, "--seed", "24228"],
    );
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("RESULT: pass"), "{out}");
    assert!(!out.contains("UNREACHED"), "{out}");
    for property in [
        "claims",
        "bad-input",
        "cas-races",
        "linearizable",
        "atomic-visibility",
        "sequences",
        "policy",
    ] {
        assert!(
            out.contains(&format!("\n  {property:<22} passed")),
            "{property}\n{out}"
        );
    }
    assert!(
        err.contains(&format!(
            "seam: {provider} serves the whole run from one process"
        )),
        "{err}"
    );
    assert!(served(&err, "dict_backend.js") >= 100, "{err}");
    assert!(paused_reads_served(&out) > 0, "{out}");
}

#[test]
fn a_store_whose_directories_keep_their_version_is_caught() {
    if !node_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = repo().join("fixtures/adapters/broken/kit_stale_dir_versions.js");
    let provider = format!("exec:node {}", broken.display());
    let (code, out, err) = seam(
        dir.path(),
        &[
            "check",
            "--provider",
            &provider,
            "--seed",
            "24228",
            "--property",
            "sequences",
        ],
    );
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(
        out.contains("FAILED sequences [version-law]: ")
            && out.contains(" gained or lost entries but kept version "),
        "{out}"
    );
}

/// Packed and installed with npm (a copy, not a link to the repository), the kit works from a
/// project of its own: the example, copied there, finds the installed kit and passes.
#[test]
fn the_js_kit_installs_with_npm_and_works_from_there() {
    if !node_or_skip() {
        return;
    }
    if !npm_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let npm = |args: &[&str]| {
        let out = Command::new("npm")
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("npm");
        assert!(
            out.status.success(),
            "npm {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let kit = repo().join("conformance/kits/js");
    npm(&[
        "pack",
        "--silent",
        "--pack-destination",
        ".",
        &kit.display().to_string(),
    ]);
    npm(&[
        "install",
        "--no-audit",
        "--no-fund",
        "--offline",
        "./seam-kit-0.1.0.tgz",
    ]);
    let installed = dir.path().join("node_modules/seam-kit");
    assert!(!installed.is_symlink(), "a copy, not a link");
    for f in [
        "index.js",
        "index.d.ts",
        "catalogue.json",
        "lib/protocol.js",
        "README.md",
    ] {
        assert!(installed.join(f).is_file(), "{f} is not in the package");
    }
    let example = dir.path().join("my_store.js");
    std::fs::copy(kit.join("examples/dict_backend.js"), &example).expect("copy the example");
    let provider = format!("exec:node {}", example.display());
    let (code, out, err) = seam(
        dir.path(),
        &[
            "check",
            "--provider",
            &provider,
            "--seed",
            "7",
            "--cases",
            "32",
            "--property",
            "claims",
            "--property",
            "sequences",
        ],
    );
    assert_eq!(code, Some(3), "incomplete, nothing failed: {out}\n{err}");
    assert!(out.contains("\n  sequences              passed"), "{out}");
    let probe = Command::new("node")
        .args(["-e", "console.log(require.resolve('seam-kit'))"])
        .current_dir(dir.path())
        .output()
        .expect("node");
    assert!(
        String::from_utf8_lossy(&probe.stdout).starts_with(&installed.display().to_string()),
        "{}",
        String::from_utf8_lossy(&probe.stdout)
    );
}

#[test]
fn the_js_kits_own_tests_pass() {
    if !node_or_skip() {
        return;
    }
    let out = Command::new("node")
        .args(["--test", "test/"])
        .current_dir(repo().join("conformance/kits/js"))
        .output()
        .expect("node");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("# fail 0") && said.contains("# pass 23"),
        "{said}"
    );
}

/// A backend with a diff-basis limit of its own declares it in `initialize` and the gate predicts
/// with it (the rules around the limit reached at 4 KiB); the same backend keeping the limit
/// without declaring it is caught at the first `before` the gate expected and did not get.
#[test]
fn a_declared_diff_limit_is_the_one_the_gate_predicts_with() {
    if !python_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = repo().join("fixtures/adapters/restricted/kit_own_diff_limit.py");
    let run = |flag: &str| {
        let provider = format!("exec:python3 {} {flag}", fixture.display());
        seam(
            dir.path(),
            &[
                "check",
                "--provider",
                &provider,
                "--seed",
                "24228",
                "--property",
                "sequences",
            ],
        )
    };
    let (code, out, err) = run("");
    assert_eq!(code, Some(3), "incomplete, nothing failed: {out}\n{err}");
    assert!(out.contains("\n  sequences              passed"), "{out}");
    for rule in [
        "write.diff-basis-below",
        "write.diff-basis-at",
        "write.diff-basis-above",
    ] {
        assert!(!out.contains(&format!("UNREACHED {rule}")), "{rule}\n{out}");
    }
    let (code, out, err) = run("--undeclared");
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(
        out.contains("FAILED sequences [outcome]: ") && out.contains("before: expected None"),
        "{out}"
    );
}
