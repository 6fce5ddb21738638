//! The remote provider over a Unix socket against the local provider it hosts and the raw
//! operation, in the same run: `stat` (also against the floor of any round trip: the same
//! lines over a Unix socket between two blocking threads; goal remote ≤ 1.5 × (floor + local)),
//! a 4 KiB `read_text`, a fully durable 4 KiB `write_text`
//! and a 64 MiB `stream_text` (throughput goal: remote ÷ local ≥ 0.7 as a rate, i.e. at most
//! 1.43× the time). The server runs in this process on its own runtime (two threads), as
//! `seam serve` would, so the wire, the framing and the multiplexing are all paid.
//!
//! Then the peak memory of a 1 GiB stream through the wire (client and server in this one
//! process: the growth of its high-water mark bounds both), printed as `rss:` lines.

/// The allocator the `seam` binary ships with, so the server here behaves as `seam serve` does
/// (why it matters for streams: `cli/src/main.rs`). Local and remote share it in this process.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use seam::{FileSystem, Signal, WriteIntent};
use seam_benches::{local, quick, raw, runtime, scratch, target, text_file};
use seam_local::Durability;
use seam_remote::{Address, Connection, RemoteFileSystem, Server};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

/// The server's runtime, kept alive for the bench.
fn serve(root: &Path, socket: &Path) -> (tokio::runtime::Runtime, RemoteFileSystem) {
    let server_rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => panic!("server runtime: {e}"),
    };
    let hosted: Arc<dyn FileSystem> = Arc::new(local(root, Durability::Full));
    let listener = {
        let _enter = server_rt.enter();
        match Server::bind_unix(socket) {
            Ok(l) => l,
            Err(e) => panic!("bind: {e}"),
        }
    };
    server_rt.spawn(Arc::new(Server::new(hosted)).serve_unix(listener));
    let conn = match Connection::connect(&Address::Unix(socket.to_path_buf()), None) {
        Ok(c) => c,
        Err(e) => panic!("connect: {e}"),
    };
    (server_rt, RemoteFileSystem::new(Arc::new(conn)))
}

fn drain(rt: &tokio::runtime::Runtime, fs: &dyn FileSystem, t: &seam::FsTarget) -> usize {
    rt.block_on(async {
        let mut n = 0;
        match fs.stream_text(t, &Signal::none()).await {
            Ok(mut s) => {
                while let Some(chunk) = s.next().await {
                    match chunk {
                        Ok(c) => n += c.len(),
                        Err(e) => panic!("stream: {e}"),
                    }
                }
            }
            Err(e) => panic!("stream: {e}"),
        }
        n
    })
}

/// The stream ratio again, from interleaved pairs (local, then remote, 30 times): criterion
/// measures all of local before all of remote, and on a shared VM the machine's speed drifts
/// between the two by more than the difference sought. Printed as a `ratio:` line.
fn paired_streams(
    rt: &tokio::runtime::Runtime,
    local: (&dyn FileSystem, &seam::FsTarget),
    remote: (&dyn FileSystem, &seam::FsTarget),
) {
    let pairs = if quick() { 2 } else { 30 };
    let timed = |(fs, t): (&dyn FileSystem, &seam::FsTarget)| {
        let start = std::time::Instant::now();
        black_box(drain(rt, fs, t));
        start.elapsed().as_secs_f64() * 1e3
    };
    let (mut l, mut r) = (Vec::new(), Vec::new());
    for _ in 0..pairs {
        l.push(timed(local));
        r.push(timed(remote));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (lm, rm) = (median(&mut l), median(&mut r));
    println!(
        "ratio: stream_text, {pairs} interleaved pairs: local median {lm:.2} ms, remote median {rm:.2} ms, remote ÷ local throughput {:.3}",
        lm / rm
    );
}

fn hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn remote(c: &mut Criterion) {
    let rt = runtime();
    let dir = scratch();
    let root = dir.path().join("w");
    if let Err(e) = std::fs::create_dir(&root) {
        panic!("root: {e}");
    }
    let (_server, rfs) = serve(&root, &dir.path().join("s.sock"));
    let lfs = local(&root, Durability::Full);

    let small = root.join("small.txt");
    if let Err(e) = text_file(&small, 4096) {
        panic!("small: {e}");
    }
    let (lt, rt_small) = (target(&rt, &lfs, &small), target(&rt, &rfs, &small));

    let mut g = c.benchmark_group("remote/stat");
    g.bench_function(BenchmarkId::new("raw", "statx"), |b| {
        b.iter(|| black_box(raw::statx(&small)))
    });
    // The floor of a round trip: the same request and answer lines a remote stat sends, over a
    // Unix socket between two blocking threads. Goal: remote stat ≤ 1.5 × (this + local stat).
    let key = serde_json::to_string(&rt_small.key).unwrap_or_default();
    let display = serde_json::to_string(&rt_small.display_path).unwrap_or_default();
    let request = format!(
        r#"{{"jsonrpc":"2.0","id":12345,"method":"stat","params":{{"target":{{"key":{key},"display_path":{display}}}}}}}"#
    );
    let answer = r#"{"jsonrpc":"2.0","id":12345,"result":{"kind":"file","size":4096,"version":"v1-0000000000000803-0000000001a2b3c4-0000000000001000-0000018c2f3e4d5e6f708192-0000018c2f3e4d5e6f708192"}}"#;
    let mut line = raw::LineRoundTrip::start(&dir.path().join("raw.sock"), &request, answer);
    g.bench_function(BenchmarkId::new("raw", "line_round_trip"), |b| {
        b.iter(|| black_box(line.round_trip()))
    });
    let stat =
        |fs: &dyn FileSystem, t: &seam::FsTarget| match rt.block_on(fs.stat(t, &Signal::none())) {
            Ok(Some(info)) => info.version,
            other => panic!("stat: {other:?}"),
        };
    g.bench_function(BenchmarkId::new("local", "stat"), |b| {
        b.iter(|| black_box(stat(&lfs, &lt)))
    });
    g.bench_function(BenchmarkId::new("remote", "stat"), |b| {
        b.iter(|| black_box(stat(&rfs, &rt_small)))
    });
    g.finish();

    let mut g = c.benchmark_group("remote/read_text_4KiB");
    g.bench_function(BenchmarkId::new("raw", "read_to_string"), |b| {
        b.iter(|| black_box(raw::read_to_string(&small)))
    });
    g.bench_function(BenchmarkId::new("local", "read_text"), |b| {
        b.iter(|| {
            black_box(
                rt.block_on(lfs.read_text(&lt, &Signal::none()))
                    .map(|s| s.len()),
            )
        })
    });
    g.bench_function(BenchmarkId::new("remote", "read_text"), |b| {
        b.iter(|| {
            black_box(
                rt.block_on(rfs.read_text(&rt_small, &Signal::none()))
                    .map(|s| s.len()),
            )
        })
    });
    g.finish();

    let content = "x".repeat(4096);
    let out = root.join("out.txt");
    let dir_fd = raw::open_dir(&root);
    let mut g = c.benchmark_group("remote/write_text_4KiB_durable");
    g.sample_size(20);
    let mut n = 0u64;
    g.bench_function(
        BenchmarkId::new("raw", "temp+fsync+rename+fsync(dir)"),
        |b| {
            b.iter(|| {
                n += 1;
                raw::atomic_write(
                    &root,
                    &dir_fd,
                    "raw.txt",
                    content.as_bytes(),
                    Durability::Full,
                    n,
                )
            })
        },
    );
    let lo = target(&rt, &lfs, &out);
    g.bench_function(BenchmarkId::new("local", "write_text"), |b| {
        b.iter(
            || match rt.block_on(lfs.write_text(&lo, &content, None, None, &Signal::none())) {
                Ok(o) => black_box(o.version),
                Err(e) => panic!("local write: {e}"),
            },
        )
    });
    let ro = target(&rt, &rfs, &out);
    g.bench_function(BenchmarkId::new("remote", "write_text"), |b| {
        b.iter(|| {
            black_box(
                rt.block_on(rfs.write_text(
                    &ro,
                    &content,
                    None::<&WriteIntent>,
                    None,
                    &Signal::none(),
                ))
                .is_ok(),
            )
        })
    });
    g.finish();

    let size: u64 = if quick() { 1 << 20 } else { 64 << 20 };
    let big = root.join("big.txt");
    if let Err(e) = text_file(&big, size) {
        panic!("big: {e}");
    }
    let (lb, rb) = (target(&rt, &lfs, &big), target(&rt, &rfs, &big));
    let mut g = c.benchmark_group("remote/stream_text_64MiB");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(size));
    g.bench_function(BenchmarkId::new("raw", "chunked_utf8"), |b| {
        b.iter(|| black_box(raw::stream_validated(&big)))
    });
    g.bench_function(BenchmarkId::new("local", "stream_text"), |b| {
        b.iter(|| black_box(drain(&rt, &lfs, &lb)))
    });
    g.bench_function(BenchmarkId::new("remote", "stream_text"), |b| {
        b.iter(|| black_box(drain(&rt, &rfs, &rb)))
    });
    g.finish();
    paired_streams(&rt, (&lfs, &lb), (&rfs, &rb));

    // Peak memory of a large stream through the wire.
    let huge_size: u64 = if quick() { 4 << 20 } else { 1 << 30 };
    let huge = root.join("huge.txt");
    if let Err(e) = text_file(&huge, huge_size) {
        panic!("huge: {e}");
    }
    let rh = target(&rt, &rfs, &huge);
    // Writing the file raised the high-water mark; reset it (Linux: clear_refs 5) so the
    // stream's own peak is what is measured.
    if let Err(e) = std::fs::write("/proc/self/clear_refs", "5") {
        panic!("cannot reset the peak RSS: {e}");
    }
    let before = hwm_kib();
    let streamed = drain(&rt, &rfs, &rh);
    let after = hwm_kib();
    println!(
        "rss: remote stream_text of {streamed} bytes: peak RSS {before} KiB before, {after} KiB after (+{} KiB, client and server together)",
        after.saturating_sub(before)
    );
    let _ = std::fs::remove_file(&huge);
}

criterion_group!(benches, remote);
criterion_main!(benches);
