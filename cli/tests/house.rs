//! The house keeps its shape: no module of any crate reaches, through the modules it names, back
//! to itself (a circle: two files that each need the other are one job split badly, or a shared
//! part that belongs lower); no source file outside tests is over 800 lines; the README fits
//! on a few screens. Each rule is checked against a planted breach beside the real tree, so a
//! scanner that stopped seeing anything would fail here too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest source file outside tests.
const MAX_LINES: usize = 800;
/// The longest README.
const README_MAX_LINES: usize = 200;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every crate's `src/` directory in the workspace (beside each `Cargo.toml`, outside `target/`).
fn crate_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !p.is_dir() || name == "target" || name.starts_with('.') || name == "node_modules" {
            continue;
        }
        if p.join("Cargo.toml").is_file() && p.join("src").is_dir() {
            out.push(p.join("src"));
        }
        crate_sources(&p, out);
    }
}

/// A module's path in its crate, from its file (`a/b.rs` and `a/b/mod.rs` are `a::b`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file of the crate");
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file without its comments and its `#[cfg(test)] mod tests { … }` at the end.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths `code` names: `crate::a::b…` as is, `super::a…` from `parent`. A group
/// (`crate::{a, b}`) names only the crate's root, which every module may use.
fn named_paths(code: &str, parent: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (start, anchor) in [("crate::", None), ("super::", Some(parent))] {
        let mut rest = code;
        while let Some(at) = rest.find(start) {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + start.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let mut path: Vec<String> = anchor.map(<[String]>::to_vec).unwrap_or_default();
            for seg in rest.split("::") {
                let word: String = seg
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if word.is_empty() {
                    break;
                }
                let whole = word.len() == seg.len();
                path.push(word);
                if !whole {
                    break;
                }
            }
            out.push(path);
        }
    }
    out
}

/// The module graph of the crate whose sources are `src`: from each module, the modules its
/// code names (not its own ancestors: a module may use what its parent holds).
fn graph(src: &Path, files: &[(PathBuf, String)]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(f, _)| module_of(src, f)).collect();
    let mut edges = BTreeMap::new();
    for (file, text) in files {
        let module = module_of(src, file);
        // `super` is the parent module, however the file is laid out.
        let parent = module[..module.len().saturating_sub(1)].to_vec();
        let mut to = BTreeSet::new();
        for path in named_paths(&code(text), &parent) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|k| path[..k].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            if target != module && !module.starts_with(&target) {
                to.insert(target);
            }
        }
        edges.insert(module, to);
    }
    edges
}

/// The circles of a graph: each set of two or more modules that reach each other.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for n in edges.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<_, _> = edges.keys().map(|m| (m.clone(), reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for m in edges.keys() {
        let mut circle: Vec<String> = edges
            .keys()
            .filter(|n| reaches[m].contains(*n) && reaches[*n].contains(m))
            .map(|n| n.join("::"))
            .collect();
        circle.sort();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

fn crate_files(src: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("a source file");
            (f, text)
        })
        .collect()
}

#[test]
fn no_module_of_any_crate_reaches_back_to_itself() {
    let mut srcs = Vec::new();
    crate_sources(&repo(), &mut srcs);
    assert!(srcs.len() >= 15, "crates found: {srcs:?}");
    let mut found = Vec::new();
    for src in &srcs {
        for circle in circles(&graph(src, &crate_files(src))) {
            found.push(format!(
                "{}: {}",
                src.strip_prefix(repo()).unwrap_or(src).display(),
                circle.join(" <-> ")
            ));
        }
    }
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

#[test]
fn a_planted_circle_is_found() {
    let dir = tempfile::tempdir().expect("a directory");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).expect("src");
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("a/mod.rs", "mod inner;\nuse crate::b::X;\n"),
        ("a/inner.rs", "use super::Y; // the parent: not a circle\n"),
        ("b.rs", "pub struct X;\nfn f() { crate::c::g() }\n"),
        // A comment naming crate::a is not an arrow; the call is.
        ("c.rs", "// crate::b\npub fn g() { crate::a::h() }\n"),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).expect("a file");
    }
    let circles = circles(&graph(&src, &crate_files(&src)));
    assert_eq!(circles, vec![vec!["a", "b", "c"]]);
    // Without the call, no circle: the comment alone draws no arrow.
    std::fs::write(src.join("c.rs"), "// crate::a\npub fn g() {}\n").expect("a file");
    assert_eq!(circles_of(&src), Vec::<Vec<String>>::new());
}

fn circles_of(src: &Path) -> Vec<Vec<String>> {
    circles(&graph(src, &crate_files(src)))
}

/// Files outside tests (`tests/`, `benches/`, a `tests.rs` of unit tests) and longer than
/// [`MAX_LINES`], with their lengths.
fn long_files(root: &Path) -> Vec<(PathBuf, usize)> {
    let mut srcs = Vec::new();
    crate_sources(root, &mut srcs);
    let mut out = Vec::new();
    for src in srcs {
        for (f, text) in crate_files(&src) {
            let unit_tests = f.file_name().is_some_and(|n| n == "tests.rs");
            let lines = text.lines().count();
            if !unit_tests && lines > MAX_LINES {
                out.push((f, lines));
            }
        }
    }
    out
}

#[test]
fn no_source_file_outside_tests_is_over_800_lines_and_the_readme_fits() {
    let long = long_files(&repo());
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("the README");
    let lines = readme.lines().count();
    assert!(lines <= README_MAX_LINES, "README.md is {lines} lines");
    // The scan sees a long file where there is one.
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::create_dir_all(dir.path().join("k/src")).expect("src");
    std::fs::write(dir.path().join("k/Cargo.toml"), "").expect("manifest");
    std::fs::write(dir.path().join("k/src/lib.rs"), "\n".repeat(MAX_LINES + 1)).expect("lib");
    assert_eq!(long_files(dir.path()).len(), 1);
}
