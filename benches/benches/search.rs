//! `glob` and `grep` over a generated tree, in process through the local provider's
//! [`seam::Search`], against ripgrep as a process — what the seed spawned for every call — in
//! the same run: `rg --files --glob=<pattern>` (unordered, on every core),
//! `rg --files --glob=<pattern> --sort=modified` (the seed's glob, ordered as ours is) and
//! `rg -n <pattern>` (a plain grep, on every core). The goal: seam ÷ rg ≤ 1.2 warm (page
//! cache hot).
//!
//! The same searches also run as a fresh process per search (`search_once`, this crate's
//! binary: runtime, provider and thread pool started every time) against `rg` — the cold-start
//! comparison (goal: ≤ 1.5).
//!
//! The tree: 200 directories of 100 files (20,000 files, 2 KiB of text each, 1 in 100 holding
//! the word the grep looks for); 20 directories of 25 under `cargo test` (criterion's test
//! mode). Without `rg` on the PATH the baseline is skipped, and says so.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use seam::search::{GlobQuery, GrepQuery};
use seam::{FileSystem, Signal};
use seam_benches::{local, quick, runtime, scratch, target};
use seam_local::Durability;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;

fn tree(root: &Path, dirs: usize, files: usize) {
    let filler = "lorem ipsum dolor sit amet consectetur ".repeat(50);
    for d in 0..dirs {
        let dir = root.join(format!("pkg{d:03}/src"));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("tree: {e}");
        }
        for f in 0..files {
            let n = d * files + f;
            let body = if n % 100 == 7 {
                format!("{filler}\nfn needle_{n}() {{}}\n")
            } else {
                format!("{filler}\n")
            };
            let ext = if f % 2 == 0 { "rs" } else { "txt" };
            if let Err(e) = std::fs::write(dir.join(format!("f{f:03}.{ext}")), body) {
                panic!("tree: {e}");
            }
        }
    }
}

fn rg(root: &Path, args: &[&str]) -> Option<usize> {
    let out = Command::new("rg")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    Some(out.stdout.len())
}

fn search(c: &mut Criterion) {
    let rt = runtime();
    let dir = scratch();
    let (dirs, files) = if quick() { (20, 25) } else { (200, 100) };
    tree(dir.path(), dirs, files);
    let fs = local(dir.path(), Durability::None);
    let root = target(&rt, &fs, dir.path());
    let Some(search) = fs.search() else {
        panic!("the local provider offers search");
    };
    let have_rg = rg(dir.path(), &["--version"]).is_some();
    if !have_rg {
        eprintln!("search: no `rg` on the PATH, the ripgrep baselines are skipped");
    }

    let mut g = c.benchmark_group("search/glob_rs");
    g.sample_size(10);
    if have_rg {
        g.bench_function(BenchmarkId::new("raw", "rg --files"), |b| {
            b.iter(|| black_box(rg(dir.path(), &["--files", "--glob=*.rs"])))
        });
        g.bench_function(BenchmarkId::new("raw", "rg --files --sort=modified"), |b| {
            b.iter(|| {
                black_box(rg(
                    dir.path(),
                    &["--files", "--glob=*.rs", "--sort=modified"],
                ))
            })
        });
    }
    let q = GlobQuery {
        pattern: "*.rs".into(),
        hidden: false,
    };
    g.bench_function(BenchmarkId::new("local", "glob"), |b| {
        b.iter(
            || match rt.block_on(search.glob(&root, &q, &Signal::none())) {
                Ok(found) => black_box(found.len()),
                Err(e) => panic!("glob: {e}"),
            },
        )
    });
    g.finish();

    let mut g = c.benchmark_group("search/grep_needle");
    g.sample_size(10);
    if have_rg {
        g.bench_function(BenchmarkId::new("raw", "rg -n"), |b| {
            b.iter(|| black_box(rg(dir.path(), &["-n", "needle_[0-9]+"])))
        });
    }
    let q = GrepQuery::new("needle_[0-9]+");
    g.bench_function(BenchmarkId::new("local", "grep"), |b| {
        b.iter(
            || match rt.block_on(search.grep(&root, &q, &Signal::none())) {
                Ok(found) => black_box(found.matches.len()),
                Err(e) => panic!("grep: {e}"),
            },
        )
    });
    g.finish();

    // A fresh process per search, for both sides.
    let once = env!("CARGO_BIN_EXE_search_once");
    let spawn = |args: &[&str]| -> usize {
        match Command::new(once).args(args).output() {
            Ok(out) if out.status.success() => out.stdout.len(),
            Ok(out) => panic!("search_once: {}", String::from_utf8_lossy(&out.stderr)),
            Err(e) => panic!("search_once: {e}"),
        }
    };
    let root_arg = dir.path().to_string_lossy().into_owned();
    let mut g = c.benchmark_group("search/process");
    g.sample_size(10);
    if have_rg {
        g.bench_function(BenchmarkId::new("raw", "rg --files --glob=*.rs"), |b| {
            b.iter(|| black_box(rg(dir.path(), &["--files", "--glob=*.rs"])))
        });
        g.bench_function(BenchmarkId::new("raw", "rg -n"), |b| {
            b.iter(|| black_box(rg(dir.path(), &["-n", "needle_[0-9]+"])))
        });
    }
    g.bench_function(BenchmarkId::new("local", "glob"), |b| {
        b.iter(|| black_box(spawn(&["glob", "*.rs", &root_arg])))
    });
    g.bench_function(BenchmarkId::new("local", "grep"), |b| {
        b.iter(|| black_box(spawn(&["grep", "needle_[0-9]+", &root_arg])))
    });
    g.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
