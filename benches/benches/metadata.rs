//! Metadata: `resolve` and `stat` (the version token) against a raw `statx`, and `list_dir` of
//! 1,000 entries against a raw `read_dir` with a `statx` per entry.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use seam::{FileSystem, ResolveOptions, Signal};
use seam_benches::{local, quick, raw, runtime, scratch, target, text_file};
use seam_local::Durability;
use std::hint::black_box;

fn metadata(c: &mut Criterion) {
    let dir = scratch();
    let rt = runtime();
    let fs = local(dir.path(), Durability::Full);
    let file = dir.path().join("src/lib/f4k.txt");
    let _ = std::fs::create_dir_all(dir.path().join("src/lib"));
    if let Err(e) = text_file(&file, 4096) {
        panic!("test data: {e}");
    }
    let t = target(&rt, &fs, &file);
    let spelled = file.to_string_lossy().into_owned();

    let mut g = c.benchmark_group("metadata/stat");
    if quick() {
        g.sample_size(10);
    }
    g.bench_function(BenchmarkId::new("raw", "statx"), |b| {
        b.iter(|| black_box(raw::statx(&file)))
    });
    g.bench_function(BenchmarkId::new("local", "stat"), |b| {
        b.iter(|| match rt.block_on(fs.stat(&t, &Signal::none())) {
            Ok(i) => black_box(i.map(|i| i.size)),
            Err(e) => panic!("stat: {e}"),
        })
    });
    g.bench_function(BenchmarkId::new("local", "resolve"), |b| {
        b.iter(|| {
            match rt.block_on(fs.resolve(&spelled, ResolveOptions::default(), &Signal::none())) {
                Ok(t) => black_box(t.key.as_str().len()),
                Err(e) => panic!("resolve: {e}"),
            }
        })
    });
    g.finish();

    let entries: u64 = if quick() { 50 } else { 1000 };
    let listed = dir.path().join("dir1000");
    let _ = std::fs::create_dir(&listed);
    for i in 0..entries {
        if let Err(e) = std::fs::write(listed.join(format!("entry-{i:04}.txt")), b"0123456789") {
            panic!("test data: {e}");
        }
    }
    let lt = target(&rt, &fs, &listed);
    let mut g = c.benchmark_group("metadata/list_dir");
    g.throughput(Throughput::Elements(entries));
    if quick() {
        g.sample_size(10);
    }
    g.bench_function(BenchmarkId::new("raw", "read_dir+statx"), |b| {
        b.iter(|| black_box(raw::read_dir_statx(&listed)))
    });
    g.bench_function(BenchmarkId::new("local", "list_dir"), |b| {
        b.iter(|| match rt.block_on(fs.list_dir(&lt, &Signal::none())) {
            Ok(v) => black_box(v.len()),
            Err(e) => panic!("list_dir: {e}"),
        })
    });
    g.finish();
}

criterion_group!(benches, metadata);
criterion_main!(benches);
