//! The `read` tool against the provider read it wraps: one tool call on a 2,000-line file
//! (argument parsing, resolve, one stat, read_text, windowing, rendering, the gate) against
//! `read_text` alone, in the same run. Two files: 2,000 source-like lines (105 KiB, so the
//! page stops at the 50 KiB cap) and 2,000 short lines (all returned).
//!
//! `cargo bench -p seam-benches --bench read_tool`; the `table` bench prints the ratios.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use seam::{FileSystem, Signal};
use seam_benches::{lines_file, local, quick, runtime, scratch, target};
use seam_local::Durability;
use seam_policy::{ObservationPolicy, Owner};
use seam_tools::{Exec, Toolset};
use serde_json::json;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn short_lines_file(path: &Path, lines: usize) -> std::io::Result<()> {
    let out: String = (0..lines).map(|i| format!("let v{i} = {i};\n")).collect();
    let mut f = std::fs::File::create(path)?;
    f.write_all(out.as_bytes())?;
    f.sync_all()
}

fn read_tool(c: &mut Criterion) {
    let dir = scratch();
    let rt = runtime();
    let fs: Arc<dyn FileSystem> = Arc::new(local(dir.path(), Durability::Full));
    let tools = Toolset::builder(fs.as_ref()).build();
    let Some(read) = tools.get("read").cloned() else {
        panic!("no read tool");
    };
    let bare = Exec::new(fs.clone());
    let policy = ObservationPolicy::new();
    let owner = Owner::new();
    let gated = Exec::new(fs.clone())
        .with_gate(Arc::new(policy.clone()))
        .with_actor(owner.clone());

    let source = dir.path().join("source2000.txt");
    let short = dir.path().join("short2000.txt");
    if let Err(e) = lines_file(&source, 2000).and_then(|()| short_lines_file(&short, 2000)) {
        panic!("test data: {e}");
    }
    for (name, path, footer) in [
        ("2000_lines_source", &source, "(Output capped."),
        (
            "2000_lines_short",
            &short,
            "(End of file - total 2000 lines)",
        ),
    ] {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let t = target(&rt, fs.as_ref(), path);
        let args = json!({ "file_path": path.to_string_lossy() });
        // The call does what it should before it is timed.
        match rt.block_on(read.execute(&args, &gated)) {
            Ok(out) if out.text().contains(footer) => {}
            Ok(out) => panic!("unexpected page: {}", out.text()),
            Err(e) => panic!("read: {}", e.render()),
        }
        let mut g = c.benchmark_group(format!("read_tool/{name}"));
        g.throughput(Throughput::Bytes(size));
        g.warm_up_time(Duration::from_secs(1));
        g.measurement_time(Duration::from_secs(if quick() { 1 } else { 4 }));
        if quick() {
            g.sample_size(10);
        }
        g.bench_function(BenchmarkId::new("local", "read_text"), |b| {
            b.iter(|| match rt.block_on(fs.read_text(&t, &Signal::none())) {
                Ok(s) => black_box(s.len()),
                Err(e) => panic!("read_text: {e}"),
            })
        });
        g.bench_function(BenchmarkId::new("local", "resolve+stat+read_text"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let p = path.to_string_lossy();
                    let t = fs
                        .resolve(&p, Default::default(), &Signal::none())
                        .await
                        .unwrap_or_else(|e| panic!("resolve: {e}"));
                    let info = fs.stat(&t, &Signal::none()).await;
                    let text = fs.read_text(&t, &Signal::none()).await;
                    black_box((info.is_ok(), text.map(|s| s.len()).unwrap_or(0)))
                })
            })
        });
        g.bench_function(BenchmarkId::new("tool", "read"), |b| {
            b.iter(|| match rt.block_on(read.execute(&args, &bare)) {
                Ok(out) => black_box(out.content.len()),
                Err(e) => panic!("read: {}", e.render()),
            })
        });
        g.bench_function(BenchmarkId::new("tool", "read+policy"), |b| {
            b.iter(|| match rt.block_on(read.execute(&args, &gated)) {
                Ok(out) => black_box(out.content.len()),
                Err(e) => panic!("read: {}", e.render()),
            })
        });
        g.finish();
    }
}

criterion_group!(benches, read_tool);
criterion_main!(benches);
