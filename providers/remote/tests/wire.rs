//! The protocol end to end over real sockets, against a server hosting the real local provider:
//! every method's bytes checked on disk, and the robustness rules of `docs/protocol.md` — bad
//! input answered and survived, oversized frames closing only their connection, TCP refused
//! without the token before any method runs, streams held to their window.

use seam::{FileSystem, FsErrorCode, ResolveOptions, Signal, WriteIntent};
use seam_local::{LocalConfig, LocalFileSystem};
use seam_remote::frame::{Frame, Limits, read_frame, write_frame};
use seam_remote::{Address, Connection, RemoteFileSystem, Server};
use serde_json::{Map, Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::BufReader;
use tokio::net::UnixStream;

struct Served {
    _dir: tempfile::TempDir,
    root: PathBuf,
    socket: PathBuf,
    server: Arc<Server>,
    _rt: tokio::runtime::Runtime,
}

/// The real local provider over `root`, to be hosted.
fn local_at(root: &Path) -> Arc<dyn FileSystem> {
    Arc::new(LocalFileSystem::new(LocalConfig::new(
        root.to_string_lossy().into_owned(),
    )))
}

fn serve_with(limits: Limits) -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("w");
    std::fs::create_dir(&root).expect("root");
    let socket = dir.path().join("s.sock");
    let fs = local_at(&root);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = Arc::new(Server::new(fs).with_limits(limits));
    let listener = {
        let _enter = rt.enter();
        Server::bind_unix(&socket).expect("bind")
    };
    rt.spawn(server.clone().serve_unix(listener));
    Served {
        _dir: dir,
        root,
        socket,
        server,
        _rt: rt,
    }
}

/// A runtime for a test's own async code (the server has its own).
fn test_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt")
}

fn serve() -> Served {
    serve_with(Limits::default())
}

fn remote(s: &Served) -> RemoteFileSystem {
    let conn = Connection::connect(&Address::Unix(s.socket.clone()), None).expect("connect");
    RemoteFileSystem::new(Arc::new(conn))
}

/// A connection spoken frame by frame.
struct Raw {
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
}

impl Raw {
    async fn open(socket: &Path) -> Raw {
        Raw::over(UnixStream::connect(socket).await.expect("connect"))
    }

    fn over(stream: UnixStream) -> Raw {
        let (r, w) = stream.into_split();
        Raw {
            reader: BufReader::new(r),
            writer: w,
        }
    }

    /// Grants stream 2 (the one [`start_stream`] starts) `chunks` more chunks of credit.
    async fn credit(&mut self, chunks: u64) {
        self.send(
            json!({"jsonrpc":"2.0","method":"stream/credit","params":{"id": 2, "chunks": chunks}}),
            vec![],
        )
        .await;
    }

    /// The next frame, or a failure after `secs` seconds (a test that would hang fails).
    async fn recv_within(&mut self, secs: u64) -> Frame {
        tokio::time::timeout(std::time::Duration::from_secs(secs), self.recv())
            .await
            .expect("a frame in time")
            .expect("a frame")
    }

    async fn line(&mut self, bytes: &[u8]) {
        tokio::io::AsyncWriteExt::write_all(&mut self.writer, bytes)
            .await
            .expect("send");
    }

    async fn send(&mut self, json: Value, segments: Vec<Vec<u8>>) {
        let Value::Object(map) = json else {
            panic!("an object")
        };
        let frame = Frame {
            json: map,
            segments,
        };
        write_frame(&mut self.writer, &frame).await.expect("send");
    }

    async fn recv(&mut self) -> Option<Frame> {
        read_frame(&mut self.reader, Limits::default()).await.ok()
    }

    async fn initialize(&mut self) {
        self.initialize_with(json!({"protocol":1})).await;
    }

    async fn initialize_with(&mut self, params: Value) {
        self.send(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":params}),
            vec![],
        )
        .await;
        let f = self.recv().await.expect("answer");
        assert_eq!(f.json["result"]["protocol"], 1, "{:?}", f.json);
    }
}

fn error_code(f: &Frame) -> i64 {
    f.json["error"]["code"].as_i64().unwrap_or(0)
}

#[test]
fn every_method_round_trips_and_the_bytes_on_disk_are_the_content() {
    let s = serve();
    let fs = remote(&s);
    let rt = test_runtime();
    rt.block_on(async {
        let none = Signal::none();
        let t = fs
            .resolve("a.txt", ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        assert_eq!(t.display_path, format!("{}/a.txt", s.root.display()));
        assert_eq!(fs.process_path(&t), t.display_path);
        let content = "é\r\n\"quoted\" \\ line\n".repeat(3);
        let w = fs
            .write_text(
                &t,
                &content,
                Some(&WriteIntent::CreateIfAbsent),
                None,
                &none,
            )
            .await
            .expect("write");
        assert_eq!(
            std::fs::read(s.root.join("a.txt")).expect("disk"),
            content.as_bytes()
        );
        let info = fs.stat(&t, &none).await.expect("stat").expect("present");
        assert_eq!(info.version, w.version);
        assert_eq!(fs.read_text(&t, &none).await.expect("read"), content);
        assert_eq!(
            fs.read_bytes(&t, 1 << 20, &none).await.expect("bytes"),
            content.as_bytes()
        );
        let e = fs
            .edit_text(
                &t,
                &seam::EditRequest {
                    old_string: "\"quoted\"".into(),
                    new_string: "$&".into(),
                    replace_all: true,
                },
                Some(&w.version),
                None,
                &none,
            )
            .await
            .expect("edit");
        assert_eq!(
            std::fs::read_to_string(s.root.join("a.txt")).expect("disk"),
            content.replace("\"quoted\"", "$&")
        );
        let stale = fs
            .write_text(
                &t,
                "x",
                Some(&WriteIntent::ReplaceIfVersion { version: w.version }),
                None,
                &none,
            )
            .await
            .expect_err("stale");
        assert_eq!(stale.code(), FsErrorCode::StaleVersion);
        let root = fs
            .resolve(".", ResolveOptions::default(), &none)
            .await
            .expect("root");
        assert!(fs.contains(&root, &t) && !fs.contains(&t, &root));
        let listed = fs.list_dir(&root, &none).await.expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "a.txt");
        assert_eq!(listed[0].version.as_ref(), Some(&e.version));
        let missing = fs
            .resolve("gone.txt", ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        let err = fs.read_text(&missing, &none).await.expect_err("missing");
        assert_eq!(err.code(), FsErrorCode::NotFound);
        assert_eq!(
            err.message(),
            format!("cannot read \"{}/gone.txt\": not found", s.root.display())
        );
    });
}

#[test]
fn a_streamed_file_arrives_whole_in_order_with_no_split_character() {
    let s = serve();
    let big: String = (0..200_000).map(|i| format!("{i}é🦀\n")).collect();
    std::fs::write(s.root.join("big.txt"), &big).expect("seed");
    let fs = remote(&s);
    let rt = test_runtime();
    rt.block_on(async {
        let t = fs
            .resolve("big.txt", ResolveOptions::default(), &Signal::none())
            .await
            .expect("resolve");
        let mut stream = fs.stream_text(&t, &Signal::none()).await.expect("stream");
        let mut got = String::new();
        let mut chunks = 0;
        while let Some(chunk) = futures_util::StreamExt::next(&mut stream).await {
            got.push_str(&chunk.expect("chunk"));
            chunks += 1;
        }
        assert!(chunks > 1, "{chunks}");
        assert_eq!(got, big);
    });
}

/// A raw connection initialised with `params` that has resolved `file` and started streaming
/// it as request 2 (`stream/start` received); returns it and the file's target.
async fn start_stream(socket: &Path, file: &Path, params: Value) -> (Raw, Value) {
    start_stream_on(Raw::open(socket).await, file, params).await
}

/// [`start_stream`] over a connection already open.
async fn start_stream_on(mut raw: Raw, file: &Path, params: Value) -> (Raw, Value) {
    raw.initialize_with(params).await;
    let path = file.to_string_lossy().into_owned();
    raw.send(
        json!({"jsonrpc":"2.0","id":1,"method":"resolve","params":{"path": path}}),
        vec![],
    )
    .await;
    let target = raw.recv().await.expect("answer").json["result"].clone();
    raw.send(
        json!({"jsonrpc":"2.0","id":2,"method":"stream_text","params":{"target": target}}),
        vec![],
    )
    .await;
    assert_eq!(
        raw.recv().await.expect("start").json["method"],
        "stream/start"
    );
    (raw, target)
}

/// Streams `file` over a raw connection initialised with `params`, granting credit for every
/// chunk; returns each chunk's segments.
async fn raw_stream(socket: &Path, file: &Path, params: Value) -> Vec<Vec<Vec<u8>>> {
    let (mut raw, _) = start_stream(socket, file, params).await;
    let mut chunks = Vec::new();
    loop {
        let f = raw.recv().await.expect("a chunk or the end");
        if f.json.get("method") != Some(&json!("stream/chunk")) {
            assert_eq!(f.json["result"]["end"], true, "{:?}", f.json);
            return chunks;
        }
        chunks.push(f.segments);
        raw.credit(1).await;
    }
}

#[test]
fn chunks_carry_several_segments_only_for_a_client_that_said_it_takes_them() {
    let s = serve();
    let text: String = (0..400_000).map(|i| format!("{i}é🦀\n")).collect();
    let file = s.root.join("big.txt");
    std::fs::write(&file, &text).expect("seed");
    let rt = test_runtime();
    rt.block_on(async {
        let joined = |chunks: &[Vec<Vec<u8>>]| -> String {
            chunks
                .iter()
                .flatten()
                .map(|seg| std::str::from_utf8(seg).expect("each segment is whole characters"))
                .collect()
        };
        let plain = raw_stream(&s.socket, &file, json!({"protocol":1})).await;
        assert!(plain.len() > 1);
        assert!(plain.iter().all(|c| c.len() == 1), "one segment per chunk");
        assert_eq!(joined(&plain), text);

        let many = raw_stream(
            &s.socket,
            &file,
            json!({"protocol":1, "stream_segments": true}),
        )
        .await;
        assert!(
            many.iter().any(|c| c.len() > 1),
            "the backend's chunks travel unjoined"
        );
        assert_eq!(joined(&many), text);
    });
}

#[test]
fn bad_input_is_answered_and_the_connection_goes_on() {
    let s = serve();
    let rt = test_runtime();
    rt.block_on(async {
        let mut raw = Raw::open(&s.socket).await;
        raw.line(b"this is not json\n").await;
        let f = raw.recv().await.expect("answer");
        assert_eq!(error_code(&f), -32700);
        assert_eq!(f.json["id"], Value::Null);
        raw.send(json!({"jsonrpc":"2.0","id":1,"method":"stat","params":{}}), vec![])
            .await;
        assert_eq!(error_code(&raw.recv().await.expect("answer")), -32002, "initialize first");
        raw.send(
            json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocol":99}}),
            vec![],
        )
        .await;
        assert_eq!(error_code(&raw.recv().await.expect("answer")), -32602, "unknown version");
        raw.initialize().await;
        raw.line(b"{\"foo\":1}\n").await;
        let f = raw.recv().await.expect("answer");
        assert_eq!(error_code(&f), -32600, "not a request: {:?}", f.json);
        raw.send(json!({"jsonrpc":"1.0","id":21,"method":"stat","params":{}}), vec![])
            .await;
        let f = raw.recv().await.expect("answer");
        assert_eq!((f.json["id"].clone(), error_code(&f)), (json!(21), -32600));
        for (id, method, params, code) in [
            (3, "frobnicate", json!({}), -32601),
            (4, "world/case", json!({}), -32601),
            (5, "stat", json!({"target": 7}), -32602),
            (6, "write_text", json!({"target": {"key": "/x", "display_path": "/x"}, "content": "inline"}), -32602),
        ] {
            raw.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}), vec![])
                .await;
            let f = raw.recv().await.expect("answer");
            assert_eq!(f.json["id"], id);
            assert_eq!(error_code(&f), code, "{method}: {:?}", f.json);
        }
        assert!(!Path::new("/x").exists());
        // Still serving: a contract call with raw payload.
        let path = s.root.join("r.txt").to_string_lossy().into_owned();
        raw.send(json!({"jsonrpc":"2.0","id":7,"method":"resolve","params":{"path": path}}), vec![])
            .await;
        let target = raw.recv().await.expect("answer").json["result"].clone();
        raw.send(
            json!({"jsonrpc":"2.0","id":8,"method":"write_text","params":{"target": target, "content": {"$payload": 0}}}),
            vec![b"raw\0bytes?".to_vec()],
        )
        .await;
        let f = raw.recv().await.expect("answer");
        // A NUL is legal content for a write.
        assert!(f.json.get("result").is_some(), "{:?}", f.json);
        assert_eq!(std::fs::read(s.root.join("r.txt")).expect("disk"), b"raw\0bytes?");
        // Two values may name one segment.
        std::fs::write(s.root.join("t.txt"), b"same\n").expect("seed");
        let path = s.root.join("t.txt").to_string_lossy().into_owned();
        raw.send(json!({"jsonrpc":"2.0","id":12,"method":"resolve","params":{"path": path}}), vec![])
            .await;
        let t = raw.recv().await.expect("answer").json["result"].clone();
        raw.send(
            json!({"jsonrpc":"2.0","id":9,"method":"edit_text","params":{"target": t,
                "old_string": {"$payload": 0}, "new_string": {"$payload": 0}}}),
            vec![b"same".to_vec()],
        )
        .await;
        let f = raw.recv().await.expect("answer");
        assert!(f.json.get("result").is_some(), "{:?}", f.json);
        assert_eq!(std::fs::read(s.root.join("t.txt")).expect("disk"), b"same\n");
        // A client may not widen the server's fence (no test control here): refused, nothing
        // written anywhere.
        let outside = s.root.parent().expect("parent").join("widened.txt");
        let path = outside.to_string_lossy().into_owned();
        raw.send(json!({"jsonrpc":"2.0","id":10,"method":"resolve","params":{"path": path}}), vec![])
            .await;
        let out_target = raw.recv().await.expect("answer").json["result"].clone();
        raw.send(
            json!({"jsonrpc":"2.0","id":11,"method":"write_text","params":{"target": out_target,
                "content": {"$payload": 0},
                "sandbox": {"mode": "danger-full-access", "workspace_root": "/"}}}),
            vec![b"x".to_vec()],
        )
        .await;
        let f = raw.recv().await.expect("answer");
        assert_eq!(error_code(&f), -32602, "{:?}", f.json);
        assert!(!outside.exists());
    });
}

#[test]
fn an_oversized_frame_closes_its_connection_and_no_other() {
    let s = serve_with(Limits {
        max_line: 4096,
        max_payload: 1024,
    });
    let rt = test_runtime();
    rt.block_on(async {
        let mut bystander = Raw::open(&s.socket).await;
        bystander.initialize().await;
        for attack in [
            format!("{{\"pad\":\"{}\"}}\n", "x".repeat(5000)).into_bytes(),
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stat\",\"payload\":[2048]}\n".to_vec(),
        ] {
            let mut raw = Raw::open(&s.socket).await;
            raw.initialize().await;
            raw.line(&attack).await;
            let f = raw.recv().await.expect("answer");
            assert_eq!(error_code(&f), -32003, "{:?}", f.json);
            assert!(raw.recv().await.is_none(), "closed after the answer");
        }
        let path = s.root.to_string_lossy().into_owned();
        bystander
            .send(
                json!({"jsonrpc":"2.0","id":9,"method":"resolve","params":{"path": path}}),
                vec![],
            )
            .await;
        assert!(
            bystander
                .recv()
                .await
                .expect("still served")
                .json
                .get("result")
                .is_some()
        );
    });
}

#[test]
fn a_stream_stays_within_its_window_until_credited_and_can_be_cancelled() {
    let s = serve();
    // Frames carry about 1 MiB: enough of them to exhaust the window and then some.
    std::fs::write(s.root.join("big.txt"), "a".repeat(16 << 20)).expect("seed");
    let rt = test_runtime();
    rt.block_on(async {
        let (mut raw, target) =
            start_stream(&s.socket, &s.root.join("big.txt"), json!({"protocol":1})).await;
        let mut chunks = 0;
        for _ in 0..seam_remote::DEFAULT_STREAM_WINDOW {
            let f = raw.recv_within(10).await;
            assert_eq!(f.json["method"], "stream/chunk");
            chunks += 1;
        }
        // Without credit nothing more comes, while other requests are answered.
        raw.send(
            json!({"jsonrpc":"2.0","id":3,"method":"stat","params":{"target": target}}),
            vec![],
        )
        .await;
        let f = raw.recv_within(10).await;
        assert_eq!(f.json["id"], 3, "{:?}", f.json);
        raw.credit(1).await;
        let f = raw.recv_within(10).await;
        assert_eq!(f.json["method"], "stream/chunk");
        chunks += 1;
        assert_eq!(chunks, seam_remote::DEFAULT_STREAM_WINDOW + 1);
        // Cancel without granting credit: the stream is still answered, FS_ABORTED.
        raw.send(
            json!({"jsonrpc":"2.0","method":"$/cancel","params":{"id": 2}}),
            vec![],
        )
        .await;
        let f = raw.recv_within(10).await;
        assert_eq!(f.json["id"], 2);
        assert_eq!(f.json["error"]["data"]["fs"], "FS_ABORTED", "{:?}", f.json);
    });
    // A client that vanished mid-stream leaves the server serving.
    let fs = remote(&s);
    let rt = test_runtime();
    rt.block_on(async {
        let t = fs
            .resolve("big.txt", ResolveOptions::default(), &Signal::none())
            .await
            .expect("resolve after a vanished client");
        assert_eq!(
            fs.stat(&t, &Signal::none())
                .await
                .expect("stat")
                .map(|i| i.size),
            Some(Some(16 << 20))
        );
    });
}

#[test]
fn a_stream_held_at_a_full_socket_is_cancelled_without_sending_the_rest() {
    let s = serve();
    let size = 64usize << 20;
    std::fs::write(s.root.join("big.txt"), "a".repeat(size)).expect("seed");
    let rt = test_runtime();
    rt.block_on(async {
        let (mut raw, target) =
            start_stream(&s.socket, &s.root.join("big.txt"), json!({"protocol":1})).await;
        // Credit for far more than the file: only the socket holds the stream back.
        raw.credit(1000).await;
        // The server fills the socket's buffers (a few MiB) and blocks writing the next frame.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        raw.send(
            json!({"jsonrpc":"2.0","method":"$/cancel","params":{"id": 2}}),
            vec![],
        )
        .await;
        raw.send(
            json!({"jsonrpc":"2.0","id":3,"method":"stat","params":{"target": target}}),
            vec![],
        )
        .await;
        // The stat's answer may come between the stream's frames (other answers are not held
        // behind a stream); nothing of the stream may follow the stream's own answer.
        let (mut streamed, mut answered, mut stat) = (0, false, false);
        while !(answered && stat) {
            let f = raw.recv_within(10).await;
            if f.json.get("method") == Some(&json!("stream/chunk")) {
                assert!(!answered, "a chunk after the stream's answer");
                streamed += f.segments.iter().map(Vec::len).sum::<usize>();
            } else if f.json["id"] == 2 {
                assert_eq!(f.json["error"]["data"]["fs"], "FS_ABORTED", "{:?}", f.json);
                answered = true;
            } else {
                assert_eq!(f.json["id"], 3, "{:?}", f.json);
                assert!(f.json.get("result").is_some(), "{:?}", f.json);
                stat = true;
            }
        }
        // What the socket's buffers held, and the frame being written; not the whole file
        // (a server that queued every credited frame before writing sent all of it).
        assert!(
            streamed < size / 2,
            "{streamed} of {size} bytes sent after a cancel"
        );
    });
}

#[test]
fn a_peer_gone_while_the_server_is_blocked_writing_ends_its_connection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("big.txt"), "a".repeat(64 << 20)).expect("seed");
    let server = Arc::new(Server::new(local_at(&root)));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (ours, theirs) = UnixStream::pair().expect("pair");
        let (r, w) = theirs.into_split();
        let serving = tokio::spawn(server.serve_connection(r, w, false));
        let (mut raw, _) = start_stream_on(
            Raw::over(ours),
            &root.join("big.txt"),
            json!({"protocol":1}),
        )
        .await;
        // Credit for far more than the file: only the socket holds the stream back.
        raw.credit(1000).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!serving.is_finished(), "the server is blocked writing");
        drop(raw);
        tokio::time::timeout(std::time::Duration::from_secs(5), serving)
            .await
            .expect("the connection ends once its peer is gone")
            .expect("served");
    });
}

#[test]
fn the_socket_is_its_owners_only() {
    let s = serve();
    let mode = std::fs::metadata(&s.socket)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn tcp_refuses_a_client_without_the_token_before_any_method() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(LocalConfig::new(
        root.to_string_lossy().into_owned(),
    )));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let server = Arc::new(Server::new(fs).with_token("s3cret".into()));
    rt.spawn(server.serve_tcp(listener));
    let target = root.join("pwned.txt").to_string_lossy().into_owned();
    let check = test_runtime();
    check.block_on(async {
        for token in [None, Some("wrong")] {
            let (r, mut w) = tokio::net::TcpStream::connect(&addr)
                .await
                .expect("connect")
                .into_split();
            let mut r = BufReader::new(r);
            let mut params = json!({"protocol": 1});
            if let Some(t) = token {
                params["token"] = json!(t);
            }
            // The refused initialize, then a write pipelined behind it.
            let mut frames = vec![Frame::new(obj(
                json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":params}),
            ))];
            let mut write = Frame::new(obj(
                json!({"jsonrpc":"2.0","id":2,"method":"write_text","params":{
                "target": {"key": target, "display_path": target}, "content": {"$payload": 0}}}),
            ));
            write.attach(b"x".to_vec());
            frames.push(write);
            for f in &frames {
                let _ = write_frame(&mut w, f).await;
            }
            let f = read_frame(&mut r, Limits::default()).await.expect("answer");
            assert_eq!(error_code(&f), -32001, "{:?}", f.json);
            assert!(
                read_frame(&mut r, Limits::default()).await.is_err(),
                "closed"
            );
        }
    });
    assert!(!root.join("pwned.txt").exists(), "no method ran");
    let conn = Connection::connect(&Address::Tcp(addr.clone()), Some("s3cret"))
        .expect("the token opens it");
    assert_eq!(conn.hello()["protocol"], 1);
    let refused = Connection::connect(&Address::Tcp(addr), None).expect_err("no token");
    assert!(refused.to_string().contains("unauthorized"), "{refused}");
    rt.shutdown_background();
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A server that answers `initialize`, then does `then` with the next request.
fn fake_server(then: &'static [u8]) -> (PathBuf, tempfile::TempDir, std::thread::JoinHandle<()>) {
    use std::io::{BufRead, Write};
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("fake.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
        let mut writer = stream;
        let mut line = String::new();
        reader.read_line(&mut line).expect("initialize");
        writer
            .write_all(
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocol\":1,\"capabilities\":[]}}\n",
            )
            .expect("answer");
        line.clear();
        reader.read_line(&mut line).expect("the request");
        let _ = writer.write_all(then);
        // Dropping the stream closes the connection.
    });
    (socket, dir, handle)
}

#[test]
fn a_server_that_dies_mid_mutation_leaves_its_outcome_unknown_and_it_is_not_retried() {
    let (socket, _dir, server) = fake_server(b"");
    let fs = RemoteFileSystem::new(Arc::new(
        Connection::connect(&Address::Unix(socket), None).expect("connect"),
    ));
    let t = seam::FsTarget {
        key: seam::FsTargetKey::new("/w/a"),
        display_path: "/w/a".into(),
    };
    let rt = test_runtime();
    let err = rt
        .block_on(fs.write_text(&t, "x", None, None, &Signal::none()))
        .expect_err("no answer");
    server
        .join()
        .expect("the fake server saw exactly one request");
    assert_eq!(err.code(), FsErrorCode::IoError);
    assert!(
        err.message()
            .contains("whether the write happened is unknown (it was not retried)"),
        "{}",
        err.message()
    );
}

#[test]
fn a_server_that_answers_garbage_is_reported_with_what_it_said() {
    let (socket, _dir, server) = fake_server(b"<html>502 Bad Gateway</html>\n");
    let fs = RemoteFileSystem::new(Arc::new(
        Connection::connect(&Address::Unix(socket), None).expect("connect"),
    ));
    let rt = test_runtime();
    let err = rt
        .block_on(fs.resolve("a", ResolveOptions::default(), &Signal::none()))
        .expect_err("garbage");
    server.join().expect("served");
    assert_eq!(err.code(), FsErrorCode::IoError);
    assert!(
        err.message().contains("broke the protocol") && err.message().contains("502 Bad Gateway"),
        "{}",
        err.message()
    );
}

#[test]
fn binding_never_takes_over_a_path() {
    let s = serve();
    let rt = test_runtime();
    let _enter = rt.enter();
    let err = Server::bind_unix(&s.socket).expect_err("a live server's socket");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse, "{err}");
    let file = s.root.join("victim.txt");
    std::fs::write(&file, b"mine").expect("seed");
    let err = Server::bind_unix(&file).expect_err("a file");
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "{err}");
    assert_eq!(std::fs::read(&file).expect("intact"), b"mine");
    drop(_enter);
    // The running server still answers.
    let fs = remote(&s);
    assert!(
        rt.block_on(fs.resolve(".", ResolveOptions::default(), &Signal::none()))
            .is_ok()
    );
}

/// Makes the local provider over each case's directory.
struct LocalCases;

impl seam_remote::CaseMaker for LocalCases {
    fn make(&self, spec: &seam_remote::CaseSpec) -> Result<Arc<dyn FileSystem>, String> {
        Ok(Arc::new(LocalFileSystem::new(LocalConfig::new(
            spec.root.clone(),
        ))))
    }
}

/// A test-control server hosting local cases in `<base>/cases`, on `<base>/s.sock`, reusing
/// case directories when `reuse`.
struct TestControl {
    _dir: tempfile::TempDir,
    base: PathBuf,
    cases: PathBuf,
    socket: PathBuf,
    server: Arc<Server>,
    _rt: tokio::runtime::Runtime,
}

fn serve_test_control(reuse: bool) -> TestControl {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let cases = base.join("cases");
    std::fs::create_dir(&cases).expect("cases");
    let socket = base.join("s.sock");
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(LocalConfig::new(
        cases.to_string_lossy().into_owned(),
    )));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut server = Server::new(fs).with_test_control(Arc::new(LocalCases), cases.clone());
    if reuse {
        server = server.with_case_reuse();
    }
    let server = Arc::new(server);
    let listener = {
        let _enter = rt.enter();
        Server::bind_unix(&socket).expect("bind")
    };
    rt.spawn(server.clone().serve_unix(listener));
    TestControl {
        _dir: dir,
        base,
        cases,
        socket,
        server,
        _rt: rt,
    }
}

#[test]
fn world_reopen_opens_only_a_case_directory_of_this_server() {
    let TestControl {
        base,
        cases,
        socket,
        ..
    } = &serve_test_control(false);
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("elsewhere");
    test_runtime().block_on(async {
        let mut a = Raw::open(socket).await;
        a.initialize().await;
        a.send(
            json!({"jsonrpc":"2.0","id":1,"method":"world/case","params":{}}),
            vec![],
        )
        .await;
        let case = a.recv().await.expect("case").json["result"]["root"].clone();
        let case = case.as_str().expect("root").to_string();
        assert!(case.starts_with(&*cases.to_string_lossy()), "{case}");

        let mut b = Raw::open(socket).await;
        b.initialize().await;
        let outside_case = cases.join("..").join("elsewhere");
        for (id, params) in [
            (2, json!({"root": elsewhere.to_string_lossy()})),
            (3, json!({"root": outside_case.to_string_lossy()})),
            (4, json!({"root": base.join("missing").to_string_lossy()})),
            (5, json!({"root": cases.to_string_lossy()})),
            (6, json!({})),
        ] {
            b.send(
                json!({"jsonrpc":"2.0","id":id,"method":"world/reopen","params":params}),
                vec![],
            )
            .await;
            let f = b.recv().await.expect("answered");
            assert_eq!(error_code(&f), -32602, "{params}: {:?}", f.json);
        }
        // Refusals changed nothing: the connection still serves, and a real case reopens.
        b.send(
            json!({"jsonrpc":"2.0","id":7,"method":"world/reopen","params":{"root": case}}),
            vec![],
        )
        .await;
        let f = b.recv().await.expect("reopened");
        assert_eq!(f.json["result"]["root"], json!(case), "{:?}", f.json);
    });
}

/// A call cancelled before it is sent: the client sends `$/cancel` for its id first, then the
/// request, and the backend answers it `FS_ABORTED` without doing it; a `$/cancel` for an id
/// not seen is kept for the newest 64 ids only.
#[test]
fn a_cancel_before_its_request_makes_the_backend_refuse_it() {
    let s = serve();
    std::fs::write(s.root.join("a.txt"), "old").expect("seed");
    let rt = test_runtime();
    rt.block_on(async {
        let mut raw = Raw::open(&s.socket).await;
        raw.initialize().await;
        let write = |id: u64| {
            json!({"jsonrpc":"2.0","id":id,"method":"write_text","params":{
                "target":{"key":"a.txt","display_path":"a.txt"},
                "content":{"$payload":0}}})
        };
        raw.send(
            json!({"jsonrpc":"2.0","id":1,"method":"resolve","params":{"path":"a.txt"}}),
            vec![],
        )
        .await;
        let target = raw.recv_within(10).await.json["result"].clone();
        let write = |id: u64| {
            let mut w = write(id);
            w["params"]["target"] = target.clone();
            w
        };
        raw.send(
            json!({"jsonrpc":"2.0","method":"$/cancel","params":{"id": 3}}),
            vec![],
        )
        .await;
        raw.send(write(3), vec![b"new".to_vec()]).await;
        let f = raw.recv_within(10).await;
        assert_eq!(f.json["id"], 3, "{:?}", f.json);
        assert_eq!(f.json["error"]["data"]["fs"], "FS_ABORTED", "{:?}", f.json);
        assert_eq!(f.json["error"]["message"], "write aborted", "{:?}", f.json);
        assert_eq!(std::fs::read(s.root.join("a.txt")).expect("read"), b"old");
        // 65 cancels for ids never sent: the oldest is forgotten, the newest kept.
        for id in 100..165 {
            raw.send(
                json!({"jsonrpc":"2.0","method":"$/cancel","params":{"id": id}}),
                vec![],
            )
            .await;
        }
        raw.send(write(100), vec![b"first".to_vec()]).await;
        let f = raw.recv_within(10).await;
        assert_eq!(f.json["id"], 100, "{:?}", f.json);
        assert!(f.json.get("error").is_none(), "{:?}", f.json);
        assert_eq!(std::fs::read(s.root.join("a.txt")).expect("read"), b"first");
        raw.send(write(164), vec![b"second".to_vec()]).await;
        let f = raw.recv_within(10).await;
        assert_eq!(f.json["error"]["data"]["fs"], "FS_ABORTED", "{:?}", f.json);
        assert_eq!(std::fs::read(s.root.join("a.txt")).expect("read"), b"first");
    });
    // Through the client: the cancelled call reaches the server, which answers it.
    let fs = remote(&s);
    let rt = test_runtime();
    rt.block_on(async {
        let t = fs
            .resolve("a.txt", ResolveOptions::default(), &Signal::none())
            .await
            .expect("resolve");
        let cancelled = Signal::new();
        cancelled.cancel();
        let before = s.server.requests_served();
        let e = fs
            .write_text(&t, "third", None, None, &cancelled)
            .await
            .expect_err("cancelled");
        assert_eq!(e.code(), FsErrorCode::Aborted);
        assert_eq!(s.server.requests_served(), before + 1);
        let e = fs
            .stream_text(&t, &cancelled)
            .await
            .err()
            .expect("cancelled");
        assert_eq!(e.code(), FsErrorCode::Aborted);
        assert_eq!(s.server.requests_served(), before + 2);
    });
    assert_eq!(std::fs::read(s.root.join("a.txt")).expect("read"), b"first");
}

/// Waits up to 10 s for `done`.
fn eventually(done: impl Fn() -> bool) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    done()
}

/// Every connection of a process does its I/O on one shared runtime: a connection dropped is
/// ended on the server — over a socket and in process alike — while the others stay served.
/// (Its writer closing is enough for a server that ends at the end of its input; that its tasks
/// are aborted is the next test's.)
#[test]
fn a_connection_dropped_is_ended_on_the_server_while_the_others_stay() {
    let s = serve();
    let mut conns: Vec<Connection> = (0..3)
        .map(|_| Connection::connect(&Address::Unix(s.socket.clone()), None).expect("connect"))
        .collect();
    assert!(eventually(|| s.server.connections_active() == 3));
    let kept = conns.pop().expect("one");
    drop(conns);
    assert!(
        eventually(|| s.server.connections_active() == 1),
        "{} connections still served after two were dropped",
        s.server.connections_active()
    );
    // The one left still answers.
    let fs = RemoteFileSystem::new(Arc::new(kept));
    let rt = test_runtime();
    let opts = ResolveOptions {
        cwd: Some(s.root.to_str().expect("utf-8")),
    };
    let target = rt
        .block_on(fs.resolve("a", opts, &Signal::none()))
        .expect("the connection left still answers");
    assert!(target.display_path.ends_with("/a"));
    drop(fs);
    assert!(eventually(|| s.server.connections_active() == 0));
    // In process: the server's side of the connection is a task of the shared runtime too;
    // while it runs, its state holds the hosted provider.
    let fs = local_at(&s.root);
    let in_process = Arc::new(Server::new(fs.clone()));
    let before = Arc::strong_count(&fs);
    let conn = Connection::in_process(in_process.clone()).expect("in process");
    assert!(
        Arc::strong_count(&fs) > before,
        "the connection holds the provider"
    );
    drop(conn);
    assert!(
        eventually(|| Arc::strong_count(&fs) == before),
        "the in-process server still serves a dropped connection"
    );
}

/// A dropped connection lets go of its socket whatever the server does: a server that never
/// closes its side (it keeps writing after the client's input ended) finds the socket closed
/// under it. The connection's reader is a task of the shared runtime, aborted when the
/// connection drops; left running, it would read that server for ever.
#[test]
fn a_dropped_connection_closes_its_socket_even_when_the_server_never_does() {
    use std::io::{BufRead, Write};
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("s.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    let server = std::thread::spawn(move || -> std::io::Result<bool> {
        let (stream, _) = listener.accept()?;
        let mut lines = std::io::BufReader::new(stream.try_clone()?);
        let mut hello = String::new();
        lines.read_line(&mut hello)?;
        let id = serde_json::from_str::<Value>(&hello)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(Value::Null);
        let answer = json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {"protocol": 1, "capabilities": []},
        });
        let mut out = stream;
        writeln!(out, "{answer}")?;
        // Never closes: writes a notification every few milliseconds until the socket is gone.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < until {
            let note = json!({"jsonrpc": "2.0", "method": "$/ping", "params": {}});
            if writeln!(out, "{note}").is_err() {
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(false)
    });
    let conn = Connection::connect(&Address::Unix(socket), None).expect("connect");
    std::thread::sleep(std::time::Duration::from_millis(50));
    drop(conn);
    let closed = server
        .join()
        .expect("the server thread")
        .expect("the server");
    assert!(
        closed,
        "the dropped connection still held its socket after 10 s"
    );
}

/// A server reusing case directories (as `seam check` starts its own) never hands a case a
/// directory another connection still has open: connection A makes a case, B reopens it, A
/// closes; C's new case is empty and elsewhere — what B writes stays out of it — and a
/// directory kept for later cases cannot be reopened.
#[test]
fn a_reused_case_directory_is_never_one_a_reopened_connection_still_has() {
    let TestControl { socket, server, .. } = &serve_test_control(true);
    let case_of = |f: &Frame| {
        f.json["result"]["root"]
            .as_str()
            .expect("a root")
            .to_string()
    };
    test_runtime().block_on(async {
        let ask = |id: u64, method: &str, params: Value| {
            json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
        };
        let mut a = Raw::open(socket).await;
        a.initialize().await;
        a.send(ask(1, "world/case", json!({})), vec![]).await;
        let x = case_of(&a.recv().await.expect("a case"));
        let mut b = Raw::open(socket).await;
        b.initialize().await;
        b.send(ask(2, "world/reopen", json!({ "root": x })), vec![])
            .await;
        assert_eq!(case_of(&b.recv().await.expect("reopened")), x);
        drop(a);
        assert!(eventually(|| server.connections_active() == 1));
        let mut c = Raw::open(socket).await;
        c.initialize().await;
        c.send(ask(3, "world/case", json!({})), vec![]).await;
        let y = case_of(&c.recv().await.expect("a case"));
        assert_ne!(y, x, "C was handed the directory B still has open");
        b.send(
            ask(
                4,
                "world/apply",
                json!({"effect": "create_file", "path": "from-b.txt", "bytes": {"$payload": 0}, "mode": 420}),
            ),
            vec![b"b".to_vec()],
        )
        .await;
        let applied = b.recv().await.expect("applied");
        assert!(applied.json.get("error").is_none(), "{:?}", applied.json);
        // B's write lands where B's case was (removed with A, so made again), never in C's.
        assert!(Path::new(&x).join("from-b.txt").exists());
        let listed: Vec<_> = std::fs::read_dir(&y)
            .expect("C's case")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert!(listed.is_empty(), "C's new case holds {listed:?}");
        // C's case ends (its connection closes): its directory is kept for later cases, and a
        // kept directory is not a case to reopen.
        drop(c);
        assert!(eventually(|| server.connections_active() == 1));
        b.send(ask(5, "world/reopen", json!({ "root": y })), vec![])
            .await;
        let f = b.recv().await.expect("answered");
        assert_eq!(error_code(&f), -32602, "a kept directory reopened: {:?}", f.json);
    });
}
