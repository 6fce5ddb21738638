//! `stream_text` over bytes already in memory.
//!
//! The content is shared with the store (the stream holds the same `Arc` the file held when the
//! stream was opened), so opening a stream copies nothing and a later write does not disturb it:
//! the stream shows one version whole, as a read would. Each chunk is decoded on its own; a
//! chunk that would end inside a multi-byte character ends before it instead, so a character is
//! never split and never mistaken for invalid UTF-8.

use crate::sync::Arc;
use seam::{FsError, Signal, Verb};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Bytes per chunk at most (a power of two, so that the suite's characters straddling every
/// power-of-two boundary land across chunk ends).
pub(crate) const CHUNK: usize = 64 * 1024;

/// The chunks of one file's text, from `pos` on.
pub(crate) struct TextChunks {
    bytes: Arc<Vec<u8>>,
    pos: usize,
    chunk: usize,
    display: String,
    signal: Signal,
    done: bool,
}

impl TextChunks {
    /// Chunks of at most `chunk` bytes (at least 4, the longest character) of `bytes[start..]`.
    pub(crate) fn new(
        bytes: Arc<Vec<u8>>,
        start: usize,
        chunk: usize,
        display: String,
        signal: Signal,
    ) -> Self {
        Self {
            bytes,
            pos: start,
            chunk: chunk.max(4),
            display,
            signal,
            done: false,
        }
    }

    fn fail(&mut self, e: FsError) -> Option<Result<String, FsError>> {
        self.done = true;
        Some(Err(e))
    }

    fn next_chunk(&mut self) -> Option<Result<String, FsError>> {
        if self.done || self.pos >= self.bytes.len() {
            self.done = true;
            return None;
        }
        if self.signal.is_cancelled() {
            return self.fail(FsError::aborted(Verb::Read));
        }
        let end = (self.pos + self.chunk).min(self.bytes.len());
        let whole = end == self.bytes.len();
        let chunk = &self.bytes[self.pos..end];
        let text = match std::str::from_utf8(chunk) {
            Ok(text) => Some(text),
            // The chunk ends inside a character that the rest of the file may complete: end
            // the chunk before it (never empty: a chunk holds at least one whole character).
            // Only that shorter prefix is checked again; a whole chunk is checked once.
            Err(e) if e.error_len().is_none() && !whole && e.valid_up_to() > 0 => {
                std::str::from_utf8(&chunk[..e.valid_up_to()]).ok()
            }
            Err(_) => None,
        }
        .map(str::to_string);
        let Some(text) = text else {
            return self.fail(FsError::invalid_utf8(Verb::Read, &self.display));
        };
        self.pos += text.len();
        Some(Ok(text))
    }
}

impl futures_core::Stream for TextChunks {
    type Item = Result<String, FsError>;

    fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.get_mut().next_chunk())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        let left = self.bytes.len().saturating_sub(self.pos);
        // Every chunk but the last holds at least `chunk - 3` bytes; an error ends it early.
        (
            0,
            Some(left.div_ceil(self.chunk.saturating_sub(3).max(1)) + 1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(bytes: &[u8], start: usize, chunk: usize) -> Vec<Result<String, FsError>> {
        let mut s = TextChunks::new(
            Arc::new(bytes.to_vec()),
            start,
            chunk,
            "/f".into(),
            Signal::none(),
        );
        std::iter::from_fn(|| s.next_chunk()).collect()
    }

    #[test]
    fn a_multi_byte_character_is_never_split() {
        // "é" is two bytes, "€" three, "𝄞" four: every chunk end falls inside one of them.
        let text = "aé€𝄞".repeat(50);
        for chunk in 4..=12 {
            let got = chunks(text.as_bytes(), 0, chunk);
            let mut joined = String::new();
            for c in &got {
                match c {
                    Ok(s) if !s.is_empty() && s.len() <= chunk => joined.push_str(s),
                    other => panic!("chunk {chunk}: {other:?}"),
                }
            }
            assert_eq!(joined, text, "chunk {chunk}");
        }
    }

    #[test]
    fn invalid_bytes_end_the_stream_with_one_error() {
        let mut bytes = "ab".repeat(10).into_bytes();
        bytes.push(0xFF);
        bytes.extend_from_slice(b"tail");
        let got = chunks(&bytes, 0, 8);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got.last().and_then(|r| r.as_ref().err()),
            Some(&FsError::invalid_utf8(Verb::Read, "/f"))
        );
        // A character cut off by the end of the file is invalid, not "to be continued".
        let got = chunks(b"ab\xE2\x82", 0, 64);
        assert_eq!(
            got,
            vec![Err(FsError::invalid_utf8(Verb::Read, "/f"))],
            "truncated at the end"
        );
    }

    #[test]
    fn a_cancelled_signal_ends_the_stream() {
        let signal = Signal::new();
        let mut s = TextChunks::new(
            Arc::new(b"abcdefgh".to_vec()),
            0,
            4,
            "/f".into(),
            signal.clone(),
        );
        assert_eq!(s.next_chunk(), Some(Ok("abcd".to_string())));
        signal.cancel();
        assert_eq!(s.next_chunk(), Some(Err(FsError::aborted(Verb::Read))));
        assert_eq!(s.next_chunk(), None);
    }
}
