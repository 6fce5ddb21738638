//! The sandbox against the local provider it wraps, and both against the raw operation, in the
//! same run: `stat`, a 4 KiB `read_text` (reads are not fenced: the cost is one more call), and
//! a fully durable 4 KiB `write_text` under `workspace-write` (the fence's decision, holding
//! the writable root, and every path operation resolved one component at a time beneath it).
//! The goal: sandbox ÷ local ≤ 1.3 for each.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use seam::{FileSystem, SandboxMode, Signal};
use seam_benches::{local, quick, raw, runtime, scratch, target, text_file};
use seam_local::{Durability, LocalConfig};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::hint::black_box;
use std::time::Duration;

fn sandbox(c: &mut Criterion) {
    let rt = runtime();
    let dir = scratch();
    let root = dir.path().to_string_lossy().into_owned();
    let lfs = local(dir.path(), Durability::Full);
    let sfs = SandboxFileSystem::new(
        SandboxConfig::new(root.clone(), SandboxMode::WorkspaceWrite)
            .with_local(LocalConfig::new(root.clone()).with_durability(Durability::Full))
            .with_temp_roots(Vec::new()),
    );
    let _ = std::fs::create_dir_all(dir.path().join("src/lib"));
    let file = dir.path().join("src/lib/f4k.txt");
    if let Err(e) = text_file(&file, 4096) {
        panic!("test data: {e}");
    }
    let (lt, st) = (target(&rt, &lfs, &file), target(&rt, &sfs, &file));

    let mut g = c.benchmark_group("sandbox/stat");
    if quick() {
        g.sample_size(10);
    }
    g.bench_function(BenchmarkId::new("raw", "statx"), |b| {
        b.iter(|| black_box(raw::statx(&file)))
    });
    for (name, fs, t) in [
        ("local", &lfs as &dyn FileSystem, &lt),
        ("sandbox", &sfs, &st),
    ] {
        g.bench_function(BenchmarkId::new(name, "stat"), |b| {
            b.iter(|| match rt.block_on(fs.stat(t, &Signal::none())) {
                Ok(i) => black_box(i.map(|i| i.size)),
                Err(e) => panic!("stat: {e}"),
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("sandbox/read_4KiB");
    if quick() {
        g.sample_size(10);
    }
    g.bench_function(BenchmarkId::new("raw", "read_to_string"), |b| {
        b.iter(|| black_box(raw::read_to_string(&file)))
    });
    for (name, fs, t) in [
        ("local", &lfs as &dyn FileSystem, &lt),
        ("sandbox", &sfs, &st),
    ] {
        g.bench_function(BenchmarkId::new(name, "read_text"), |b| {
            b.iter(|| match rt.block_on(fs.read_text(t, &Signal::none())) {
                Ok(s) => black_box(s.len()),
                Err(e) => panic!("read: {e}"),
            })
        });
    }
    g.finish();

    let content = "x".repeat(4095) + "\n";
    let dir_fd = raw::open_dir(dir.path());
    let mut g = c.benchmark_group("sandbox/write_4KiB/full");
    g.sample_size(if quick() { 10 } else { 40 });
    g.measurement_time(Duration::from_secs(if quick() { 1 } else { 6 }));
    let mut n = 0u64;
    g.bench_function(BenchmarkId::new("raw", "replace"), |b| {
        b.iter(|| {
            n += 1;
            raw::atomic_write(
                dir.path(),
                &dir_fd,
                "raw.txt",
                content.as_bytes(),
                Durability::Full,
                n,
            )
        })
    });
    for (name, fs) in [("local", &lfs as &dyn FileSystem), ("sandbox", &sfs)] {
        let t = target(&rt, fs, &dir.path().join(format!("{name}.txt")));
        let _ = rt.block_on(fs.write_text(&t, &content, None, None, &Signal::none()));
        g.bench_function(BenchmarkId::new(name, "replace"), |b| {
            b.iter(
                || match rt.block_on(fs.write_text(&t, &content, None, None, &Signal::none())) {
                    Ok(o) => black_box(o.version),
                    Err(e) => panic!("write: {e}"),
                },
            )
        });
    }
    g.finish();
}

criterion_group!(benches, sandbox);
criterion_main!(benches);
