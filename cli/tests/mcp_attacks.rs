//! `seam mcp` shows nothing outside its root and changes nothing there: the real binary behind
//! an rmcp client, attacked the way published escapes from agent file servers went — `../`,
//! absolute paths, links out to files and directories (absolute, relative, chained), a dangling
//! link out, a link to `/`, a sibling whose name extends the root's, NUL bytes, over-long names,
//! a hard link to a file outside, and a directory swapped for a link to outside while 2,000
//! calls run — through every tool that reads (`read`, `read_image`, `glob`, `grep`,
//! `str_replace_editor view`) and every one that writes (`write`, `edit`, `str_replace_editor`
//! `create`/`str_replace`/`insert`). Each must be refused with no byte of the outside in any
//! answer, and everything outside — files holding a canary — is read back unchanged at the end.
//! With `--read-anywhere` the same reads go through: what the default read fence changes.

mod support;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::mcp::{Client, call, serve, text};

/// What every outside file holds: it must never appear in an answer.
const CANARY: &str = "CANARY-7f3a-outside";

struct Layout {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("real path");
        let (ws, out, sibling) = (base.join("ws"), base.join("out"), base.join("ws2"));
        for d in [&ws, &out, &sibling, &out.join("sub")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(out.join("secret.txt"), format!("{CANARY} file\n")).expect("canary");
        std::fs::write(out.join("sub/deep.txt"), format!("{CANARY} deep\n")).expect("canary");
        std::fs::write(sibling.join("secret.txt"), format!("{CANARY} sibling\n")).expect("canary");
        // A PNG outside, for read_image.
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend_from_slice(CANARY.as_bytes());
        std::fs::write(out.join("pic.png"), png).expect("canary");
        std::fs::write(ws.join("inside.txt"), "inside\n").expect("file");
        let o = out.to_string_lossy().into_owned();
        symlink(&o, ws.join("abs-dir")).expect("link");
        symlink("../out", ws.join("rel-dir")).expect("link");
        symlink("rel-dir", ws.join("chain")).expect("link");
        symlink(out.join("secret.txt"), ws.join("abs-file")).expect("link");
        symlink("../out/secret.txt", ws.join("rel-file")).expect("link");
        symlink(out.join("pic.png"), ws.join("pic.png")).expect("link");
        symlink(out.join("missing.txt"), ws.join("dangling-out")).expect("link");
        symlink("/", ws.join("to-root")).expect("link");
        std::fs::hard_link(out.join("sub/deep.txt"), ws.join("hard.txt")).expect("hard link");
        Self {
            _dir: dir,
            base,
            ws,
        }
    }

    /// Everything outside the workspace: path → kind, mode and bytes.
    fn outside(&self) -> BTreeMap<String, String> {
        fn walk(p: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
            let Ok(entries) = std::fs::read_dir(p) else {
                return;
            };
            for e in entries.flatten() {
                let path = e.path();
                let meta = std::fs::symlink_metadata(&path).expect("metadata");
                let bytes = if meta.is_file() {
                    std::fs::read(&path).expect("read")
                } else {
                    Vec::new()
                };
                let rel = path.strip_prefix(base).expect("under base");
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    format!(
                        "{:?} {:o} {bytes:?}",
                        meta.file_type(),
                        std::os::unix::fs::PermissionsExt::mode(&meta.permissions())
                    ),
                );
                if meta.is_dir() {
                    walk(&path, base, out);
                }
            }
        }
        let mut out = BTreeMap::new();
        for d in ["out", "ws2"] {
            walk(&self.base.join(d), &self.base, &mut out);
        }
        out
    }
}

/// Every text of an answer (content blocks, structured data, metadata) in one string.
fn everything(r: &CallToolResult) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

/// The ways out, as a tool is given them.
fn ways_out(l: &Layout) -> Vec<(&'static str, String)> {
    let out = l.base.join("out").to_string_lossy().into_owned();
    let sibling = l.base.join("ws2").to_string_lossy().into_owned();
    vec![
        ("dot-dot", "../out/secret.txt".into()),
        ("dot-dot deep", "inside/../../out/secret.txt".into()),
        ("absolute", format!("{out}/secret.txt")),
        ("sibling prefix", format!("{sibling}/secret.txt")),
        ("absolute link to a directory", "abs-dir/secret.txt".into()),
        ("relative link to a directory", "rel-dir/secret.txt".into()),
        ("chained link", "chain/secret.txt".into()),
        ("absolute link to a file", "abs-file".into()),
        ("relative link to a file", "rel-file".into()),
        ("link to /", "to-root/etc/hostname".into()),
        ("dangling link out", "dangling-out".into()),
        ("NUL", "inside.txt\u{0}/../../out/secret.txt".into()),
        (
            "over-long name",
            format!("{}/../../out/secret.txt", "n".repeat(300)),
        ),
    ]
}

/// The calls that read `path`, each as (tool, arguments).
fn reads(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read", json!({"file_path": path})),
        ("grep", json!({"pattern": "CANARY", "path": path})),
        ("glob", json!({"pattern": "**/*", "path": path})),
        (
            "str_replace_editor",
            json!({"command": "view", "path": path}),
        ),
    ]
}

/// The calls that write `path`.
fn writes(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("write", json!({"file_path": path, "content": "pwned\n"})),
        (
            "edit",
            json!({"file_path": path, "old_string": CANARY, "new_string": "pwned"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "create", "path": path, "file_text": "pwned\n"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "str_replace", "path": path, "old_str": CANARY, "new_str": "pwned"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "insert", "path": path, "insert_line": 0, "new_str": "pwned\n"}),
        ),
    ]
}

/// Reads every outside file once through `client` first (so the observation policy is not
/// what refuses the writes), then tries every way out with every tool.
async fn attack(client: &Client, l: &Layout) -> (usize, Vec<String>) {
    let mut tried = 0;
    let mut leaks = Vec::new();
    for (kind, path) in ways_out(l) {
        for (tool, args) in reads(&path).into_iter().chain(writes(&path)) {
            tried += 1;
            let r = call(client, tool, args.clone()).await;
            let (error, said) = text(&r);
            let all = everything(&r);
            if all.contains(CANARY) || !error {
                leaks.push(format!("{kind}: {tool} {args} answered: {said}"));
            }
        }
    }
    // read_image through a link to a PNG outside.
    tried += 1;
    let r = call(client, "read_image", json!({"file_path": "pic.png"})).await;
    if everything(&r).contains(&base64_of_canary()) || !text(&r).0 {
        leaks.push(format!("read_image pic.png answered: {}", text(&r).1));
    }
    (tried, leaks)
}

fn base64_of_canary() -> String {
    use base64::Engine;
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(CANARY.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(png)
}

#[tokio::test]
async fn no_way_out_reads_or_changes_anything_outside_the_root() {
    let l = Layout::new();
    let before = l.outside();
    let client = serve(&l.ws, &[]).await;
    let (tried, leaks) = attack(&client, &l).await;
    assert!(tried > 100, "{tried} attacks");
    assert!(
        leaks.is_empty(),
        "{} of {tried} attacks got through:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
    // A search of the whole root finds nothing outside (links are not followed, the hard
    // link is a file inside and is named as one).
    let r = call(&client, "grep", json!({"pattern": "CANARY", "path": "."})).await;
    let said = text(&r).1;
    assert!(!said.contains("secret.txt"), "{said}");
    // A write through the hard link replaces the name inside; the file outside keeps its bytes.
    let read = call(&client, "read", json!({"file_path": "hard.txt"})).await;
    assert!(!text(&read).0, "a hard link inside is a file inside");
    let w = call(
        &client,
        "write",
        json!({"file_path": "hard.txt", "content": "replaced\n"}),
    )
    .await;
    assert!(!text(&w).0, "{}", text(&w).1);
    assert_eq!(
        std::fs::read(l.ws.join("hard.txt")).expect("inside"),
        b"replaced\n"
    );
    // The root's own files still read and write as usual.
    let r = call(&client, "read", json!({"file_path": "inside.txt"})).await;
    assert!(text(&r).1.contains("inside"));
    client.cancel().await.expect("close");
    assert_eq!(l.outside(), before, "something outside changed");
}

#[tokio::test]
async fn a_directory_swapped_for_a_link_out_during_2000_calls_shows_and_changes_nothing_outside() {
    let l = Layout::new();
    let d = l.ws.join("d");
    std::fs::create_dir(&d).expect("mkdir");
    std::fs::write(d.join("secret.txt"), "inside d\n").expect("file");
    let before = l.outside();
    let client = serve(&l.ws, &[]).await;
    // Observed once, so writes are judged by the fence, not refused by the policy.
    let r = call(&client, "read", json!({"file_path": "d/secret.txt"})).await;
    assert!(!text(&r).0);
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (d, out, stop) = (d.clone(), l.base.join("out"), stop.clone());
        let parked = d.with_file_name("d.real");
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&d, &parked).is_ok() {
                    let _ = symlink(&out, &d);
                    std::thread::sleep(std::time::Duration::from_micros(50));
                    let _ = std::fs::remove_file(&d);
                    let _ = std::fs::rename(&parked, &d);
                    swaps += 1;
                }
            }
            swaps
        })
    };
    let mut leaks = Vec::new();
    for i in 0..2000 {
        let (tool, args) = match i % 4 {
            0 => ("read", json!({"file_path": "d/secret.txt"})),
            1 => ("grep", json!({"pattern": "CANARY", "path": "d"})),
            2 => (
                "str_replace_editor",
                json!({"command": "view", "path": "d/secret.txt"}),
            ),
            _ => (
                "write",
                json!({"file_path": "d/secret.txt", "content": format!("write {i}\n")}),
            ),
        };
        let r = call(&client, tool, args).await;
        if everything(&r).contains(CANARY) {
            leaks.push(format!("call {i} ({tool}): {}", text(&r).1));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().expect("swapper");
    client.cancel().await.expect("close");
    assert!(swaps > 0, "the race never swapped");
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    assert_eq!(l.outside(), before, "something outside changed");
}

#[tokio::test]
async fn read_anywhere_lets_the_same_reads_through_and_writes_stay_fenced() {
    let l = Layout::new();
    let before = l.outside();
    let client = serve(&l.ws, &["--read-anywhere"]).await;
    for path in ["../out/secret.txt", "abs-file", "rel-dir/secret.txt"] {
        let r = call(&client, "read", json!({"file_path": path})).await;
        assert!(text(&r).1.contains(CANARY), "{path}: {}", text(&r).1);
        let w = call(
            &client,
            "write",
            json!({"file_path": path, "content": "pwned\n"}),
        )
        .await;
        assert!(text(&w).0, "{path}: a write went through");
    }
    client.cancel().await.expect("close");
    assert_eq!(l.outside(), before);
}
