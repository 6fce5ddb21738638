//! The provider never parks an async worker on slow I/O. A 1 ms ticker shares a current-thread
//! runtime (one worker: anything that blocks it stops the ticker) with durable writes of 16 MiB
//! and a stream of 68 MiB, and the worst gap between its ticks is measured.
//!
//! The same calls are also made the wrong way in the same run — `std::fs` inline in the async
//! task, one call at a time with the executor free between them, as a provider that forgot
//! `spawn_blocking` would — and the ticker's worst gap measured for that too. That is the broken
//! variant beside the passing one: its gap is the length of its longest blocking call (one
//! durable write, or the read). The provider's worst gap must stay under a third of the broken
//! variant's (the medians of five rounds). Both phases alternate, so a busy machine slows both
//! alike: the bound is a ratio of two measurements taken side by side, never a fixed time. A
//! provider that blocked on any one of these calls would stall the ticker about as long as the
//! broken variant does.

use futures_util::StreamExt;
use seam::{FileSystem, ResolveOptions, Signal};
use seam_local::{Durability, LocalConfig, LocalFileSystem};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Written four times per phase, each durably.
const WRITE: usize = 16 << 20;

/// Rounds of both phases; the medians are compared (one round can meet a burst of load).
const ROUNDS: usize = 5;

fn median(mut gaps: Vec<Duration>) -> Duration {
    gaps.sort();
    gaps[gaps.len() / 2]
}

/// The ticker's worst gap since the last reset, in nanoseconds.
struct Ticker {
    worst: AtomicU64,
    stop: AtomicBool,
}

impl Ticker {
    /// Lets the ticker run (so a gap that a blocking phase left is recorded), then starts a new
    /// window.
    async fn reset(&self) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        self.worst.store(0, Ordering::SeqCst);
    }

    /// The worst gap since the last reset, once the ticker has had a chance to record it.
    async fn worst(&self) -> Duration {
        tokio::time::sleep(Duration::from_millis(5)).await;
        Duration::from_nanos(self.worst.load(Ordering::SeqCst))
    }
}

/// The provider's way: every call awaited.
async fn through_provider(fs: &LocalFileSystem, content: &str, big_len: usize) {
    let opts = ResolveOptions::default();
    let none = Signal::none();
    for i in 0..4 {
        let t = fs
            .resolve(&format!("w{i}"), opts, &none)
            .await
            .expect("resolve");
        fs.write_text(&t, content, None, None, &none)
            .await
            .expect("durable write");
    }
    let t = fs.resolve("big", opts, &none).await.expect("resolve");
    let mut stream = fs.stream_text(&t, &none).await.expect("stream");
    let mut bytes = 0usize;
    while let Some(chunk) = stream.next().await {
        bytes += chunk.expect("chunk").len();
    }
    assert_eq!(bytes, big_len);
}

/// The broken variant: the same calls with `std::fs` inline on the executor thread, as a
/// provider that forgot `spawn_blocking` would make them — each call blocks, and the executor
/// runs other tasks between calls (so its stall is one call long, not the whole phase).
async fn inline(dir: &Path, content: &str, big_len: usize) {
    for i in 0..4 {
        let mut f = std::fs::File::create(dir.join(format!("inline{i}"))).expect("create");
        f.write_all(content.as_bytes()).expect("write");
        f.sync_all().expect("sync");
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let read = std::fs::read(dir.join("big")).expect("read");
    assert_eq!(read.len(), big_len);
}

#[test]
fn durable_writes_and_large_streams_leave_the_executor_free() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .to_string_lossy()
        .into_owned();
    let big = "0123456789abcdef\n".repeat(4 << 20); // 68 MiB
    std::fs::write(dir.path().join("big"), &big).expect("fixture");
    let content = "x".repeat(WRITE);
    let fs = LocalFileSystem::new(LocalConfig::new(root).with_durability(Durability::Full));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let (provider, broken) = rt.block_on(async {
        let ticker = Arc::new(Ticker {
            worst: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let t = ticker.clone();
        let task = tokio::spawn(async move {
            let mut last = Instant::now();
            while !t.stop.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let now = Instant::now();
                let gap = u64::try_from((now - last).as_nanos()).unwrap_or(u64::MAX);
                t.worst.fetch_max(gap, Ordering::SeqCst);
                last = now;
            }
        });
        let (mut provider, mut broken) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            ticker.reset().await;
            through_provider(&fs, &content, big.len()).await;
            provider.push(ticker.worst().await);
            ticker.reset().await;
            inline(dir.path(), &content, big.len()).await;
            broken.push(ticker.worst().await);
        }
        ticker.stop.store(true, Ordering::SeqCst);
        task.await.expect("ticker");
        (provider, broken)
    });
    println!("worst tick gap: provider {provider:?}, inline std::fs {broken:?}");
    // The disk was written for real, both ways.
    for name in ["w0", "w1", "w2", "w3", "inline0", "inline3"] {
        let on_disk = std::fs::read(dir.path().join(name)).expect("written");
        assert!(
            on_disk == content.as_bytes(),
            "{name} does not hold what was written"
        );
    }
    let (provider, broken) = (median(provider), median(broken));
    // The broken variant is caught for its own reason: it stalls the ticker.
    assert!(
        broken > Duration::from_millis(10),
        "the inline std::fs calls stalled the ticker only {broken:?}: the measure cannot tell blocking from not"
    );
    assert!(
        provider * 3 < broken,
        "the ticker stalled for {provider:?} (median worst gap) during the provider's calls, against \
         {broken:?} when the same calls ran inline: the provider runs I/O on the executor thread"
    );
}
