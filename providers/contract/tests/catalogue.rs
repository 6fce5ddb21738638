//! The contract's message texts and codes as one machine-readable catalogue,
//! `conformance/kits/catalogue.json`, for backends written in other languages (the adapter kits load it; an
//! author never copies a string from Rust source).
//!
//! The catalogue is generated from the constructors in `messages.rs`: each is called with
//! sentinel arguments and the sentinels are turned back into `{placeholders}`. This test
//! regenerates it and fails when the committed file differs — a text changed in Rust and not in
//! the catalogue, or the other way round. `SEAM_BLESS=1 cargo test -p seam --test catalogue`
//! writes the new catalogue (and its copies inside the kits). It also fails when `messages.rs`
//! gains a constructor the catalogue does not list, and checks every template against the
//! constructor for every verb and mode it can take.

use seam::{Capability, FsError, FsErrorCode, SandboxMode, Verb};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Stands for the display path.
const PATH: &str = "\u{E000}path\u{E000}";
/// Stand for the numbers.
const SIZE: u64 = 1_234_567_891;
const MAX: u64 = 9_876_543_211;
const COUNT: usize = 5_555_555;

/// How one constructor is called: with which verb (when it takes one) and mode.
type Render = fn(Verb, SandboxMode) -> FsError;

/// Every constructor of `messages.rs`, by name, with the parameters it takes.
fn constructors() -> Vec<(&'static str, bool, bool, Render)> {
    // (name, takes a verb, takes a mode, call)
    vec![
        ("blank_path", false, false, |_, _| FsError::blank_path()),
        ("nul_in_path", true, false, |v, _| {
            FsError::nul_in_path(v, PATH)
        }),
        ("name_too_long", true, false, |v, _| {
            FsError::name_too_long(v, PATH)
        }),
        ("parent_not_directory", true, false, |v, _| {
            FsError::parent_not_directory(v, PATH)
        }),
        ("symlink_loop", true, false, |v, _| {
            FsError::symlink_loop(v, PATH)
        }),
        ("not_found", true, false, |v, _| FsError::not_found(v, PATH)),
        ("not_regular_file", true, false, |v, _| {
            FsError::not_regular_file(v, PATH)
        }),
        ("not_a_directory", false, false, |_, _| {
            FsError::not_a_directory(PATH)
        }),
        ("binary", true, false, |v, _| FsError::binary(v, PATH)),
        ("invalid_utf8", true, false, |v, _| {
            FsError::invalid_utf8(v, PATH)
        }),
        ("too_large", false, false, |_, _| {
            FsError::too_large(PATH, SIZE, MAX)
        }),
        ("grew_past_cap", false, false, |_, _| {
            FsError::grew_past_cap(PATH, MAX)
        }),
        ("no_longer_exists", false, false, |_, _| {
            FsError::no_longer_exists(PATH)
        }),
        ("changed_since_read", true, false, |v, _| {
            FsError::changed_since_read(v, PATH)
        }),
        ("requires_read", true, false, |v, _| {
            FsError::requires_read(v, PATH)
        }),
        ("not_supported", true, false, |v, _| {
            FsError::not_supported(v, PATH)
        }),
        ("parent_missing", true, false, |v, _| {
            FsError::parent_missing(v, PATH)
        }),
        ("directory_exists", false, false, |_, _| {
            FsError::directory_exists(PATH)
        }),
        ("not_directory_in_the_way", false, false, |_, _| {
            FsError::not_directory_in_the_way(PATH)
        }),
        ("is_a_directory", true, false, |v, _| {
            FsError::is_a_directory(v, PATH)
        }),
        ("directory_not_empty", false, false, |_, _| {
            FsError::directory_not_empty(PATH)
        }),
        ("destination_exists", false, false, |_, _| {
            FsError::destination_exists(PATH)
        }),
        // Two paths; the catalogue's one placeholder stands for both (source, then destination).
        ("rename_into_itself", false, false, |_, _| {
            FsError::rename_into_itself(PATH, PATH)
        }),
        ("exists_not_observed", false, false, |_, _| {
            FsError::exists_not_observed(PATH)
        }),
        ("edit_requires_read", false, false, |_, _| {
            FsError::edit_requires_read(PATH)
        }),
        ("empty_old_string", false, false, |_, _| {
            FsError::empty_old_string()
        }),
        ("old_string_not_found", false, false, |_, _| {
            FsError::old_string_not_found(PATH)
        }),
        ("ambiguous_edit", false, false, |_, _| {
            FsError::ambiguous_edit(PATH, COUNT)
        }),
        ("aborted", true, false, |v, _| FsError::aborted(v)),
        ("permission_denied", true, false, |v, _| {
            FsError::permission_denied(v, PATH)
        }),
        ("io", true, false, |v, _| {
            FsError::io(v, PATH, "\u{E000}detail\u{E000}")
        }),
        ("sandbox_denied", false, true, |_, m| {
            FsError::sandbox_denied(PATH, m)
        }),
        ("read_denied", true, true, |v, m| {
            FsError::read_denied(v, PATH, m)
        }),
    ]
}

/// A rendered message with its sentinels (and the verb and mode it was rendered with) turned
/// into placeholders.
fn template(message: &str, verb: Option<Verb>, mode: Option<SandboxMode>) -> String {
    let mut t = message
        .replace(PATH, "{path}")
        .replace("\u{E000}detail\u{E000}", "{detail}")
        .replace(&SIZE.to_string(), "{size}")
        .replace(&MAX.to_string(), "{max}")
        .replace(&COUNT.to_string(), "{count}");
    if let Some(m) = mode {
        t = t.replace(m.as_str(), "{mode}");
    }
    if let Some(v) = verb {
        // The verb opens the message (`cannot lstat "…"`, `lstat aborted`, `lstat requires
        // reading …`): only there.
        let (with_cannot, alone, requires) = (
            format!("cannot {v} "),
            format!("{v} aborted"),
            format!("{v} requires "),
        );
        t = t
            .replacen(&with_cannot, "cannot {verb} ", 1)
            .replacen(&alone, "{verb} aborted", 1);
        if t.starts_with(&requires) {
            t = t.replacen(&requires, "{verb} requires ", 1);
        }
    }
    t
}

/// Fills a template in, as a kit does.
fn render(template: &str, verb: Verb, mode: SandboxMode) -> String {
    template
        .replace("{verb}", verb.as_str())
        .replace("{mode}", mode.as_str())
        .replace("{path}", PATH)
        .replace("{detail}", "\u{E000}detail\u{E000}")
        .replace("{size}", &SIZE.to_string())
        .replace("{max}", &MAX.to_string())
        .replace("{count}", &COUNT.to_string())
}

/// The catalogue, from the constructors.
fn catalogue() -> Value {
    let mut messages = serde_json::Map::new();
    for (name, takes_verb, takes_mode, call) in constructors() {
        // Rendered with a verb that appears nowhere else in any message.
        let (verb, mode) = (Verb::Lstat, SandboxMode::WorkspaceWrite);
        let e = call(verb, mode);
        let t = template(
            e.message(),
            takes_verb.then_some(verb),
            takes_mode.then_some(mode),
        );
        // The template gives back every constructor's message, for every verb and mode.
        for v in Verb::ALL {
            for m in SandboxMode::ALL {
                let e = call(v, m);
                assert_eq!(
                    render(&t, v, m),
                    e.message(),
                    "{name}: the template {t:?} does not give back the message for {v} and {m:?}"
                );
            }
        }
        messages.insert(
            name.to_string(),
            json!({ "code": e.code().as_str(), "template": t }),
        );
    }
    json!({
        "about": "The seam contract's error codes and message texts, generated from providers/contract/src/messages.rs by providers/contract/tests/catalogue.rs (SEAM_BLESS=1 cargo test -p seam --test catalogue). Fill {verb}, {path} (the display path: the caller's spelling, lexically normalised), {mode}, {size}, {max}, {count}, {detail} in.",
        "codes": FsErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "verbs": Verb::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
        "sandbox_modes": SandboxMode::ALL.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
        "capabilities": Capability::ALL.iter().map(|c| c.name()).collect::<Vec<_>>(),
        "limits": {
            "name_max_bytes": seam::paths::NAME_MAX,
            "nul_sample_bytes": seam::text::NUL_SAMPLE_BYTES,
            "style_sample_chars": seam::edit::STYLE_SAMPLE_CHARS,
        },
        "messages": messages,
    })
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The catalogue and its copies inside the kits (each kit installs without the repository).
fn files() -> Vec<PathBuf> {
    vec![
        repo().join("conformance/kits/catalogue.json"),
        repo().join("conformance/kits/python/seam_kit/catalogue.json"),
        repo().join("conformance/kits/js/catalogue.json"),
    ]
}

#[test]
fn the_catalogue_is_the_contract() {
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&catalogue()).expect("json")
    );
    if std::env::var_os("SEAM_BLESS").is_some() {
        for f in files() {
            std::fs::write(&f, &text).unwrap_or_else(|e| panic!("write {}: {e}", f.display()));
        }
    }
    for f in files() {
        let committed = std::fs::read_to_string(&f)
            .unwrap_or_else(|e| panic!("{}: {e} (SEAM_BLESS=1 writes it)", f.display()));
        assert!(
            committed == text,
            "{} has drifted from the message constructors in providers/contract/src/messages.rs; \
             if the change there is meant, regenerate it: SEAM_BLESS=1 cargo test -p seam --test catalogue",
            f.display()
        );
    }
}

#[test]
fn every_message_constructor_is_in_the_catalogue() {
    let source = std::fs::read_to_string(repo().join("providers/contract/src/messages.rs"))
        .expect("messages.rs");
    let listed: Vec<&str> = constructors().iter().map(|c| c.0).collect();
    let public: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub fn "))
        .filter_map(|l| l.split('(').next())
        .filter(|name| *name != "cannot")
        .collect();
    assert!(!public.is_empty());
    for name in &public {
        assert!(
            listed.contains(name),
            "FsError::{name} is not in the catalogue: add it to constructors() in this test"
        );
    }
    assert_eq!(listed.len(), public.len(), "{listed:?} against {public:?}");
}
