//! Mutations: `write_text` (create, replace, guarded replace) and `edit_text` (one small edit in
//! a 4 KiB and a 1 MiB file) against the raw sequence with the same durability — exclusive temp,
//! write, fsync, rename, fsync of the directory — and the cost of each durability setting.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use seam::{EditRequest, FileSystem, Signal, WriteIntent};
use seam_benches::{label, local, quick, raw, runtime, scratch, sizes, target, text_file};
use seam_local::Durability;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn name(d: Durability) -> &'static str {
    match d {
        Durability::Full => "full",
        Durability::File => "file",
        Durability::None => "none",
    }
}

fn writes(c: &mut Criterion) {
    let rt = runtime();
    let content = "x".repeat(4096);
    let durabilities = if quick() {
        vec![Durability::Full]
    } else {
        vec![Durability::Full, Durability::File, Durability::None]
    };
    for durability in durabilities {
        let dir = scratch();
        let fs = local(dir.path(), durability);
        let dir_fd = raw::open_dir(dir.path());
        let mut g = c.benchmark_group(format!("mutations/write_4KiB/{}", name(durability)));
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
                    durability,
                    n,
                )
            })
        });
        let t = target(&rt, &fs, &dir.path().join("local.txt"));
        let _ = rt.block_on(fs.write_text(&t, &content, None, None, &Signal::none()));
        g.bench_function(BenchmarkId::new("local", "replace"), |b| {
            b.iter(
                || match rt.block_on(fs.write_text(&t, &content, None, None, &Signal::none())) {
                    Ok(o) => black_box(o.version),
                    Err(e) => panic!("write: {e}"),
                },
            )
        });
        let mut version = match rt.block_on(fs.stat(&t, &Signal::none())) {
            Ok(Some(i)) => i.version,
            other => panic!("stat: {other:?}"),
        };
        g.bench_function(BenchmarkId::new("local", "guarded_replace"), |b| {
            b.iter(|| {
                let intent = WriteIntent::ReplaceIfVersion {
                    version: version.clone(),
                };
                match rt.block_on(fs.write_text(&t, &content, Some(&intent), None, &Signal::none()))
                {
                    Ok(o) => version = o.version,
                    Err(e) => panic!("guarded write: {e}"),
                }
            })
        });
        g.bench_function(BenchmarkId::new("raw", "create"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    n += 1;
                    let name = format!("rc-{n}");
                    let start = Instant::now();
                    raw::atomic_write(
                        dir.path(),
                        &dir_fd,
                        &name,
                        content.as_bytes(),
                        durability,
                        n,
                    );
                    total += start.elapsed();
                    let _ = std::fs::remove_file(dir.path().join(&name));
                }
                total
            })
        });
        g.bench_function(BenchmarkId::new("local", "create"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    n += 1;
                    let path = dir.path().join(format!("lc-{n}"));
                    let t = target(&rt, &fs, &path);
                    let start = Instant::now();
                    let r = rt.block_on(fs.write_text(
                        &t,
                        &content,
                        Some(&WriteIntent::CreateIfAbsent),
                        None,
                        &Signal::none(),
                    ));
                    total += start.elapsed();
                    if let Err(e) = r {
                        panic!("create: {e}");
                    }
                    let _ = std::fs::remove_file(&path);
                }
                total
            })
        });
        g.finish();
    }
}

fn edits(c: &mut Criterion) {
    let rt = runtime();
    // Both durabilities: what the fsyncs cost against the rest of an edit.
    for (size, durability) in sizes(&[4 << 10, 1 << 20])
        .into_iter()
        .flat_map(|s| [(s, Durability::Full), (s, Durability::None)])
    {
        let dir = scratch();
        let fs = local(dir.path(), durability);
        let dir_fd = raw::open_dir(dir.path());
        for f in ["raw.txt", "local.txt"] {
            let path = dir.path().join(f);
            if let Err(e) = text_file(&path, size) {
                panic!("test data: {e}");
            }
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            text.replace_range(0..4, "AAAA");
            let _ = std::fs::write(&path, text);
        }
        let mut g = c.benchmark_group(format!(
            "mutations/edit_{}/{}",
            label(size),
            name(durability)
        ));
        g.sample_size(if quick() { 10 } else { 40 });
        g.measurement_time(Duration::from_secs(if quick() { 1 } else { 6 }));
        let mut n = 0u64;
        let mut flip = false;
        g.bench_function(BenchmarkId::new("raw", "read+replace"), |b| {
            b.iter(|| {
                n += 1;
                flip = !flip;
                let (old, new) = if flip {
                    ("AAAA", "BBBB")
                } else {
                    ("BBBB", "AAAA")
                };
                raw::edit(dir.path(), &dir_fd, "raw.txt", old, new, durability, n)
            })
        });
        let t = target(&rt, &fs, &dir.path().join("local.txt"));
        let mut flip = false;
        g.bench_function(BenchmarkId::new("local", "edit_text"), |b| {
            b.iter(|| {
                flip = !flip;
                let (old, new) = if flip {
                    ("AAAA", "BBBB")
                } else {
                    ("BBBB", "AAAA")
                };
                let e = EditRequest {
                    old_string: old.into(),
                    new_string: new.into(),
                    replace_all: false,
                };
                match rt.block_on(fs.edit_text(&t, &e, None, None, &Signal::none())) {
                    Ok(o) => black_box(o.version),
                    Err(e) => panic!("edit: {e}"),
                }
            })
        });
        g.finish();
    }
}

criterion_group!(benches, writes, edits);
criterion_main!(benches);
