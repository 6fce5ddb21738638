//! `stream_text`: the same text as `read_text`, in chunks of at most 64 KiB, so memory stays flat
//! however large the file. Decoding is incremental: a multi-byte sequence split across chunks is
//! carried to the next one; a truncated one at the end is invalid UTF-8.
//!
//! A file over 64 KiB is read on the blocking pool by one task per stream, in chunks of 256 KiB,
//! ahead into a channel of [`READ_AHEAD`] chunks: `poll_next` never touches the disk, so a
//! consumer on an async worker is never parked by a read, and reading overlaps with whatever the
//! consumer does with the previous chunk. Dropping the stream ends the task at its next chunk. A
//! smaller file is one read, done inline: cheaper than the hop.

use crate::errors::os;
use rustix::buffer::spare_capacity;
use rustix::io::Errno;
use seam::text::NUL_SAMPLE_BYTES as NUL_SAMPLE;
use seam::{FsError, Signal, Verb};
use std::fs::File;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Bytes read per chunk when the stream is read inline (64 KiB: the raw copy peaks here on this
/// class of machine).
pub(crate) const CHUNK: usize = 64 * 1024;

/// Bytes read per chunk on the blocking pool: larger, so the hop between threads is paid once
/// per 256 KiB rather than per 64 KiB (`docs/performance.md`).
const OFFLOADED_CHUNK: usize = 256 * 1024;

/// Chunks read ahead of the consumer: enough to overlap a read with the consumer's work, little
/// enough that a stream holds at most a few hundred KiB.
const READ_AHEAD: usize = 2;

/// A stream of a file's text: read on the blocking pool when the file is larger than `inline_max`
/// bytes and a tokio runtime is current, inline otherwise (a small file is one read, cheaper
/// than the hop).
pub(crate) fn text_stream(
    file: File,
    size: u64,
    inline_max: u64,
    display: String,
    signal: Signal,
) -> seam::TextStream {
    let mut reader = TextChunks::new(file, display, signal, CHUNK);
    if size <= inline_max {
        return Box::pin(reader);
    }
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            reader.chunk = OFFLOADED_CHUNK;
            let (tx, rx) = mpsc::channel(READ_AHEAD);
            handle.spawn_blocking(move || {
                while let Some(item) = reader.next_chunk() {
                    if tx.blocking_send(item).is_err() {
                        break; // the consumer dropped the stream
                    }
                }
            });
            Box::pin(Received { rx })
        }
        Err(_) => Box::pin(reader),
    }
}

/// The consumer's end of a read-ahead task.
struct Received {
    rx: mpsc::Receiver<Result<String, FsError>>,
}

impl futures_core::Stream for Received {
    type Item = Result<String, FsError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().rx.poll_recv(cx)
    }
}

pub(crate) struct TextChunks {
    file: File,
    display: String,
    signal: Signal,
    carry: Vec<u8>,
    seen: usize,
    at_start: bool,
    done: bool,
    /// Bytes read per chunk.
    chunk: usize,
}

impl TextChunks {
    pub fn new(file: File, display: String, signal: Signal, chunk: usize) -> Self {
        Self {
            file,
            display,
            signal,
            carry: Vec::new(),
            seen: 0,
            at_start: true,
            done: false,
            chunk,
        }
    }

    fn not_text(&self, why: seam::text::NotText) -> FsError {
        why.into_error(Verb::Read, &self.display)
    }

    fn next_chunk(&mut self) -> Option<Result<String, FsError>> {
        loop {
            if self.done {
                return None;
            }
            if let Err(e) = self.signal.check(Verb::Read) {
                self.done = true;
                return Some(Err(e));
            }
            // A fresh buffer per chunk: it becomes the chunk's String without a copy.
            let mut buf = Vec::new();
            if buf
                .try_reserve_exact(self.carry.len() + self.chunk)
                .is_err()
            {
                self.done = true;
                return Some(Err(FsError::io(
                    Verb::Read,
                    &self.display,
                    "not enough memory",
                )));
            }
            buf.extend_from_slice(&self.carry);
            self.carry.clear();
            let start = buf.len();
            // Fill the buffer or reach the end: one read per chunk on a page-cached file.
            let mut eof = false;
            while buf.len() < buf.capacity() {
                match rustix::io::read(&self.file, spare_capacity(&mut buf)) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(_) | Err(Errno::INTR) => {}
                    Err(e) => {
                        self.done = true;
                        return Some(Err(os(e, Verb::Read, &self.display)));
                    }
                }
            }
            if self.seen < NUL_SAMPLE {
                let fresh = &buf[start..];
                let look = fresh.len().min(NUL_SAMPLE - self.seen);
                if fresh[..look].contains(&0) {
                    self.done = true;
                    return Some(Err(self.not_text(seam::text::NotText::Binary)));
                }
                self.seen += fresh.len();
            }
            if self.at_start {
                if buf.len() < seam::text::BOM.len() && !eof && seam::text::BOM.starts_with(&buf) {
                    self.carry = buf;
                    continue;
                }
                self.at_start = false;
                if buf.starts_with(seam::text::BOM) {
                    buf.drain(..seam::text::BOM.len());
                }
            }
            // One validation pass; only a chunk that ends inside a character is split.
            let text = match String::from_utf8(buf) {
                Ok(text) => text,
                Err(e) => {
                    let err = e.utf8_error();
                    if err.error_len().is_some() || eof {
                        self.done = true;
                        return Some(Err(self.not_text(seam::text::NotText::InvalidUtf8)));
                    }
                    let mut bytes = e.into_bytes();
                    self.carry = bytes.split_off(err.valid_up_to());
                    match String::from_utf8(bytes) {
                        Ok(text) => text,
                        Err(_) => {
                            self.done = true;
                            return Some(Err(self.not_text(seam::text::NotText::InvalidUtf8)));
                        }
                    }
                }
            };
            if eof {
                self.done = true;
            }
            if text.is_empty() {
                if eof {
                    return None;
                }
                continue;
            }
            return Some(Ok(text));
        }
    }
}

/// Inline reading, for callers outside a tokio runtime.
impl futures_core::Stream for TextChunks {
    type Item = Result<String, FsError>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.get_mut().next_chunk())
    }
}
