//! `seam workspace list|add|remove` through the real binary: what it prints, how it exits,
//! and what the registry file holds afterwards.

use std::path::Path;
use std::process::{Command, Output};

/// `seam workspace ARGS` in `cwd`, with HOME pointed at `cwd` and no registry in the
/// environment, so a test never touches the real per-user registry.
fn bare(args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_seam"));
    c.arg("workspace")
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env_remove("XDG_DATA_HOME")
        .env_remove("SEAM_REGISTRY");
    c
}

fn seam(registry: &Path, args: &[&str], cwd: &Path) -> Output {
    bare(args, cwd)
        .arg("--registry")
        .arg(registry)
        .output()
        .expect("run seam")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn records(registry: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(registry).expect("registry file")).expect("json")
}

#[test]
fn add_list_and_remove_round_trip_through_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let registry = base.join("reg/workspaces.json");
    std::fs::create_dir(base.join("project")).expect("mkdir");

    let empty = seam(&registry, &["list"], &base);
    assert!(empty.status.success(), "{}", stderr(&empty));
    assert!(
        stdout(&empty).starts_with("no workspaces registered in "),
        "{}",
        stdout(&empty)
    );

    // A relative path is taken from the shell's cwd.
    let added = seam(&registry, &["add", "project", "--title", "Project"], &base);
    assert!(added.status.success(), "{}", stderr(&added));
    let doc = records(&registry);
    let id = doc["workspaces"][0]["id"].as_str().expect("id").to_string();
    let root = base.join("project").to_str().expect("utf-8").to_string();
    assert_eq!(doc["workspaces"][0]["root"], root.as_str());
    assert_eq!(doc["workspaces"][0]["title"], "Project");
    assert_eq!(stdout(&added), format!("added: {id} {root} (Project)\n"));

    let again = seam(&registry, &["add", &format!("{root}/../project/")], &base);
    assert_eq!(
        stdout(&again),
        format!("already registered: {id} {root} (Project)\n")
    );

    let table = seam(&registry, &["list"], &base);
    let lines: Vec<String> = stdout(&table).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("ID ") && lines[0].ends_with("TITLE"),
        "{lines:?}"
    );
    assert!(lines[1].starts_with(&id) && lines[1].contains(&root) && lines[1].ends_with("Project"));

    let json = seam(&registry, &["list", "--json"], &base);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json list");
    assert_eq!(listed, doc["workspaces"]);

    let removed = seam(&registry, &["remove", &id], &base);
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(
        stdout(&removed),
        format!("removed: {id} {root} (the directory is untouched)\n")
    );
    assert_eq!(records(&registry)["workspaces"], serde_json::json!([]));
    assert!(base.join("project").is_dir());
}

#[test]
fn refusals_exit_1_with_their_code_and_leave_the_file_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let registry = base.join("workspaces.json");
    std::fs::write(base.join("plain.txt"), b"x").expect("file");

    let file_root = seam(&registry, &["add", "plain.txt"], &base);
    assert_eq!(file_root.status.code(), Some(1));
    assert!(
        stderr(&file_root).contains("not a directory [WS_INVALID_ROOT]"),
        "{}",
        stderr(&file_root)
    );
    assert!(!registry.exists());

    let unknown = seam(&registry, &["remove", "ws-0000000000000000"], &base);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        stderr(&unknown).contains("[WS_NOT_FOUND]"),
        "{}",
        stderr(&unknown)
    );

    std::fs::write(&registry, b"{ not json").expect("corrupt");
    let corrupt = seam(&registry, &["list"], &base);
    assert_eq!(corrupt.status.code(), Some(1));
    let said = stderr(&corrupt);
    assert!(
        said.contains("[WS_REGISTRY_CORRUPT]") && said.contains(registry.to_str().expect("utf-8")),
        "{said}"
    );
    assert_eq!(std::fs::read(&registry).expect("read back"), b"{ not json");
}

#[test]
fn the_registry_is_the_flag_else_seam_registry_else_xdg_data_home_else_home() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::create_dir(base.join("p")).expect("mkdir");
    let count = |file: &Path| records(file)["workspaces"].as_array().map(Vec::len);
    let add = |c: &mut Command| {
        let out = c.output().expect("run");
        assert!(out.status.success(), "{}", stderr(&out));
    };

    // The flag beats the environment.
    let (flag, env) = (base.join("flag.json"), base.join("env.json"));
    add(bare(&["add", "p", "--registry"], &base)
        .arg(&flag)
        .env("SEAM_REGISTRY", &env));
    assert_eq!(count(&flag), Some(1));
    assert!(!env.exists());

    // SEAM_REGISTRY beats XDG_DATA_HOME.
    add(bare(&["add", "p"], &base)
        .env("SEAM_REGISTRY", &env)
        .env("XDG_DATA_HOME", base.join("xdg")));
    assert_eq!(count(&env), Some(1));
    assert!(!base.join("xdg").exists());

    // XDG_DATA_HOME when absolute; a relative one is ignored (the XDG rule) for HOME's.
    add(bare(&["add", "p"], &base).env("XDG_DATA_HOME", base.join("xdg")));
    assert_eq!(count(&base.join("xdg/seam/workspaces.json")), Some(1));
    add(bare(&["add", "p"], &base).env("XDG_DATA_HOME", "relative-xdg"));
    assert!(!base.join("relative-xdg").exists());
    assert_eq!(
        count(&base.join(".local/share/seam/workspaces.json")),
        Some(1)
    );
}

#[test]
fn a_relative_path_names_a_directory_even_when_it_looks_like_an_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let registry = base.join("workspaces.json");
    std::fs::create_dir(base.join("ws-dir")).expect("mkdir");
    let added = seam(&registry, &["add", "ws-dir"], &base);
    assert!(added.status.success(), "{}", stderr(&added));
    let removed = seam(&registry, &["remove", "./ws-dir"], &base);
    assert!(removed.status.success(), "{}", stderr(&removed));
    let added = seam(&registry, &["add", "ws-dir"], &base);
    assert!(added.status.success(), "{}", stderr(&added));
    let removed = seam(&registry, &["remove", "ws-dir"], &base);
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(records(&registry)["workspaces"], serde_json::json!([]));
}
