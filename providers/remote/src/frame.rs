//! Frames: one JSON line, then the raw bytes of its payload segments (`docs/protocol.md` §1).
//!
//! Content never goes through JSON escaping; a reader never reads past a frame's end, so a bad
//! line costs one error and the connection goes on, while a frame over the limits ends the
//! connection (its length can no longer be trusted).

use crate::protocol::values::PayloadRef;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Default longest line, `\n` included.
pub const DEFAULT_MAX_LINE: usize = 1024 * 1024;
/// Default largest payload of one frame.
pub const DEFAULT_MAX_PAYLOAD: u64 = 64 * 1024 * 1024;

/// The limits a reader enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest line, `\n` included.
    pub max_line: usize,
    /// Largest payload of one frame.
    pub max_payload: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line: DEFAULT_MAX_LINE,
            max_payload: DEFAULT_MAX_PAYLOAD,
        }
    }
}

/// One message and its payload segments.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The JSON object (without the `payload` member, which `segments` replaces).
    pub json: Map<String, Value>,
    /// The payload segments, in order.
    pub segments: Vec<Vec<u8>>,
}

impl Frame {
    /// A frame without payload.
    pub fn new(json: Map<String, Value>) -> Self {
        Self {
            json,
            segments: Vec::new(),
        }
    }

    /// Appends a segment and returns the value that refers to it.
    pub fn attach(&mut self, bytes: Vec<u8>) -> Value {
        self.segments.push(bytes);
        json!({ "$payload": self.segments.len() - 1 })
    }

    /// Appends a segment and returns the typed reference to it.
    pub fn attach_ref(&mut self, bytes: Vec<u8>) -> PayloadRef {
        self.segments.push(bytes);
        PayloadRef::to(self.segments.len() - 1)
    }

    /// The segment a `{"$payload": i}` value refers to (a copy: two values may name one
    /// segment).
    pub fn take(&mut self, reference: &Value) -> Option<Vec<u8>> {
        let i = reference.get("$payload")?.as_u64()?;
        self.segments.get(usize::try_from(i).ok()?).cloned()
    }

    /// The segment `reference` names (a copy: two references may name one segment).
    pub fn segment(&self, reference: PayloadRef) -> Option<Vec<u8>> {
        self.segments
            .get(usize::try_from(reference.payload).ok()?)
            .cloned()
    }
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The stream ended (cleanly, between frames).
    #[error("the connection closed")]
    Closed,
    /// The line is not a JSON object: answer -32700 and read on.
    #[error("parse error: {0}")]
    Parse(String),
    /// The `payload` member is not a list of lengths: answer -32600 and read on (its bytes, if
    /// any, cannot be skipped reliably, so nothing was read past the line).
    #[error("invalid payload list: {0}")]
    BadPayload(String),
    /// Over a limit: answer -32003 and close.
    #[error("{0}")]
    TooLarge(String),
    /// The stream failed or ended inside a frame.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Socket buffers for a local connection: large enough for a whole stream frame, so a frame
/// crosses in one write instead of a ping-pong of ~200 KiB fills between writer and reader.
/// Best effort (the kernel caps it at `net.core.wmem_max` / `rmem_max`).
pub fn widen_buffers(socket: &impl std::os::fd::AsFd) {
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(socket, 4 << 20);
    let _ = rustix::net::sockopt::set_socket_recv_buffer_size(socket, 4 << 20);
}

/// The start of a bad line, for the message that reports it.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(200)]);
    let text = text.trim_end_matches('\n');
    if line.len() > 200 {
        format!("{text:?}…")
    } else {
        format!("{text:?}")
    }
}

/// Reads one frame.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limits: Limits,
) -> Result<Frame, ReadError> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return if line.is_empty() {
                Err(ReadError::Closed)
            } else {
                Err(ReadError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the connection closed inside a line",
                )))
            };
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if line.len() + take > limits.max_line {
            return Err(ReadError::TooLarge(format!(
                "a line is longer than {} bytes",
                limits.max_line
            )));
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        if done {
            break;
        }
    }
    let mut json = match serde_json::from_slice::<Value>(&line) {
        Ok(Value::Object(o)) => o,
        Ok(_) => {
            return Err(ReadError::Parse(format!(
                "a message must be a JSON object, got {}",
                excerpt(&line)
            )));
        }
        Err(e) => return Err(ReadError::Parse(format!("{e} in {}", excerpt(&line)))),
    };
    let lengths = match json.remove("payload") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            let mut lengths = Vec::with_capacity(items.len());
            for item in items {
                match item.as_u64() {
                    Some(n) => lengths.push(n),
                    None => {
                        return Err(ReadError::BadPayload(
                            "payload must list non-negative integers".into(),
                        ));
                    }
                }
            }
            lengths
        }
        Some(_) => {
            return Err(ReadError::BadPayload(
                "payload must be a list of lengths".into(),
            ));
        }
    };
    let total = lengths
        .iter()
        .try_fold(0u64, |a, n| a.checked_add(*n))
        .unwrap_or(u64::MAX);
    if total > limits.max_payload {
        return Err(ReadError::TooLarge(format!(
            "a payload of {total} bytes is over the limit of {} bytes",
            limits.max_payload
        )));
    }
    let mut segments = Vec::with_capacity(lengths.len());
    for n in lengths {
        // Read into spare capacity: no pass to zero a buffer that is about to be overwritten.
        let mut bytes = Vec::with_capacity(usize::try_from(n).unwrap_or(usize::MAX));
        (&mut *reader).take(n).read_to_end(&mut bytes).await?;
        if bytes.len() as u64 != n {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        segments.push(bytes);
    }
    Ok(Frame { json, segments })
}

/// A frame's line, `\n` included, with its `payload` list.
pub fn encode_line(frame: &Frame) -> std::io::Result<Vec<u8>> {
    let mut line = if frame.segments.is_empty() {
        serde_json::to_vec(&frame.json)
    } else {
        let mut json = frame.json.clone();
        json.insert(
            "payload".into(),
            Value::Array(frame.segments.iter().map(|s| json!(s.len())).collect()),
        );
        serde_json::to_vec(&json)
    }
    .map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// A frame up to this size (line and payload) is written in one piece: a line written apart
/// from a small payload can wake the reader twice, which costs more than the copy.
pub const COALESCE_MAX: usize = 64 * 1024;

/// The line and the segments of a small frame as one buffer (`None` for a frame without
/// payload, or one too large to copy).
pub fn coalesced(line: &[u8], segments: &[Vec<u8>]) -> Option<Vec<u8>> {
    let total = line.len() + segments.iter().map(Vec::len).sum::<usize>();
    if segments.is_empty() || total > COALESCE_MAX {
        return None;
    }
    let mut one = Vec::with_capacity(total);
    one.extend_from_slice(line);
    for s in segments {
        one.extend_from_slice(s);
    }
    Some(one)
}

/// Writes an encoded line and its segments, and flushes.
pub async fn write_encoded<W: AsyncWrite + Unpin>(
    writer: &mut W,
    line: &[u8],
    segments: &[Vec<u8>],
) -> std::io::Result<()> {
    if let Some(one) = coalesced(line, segments) {
        writer.write_all(&one).await?;
    } else {
        writer.write_all(line).await?;
        for segment in segments {
            writer.write_all(segment).await?;
        }
    }
    writer.flush().await
}

/// Writes one frame (the line, then its segments) and flushes.
pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    frame: &Frame,
) -> std::io::Result<()> {
    let line = encode_line(frame)?;
    write_encoded(writer, &line, &frame.segments).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(bytes: &[u8], limits: Limits) -> Vec<Result<Frame, String>> {
        let mut reader = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            match read_frame(&mut reader, limits).await {
                Err(ReadError::Closed) => return out,
                Err(e @ (ReadError::TooLarge(_) | ReadError::Io(_))) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
                r => out.push(r.map_err(|e| e.to_string())),
            }
        }
    }

    #[tokio::test]
    async fn a_frame_round_trips_with_its_segments() {
        let mut frame = Frame::new(Map::new());
        let a = frame.attach(b"line one\n\0raw".to_vec());
        let b = frame.attach(Vec::new());
        frame.json.insert("a".into(), a);
        frame.json.insert("b".into(), b);
        let mut wire = Vec::new();
        write_frame(&mut wire, &frame).await.expect("write");
        assert!(
            wire.starts_with(
                b"{\"a\":{\"$payload\":0},\"b\":{\"$payload\":1},\"payload\":[13,0]}\n"
            )
        );
        let mut back = read_all(&wire, Limits::default()).await;
        assert_eq!(back.len(), 1);
        let mut got = back.remove(0).expect("frame");
        let a = got.json["a"].clone();
        assert_eq!(got.take(&a), Some(b"line one\n\0raw".to_vec()));
    }

    #[tokio::test]
    async fn a_bad_line_is_one_error_and_the_next_frame_still_reads() {
        let wire = b"{not json\n[1]\n{\"payload\":\"x\"}\n{\"ok\":1}\n";
        let got = read_all(wire, Limits::default()).await;
        assert_eq!(got.len(), 4);
        assert!(got[0].as_ref().is_err_and(|e| e.starts_with("parse error")));
        assert!(got[1].as_ref().is_err_and(|e| e.contains("JSON object")));
        assert!(
            got[2]
                .as_ref()
                .is_err_and(|e| e.starts_with("invalid payload"))
        );
        assert_eq!(got[3].as_ref().expect("read on").json["ok"], 1);
    }

    #[tokio::test]
    async fn frames_over_the_limits_end_the_reading() {
        let limits = Limits {
            max_line: 16,
            max_payload: 4,
        };
        let long = read_all(b"{\"a\":\"0123456789abcdef\"}\n{}\n", limits).await;
        assert_eq!(long.len(), 1);
        assert!(
            long[0]
                .as_ref()
                .is_err_and(|e| e.contains("longer than 16"))
        );
        let big = read_all(b"{\"payload\":[5]}\n12345{}\n", limits).await;
        assert!(
            big[0]
                .as_ref()
                .is_err_and(|e| e.contains("over the limit of 4"))
        );
        let cut = read_all(b"{\"payload\":[3]}\n12", limits).await;
        assert!(cut[0].as_ref().is_err());
    }
}
