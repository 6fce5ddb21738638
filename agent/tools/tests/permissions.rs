//! FS_PERMISSION_DENIED through the tools. Root ignores permission bits, so when the test runs
//! as root it re-executes this binary as uid/gid 65534 (`std::process::Command` drops the ids
//! before exec, no unsafe code) and checks what the unprivileged child reports; as another user
//! it runs the same calls in-process. The world is checked from the parent afterwards.

mod support;

use seam_tools::{Exec, Toolset};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

const CHILD: &str = "SEAM_TOOLS_PERMISSION_CHILD";
const NOBODY: u32 = 65534;

/// The calls, as the unprivileged user: one line per call, `tool code message`.
fn calls(root: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let fs: Arc<dyn seam::FileSystem> = Arc::new(support::local(root));
    let tools = Toolset::builder(fs.as_ref())
        .image_sink(Arc::new(AnySink))
        .str_replace_editor()
        .build();
    let exec = Exec::new(fs).with_cwd(root);
    let cases = [
        ("read", json!({"file_path": "secret.txt"})),
        (
            "write",
            json!({"file_path": "locked/new.txt", "content": "x"}),
        ),
        (
            "edit",
            json!({"file_path": "secret.txt", "old_string": "s", "new_string": "t"}),
        ),
        ("read_image", json!({"file_path": "secret.png"})),
        ("glob", json!({"pattern": "*", "path": "sealed"})),
        ("grep", json!({"pattern": "s", "path": "sealed"})),
        ("grep", json!({"pattern": "s", "path": "secret.txt"})),
        (
            "str_replace_editor",
            json!({"command": "str_replace", "path": format!("{root}/locked/ro.txt"), "old_str": "r", "new_str": "w"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "insert", "path": format!("{root}/locked/ro.txt"), "insert_line": 0, "new_str": "w"}),
        ),
    ];
    let mut out = Vec::new();
    for (tool, args) in cases {
        let r = rt.block_on(tools.get(tool).expect("tool").execute(&args, &exec));
        let line = match r {
            Ok(o) => format!("{tool} ok {}", o.text()),
            Err(e) => format!(
                "{tool} {} {}",
                e.code().map_or("none", |c| c.as_str()),
                e.message()
            ),
        };
        out.push(line.replace(root, "[TMP]"));
    }
    out.join("\n")
}

fn run_as_nobody(root: &str) -> String {
    let exe = std::env::current_exe().expect("this binary");
    let spawn = |exe: &Path| {
        Command::new(exe)
            .env(CHILD, root)
            .uid(NOBODY)
            .gid(NOBODY)
            .current_dir("/")
            .output()
    };
    // The binary may sit where nobody cannot reach it: then run a copy from a reachable dir.
    let (out, _copy) = match spawn(&exe) {
        Ok(out) => (out, None),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let dir = tempfile::tempdir().expect("tempdir");
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            let copy = dir.path().join("permissions");
            std::fs::copy(&exe, &copy).expect("copy");
            (spawn(&copy).expect("spawn the copy"), Some(dir))
        }
        Err(e) => panic!("cannot spawn the unprivileged child: {e}"),
    };
    assert!(
        out.status.success(),
        "child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn main() {
    if let Ok(root) = std::env::var(CHILD) {
        assert!(!is_root(), "the child must not run as root");
        print!("{}", calls(&root));
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("seam-tools-perm-")
        .tempdir()
        .expect("tempdir");
    let root = dir.path().to_string_lossy().into_owned();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(dir.path().join("secret.txt"), "s").expect("write");
    std::fs::set_permissions(
        dir.path().join("secret.txt"),
        std::fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");
    std::fs::write(dir.path().join("secret.png"), b"\x89PNG\r\n\x1a\n").expect("write");
    std::fs::set_permissions(
        dir.path().join("secret.png"),
        std::fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");
    std::fs::create_dir(dir.path().join("locked")).expect("mkdir");
    std::fs::write(dir.path().join("locked/ro.txt"), "r").expect("write");
    std::fs::set_permissions(
        dir.path().join("locked/ro.txt"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    std::fs::set_permissions(
        dir.path().join("locked"),
        std::fs::Permissions::from_mode(0o555),
    )
    .expect("chmod");

    std::fs::create_dir(dir.path().join("sealed")).expect("mkdir");
    std::fs::write(dir.path().join("sealed/s.txt"), "s").expect("write");
    std::fs::set_permissions(
        dir.path().join("sealed"),
        std::fs::Permissions::from_mode(0o000),
    )
    .expect("chmod");

    let report = if is_root() {
        run_as_nobody(&root)
    } else {
        calls(&root)
    };
    let expected = [
        "read FS_PERMISSION_DENIED cannot read \"[TMP]/secret.txt\": permission denied",
        "write FS_PERMISSION_DENIED cannot write \"[TMP]/locked/new.txt\": permission denied",
        "edit FS_PERMISSION_DENIED cannot edit \"[TMP]/secret.txt\": permission denied",
        "read_image FS_PERMISSION_DENIED cannot read \"[TMP]/secret.png\": permission denied",
        "glob FS_PERMISSION_DENIED cannot list \"[TMP]/sealed\": permission denied",
        "grep FS_PERMISSION_DENIED cannot read \"[TMP]/sealed\": permission denied",
        "grep FS_PERMISSION_DENIED cannot read \"[TMP]/secret.txt\": permission denied",
        "str_replace_editor FS_PERMISSION_DENIED cannot write \"[TMP]/locked/ro.txt\": permission denied",
        "str_replace_editor FS_PERMISSION_DENIED cannot write \"[TMP]/locked/ro.txt\": permission denied",
    ];
    assert_eq!(report.lines().collect::<Vec<_>>(), expected);

    // The world is unchanged.
    std::fs::set_permissions(
        dir.path().join("secret.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("chmod");
    assert_eq!(
        std::fs::read(dir.path().join("secret.txt")).expect("read"),
        b"s"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("locked"))
            .expect("ls")
            .count(),
        1
    );
    assert_eq!(
        std::fs::read(dir.path().join("locked/ro.txt")).expect("read"),
        b"r"
    );
    std::fs::set_permissions(
        dir.path().join("locked"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::set_permissions(
        dir.path().join("sealed"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    assert_eq!(
        std::fs::read(dir.path().join("sealed/s.txt")).expect("read"),
        b"s"
    );
    println!("permissions: 9 calls denied as an unprivileged user, nothing changed on disk");
}

struct AnySink;

impl seam_tools::ImageSink for AnySink {}

fn is_root() -> bool {
    // Without a rustix dependency: the effective uid of this process, from /proc.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2))
                .map(|euid| euid == "0")
        })
        .unwrap_or(false)
}
