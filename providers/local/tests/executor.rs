//! The provider never parks an async worker on slow I/O. A 1 ms ticker shares a current-thread
//! runtime (one worker: anything that blocks it stops the ticker) with durable writes of 16 MiB
//! and a stream of 68 MiB; the worst gap between ticks must stay under a fifth of the longest
//! call. The bound is relative, so it holds on a loaded machine: if the I/O ran inline, the
//! ticker would stop for the whole of each call and the worst gap would be at least the longest
//! call.

use futures_util::StreamExt;
use seam::{FileSystem, ResolveOptions, Signal};
use seam_local::{Durability, LocalConfig, LocalFileSystem};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[test]
fn durable_writes_and_large_streams_leave_the_executor_free() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .to_string_lossy()
        .into_owned();
    let big = "0123456789abcdef\n".repeat(4 << 20); // 68 MiB
    std::fs::write(dir.path().join("big"), &big).expect("fixture");
    let content = "x".repeat(16 << 20);
    let fs = LocalFileSystem::new(LocalConfig::new(root).with_durability(Durability::Full));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let (worst_gap, longest_call, ticks) = rt.block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let ticker = tokio::spawn(async move {
            let mut worst = Duration::ZERO;
            let mut last = Instant::now();
            let mut ticks = 0u32;
            while !flag.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let now = Instant::now();
                worst = worst.max(now - last);
                last = now;
                ticks += 1;
            }
            (worst, ticks)
        });
        // Let the ticker start before the I/O does.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let opts = ResolveOptions::default();
        let none = Signal::none();
        let mut longest = Duration::ZERO;
        for i in 0..4 {
            let t = fs
                .resolve(&format!("w{i}"), opts, &none)
                .await
                .expect("resolve");
            let started = Instant::now();
            fs.write_text(&t, &content, None, None, &none)
                .await
                .expect("durable write");
            longest = longest.max(started.elapsed());
        }
        let t = fs.resolve("big", opts, &none).await.expect("resolve");
        let started = Instant::now();
        let mut stream = fs.stream_text(&t, &none).await.expect("stream");
        let mut bytes = 0usize;
        while let Some(chunk) = stream.next().await {
            bytes += chunk.expect("chunk").len();
        }
        assert_eq!(bytes, big.len());
        longest = longest.max(started.elapsed());
        stop.store(true, Ordering::SeqCst);
        let (worst, ticks) = ticker.await.expect("ticker");
        (worst, longest, ticks)
    });
    println!("worst tick gap {worst_gap:?}, longest call {longest_call:?}, {ticks} ticks");
    // The disk was written for real: the calls did take time.
    for i in 0..4 {
        let on_disk = std::fs::metadata(dir.path().join(format!("w{i}"))).expect("written");
        assert_eq!(on_disk.len(), content.len() as u64);
    }
    assert!(
        worst_gap * 5 < longest_call,
        "the ticker stalled for {worst_gap:?} while the longest call took {longest_call:?}: \
         I/O is running on the executor thread"
    );
}
