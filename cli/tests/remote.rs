//! The remote provider in the composition: what a contract call and a tool call cost over the
//! wire (round trips counted at the server), and the shipped tools and policy working through
//! it with the bytes checked on disk.

use seam::{FileSystem, ResolveOptions, Signal};
use seam_policy::{ObservationPolicy, Owner};
use seam_remote::{Address, Connection, RemoteFileSystem, Server};
use seam_tools::{Exec, Toolset};
use serde_json::json;
use std::sync::Arc;

struct Served {
    server: Arc<Server>,
    fs: Arc<dyn FileSystem>,
    root: String,
    _dir: tempfile::TempDir,
    _rt: tokio::runtime::Runtime,
}

fn served() -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let socket = root.join("s.sock");
    let root = root.join("w");
    std::fs::create_dir(&root).expect("root");
    let root = root.to_string_lossy().into_owned();
    let hosted: Arc<dyn FileSystem> = Arc::new(seam_local::LocalFileSystem::new(
        seam_local::LocalConfig::new(root.clone()),
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = Arc::new(Server::new(hosted));
    let listener = {
        let _enter = rt.enter();
        Server::bind_unix(&socket).expect("bind")
    };
    rt.spawn(server.clone().serve_unix(listener));
    let conn = Connection::connect(&Address::Unix(socket), None).expect("connect");
    Served {
        server,
        fs: Arc::new(RemoteFileSystem::new(Arc::new(conn))),
        root,
        _dir: dir,
        _rt: rt,
    }
}

#[test]
fn every_contract_call_is_one_round_trip_and_path_facts_are_none() {
    let s = served();
    std::fs::write(format!("{}/a.txt", s.root), "one\n").expect("seed");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let fs = s.fs.as_ref();
        let none = Signal::none();
        let cost = |before: u64| s.server.requests_served() - before;
        let n = s.server.requests_served();
        let t = fs
            .resolve("a.txt", ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        assert_eq!(cost(n), 1, "resolve");
        let n = s.server.requests_served();
        let _ = (fs.process_path(&t), fs.file_url(&t), fs.contains(&t, &t));
        assert_eq!(cost(n), 0, "path facts travel with the target");
        let root = fs
            .resolve(".", ResolveOptions::default(), &none)
            .await
            .expect("root");
        let v = fs
            .stat(&t, &none)
            .await
            .expect("stat")
            .expect("there")
            .version;
        let calls: Vec<(&str, u64)> = vec![
            ("stat", {
                let n = s.server.requests_served();
                fs.stat(&t, &none).await.expect("stat");
                cost(n)
            }),
            ("lstat", {
                let n = s.server.requests_served();
                fs.lstat("a.txt", ResolveOptions::default(), &none)
                    .await
                    .expect("lstat");
                cost(n)
            }),
            ("read_text", {
                let n = s.server.requests_served();
                fs.read_text(&t, &none).await.expect("read");
                cost(n)
            }),
            ("read_bytes", {
                let n = s.server.requests_served();
                fs.read_bytes(&t, 100, &none).await.expect("bytes");
                cost(n)
            }),
            ("stream_text", {
                let n = s.server.requests_served();
                let mut st = fs.stream_text(&t, &none).await.expect("stream");
                while futures_util::StreamExt::next(&mut st).await.is_some() {}
                cost(n)
            }),
            ("list_dir", {
                let n = s.server.requests_served();
                fs.list_dir(&root, &none).await.expect("list");
                cost(n)
            }),
            ("write_text", {
                let n = s.server.requests_served();
                fs.write_text(
                    &t,
                    "two\n",
                    Some(&seam::WriteIntent::ReplaceIfVersion { version: v }),
                    None,
                    &none,
                )
                .await
                .expect("write");
                cost(n)
            }),
            ("edit_text", {
                let n = s.server.requests_served();
                let req = seam::EditRequest {
                    old_string: "two".into(),
                    new_string: "2".into(),
                    replace_all: false,
                };
                fs.edit_text(&t, &req, None, None, &none)
                    .await
                    .expect("edit");
                cost(n)
            }),
        ];
        for (call, trips) in calls {
            assert_eq!(trips, 1, "{call}");
        }
        assert_eq!(
            std::fs::read(format!("{}/a.txt", s.root)).expect("disk"),
            b"2\n"
        );
    });
}

#[test]
fn a_model_read_costs_three_round_trips_and_an_edit_or_a_new_file_two() {
    let s = served();
    std::fs::write(format!("{}/cfg.toml", s.root), "a = 1\n").expect("seed");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(async {
        let tools = Toolset::builder(s.fs.as_ref()).build();
        let exec = Exec::new(s.fs.clone())
            .with_gate(Arc::new(ObservationPolicy::new()))
            .with_actor(Owner::new())
            .with_cwd(s.root.clone());
        let mut trips = Vec::new();
        for (tool, args) in [
            ("read", json!({"file_path": "cfg.toml"})),
            (
                "edit",
                json!({"file_path": "cfg.toml", "old_string": "1", "new_string": "2"}),
            ),
            ("write", json!({"file_path": "new.txt", "content": "x\n"})),
        ] {
            let n = s.server.requests_served();
            tools
                .get(tool)
                .expect("tool")
                .execute(&args, &exec)
                .await
                .expect(tool);
            trips.push((tool, s.server.requests_served() - n));
        }
        // read: resolve, stat, read_text. The policy knows the version the read saw, so an
        // edit is resolve, edit_text; and that nothing was seen at new.txt, so a write there
        // is resolve, write_text (create-if-absent).
        assert_eq!(trips, [("read", 3), ("edit", 2), ("write", 2)]);
        assert_eq!(
            std::fs::read(format!("{}/cfg.toml", s.root)).expect("disk"),
            b"a = 2\n"
        );
        assert_eq!(
            std::fs::read(format!("{}/new.txt", s.root)).expect("disk"),
            b"x\n"
        );
    });
}

/// The pids of this process's children whose command line has `word`.
fn children_with(word: &str) -> Vec<String> {
    let mut pids = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
    {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in list.split_whitespace() {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(word) {
                pids.push(pid.to_string());
            }
        }
    }
    pids
}

/// `seam check`'s `remote` (the server the gate starts itself, with its cases in directories of
/// this machine) has its cases' storage changed and read back in the gate's process, not
/// through the server: what is compared with the model is the disk. So the world still reads
/// and writes the case once the server is gone — through the server it no longer could.
#[test]
fn the_gates_own_servers_cases_are_read_on_this_disk() {
    use seam_conformance::{CaseDurability, CaseOptions, Factory};
    use seam_model::{SnapEntry, WorldEffect};
    let factory = seam_remote_testkit::RemoteFactory::own(
        env!("CARGO_BIN_EXE_seam").into(),
        seam_local_testkit::LocalFactory.configurations(),
    );
    let subject = factory
        .make(&CaseOptions::new(7, CaseDurability::Relaxed, "tmpfile"))
        .expect("a subject");
    let root = subject.world.root_display();
    // The gate's own server is the one that reuses case directories (another test of this
    // binary may have a server of its own running).
    let servers = children_with("--reuse-case-dirs");
    assert_eq!(servers.len(), 1, "one server started: {servers:?}");
    let status = std::process::Command::new("kill")
        .args(["-KILL", &servers[0]])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    // Gone once its command line is (a zombie's is empty).
    while !children_with("--reuse-case-dirs").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server outlived SIGKILL by 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    subject
        .world
        .apply(&WorldEffect::CreateFile {
            path: "a".into(),
            bytes: b"kept\n".to_vec().into(),
            mode: 0o640,
        })
        .expect("written with the server gone");
    assert_eq!(
        std::fs::read(format!("{root}/a")).expect("on disk"),
        b"kept\n"
    );
    std::fs::write(format!("{root}/b"), b"from here\n").expect("written here");
    let snap = subject.world.snapshot().expect("read with the server gone");
    assert_eq!(
        snap.get("a"),
        Some(&SnapEntry::File {
            bytes: b"kept\n"[..].into(),
            mode: Some(0o640),
        })
    );
    assert_eq!(
        snap.get("b")
            .map(|e| matches!(e, SnapEntry::File { bytes, .. } if bytes[..] == b"from here\n"[..])),
        Some(true)
    );
}

/// The shipped server's test-control methods (`world/apply`, `world/snapshot`,
/// `world/entry_mode`) are gated as any server's are when it is given by address: `seam check`
/// reads and changes its cases only through them there (the `remote` it starts itself is read on
/// this disk instead). A server whose `world/apply` left a chmod undone fails here, on the
/// modes it reads back.
#[test]
fn the_shipped_servers_world_methods_are_gated_by_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).expect("cases");
    let socket = dir.path().join("s.sock");
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_seam"))
        .arg("serve")
        .arg("--root")
        .arg(&cases)
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--test-control")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start seam serve");
    // The gate waits for the socket itself (`--start-timeout`).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_seam"))
        .args(["check", "--provider"])
        .arg(format!("unix:{}", socket.display()))
        .args(["--property", "sequences", "--seed", "5", "--cases", "48"])
        .output()
        .expect("run seam check");
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // One property of the default run: incomplete as a verdict, passed as a property.
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("  sequences              passed"),
        "{stdout}"
    );
}
