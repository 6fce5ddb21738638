//! Moving slow I/O off the async workers.
//!
//! A durable write spends milliseconds in fsync (4–16 ms while the host flushes, on this
//! project's VM); a large read or a directory of thousands of entries spends longer. Run inline,
//! that time parks the executor thread and stalls every other task on it — for a server hosting
//! many clients, all of them behind one write. So mutations, whole-file reads past a small size,
//! listings and stream chunks run on tokio's blocking pool. Metadata calls (`resolve`, `stat`,
//! `lstat`) and small reads stay inline: they cost a few microseconds, less than the hop
//! (`docs/performance.md` has the measurements).
//!
//! Outside a tokio runtime (a caller driving the provider with another executor) the work runs
//! inline: correct, just not concurrent.

use seam::{FsError, Verb};

/// Runs `work` on the blocking pool when a tokio runtime is current, inline otherwise.
pub(crate) async fn offload<T, F>(verb: Verb, display: &str, work: F) -> Result<T, FsError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, FsError> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(work).await {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(FsError::io(verb, display, "the I/O task was cancelled")),
        },
        Err(_) => work(),
    }
}

/// Copies a large borrowed text into an owned one for the blocking pool, a megabyte at a time
/// with a yield between: a 16 MiB copy (page faults included) costs about 20 ms on this
/// project's VM, which would otherwise stall the executor thread it runs on.
pub(crate) async fn owned_in_steps(text: &str) -> String {
    const STEP: usize = 1 << 20;
    if text.len() <= STEP {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = STEP.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        out.push_str(&rest[..cut]);
        rest = &rest[cut..];
        tokio::task::yield_now().await;
    }
    out
}
