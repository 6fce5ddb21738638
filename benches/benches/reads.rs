//! Reads: `read_text` and `stream_text` of the local provider against `read_to_string` and a raw
//! 64 KiB-chunk read with incremental UTF-8 validation, at 4 KiB .. 512 MiB (page-cached, files
//! written fresh at the start of the run). Also the small sizes where buffered and streamed
//! reads cross over, which decide the read tool's stream threshold.

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use futures_util::StreamExt;
use seam::{FileSystem, Signal};
use seam_benches::{label, local, quick, raw, runtime, scratch, sizes, target, text_file};
use seam_local::Durability;
use std::hint::black_box;
use std::time::Duration;

fn reads(c: &mut Criterion) {
    let dir = scratch();
    let rt = runtime();
    let fs = local(dir.path(), Durability::Full);
    let all = sizes(&[
        4 << 10,
        16 << 10,
        64 << 10,
        256 << 10,
        1 << 20,
        4 << 20,
        16 << 20,
        64 << 20,
        512 << 20,
    ]);
    for size in all {
        let path = dir.path().join(format!("f{}.txt", label(size)));
        if let Err(e) = text_file(&path, size) {
            panic!("cannot write test data: {e}");
        }
        // Warm the page cache.
        black_box(raw::read_to_string(&path));
        let t = target(&rt, &fs, &path);
        let mut g = c.benchmark_group(format!("reads/{}", label(size)));
        g.throughput(Throughput::Bytes(size));
        if size >= 64 << 20 {
            g.sample_size(10).sampling_mode(SamplingMode::Flat);
            g.measurement_time(Duration::from_secs(if size >= 512 << 20 { 12 } else { 5 }));
        }
        if quick() {
            g.sample_size(10);
        }
        g.bench_function(BenchmarkId::new("raw", "read_to_string"), |b| {
            b.iter(|| black_box(raw::read_to_string(&path)))
        });
        g.bench_function(BenchmarkId::new("raw", "chunked_utf8"), |b| {
            b.iter(|| black_box(raw::stream_validated(&path)))
        });
        g.bench_function(BenchmarkId::new("local", "read_text"), |b| {
            b.iter(|| match rt.block_on(fs.read_text(&t, &Signal::none())) {
                Ok(s) => black_box(s.len()),
                Err(e) => panic!("read_text: {e}"),
            })
        });
        g.bench_function(BenchmarkId::new("local", "stream_text"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut n = 0;
                    let mut s = match fs.stream_text(&t, &Signal::none()).await {
                        Ok(s) => s,
                        Err(e) => panic!("stream_text: {e}"),
                    };
                    while let Some(chunk) = s.next().await {
                        match chunk {
                            Ok(c) => n += c.len(),
                            Err(e) => panic!("chunk: {e}"),
                        }
                    }
                    black_box(n)
                })
            })
        });
        g.finish();
        let _ = std::fs::remove_file(&path);
    }
}

criterion_group!(benches, reads);
criterion_main!(benches);
