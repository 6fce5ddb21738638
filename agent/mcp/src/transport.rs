//! The session's transport: newline-delimited JSON-RPC on a byte stream (stdio), read by us
//! so that every message gets an answer.
//!
//! rmcp's own stdio transport drops what it cannot use: a line over its size limit vanishes, a
//! line that is not JSON vanishes, a request whose parameters do not fit the method is taken for
//! a method of its own and answered "method not found". Each of those leaves a client waiting
//! for an answer that never comes. Here:
//!
//! * a line longer than [`SessionLimits::max_message`] is not kept: it is skipped to its end
//!   while a small scanner finds its `id`, and answered `-32600` naming the limit;
//! * a line that is not UTF-8 or not JSON (deep nesting included) is answered `-32700` with a
//!   null id;
//! * a request of a known MCP method whose parameters do not fit is answered `-32602`, a
//!   message that is not JSON-RPC 2.0 `-32600`;
//! * reading waits while the session holds its limit of unanswered requests (see
//!   [`crate::inflight`]), so neither requests nor answers pile up without bound.
//!
//! The session then goes on. Answers — ours and rmcp's — are written whole, one at a time.

use crate::inflight::{Inflight, key};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// JSON-RPC: the input is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a valid request (also: over the size limit).
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the parameters do not fit the method.
const INVALID_PARAMS: i64 = -32602;

/// The requests of MCP that a server answers (what rmcp would otherwise take, when their
/// parameters do not fit, for a custom method it does not have).
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

type Writer = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// A session's transport over a reader and a writer.
pub(crate) struct LineTransport<R> {
    reader: R,
    writer: Writer,
    inflight: Arc<Inflight>,
    partial: Partial,
}

impl<R> LineTransport<R> {
    pub(crate) fn new(
        reader: R,
        writer: Box<dyn AsyncWrite + Send + Unpin>,
        inflight: Arc<Inflight>,
    ) -> Self {
        Self {
            reader,
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            inflight,
            partial: Partial::default(),
        }
    }
}

async fn write_line(writer: &Writer, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    let mut w = writer.lock().await;
    w.write_all(&line).await?;
    w.flush().await
}

/// A JSON-RPC error answer of our own.
fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
    .unwrap_or_default()
}

/// What one line read from the client is.
enum Line {
    /// The stream ended.
    End,
    /// A whole line, `\n` removed.
    Whole(Vec<u8>),
    /// A line over the limit, skipped: its length and the `id` found in it.
    TooLong { length: u64, id: Option<Value> },
}

/// What has been read of a line that has not ended yet. It lives in the transport, not in the
/// read: rmcp drops a pending `receive` when something else is ready first, and a line whose
/// first bytes were read by the dropped one must not lose them (the next read would otherwise
/// see only its end — the request is lost and its client waits forever).
#[derive(Debug, Default)]
struct Partial {
    line: Vec<u8>,
    skipping: Option<(u64, IdScanner)>,
}

/// Reads one line of at most `max` bytes; a longer one is read to its end without being kept.
/// Cancel-safe: what was read before a cancellation stays in `partial` for the next call.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
    partial: &mut Partial,
) -> std::io::Result<Line> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // The stream ended inside a line: what was read is the last line.
            let Partial { line, skipping } = std::mem::take(partial);
            return Ok(match skipping {
                Some((length, scan)) => Line::TooLong {
                    length,
                    id: scan.id(),
                },
                None if line.is_empty() => Line::End,
                None => Line::Whole(line),
            });
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let part = &available[..take];
        let part = part.strip_suffix(b"\n").unwrap_or(part);
        match &mut partial.skipping {
            Some((length, scan)) => {
                *length += part.len() as u64;
                scan.feed(part);
            }
            None if partial.line.len() + part.len() > max => {
                let mut scan = IdScanner::default();
                scan.feed(&partial.line);
                scan.feed(part);
                partial.skipping = Some(((partial.line.len() + part.len()) as u64, scan));
                partial.line = Vec::new();
            }
            None => partial.line.extend_from_slice(part),
        }
        reader.consume(take);
        if done {
            let Partial { line, skipping } = std::mem::take(partial);
            return Ok(match skipping {
                Some((length, scan)) => Line::TooLong {
                    length,
                    id: scan.id(),
                },
                None => Line::Whole(line),
            });
        }
    }
}

/// What to do with a whole line.
enum Verdict {
    /// Pass it on.
    Message(Box<ClientJsonRpcMessage>),
    /// Answer it with this line (and pass nothing on).
    Answer(Vec<u8>),
    /// Nothing to pass on and nobody to answer (a malformed notification, a blank line).
    Drop,
}

fn judge(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Drop;
    }
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Verdict::Answer(error_line(
                &Value::Null,
                PARSE_ERROR,
                &format!("parse error: the message is not UTF-8 ({e})"),
            ));
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Answer(error_line(
                &Value::Null,
                PARSE_ERROR,
                &format!("parse error: {e}"),
            ));
        }
    };
    if value.is_array() {
        return Verdict::Answer(error_line(
            &Value::Null,
            INVALID_REQUEST,
            "invalid request: a batch (a JSON array) is not accepted — MCP 2025-06-18 took batching out of the protocol; send each message on a line of its own",
        ));
    }
    if !value.is_object() {
        return Verdict::Answer(error_line(
            &Value::Null,
            INVALID_REQUEST,
            "invalid request: a message must be a JSON object",
        ));
    }
    let id = value.get("id").cloned();
    let is_request = value.get("method").is_some() && id.is_some();
    let answer_id = id.clone().unwrap_or(Value::Null);
    if value.get("method").is_none()
        && value.get("result").is_none()
        && value.get("error").is_none()
    {
        // Neither a request, a notification nor a response: nobody could tell what it was for,
        // so it is answered (with its id, when it has one) rather than dropped.
        return Verdict::Answer(error_line(
            &answer_id,
            INVALID_REQUEST,
            "invalid request: the message has no \"method\" (a request or notification) and no \"result\" or \"error\" (a response)",
        ));
    }
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return if is_request {
            Verdict::Answer(error_line(
                &answer_id,
                INVALID_REQUEST,
                "invalid request: not a JSON-RPC 2.0 message (\"jsonrpc\": \"2.0\" is required)",
            ))
        } else {
            Verdict::Drop
        };
    }
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(m) = &method
        && is_request
        && let Some(why) = bad_params(m, value.get("params"))
    {
        return Verdict::Answer(error_line(
            &answer_id,
            INVALID_PARAMS,
            &format!("invalid params for {m}: {why}"),
        ));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(ClientJsonRpcMessage::Request(r))
            if matches!(r.request, ClientRequest::CustomRequest(_))
                && method
                    .as_deref()
                    .is_some_and(|m| KNOWN_METHODS.contains(&m)) =>
        {
            // A known method whose parameters fit none of its shapes.
            Verdict::Answer(error_line(
                &answer_id,
                INVALID_PARAMS,
                &format!(
                    "invalid params for {}: they do not fit the method",
                    method.as_deref().unwrap_or_default()
                ),
            ))
        }
        Ok(message) => Verdict::Message(Box::new(message)),
        Err(e) if is_request => Verdict::Answer(error_line(
            &answer_id,
            INVALID_REQUEST,
            &format!("invalid request: {e}"),
        )),
        // A response or notification we cannot use: nobody waits for an answer to it.
        Err(_) => Verdict::Drop,
    }
}

/// Why the parameters of `method` do not fit, for the methods whose shape matters to us.
fn bad_params(method: &str, params: Option<&Value>) -> Option<String> {
    if method != "tools/call" {
        return None;
    }
    let Some(params) = params.and_then(Value::as_object) else {
        return Some("params must be an object with the tool's name and arguments".into());
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        Some(_) => return Some("name must be a string".into()),
        None => return Some("name (the tool to call) is missing".into()),
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => None,
        Some(_) => Some("arguments must be an object".into()),
    }
}

impl<R> rmcp::transport::Transport<RoleServer> for LineTransport<R>
where
    R: AsyncBufRead + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let inflight = self.inflight.clone();
        async move {
            let answered = match &item {
                ServerJsonRpcMessage::Response(r) => Some(key(&r.id)),
                ServerJsonRpcMessage::Error(e) => e.id.as_ref().map(key),
                _ => None,
            };
            let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            let written = write_line(&writer, line).await;
            if let Some(id) = answered {
                inflight.done(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let max = self.inflight.limits().max_message;
        loop {
            self.inflight.room().await;
            let line = match read_line(&mut self.reader, max, &mut self.partial).await {
                Ok(Line::End) | Err(_) => return None,
                Ok(Line::TooLong { length, id }) => {
                    let answer = error_line(
                        &id.unwrap_or(Value::Null),
                        INVALID_REQUEST,
                        &format!(
                            "the message ({length} bytes) is over this server's limit of {} bytes (seam mcp --max-message-mib); it was not read",
                            max
                        ),
                    );
                    self.answer(answer);
                    continue;
                }
                Ok(Line::Whole(line)) => line,
            };
            match judge(&line) {
                Verdict::Message(message) => {
                    if let ClientJsonRpcMessage::Request(r) = message.as_ref() {
                        self.inflight.opened(key(&r.id), line.len() as u64);
                    }
                    return Some(*message);
                }
                Verdict::Answer(answer) => self.answer(answer),
                Verdict::Drop => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl<R> LineTransport<R> {
    /// Writes an answer of our own on a task of its own: `receive` may be dropped at any await,
    /// and an answer must be written whole or not at all — never lost half-way, never cut. (A
    /// client that has gone away makes the write fail; the next read then ends the session.)
    fn answer(&self, line: Vec<u8>) {
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let _ = write_line(&writer, line).await;
        });
    }
}

/// Finds the top-level `"id"` of a JSON object fed to it piece by piece, in constant memory:
/// the line it reads may be far over the limit.
#[derive(Debug, Default)]
struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the string just read is a key (it came after `{` or `,`).
    expecting_key: bool,
    /// The current top-level key, while it is short.
    key: Vec<u8>,
    key_too_long: bool,
    reading_key: bool,
    /// The last top-level key read was `id`, and its value is being read.
    in_id_value: bool,
    after_id_key: bool,
    value: Vec<u8>,
    found: Option<Vec<u8>>,
}

impl IdScanner {
    const VALUE_MAX: usize = 256;

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_id_value {
            self.id_value_byte(b);
            if self.in_id_value {
                return;
            }
        }
        if self.in_string {
            if self.reading_key {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    self.reading_key = false;
                    return;
                }
                if self.key.len() < 8 {
                    self.key.push(b);
                } else {
                    self.key_too_long = true;
                }
                return;
            }
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expecting_key {
                    self.reading_key = true;
                    self.expecting_key = false;
                    self.key.clear();
                    self.key_too_long = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expecting_key = true;
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expecting_key = true,
            b':' if self.depth == 1
                && self.key == b"id"
                && !self.key_too_long
                && self.found.is_none() =>
            {
                self.in_id_value = true;
                self.after_id_key = true;
                self.value.clear();
            }
            _ => {}
        }
    }

    /// A byte of the `id` value (a number, a string or null: nothing nested).
    fn id_value_byte(&mut self, b: u8) {
        if self.after_id_key && b.is_ascii_whitespace() {
            return;
        }
        self.after_id_key = false;
        let in_string = self.value.first() == Some(&b'"');
        let closed_string = in_string
            && self.value.len() > 1
            && self.value.last() == Some(&b'"')
            && !self.value.ends_with(b"\\\"");
        if (!in_string || closed_string) && (b == b',' || b == b'}' || b.is_ascii_whitespace()) {
            self.found = Some(std::mem::take(&mut self.value));
            self.in_id_value = false;
            return;
        }
        if self.value.len() < Self::VALUE_MAX {
            self.value.push(b);
        } else {
            self.in_id_value = false;
            self.value.clear();
        }
    }

    fn id(mut self) -> Option<Value> {
        if self.in_id_value && !self.value.is_empty() {
            self.found = Some(std::mem::take(&mut self.value));
        }
        let v: Value = serde_json::from_slice(&self.found?).ok()?;
        (v.is_number() || v.is_string()).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Option<Value> {
        let mut s = IdScanner::default();
        // Fed in small pieces, as a long line arrives.
        for piece in text.as_bytes().chunks(3) {
            s.feed(piece);
        }
        s.id()
    }

    #[test]
    fn the_scanner_finds_the_top_level_id_wherever_it_is() {
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            Some(json!(7))
        );
        assert_eq!(
            scan(r#"{"method":"x","params":{"id":1,"a":"\"id\":2"},"id":"r-9"}"#),
            Some(json!("r-9"))
        );
        assert_eq!(
            scan(r#"{"params":{"content":"aaaa"}, "id" : 12 }"#),
            Some(json!(12))
        );
        assert_eq!(scan(r#"{"method":"x","params":{"id":3}}"#), None);
        assert_eq!(scan(r#"{"id":null}"#), None);
        // Cut before the line ends: what was seen is enough.
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":42,"params":{"content":"aaa"#),
            Some(json!(42))
        );
        assert_eq!(scan(r#"{"id":"a\"b","x":1}"#), Some(json!("a\"b")));
    }

    #[tokio::test]
    async fn a_long_line_is_skipped_to_its_end_and_the_next_one_reads() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":5,"params":"{}"}}"#,
            "x".repeat(1000)
        );
        let input = format!("{long}\n{{\"ok\":1}}\n");
        let mut reader = tokio::io::BufReader::with_capacity(64, input.as_bytes());
        let mut partial = Partial::default();
        match read_line(&mut reader, 100, &mut partial)
            .await
            .expect("read")
        {
            Line::TooLong { length, id } => {
                assert_eq!(length, long.len() as u64);
                assert_eq!(id, Some(json!(5)));
            }
            _ => panic!("not skipped"),
        }
        match read_line(&mut reader, 100, &mut partial)
            .await
            .expect("read")
        {
            Line::Whole(l) => assert_eq!(l, b"{\"ok\":1}"),
            _ => panic!("the next line"),
        }
        assert!(matches!(
            read_line(&mut reader, 100, &mut partial)
                .await
                .expect("read"),
            Line::End
        ));
    }

    #[tokio::test]
    async fn a_read_dropped_mid_line_loses_nothing_of_it() {
        // The client writes a request, and its newline a moment later; the read that saw the
        // first part is dropped meanwhile (as rmcp drops a pending receive).
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = tokio::io::BufReader::new(server);
        let mut partial = Partial::default();
        client
            .write_all(br#"{"jsonrpc":"2.0","id":7}"#)
            .await
            .expect("write");
        let dropped = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            read_line(&mut reader, 100, &mut partial),
        )
        .await;
        assert!(dropped.is_err(), "no newline yet: the read waits");
        client.write_all(b"\n").await.expect("write");
        match read_line(&mut reader, 100, &mut partial)
            .await
            .expect("read")
        {
            Line::Whole(l) => assert_eq!(l, br#"{"jsonrpc":"2.0","id":7}"#),
            Line::TooLong { .. } => panic!("skipped"),
            Line::End => panic!("ended"),
        }
    }

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Answer(a) => serde_json::from_slice(&a).expect("json"),
            Verdict::Message(m) => panic!("passed on: {m:?}"),
            Verdict::Drop => panic!("dropped"),
        }
    }

    #[test]
    fn every_bad_request_gets_its_code() {
        let a = answer("{not json");
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read","arguments":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(answer(&deep)["error"]["code"], -32700);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#)["error"]["code"],
            -32602
        );
        let a = answer(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":"x"}}"#,
        );
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(3), json!(-32602))
        );
        assert_eq!(
            answer(r#"{"id":4,"method":"tools/list"}"#)["error"]["code"],
            -32600
        );
        let batch = answer(r#"[{"jsonrpc":"2.0","id":8,"method":"ping"}]"#);
        assert_eq!(batch["error"]["code"], -32600);
        let why = batch["error"]["message"].as_str().unwrap_or_default();
        assert!(
            why.contains("batch"),
            "the batch is named as the cause: {why}"
        );
        assert!(!why.contains("\"jsonrpc\": \"2.0\" is required"), "{why}");
        assert_eq!(answer("7")["error"]["code"], -32600);
        // A message with neither a method nor a result: answered, with its id if it has one.
        let empty = answer(r#"{"jsonrpc":"2.0"}"#);
        assert_eq!(
            (empty["id"].clone(), empty["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":9}"#)["id"], 9);
        // A notification stays unanswered, however malformed.
        assert!(matches!(
            judge(br#"{"method":"notifications/initialized"}"#),
            Verdict::Drop
        ));
        assert!(matches!(judge(b"  "), Verdict::Drop));
        assert!(matches!(
            judge(br#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#),
            Verdict::Message(_)
        ));
        // Invalid UTF-8.
        match judge(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"\xff\"}") {
            Verdict::Answer(a) => {
                let a: Value = serde_json::from_slice(&a).expect("json");
                assert_eq!(a["error"]["code"], -32700);
            }
            _ => panic!("not answered"),
        }
    }
}
