//! `seam mcp` answers every message: the real binary as a child process, spoken to with raw
//! JSON lines on its stdin (what a careless or broken client sends, which no MCP library would),
//! each answer read from its stdout, and every write checked on disk.
//!
//! Before, a line of 16 MiB or more vanished without an answer, unparsable input and invalid
//! UTF-8 got none (a request with an id hung), bad `tools/call` parameters were "method not
//! found", and arguments the schema does not have were accepted.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

struct Mcp {
    child: Child,
    /// `None` once closed (the end of the session, as a client ends it).
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Drop for Mcp {
    /// Ends the session as a client does, by closing the server's stdin (the server then
    /// removes its spill directory on its way out); killed only if it has not left within 10 s.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Mcp {
    fn start(root: &Path, extra: &[&str]) -> Mcp {
        Self::start_with(root, extra, None)
    }

    /// [`Mcp::start`], with the server's TMPDIR set to `tmpdir` when given.
    fn start_with(root: &Path, extra: &[&str], tmpdir: Option<&Path>) -> Mcp {
        let mut command = Command::new(env!("CARGO_BIN_EXE_seam"));
        if let Some(tmp) = tmpdir {
            command.env("TMPDIR", tmp);
        }
        let mut child = command
            .arg("mcp")
            .arg("--root")
            .arg(root)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("seam mcp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Mcp {
            child,
            stdin: Some(stdin),
            lines,
        };
        let init = mcp.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        mcp.raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        mcp
    }

    fn raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the session is open");
        stdin.write_all(line).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// The next line the server writes, as it was written, within a minute (else the test
    /// fails: no hang).
    fn line(&mut self) -> String {
        match self.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no answer within 60 s"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its stdout"),
        }
    }

    /// [`Mcp::line`], parsed.
    fn answer(&mut self) -> Value {
        serde_json::from_str(&self.line()).expect("the server writes JSON")
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .expect("json");
        self.raw(&line);
        self.answer()
    }

    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
    }
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

#[test]
fn every_malformed_message_gets_its_json_rpc_error_and_the_session_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("a.txt"), "one\n").expect("seed");
    let mut s = Mcp::start(&root, &[]);

    s.raw(b"{not json");
    let a = s.answer();
    assert_eq!((code(&a), a["id"].clone()), (-32700, Value::Null), "{a}");

    s.raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"x\":\"\xff\xfe\"}");
    let a = s.answer();
    assert_eq!((code(&a), a["id"].clone()), (-32700, Value::Null), "{a}");

    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"read","arguments":{{"file_path":{}1{}}}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    s.raw(deep.as_bytes());
    assert_eq!(code(&s.answer()), -32700);

    let a = s.request(
        3,
        "tools/call",
        json!({"arguments": {"file_path": "a.txt"}}),
    );
    assert_eq!((code(&a), a["id"].clone()), (-32602, json!(3)), "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("name")),
        "{a}"
    );

    let a = s.request(
        4,
        "tools/call",
        json!({"name": "read", "arguments": "a.txt"}),
    );
    assert_eq!((code(&a), a["id"].clone()), (-32602, json!(4)), "{a}");

    let a = s.call(
        5,
        "write",
        json!({"file_path": "b.txt", "content": "x", "mode": "append"}),
    );
    assert_eq!((code(&a), a["id"].clone()), (-32602, json!(5)), "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"mode\"") && m.contains("file_path")),
        "{a}"
    );
    assert!(!root.join("b.txt").exists(), "a refused call wrote nothing");

    let a = s.request(6, "no/such/method", json!({}));
    assert_eq!(code(&a), -32601, "{a}");

    // Neither a request, a notification nor a response: answered, not dropped.
    s.raw(br#"{"jsonrpc":"2.0"}"#);
    let a = s.answer();
    assert_eq!((code(&a), a["id"].clone()), (-32600, Value::Null), "{a}");
    let why = a["error"]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("\"method\"") && why.contains("\"result\""),
        "the cause named is what is missing: {why}"
    );
    s.raw(br#"{"jsonrpc":"2.0","id":61}"#);
    let a = s.answer();
    assert_eq!((code(&a), a["id"].clone()), (-32600, json!(61)), "{a}");

    // Not an object at all: refused as such, whatever it is.
    for line in [&b"42"[..], b"\"str\"", b"null", b"true"] {
        s.raw(line);
        let a = s.answer();
        let why = a["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(code(&a), -32600, "{a}");
        assert!(why.contains("must be a JSON object"), "{why}");
    }
    // An empty batch is a batch too.
    s.raw(b"[]");
    let a = s.answer();
    assert_eq!(code(&a), -32600, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("batch")),
        "{a}"
    );

    // A batch is refused for being a batch, not for a missing "jsonrpc" its items have.
    s.raw(br#"[{"jsonrpc":"2.0","id":62,"method":"tools/list"}]"#);
    let a = s.answer();
    let why = a["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(code(&a), -32600, "{a}");
    assert!(
        why.contains("batch") && !why.contains("is required"),
        "the cause named is the batch: {why}"
    );

    // The session goes on: a read, then a write of a new file, checked on disk.
    let a = s.call(7, "read", json!({"file_path": "a.txt"}));
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    let a = s.call(
        8,
        "write",
        json!({"file_path": "b.txt", "content": "two\n"}),
    );
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    assert_eq!(
        std::fs::read(root.join("b.txt")).expect("written"),
        b"two\n"
    );
}

#[test]
fn a_message_over_the_limit_is_refused_naming_it_and_the_next_call_is_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let mut s = Mcp::start(&root, &[]);

    // 64 MiB of content: over the default 32 MiB limit, answered with the request's own id.
    let big = "a".repeat(64 << 20);
    let a = s.call(9, "write", json!({"file_path": "big.txt", "content": big}));
    assert_eq!((code(&a), a["id"].clone()), (-32600, json!(9)), "{a}");
    let m = a["error"]["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("33554432") && m.contains("--max-message-mib"),
        "{m}"
    );
    assert!(!root.join("big.txt").exists());

    // 20 MiB (once dropped without an answer) is under it, and lands byte for byte.
    let mid: String = (0..20u32 << 20)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let a = s.call(10, "write", json!({"file_path": "mid.txt", "content": mid}));
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    assert_eq!(
        std::fs::read(root.join("mid.txt")).expect("written"),
        mid.as_bytes()
    );

    // The limit is the operator's: at 1 MiB, a 2 MiB write is refused the same way.
    drop(s);
    let mut s = Mcp::start(&root, &["--max-message-mib", "1"]);
    let a = s.call(
        11,
        "write",
        json!({"file_path": "c.txt", "content": "c".repeat(2 << 20)}),
    );
    assert_eq!((code(&a), a["id"].clone()), (-32600, json!(11)), "{a}");
    assert!(!root.join("c.txt").exists());
    let a = s.call(
        12,
        "write",
        json!({"file_path": "c.txt", "content": "small"}),
    );
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    assert_eq!(
        std::fs::read(root.join("c.txt")).expect("written"),
        b"small"
    );
}

/// A one-line edit of a 4 MiB file, measured where it counts: the bytes of the answer's line on
/// the wire (a size taken from a client library's parsed result leaves out what the library
/// drops, and cannot fail for it). Under 16 KiB, and the file on disk is the edit exactly.
#[test]
fn a_one_line_edit_of_four_mib_answers_under_16_kib_on_the_wire() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines: Vec<String> = (0..150_000)
        .map(|i| format!("line {i:06} of the big file\n"))
        .collect();
    let before = lines.concat();
    assert!(before.len() >= 4 << 20, "{} bytes", before.len());
    std::fs::write(dir.path().join("big.txt"), &before).expect("write");
    let mut mcp = Mcp::start(dir.path(), &[]);
    mcp.raw(
        &serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": "big.txt"}}}))
        .expect("json"),
    );
    let read = mcp.line();
    assert!(
        read.contains("\"id\":1"),
        "{}",
        &read[..read.len().min(300)]
    );
    mcp.raw(
        &serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "edit", "arguments": {"file_path": "big.txt",
                "old_string": "line 040000 of the big file", "new_string": "line 040000, edited"}}}))
        .expect("json"),
    );
    let edit = mcp.line();
    let answer: Value = serde_json::from_str(&edit).expect("JSON");
    assert_eq!(answer["result"]["isError"], json!(false), "{edit}");
    assert!(edit.len() < 16 * 1024, "{} bytes on the wire", edit.len());
    let after = before.replace("line 040000 of the big file", "line 040000, edited");
    assert_eq!(
        std::fs::read(dir.path().join("big.txt")).expect("read back"),
        after.as_bytes()
    );
}

/// What the server made in `tmp`, by name.
fn made_in(tmp: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .expect("list TMPDIR")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Waits up to 10 s for the server to exit; its exit status code.
fn exited(mcp: &mut Mcp) -> Option<i32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = mcp.child.try_wait().expect("wait") {
            return status.code();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not exit within 10 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_server_leaves_nothing_in_tmpdir_whether_its_client_closes_stdin_or_signals_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    // Closed stdin: the end of the session.
    let tmp = tempfile::tempdir().expect("tmp");
    let mut s = Mcp::start_with(&root, &[], Some(tmp.path()));
    let made = made_in(tmp.path());
    assert!(
        made.len() == 1 && made[0].starts_with("seam-mcp-spill-"),
        "{made:?}"
    );
    drop(s.stdin.take());
    assert_eq!(exited(&mut s), Some(0));
    assert_eq!(made_in(tmp.path()), Vec::<String>::new());
    // A signal, as an MCP host stops its server or a terminal's Ctrl-C does: the spill
    // directory goes, and the status is the shell's for the signal.
    for (signal, status) in [
        (rustix::process::Signal::TERM, 143),
        (rustix::process::Signal::INT, 130),
    ] {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut s = Mcp::start_with(&root, &[], Some(tmp.path()));
        assert_eq!(made_in(tmp.path()).len(), 1, "{signal:?}");
        let pid = rustix::process::Pid::from_child(&s.child);
        rustix::process::kill_process(pid, signal).expect("signal");
        assert_eq!(exited(&mut s), Some(status), "{signal:?}");
        assert_eq!(
            made_in(tmp.path()),
            Vec::<String>::new(),
            "{signal:?} left the spill directory"
        );
    }
}
