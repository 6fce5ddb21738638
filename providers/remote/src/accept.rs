//! Accepting connections: how many a server serves at once, what the ones past that are told,
//! and an accept loop that survives running out of file descriptors.
//!
//! A server left running meets clients that connect and never speak, clients that connect by
//! the hundred, and a process limit on descriptors. None of them may stop it: a connection past
//! the cap is answered with a `-32004` error it can read and closed; when `accept` fails for
//! want of descriptors, a spare descriptor kept for the purpose is given up for a moment to take
//! the waiting connection and tell it the same, the shortage is logged once, and the loop backs
//! off and goes on. The cap defaults to what the descriptor limit leaves after a reserve for the
//! calls' own files, so the shortage is rare to begin with.

use crate::server::Server;
use crate::wire::{self, error_object, response};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Why a connection was turned away.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Refusal {
    /// At the connection cap.
    Crowded(usize),
    /// `accept` ran out of descriptors.
    Descriptors,
}

impl Refusal {
    fn message(self) -> String {
        match self {
            Refusal::Crowded(n) => format!(
                "too many connections: this server serves at most {n} at once; try again later"
            ),
            Refusal::Descriptors => {
                "this server is out of file descriptors; try again later".to_string()
            }
        }
    }
}

/// The halves of an accepted connection.
pub(crate) type Halves = (
    Box<dyn AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
);

/// A listening socket of either kind.
pub(crate) trait Listener: Send + Sync {
    /// Whether its clients must authenticate (TCP).
    const TCP: bool;
    fn accept(&self) -> impl std::future::Future<Output = std::io::Result<Halves>> + Send;
}

impl Listener for tokio::net::UnixListener {
    const TCP: bool = false;
    async fn accept(&self) -> std::io::Result<Halves> {
        let (stream, _) = tokio::net::UnixListener::accept(self).await?;
        crate::frame::widen_buffers(&stream);
        let (r, w) = stream.into_split();
        Ok((Box::new(r), Box::new(w)))
    }
}

impl Listener for tokio::net::TcpListener {
    const TCP: bool = true;
    async fn accept(&self) -> std::io::Result<Halves> {
        let (stream, _) = tokio::net::TcpListener::accept(self).await?;
        let _ = stream.set_nodelay(true);
        let (r, w) = stream.into_split();
        Ok((Box::new(r), Box::new(w)))
    }
}

fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(code) if code == rustix::io::Errno::MFILE.raw_os_error()
            || code == rustix::io::Errno::NFILE.raw_os_error()
            || code == rustix::io::Errno::NOBUFS.raw_os_error()
            || code == rustix::io::Errno::NOMEM.raw_os_error()
    )
}

/// A descriptor held in reserve, given up to refuse a connection when there is no other.
fn spare() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

impl Server {
    /// Accepts connections until the process ends; failures of `accept` are survived.
    pub(crate) async fn accept_loop<L: Listener>(self: Arc<Self>, listener: L) {
        let mut spare = spare();
        let mut starved = false;
        let mut backoff = Duration::from_millis(5);
        loop {
            match listener.accept().await {
                Ok((r, w)) => {
                    if starved {
                        self.log("descriptors are free again: accepting connections");
                        starved = false;
                    }
                    backoff = Duration::from_millis(5);
                    self.clone().admit(r, w, L::TCP);
                }
                Err(e) if out_of_descriptors(&e) => {
                    if !starved {
                        self.log(&format!(
                            "accept: {e}; refusing new connections until descriptors are freed"
                        ));
                        starved = true;
                    }
                    // The waiting connection is told why, with the spare descriptor's room;
                    // the next one is taken at once while that works.
                    if spare.take().is_some() {
                        let told = match tokio::time::timeout(
                            Duration::from_millis(50),
                            listener.accept(),
                        )
                        .await
                        {
                            Ok(Ok((_, w))) => {
                                self.refuse(w, Refusal::Descriptors).await;
                                true
                            }
                            _ => false,
                        };
                        spare = self::spare();
                        if told && spare.is_some() {
                            continue;
                        }
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
                Err(e) => {
                    // A connection that failed before it was taken (reset, aborted): the
                    // listener is fine.
                    self.log(&format!("accept: {e}"));
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }

    /// Serves the connection if there is room for it, else refuses it.
    pub(crate) fn admit(
        self: Arc<Self>,
        r: Box<dyn AsyncRead + Unpin + Send>,
        w: Box<dyn AsyncWrite + Unpin + Send>,
        tcp: bool,
    ) {
        let max = self.connection_limits.max_connections;
        if self.active.fetch_add(1, Ordering::SeqCst) >= max {
            self.active.fetch_sub(1, Ordering::SeqCst);
            tokio::spawn(async move {
                self.refuse(w, Refusal::Crowded(max)).await;
            });
            return;
        }
        self.crowded.store(false, Ordering::Relaxed);
        tokio::spawn(async move {
            let _active = Active(self.clone());
            self.serve_connection(r, w, tcp).await;
        });
    }

    /// Tells a connection it is refused (within a second: a client that does not read is not
    /// waited for) and closes it; counts it.
    async fn refuse(&self, mut w: Box<dyn AsyncWrite + Unpin + Send>, why: Refusal) {
        let total = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        if matches!(why, Refusal::Crowded(_)) && !self.crowded.swap(true, Ordering::Relaxed) {
            self.log(&format!("{} ({total} refused so far)", why.message()));
        }
        let frame = response(
            &serde_json::Value::Null,
            Err(error_object(wire::BUSY, &why.message(), None)),
        );
        let _ = tokio::time::timeout(
            Duration::from_secs(1),
            crate::frame::write_frame(&mut w, &frame),
        )
        .await;
    }
}

/// A connection being served, counted until it ends.
struct Active(Arc<Server>);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}
