//! `seam mcp` end to end: an rmcp client starts the real binary as a child process and speaks
//! MCP to it over stdio, as Claude Code or Codex would. Every mutation is checked on disk, byte
//! for byte; every refusal is checked to have left the disk alone.

mod support;

use base64::Engine;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};
use std::path::Path;
use support::mcp::{call, disk, ok, refused, serve, serve_args};

#[tokio::test]
async fn lists_every_tool_with_annotations_that_say_what_it_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = serve(dir.path(), &[]).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("seam")
    );
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("Use the read tool")),
        "the tools' system prompt travels as the server's instructions"
    );
    let tools = client.list_all_tools().await.expect("tools/list");
    let listed: Vec<_> = tools
        .iter()
        .map(|t| {
            let a = t.annotations.as_ref().expect("annotations");
            (
                t.name.to_string(),
                a.read_only_hint,
                a.destructive_hint,
                a.idempotent_hint,
                a.open_world_hint,
            )
        })
        .collect();
    let row = |name: &str, ro: bool, de: bool, id: bool| {
        (name.to_string(), Some(ro), Some(de), Some(id), Some(false))
    };
    assert_eq!(
        listed,
        [
            row("read", true, false, true),
            row("write", false, true, true),
            row("edit", false, true, false),
            row("read_image", true, false, true),
            row("glob", true, false, true),
            row("grep", true, false, true),
            row("str_replace_editor", false, true, false),
            row("list", true, false, true),
            row("tree", true, false, true),
            row("info", true, false, true),
            row("read_many", true, false, true),
            row("roots", true, false, true),
            row("create_directory", false, false, true),
            row("move", false, true, false),
            row("delete", false, true, true),
        ]
    );
    for t in &tools {
        // Every tool says the shape of its structured content.
        assert!(
            t.output_schema
                .as_ref()
                .is_some_and(|s| s.get("type") == Some(&json!("object"))),
            "{} has no output schema",
            t.name
        );
        assert_eq!(
            t.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            t.name
        );
        assert!(t.description.as_deref().is_some_and(|d| !d.is_empty()));
    }
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn reads_then_edits_and_writes_with_every_untouched_byte_kept_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("a.txt"), b"one\r\ntwo\r\nthree\r\n").expect("seed");
    let client = serve(root, &[]).await;

    let read = ok(&call(&client, "read", json!({"file_path": "a.txt"})).await);
    assert!(read.contains("2: two"), "{read}");
    let edited = ok(&call(
        &client,
        "edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}),
    )
    .await);
    assert!(!edited.is_empty());
    assert_eq!(disk(root, "a.txt"), b"one\r\nTWO\r\nthree\r\n");

    // A new file needs no read; the parent is created.
    ok(&call(
        &client,
        "write",
        json!({"file_path": "src/new.rs", "content": "fn main() {}\n"}),
    )
    .await);
    assert_eq!(disk(root, "src/new.rs"), b"fn main() {}\n");

    // The session's own edit left it at a version it knows: it may replace the file.
    ok(&call(
        &client,
        "write",
        json!({"file_path": "a.txt", "content": "whole\n"}),
    )
    .await);
    assert_eq!(disk(root, "a.txt"), b"whole\n");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn overwriting_an_unread_file_is_fs_not_observed_and_the_file_is_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("keep.txt"), b"precious\n").expect("seed");
    let client = serve(root, &[]).await;

    let said = refused(
        &call(
            &client,
            "write",
            json!({"file_path": "keep.txt", "content": "gone\n"}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    assert!(said.contains("read the file, then retry"), "{said}");
    refused(
        &call(
            &client,
            "edit",
            json!({"file_path": "keep.txt", "old_string": "precious", "new_string": "x"}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    assert_eq!(disk(root, "keep.txt"), b"precious\n");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn an_edit_after_someone_else_changed_the_file_is_fs_stale_version_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("cfg.toml"), b"a = 1\n").expect("seed");
    let client = serve(root, &[]).await;

    ok(&call(&client, "read", json!({"file_path": "cfg.toml"})).await);
    // A human saves in an editor behind the model's back.
    std::fs::write(root.join("cfg.toml"), b"a = 1\nb = 2\n").expect("external edit");
    let said = refused(
        &call(
            &client,
            "edit",
            json!({"file_path": "cfg.toml", "old_string": "a = 1", "new_string": "a = 3"}),
        )
        .await,
        "FS_STALE_VERSION",
    );
    let canonical = std::fs::canonicalize(root).expect("canonical root");
    assert_eq!(
        said,
        format!(
            "Error [FS_STALE_VERSION]: cannot edit \"{}/cfg.toml\": file changed since it was read — re-read the file, then retry",
            canonical.display()
        )
    );
    refused(
        &call(
            &client,
            "write",
            json!({"file_path": "cfg.toml", "content": "a = 3\n"}),
        )
        .await,
        "FS_STALE_VERSION",
    );
    assert_eq!(
        disk(root, "cfg.toml"),
        b"a = 1\nb = 2\n",
        "the human's save survives"
    );

    // Re-reading makes the edit possible again.
    ok(&call(&client, "read", json!({"file_path": "cfg.toml"})).await);
    ok(&call(
        &client,
        "edit",
        json!({"file_path": "cfg.toml", "old_string": "a = 1", "new_string": "a = 3"}),
    )
    .await);
    assert_eq!(disk(root, "cfg.toml"), b"a = 3\nb = 2\n");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn nothing_outside_the_root_changes_not_by_dotdot_nor_through_a_link() {
    let outer = tempfile::tempdir().expect("tempdir");
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::os::unix::fs::symlink(outer.path(), root.join("out")).expect("link out");
    let client = serve(&root, &[]).await;

    refused(
        &call(
            &client,
            "write",
            json!({"file_path": "../escaped.txt", "content": "x"}),
        )
        .await,
        "FS_SANDBOX_DENIED",
    );
    refused(
        &call(
            &client,
            "write",
            json!({"file_path": "out/escaped.txt", "content": "x"}),
        )
        .await,
        "FS_SANDBOX_DENIED",
    );
    let outside: Vec<_> = std::fs::read_dir(outer.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(outside, ["ws"], "nothing was created outside the root");
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn read_only_lists_only_the_tools_that_look_and_refuses_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("a.txt"), b"a\n").expect("seed");
    let client = serve(root, &["--mode", "read-only"]).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "read",
            "read_image",
            "glob",
            "grep",
            "list",
            "tree",
            "info",
            "read_many",
            "roots"
        ]
    );
    let err = client
        .call_tool(
            CallToolRequestParams::new("write").with_arguments(JsonObject::from_iter([(
                "file_path".into(),
                json!("b.txt"),
            )])),
        )
        .await
        .expect_err("an unlisted tool is a protocol error");
    assert!(err.to_string().contains("unknown tool"), "{err}");
    assert!(!root.join("b.txt").exists());
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn read_image_answers_an_image_block_with_the_file_s_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let mut gif = b"GIF89a".to_vec();
    gif.extend_from_slice(&[3, 0, 2, 0, 0, 0, 0, b';']);
    std::fs::write(root.join("pic.gif"), &gif).expect("seed");
    let client = serve(root, &[]).await;
    let r = call(&client, "read_image", json!({"file_path": "pic.gif"})).await;
    assert_ne!(r.is_error, Some(true));
    let image = r
        .content
        .iter()
        .find_map(|b| match b {
            rmcp::model::ContentBlock::Image(i) => Some(i.clone()),
            _ => None,
        })
        .expect("an image block");
    assert_eq!(image.mime_type, "image/gif");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .expect("base64");
    assert_eq!(bytes, gif);
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn an_over_cap_grep_names_a_spill_file_that_holds_every_match() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let lines: String = (0..300).map(|i| format!("needle {i}\n")).collect();
    std::fs::write(root.join("hay.txt"), &lines).expect("seed");
    let client = serve(root, &[]).await;
    let said = ok(&call(&client, "grep", json!({"pattern": "needle"})).await);
    assert!(said.starts_with("Found 250 of 300 matches"), "{said}");
    let at = said
        .split("Full grep result stored at: ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(".)"))
        .expect("a spill path");
    let spilled = std::fs::read_to_string(at).expect("the spill file exists");
    assert_eq!(spilled.matches("needle").count(), 300);
    // A second spill gets its own file: the first path still says what it said.
    let again = ok(&call(&client, "grep", json!({"pattern": "needle \\d"})).await);
    assert!(!again.contains(at), "{again}");
    assert_eq!(std::fs::read_to_string(at).expect("still there"), spilled);
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn str_replace_editor_views_and_replaces_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("m.py"), b"x = 1\ny = 2\n").expect("seed");
    let client = serve(root, &[]).await;
    let path = root.join("m.py").to_string_lossy().into_owned();
    let view = ok(&call(
        &client,
        "str_replace_editor",
        json!({"command": "view", "path": path}),
    )
    .await);
    assert!(view.contains("     2  y = 2"), "{view}");
    ok(&call(
        &client,
        "str_replace_editor",
        json!({"command": "str_replace", "path": path, "old_str": "y = 2", "new_str": "y = 20"}),
    )
    .await);
    assert_eq!(disk(root, "m.py"), b"x = 1\ny = 20\n");
    client.cancel().await.expect("close");
}

#[test]
fn a_root_that_is_not_a_directory_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f"), b"").expect("seed");
    for (root, said) in [
        (dir.path().join("missing"), "No such file"),
        (dir.path().join("f"), "not a directory"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_seam"))
            .arg("mcp")
            .arg("--root")
            .arg(&root)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("seam: --root "), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing on the protocol channel");
    }
}

#[tokio::test]
async fn a_workspace_path_not_seen_before_is_registered_and_its_calls_write_where_they_say() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let project = base.join("project");
    std::fs::create_dir(&project).expect("mkdir");
    std::os::unix::fs::symlink(&project, base.join("alias")).expect("symlink");
    let registry = base.join("state/workspaces.json");
    // Named through a link: the record and the session are the real directory.
    let client = serve_args(&[
        "--workspace".into(),
        base.join("alias").into(),
        "--registry".into(),
        registry.clone().into(),
    ])
    .await;
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&registry).expect("registered")).expect("json");
    let records = doc["workspaces"].as_array().expect("array");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["root"], json!(project.to_str().expect("utf-8")));
    let id = records[0]["id"].as_str().expect("id").to_string();

    let written = ok(&call(
        &client,
        "write",
        json!({"file_path": "docs/a.md", "content": "# a\n"}),
    )
    .await);
    let shown = project.join("docs/a.md");
    assert!(
        written.contains(&format!("<path>{}</path>", shown.display())),
        "{written}"
    );
    assert_eq!(std::fs::read(&shown).expect("read back"), b"# a\n");
    // The fence is the workspace: `..` out of it is refused and lands nowhere.
    refused(
        &call(
            &client,
            "write",
            json!({"file_path": "../outside.txt", "content": "x"}),
        )
        .await,
        "FS_SANDBOX_DENIED",
    );
    assert!(!base.join("outside.txt").exists());
    client.cancel().await.expect("close");

    // The next session names it by id; the registry still holds one record.
    let client = serve_args(&[
        "--workspace".into(),
        id.clone().into(),
        "--registry".into(),
        registry.clone().into(),
    ])
    .await;
    let read = ok(&call(&client, "read", json!({"file_path": "docs/a.md"})).await);
    assert!(read.contains("1: # a"), "{read}");
    client.cancel().await.expect("close");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&registry).expect("registry")).expect("json");
    assert_eq!(doc["workspaces"].as_array().map(Vec::len), Some(1));
}

#[test]
fn an_unknown_workspace_id_is_a_usage_error_that_registers_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = dir.path().join("workspaces.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["mcp", "--workspace", "ws-0000000000000000", "--registry"])
        .arg(&registry)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[WS_NOT_FOUND]"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing on the protocol channel");
    assert!(!registry.exists(), "a failed lookup wrote the registry");
}

/// `seam mcp ARGS` with stdin closed: status and stderr. A composition that succeeded then
/// fails at MCP initialisation (exit 1, no client); one that was refused exits 2.
fn mcp_once(args: &[&std::ffi::OsStr], cwd: &Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_seam"))
        .arg("mcp")
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn root_workspace_and_registry_flags_are_checked_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let reg = dir.path().join("r.json");
    let (code, said) = mcp_once(
        &[
            "--root".as_ref(),
            dir.path().as_os_str(),
            "--registry".as_ref(),
            reg.as_os_str(),
        ],
        dir.path(),
    );
    assert_eq!(code, Some(2));
    assert!(said.contains("--registry goes with --workspace"), "{said}");
    let (code, said) = mcp_once(&[], dir.path());
    assert_eq!(code, Some(2));
    assert!(said.contains("--root DIR or --workspace ID|PATH"), "{said}");
    assert!(!reg.exists());
}

#[test]
fn a_relative_workspace_already_registered_is_not_registered_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::create_dir(base.join("proj")).expect("mkdir");
    let reg = base.join("r.json");
    let args: [&std::ffi::OsStr; 4] = [
        "--workspace".as_ref(),
        "proj".as_ref(),
        "--registry".as_ref(),
        reg.as_os_str(),
    ];
    let (code, said) = mcp_once(&args, &base);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("MCP initialisation failed"), "{said}");
    assert!(said.contains("seam mcp: registered ws-"), "{said}");
    let (code, said) = mcp_once(&args, &base);
    assert_eq!(code, Some(1), "{said}");
    assert!(!said.contains("registered"), "{said}");
}

#[test]
fn a_workspace_whose_root_became_a_link_is_refused_and_nothing_is_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::create_dir(base.join("victim")).expect("mkdir");
    std::fs::create_dir(base.join("outside")).expect("mkdir");
    let reg = base.join("r.json");
    let victim = base.join("victim");
    let args: [&std::ffi::OsStr; 4] = [
        "--workspace".as_ref(),
        victim.as_os_str(),
        "--registry".as_ref(),
        reg.as_os_str(),
    ];
    let (code, said) = mcp_once(&args, &base);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("MCP initialisation failed"), "{said}");
    std::fs::remove_dir(&victim).expect("rmdir");
    std::os::unix::fs::symlink(base.join("outside"), &victim).expect("symlink");
    let (code, said) = mcp_once(&args, &base);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("[WS_INVALID_ROOT]") && said.contains("now leads to"),
        "{said}"
    );
}

/// `seam serve` on a Unix socket in `dir`, until dropped.
struct ServeChild(std::process::Child);

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_remote_backend_serves_the_same_tools_through_the_wire() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("w");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(root.join("a.txt"), b"one\r\ntwo\r\n").expect("seed");
    std::fs::write(root.join("keep.txt"), b"precious\n").expect("seed");
    let socket = dir.path().join("s.sock");
    let _server = ServeChild(
        std::process::Command::new(env!("CARGO_BIN_EXE_seam"))
            .arg("serve")
            .arg("--root")
            .arg(&root)
            .arg("--listen")
            .arg(format!("unix:{}", socket.display()))
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("seam serve"),
    );
    for _ in 0..2000 {
        if socket.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let provider = format!("unix:{}", socket.display());
    let client = serve(&root, &["--provider", &provider]).await;
    ok(&call(&client, "read", json!({"file_path": "a.txt"})).await);
    ok(&call(
        &client,
        "edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"}),
    )
    .await);
    assert_eq!(disk(&root, "a.txt"), b"one\r\n2\r\n");
    refused(
        &call(
            &client,
            "write",
            json!({"file_path": "keep.txt", "content": "gone\n"}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    assert_eq!(disk(&root, "keep.txt"), b"precious\n");
    // A remote backend offers no search: glob and grep are not listed.
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        [
            "read",
            "write",
            "edit",
            "read_image",
            "str_replace_editor",
            "list",
            "tree",
            "info",
            "read_many",
            "roots",
            "create_directory",
            "move",
            "delete"
        ]
    );
    // The namespace tools go through the wire too: a move of a file the session edited (so it
    // saw it at its version) lands, byte for byte.
    ok(&call(
        &client,
        "move",
        json!({"source": "a.txt", "destination": "b.txt"}),
    )
    .await);
    assert_eq!(disk(&root, "b.txt"), b"one\r\n2\r\n");
    assert!(!root.join("a.txt").exists());
    client.cancel().await.expect("close");
}

/// What a file server offers beyond the seed's tools, through a real MCP client: a listing with
/// kinds and sizes, a tree with excludes, file info, several files in one read, the roots, a dry
/// run that changes nothing on disk, and structured content beside every text.
#[tokio::test]
async fn lists_trees_infos_reads_many_shows_roots_and_dry_runs_without_changing_a_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("real");
    std::fs::create_dir_all(root.join("src/deep")).expect("mkdir");
    std::fs::create_dir_all(root.join("node_modules/x")).expect("mkdir");
    std::fs::write(root.join("a.txt"), b"one\ntwo\n").expect("seed");
    std::fs::write(root.join("src/lib.rs"), b"fn f() {}\n").expect("seed");
    std::fs::write(root.join("src/deep/x.rs"), b"x\n").expect("seed");
    std::os::unix::fs::symlink("src", root.join("link")).expect("link");
    let client = serve(&root, &[]).await;

    let r = call(&client, "list", json!({})).await;
    let listed = ok(&r);
    assert!(listed.contains("a.txt  8 bytes"), "{listed}");
    assert!(
        listed.contains("src/") && listed.contains("link/ (link)"),
        "{listed}"
    );
    let structured = r.structured_content.clone().expect("structured content");
    assert_eq!(structured["entries"][0]["name"], json!("a.txt"));
    assert_eq!(structured["entries"][0]["size"], json!(8));

    let tree = ok(&call(
        &client,
        "tree",
        json!({"exclude": ["node_modules"], "depth": 3}),
    )
    .await);
    assert!(tree.contains("\n  deep/\n    x.rs  2 bytes"), "{tree}");
    assert!(!tree.contains("node_modules"), "{tree}");
    assert!(
        !tree.contains("link/ (link)\n  "),
        "a link is not entered: {tree}"
    );

    let info = call(&client, "info", json!({"file_path": "link"})).await;
    let text = ok(&info);
    assert!(
        text.contains("kind: directory") && text.contains("link: yes"),
        "{text}"
    );
    assert_eq!(
        info.structured_content
            .as_ref()
            .map(|s| s["real_path"].clone()),
        Some(json!(root.join("src").to_string_lossy()))
    );

    let many = ok(&call(
        &client,
        "read_many",
        json!({"file_paths": ["a.txt", "missing.txt", "src/lib.rs"]}),
    )
    .await);
    let part = |from: &str, to: &str| {
        let start = many
            .find(from)
            .unwrap_or_else(|| panic!("no {from} in {many}"));
        let rest = &many[start..];
        rest[..rest.find(to).unwrap_or(rest.len())].to_string()
    };
    assert!(
        part("==> a.txt <==", "==> missing").contains("1: one"),
        "{many}"
    );
    assert!(
        part("==> missing.txt <==", "==> src").contains("Error"),
        "{many}"
    );
    assert!(
        part("==> src/lib.rs <==", "\u{0}").contains("1: fn f() {}"),
        "{many}"
    );

    let roots = ok(&call(&client, "roots", json!({})).await);
    assert!(
        roots.contains(&format!("writable: {}", root.display()))
            && roots.contains("readable: beneath"),
        "{roots}"
    );

    // A dry run shows the diff and changes nothing; a.txt was read by read_many, so the real
    // edit is then allowed and lands.
    let dry = ok(&call(
        &client,
        "edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO", "dry_run": true}),
    )
    .await);
    assert!(dry.contains("-two\n+TWO"), "{dry}");
    assert_eq!(disk(&root, "a.txt"), b"one\ntwo\n");
    let dry = ok(&call(
        &client,
        "write",
        json!({"file_path": "new.txt", "content": "hello\n", "dry_run": true}),
    )
    .await);
    assert!(
        dry.contains("--- /dev/null") && dry.contains("+hello"),
        "{dry}"
    );
    assert!(!root.join("new.txt").exists());
    ok(&call(
        &client,
        "edit",
        json!({"file_path": "a.txt", "old_string": "two", "new_string": "TWO"}),
    )
    .await);
    assert_eq!(disk(&root, "a.txt"), b"one\nTWO\n");
    // A dry run of an edit never read is refused as the edit itself would be.
    std::fs::write(root.join("unread.txt"), b"u\n").expect("seed");
    refused(
        &call(
            &client,
            "edit",
            json!({"file_path": "unread.txt", "old_string": "u", "new_string": "v", "dry_run": true}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    client.cancel().await.expect("close");
}

/// A client that offers MCP roots, changing them when told.
#[derive(Clone)]
struct RootsClient {
    roots: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

#[allow(deprecated)]
impl rmcp::ClientHandler for RootsClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_roots()
                .enable_roots_list_changed()
                .build(),
            rmcp::model::Implementation::new("roots-test", "0"),
        )
    }

    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self.roots.lock().expect("lock").clone();
        Ok(rmcp::model::ListRootsResult::new(
            roots
                .iter()
                .map(|p| rmcp::model::Root::new(format!("file://{}", p.replace(' ', "%20"))))
                .collect(),
        ))
    }
}

/// Reads `rel` through `client` until it answers as `want` says (the roots are bound by the
/// server once the client has answered its request: a moment after the notification).
async fn eventually(
    client: &rmcp::service::RunningService<rmcp::RoleClient, RootsClient>,
    rel: &str,
    want: impl Fn(bool, &str) -> bool,
) -> String {
    let mut last = String::new();
    for _ in 0..100 {
        let Value::Object(args) = json!({"file_path": rel}) else {
            unreachable!()
        };
        let r = client
            .call_tool(CallToolRequestParams::new("read").with_arguments(args))
            .await
            .expect("answered");
        let (error, text) = support::mcp::text(&r);
        if want(error, &text) {
            return text;
        }
        last = text;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{rel}: never as wanted; last answer: {last}");
}

#[tokio::test]
async fn the_clients_roots_become_the_allowed_roots_and_follow_its_changes() {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("real");
    let (start, a, b) = (base.join("start"), base.join("root a"), base.join("b"));
    for d in [&start, &a, &b] {
        std::fs::create_dir(d).expect("mkdir");
    }
    std::fs::write(a.join("in-a.txt"), b"A\n").expect("seed");
    std::fs::write(b.join("in-b.txt"), b"B\n").expect("seed");
    let roots = std::sync::Arc::new(std::sync::Mutex::new(vec![
        a.to_string_lossy().into_owned(),
    ]));
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_seam")).configure(|c| {
        c.arg("mcp").arg("--root").arg(&start);
    });
    let client = RootsClient {
        roots: roots.clone(),
    }
    .serve(TokioChildProcess::new(command).expect("spawn"))
    .await
    .expect("initialised");
    // The client's root replaces --root: relative paths start there, and outside it is fenced.
    let text = eventually(&client, "in-a.txt", |error, t| !error && t.contains("1: A")).await;
    assert!(text.contains("1: A"));
    let b_file = b.join("in-b.txt").to_string_lossy().into_owned();
    eventually(&client, &b_file, |error, t| {
        error && t.contains("FS_SANDBOX_DENIED")
    })
    .await;
    // The client's roots change: b is served, a is not any more.
    *roots.lock().expect("lock") = vec![b.to_string_lossy().into_owned()];
    client
        .peer()
        .notify_roots_list_changed()
        .await
        .expect("notified");
    eventually(&client, "in-b.txt", |error, t| !error && t.contains("1: B")).await;
    let a_file = a.join("in-a.txt").to_string_lossy().into_owned();
    eventually(&client, &a_file, |error, t| {
        error && t.contains("FS_SANDBOX_DENIED")
    })
    .await;
    // A write lands in the new root, byte for byte.
    let Value::Object(args) = json!({"file_path": "new.txt", "content": "n\n"}) else {
        unreachable!()
    };
    let r = client
        .call_tool(CallToolRequestParams::new("write").with_arguments(args))
        .await
        .expect("answered");
    assert!(!support::mcp::text(&r).0, "{}", support::mcp::text(&r).1);
    assert_eq!(disk(&b, "new.txt"), b"n\n");
    assert!(!start.join("new.txt").exists());
    client.cancel().await.expect("close");
}

/// A line of the big files below (65 bytes).
const BIG_LINE: &str = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n";

/// A mutation answers with what changed — the version, a few hunks, the counts — not the file:
/// a one-line edit of a 4 MiB file answered 33.5 MB before (the texts in `structuredContent`
/// and again in `_meta`), and a whole rewrite shows at most the documented bound of its diff.
#[tokio::test]
async fn a_one_line_edit_of_a_4_mib_file_answers_in_kilobytes_with_its_version_and_hunk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let lines = (4 << 20) / BIG_LINE.len();
    let mut content = BIG_LINE.repeat(lines);
    content.replace_range(
        BIG_LINE.len() * (lines / 2)..BIG_LINE.len() * (lines / 2) + 5,
        "MIDDL",
    );
    std::fs::write(root.join("big.txt"), &content).expect("seed");
    let client = serve(root, &[]).await;
    ok(&call(&client, "read", json!({"file_path": "big.txt", "limit": 1})).await);

    let edit = call(
        &client,
        "edit",
        json!({"file_path": "big.txt", "old_string": "MIDDL", "new_string": "middle"}),
    )
    .await;
    ok(&edit);
    let answer = serde_json::to_vec(&edit).expect("json").len();
    assert!(answer < 16 * 1024, "the edit answered {answer} bytes");
    let expected = content.replacen("MIDDL", "middle", 1);
    assert_eq!(disk(root, "big.txt"), expected.as_bytes());
    assert!(edit.meta.is_none(), "nothing is repeated under _meta");
    let facts = edit.structured_content.expect("structured content");
    assert_eq!(facts["operation"], "update");
    assert_eq!(
        facts["changes"],
        json!({"added": 1, "removed": 1, "complete": true, "rest_from_line": null})
    );
    let hunk = &facts["diffs"][0];
    assert_eq!(hunk["old_start"], lines / 2 + 1 - 3);
    assert_eq!(
        hunk["lines"][3],
        json!(format!("-MIDDL{}", &BIG_LINE[5..BIG_LINE.len() - 1]))
    );
    assert!(facts.get("before").is_none() && facts.get("after").is_none());
    // The version answered is the file's version now.
    let info = call(&client, "info", json!({"file_path": "big.txt"})).await;
    let info = info.structured_content.expect("info facts");
    assert_eq!(facts["version"], info["version"]);

    // A rewrite of every line: bounded, counted, and says where the rest is.
    let rewritten = content.replace("fox", "cat");
    let write = call(
        &client,
        "write",
        json!({"file_path": "big.txt", "content": rewritten}),
    )
    .await;
    ok(&write);
    assert_eq!(disk(root, "big.txt"), rewritten.as_bytes());
    let answer = serde_json::to_vec(&write).expect("json").len();
    assert!(answer < 16 * 1024, "the rewrite answered {answer} bytes");
    let facts = write.structured_content.expect("structured content");
    assert_eq!(facts["changes"]["added"], lines);
    assert_eq!(facts["changes"]["removed"], lines);
    assert_eq!(facts["changes"]["complete"], false);
    // The hunk shown is cut where the bounds fall; the new text goes on after its `+` lines.
    let shown = facts["diffs"].as_array().expect("hunks");
    assert_eq!(shown.len(), 1);
    let lines_shown = shown[0]["lines"].as_array().expect("lines");
    let bytes_shown: usize = lines_shown
        .iter()
        .filter_map(|l| l.as_str().map(str::len))
        .sum();
    assert!(
        lines_shown.len() <= 200 && bytes_shown <= 8 * 1024 && bytes_shown > 8 * 1024 - 80,
        "filled to the byte bound: {} lines, {bytes_shown} bytes",
        lines_shown.len()
    );
    let added_shown = lines_shown
        .iter()
        .filter(|l| l.as_str().is_some_and(|l| l.starts_with('+')))
        .count();
    assert_eq!(facts["changes"]["rest_from_line"], added_shown + 1);
    client.cancel().await.expect("close");
}

/// A link whose target the session may not see is listed as a link, its target withheld — the
/// promise of docs/agent.md — not as an `(other)` non-link.
#[tokio::test]
async fn a_link_out_of_the_root_is_listed_as_a_link_whose_target_is_not_shown() {
    let outer = tempfile::tempdir().expect("tempdir");
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).expect("root");
    std::fs::write(outer.path().join("secret.txt"), "s3cret\n").expect("outside");
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), root.join("out")).expect("link");
    std::os::unix::fs::symlink("a.txt", root.join("in")).expect("link in");
    std::fs::write(root.join("a.txt"), "a\n").expect("a");
    let client = serve(&root, &[]).await;

    let list = call(&client, "list", json!({"path": "."})).await;
    let text = ok(&list);
    assert!(text.contains("\nout (link)  (target not shown)"), "{text}");
    assert!(text.contains("\nin (link)  2 bytes"), "{text}");
    assert!(
        !text.contains("secret") && !text.contains("7 bytes"),
        "{text}"
    );
    let entries = &list.structured_content.expect("facts")["entries"];
    let out = entries
        .as_array()
        .and_then(|e| e.iter().find(|e| e["name"] == "out"))
        .expect("out listed");
    assert_eq!(
        out,
        &json!({"name": "out", "kind": "other", "size": null, "link": true})
    );
    let tree = ok(&call(&client, "tree", json!({"path": "."})).await);
    assert!(tree.contains("out (link)  (target not shown)"), "{tree}");
    client.cancel().await.expect("close");
}

/// A name longer than any file system allows is refused as the bad argument it is, naming its
/// length, before any I/O — not `FS_NOT_FOUND` "cannot resolve".
#[tokio::test]
async fn a_300_byte_name_is_refused_as_too_long_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let client = serve(root, &[]).await;
    let long = "n".repeat(300);
    for (tool, args) in [
        (
            "write",
            json!({"file_path": format!("d/{long}"), "content": "x"}),
        ),
        ("read", json!({"file_path": long.clone()})),
        ("create_directory", json!({"path": long.clone()})),
        ("move", json!({"source": "a", "destination": long.clone()})),
        // The tools whose path is optional refuse it the same way (they once passed it on).
        ("list", json!({"path": long.clone()})),
        ("tree", json!({"path": long.clone()})),
        ("glob", json!({"path": long.clone(), "pattern": "*"})),
        ("grep", json!({"path": long.clone(), "pattern": "x"})),
    ] {
        let r = call(&client, tool, args).await;
        let (error, text) = support::mcp::text(&r);
        assert!(error, "{tool}: {text}");
        assert!(
            text.starts_with("Error: ")
                && text.contains("has a name of 300 bytes")
                && text.contains("longer than the 255 bytes a file name may have"),
            "{tool}: {text}"
        );
        assert!(text.len() < 200, "the name is not echoed whole: {text}");
    }
    let left: Vec<_> = std::fs::read_dir(root).expect("list").collect();
    assert!(left.is_empty(), "nothing was created");
    client.cancel().await.expect("close");
}
