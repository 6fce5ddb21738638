//! The client's sending half: frames written from the calling thread when the socket takes
//! them, by the connection's writer task only when it does not.
//!
//! A round trip's cost on a virtual machine is mostly threads waking each other (a bare
//! request and answer over a Unix socket costs about 55 µs here, a `statx` about 1 µs). Handing
//! every request to a writer task on the connection's runtime wakes one more thread per call.
//! So a frame with nothing queued ahead of it is written at once by the caller, without
//! blocking: the socket is polled with a waker that does nothing, and whatever it does not take
//! (a full socket buffer, a large payload) is queued, in order, for the writer task, which
//! writes it with a real waker. Frames are queued and written under one lock, so they never
//! interleave and keep the order they were sent in.

use crate::frame::{Frame, encode_line};
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

type BoxWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// The connection is closed: nothing more can be sent.
#[derive(Debug)]
pub(crate) struct Closed;

#[derive(Default)]
struct State {
    /// The socket, when no writer task is using it.
    writer: Option<BoxWrite>,
    /// Bytes not yet written, in order; the first may be partly written (`written`).
    queue: VecDeque<Vec<u8>>,
    written: usize,
    closed: bool,
}

/// A connection's outgoing frames.
pub(crate) struct Outbox {
    state: Mutex<State>,
    more: Notify,
}

impl Outbox {
    pub(crate) fn new(writer: BoxWrite) -> Self {
        Self {
            state: Mutex::new(State {
                writer: Some(writer),
                ..State::default()
            }),
            more: Notify::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends `frame`: written now if nothing is ahead of it and the socket takes it, else
    /// queued for the writer task.
    pub(crate) fn send(&self, frame: Frame) -> Result<(), Closed> {
        let line = encode_line(&frame).map_err(|_| Closed)?;
        let mut pieces: VecDeque<Vec<u8>> = match crate::frame::coalesced(&line, &frame.segments) {
            // A small frame in one write: the server wakes once for it.
            Some(one) => VecDeque::from([one]),
            None => std::iter::once(line)
                .chain(frame.segments.into_iter().filter(|s| !s.is_empty()))
                .collect(),
        };
        let mut state = self.state();
        if state.closed {
            return Err(Closed);
        }
        let mut written = 0;
        if state.queue.is_empty()
            && let Some(w) = state.writer.as_mut()
        {
            let mut cx = Context::from_waker(std::task::Waker::noop());
            while let Some(piece) = pieces.front() {
                match Pin::new(&mut *w).poll_write(&mut cx, &piece[written..]) {
                    Poll::Ready(Ok(n)) if n > 0 => {
                        written += n;
                        if written == piece.len() {
                            pieces.pop_front();
                            written = 0;
                        }
                    }
                    Poll::Ready(Ok(_)) | Poll::Ready(Err(_)) => {
                        // The peer is gone (or the socket broke mid-frame): nothing may follow.
                        state.closed = true;
                        state.writer = None;
                        state.queue.clear();
                        return Err(Closed);
                    }
                    Poll::Pending => break,
                }
            }
            if pieces.is_empty() {
                // Our sockets and pipes buffer nothing of their own: a flush is a formality.
                let _ = Pin::new(&mut *w).poll_flush(&mut cx);
                return Ok(());
            }
            state.written = written;
        }
        state.queue.extend(pieces);
        drop(state);
        self.more.notify_one();
        Ok(())
    }

    /// Closes the connection's sending half now (the socket, or a child's stdin, is dropped:
    /// the peer sees the end of input).
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        state.writer = None;
        state.queue.clear();
    }

    /// The writer task: writes what callers queued, with a real waker, until the connection
    /// closes.
    pub(crate) async fn run(&self) {
        loop {
            self.more.notified().await;
            let Some(mut w) = self.state().writer.take() else {
                if self.state().closed {
                    return;
                }
                continue;
            };
            loop {
                let next = {
                    let mut state = self.state();
                    match state.queue.pop_front() {
                        Some(piece) => Some((piece, std::mem::take(&mut state.written))),
                        None => {
                            // Caught up: callers may write directly again.
                            if !state.closed {
                                state.writer = Some(w);
                            }
                            break;
                        }
                    }
                };
                let Some((piece, from)) = next else { break };
                let ok = w.write_all(&piece[from..]).await.is_ok() && w.flush().await.is_ok();
                if !ok {
                    self.close();
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    fn frame(n: u64, payload: usize) -> Frame {
        let mut f = Frame::new(serde_json::Map::new());
        f.json.insert("n".into(), json!(n));
        if payload > 0 {
            let r = f.attach(vec![b'a' + (n % 26) as u8; payload]);
            f.json.insert("p".into(), r);
        }
        f
    }

    /// Frames sent from many threads, small and large (larger than the socket takes at once),
    /// arrive whole and each in one piece, in the order each thread sent them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn frames_from_many_threads_arrive_whole_and_in_order() {
        let (a, b) = tokio::net::UnixStream::pair().expect("pair");
        let (_, w) = a.into_split();
        let out = std::sync::Arc::new(Outbox::new(Box::new(w)));
        let writer = tokio::spawn({
            let out = out.clone();
            async move { out.run().await }
        });
        let senders: Vec<_> = (0..4u64)
            .map(|t| {
                let out = out.clone();
                std::thread::spawn(move || {
                    for i in 0..50u64 {
                        let big = if i % 10 == 0 { 3 << 20 } else { 100 };
                        out.send(frame(t * 1000 + i, big as usize)).expect("sent");
                    }
                })
            })
            .collect();
        let mut reader = tokio::io::BufReader::new(b);
        let mut last = [None::<u64>; 4];
        for _ in 0..200 {
            let f = crate::frame::read_frame(&mut reader, crate::frame::Limits::default())
                .await
                .expect("a whole frame");
            let n = f.json["n"].as_u64().expect("n");
            let t = usize::try_from(n / 1000).expect("thread");
            assert!(
                last[t].is_none_or(|l| l < n),
                "out of order: {n} after {last:?}"
            );
            last[t] = Some(n);
            if let Some(seg) = f.segments.first() {
                assert!(
                    seg.iter().all(|b| *b == b'a' + (n % 26) as u8),
                    "frame {n} torn"
                );
            }
        }
        for s in senders {
            s.join().expect("sender");
        }
        out.close();
        assert!(out.send(frame(1, 0)).is_err(), "closed");
        // The writer task ends once told, and the peer sees the end of input.
        out.more.notify_one();
        tokio::time::timeout(std::time::Duration::from_secs(5), writer)
            .await
            .expect("ends")
            .expect("joined");
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await.expect("eof");
        assert!(rest.is_empty());
    }
}
