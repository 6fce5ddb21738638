//! Peak memory of one read, measured in a child process so nothing else shares its high-water
//! mark: `VmHWM` before the read (runtime and provider set up) and after it. Streamed reads must
//! stay flat as the file grows; buffered ones grow with it.
//!
//! `cargo bench -p seam-benches --bench memory` (64 MiB and 512 MiB; 1 MiB under `cargo test`).
//! Writes `rss.json` beside criterion's output for the `table` bench.

use futures_util::StreamExt;
use seam::{FileSystem, Signal};
use seam_benches::{label, local, quick, raw, runtime, scratch, target, text_file};
use seam_local::Durability;
use std::path::{Path, PathBuf};
use std::process::Command;

const MODES: &[&str] = &[
    "raw_read_to_string",
    "raw_chunked_utf8",
    "local_read_text",
    "local_stream_text",
];

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

fn child(mode: &str, path: &Path) {
    let rt = runtime();
    let dir = path.parent().unwrap_or(Path::new("/"));
    let fs = local(dir, Durability::Full);
    let t = target(&rt, &fs, path);
    let before = hwm_kib();
    let bytes = match mode {
        "raw_read_to_string" => raw::read_to_string(path),
        "raw_chunked_utf8" => raw::stream_validated(path),
        "local_read_text" => rt
            .block_on(fs.read_text(&t, &Signal::none()))
            .map(|s| s.len())
            .unwrap_or(0),
        _ => rt.block_on(async {
            let mut n = 0;
            if let Ok(mut s) = fs.stream_text(&t, &Signal::none()).await {
                while let Some(Ok(c)) = s.next().await {
                    n += c.len();
                }
            }
            n
        }),
    };
    println!("{before} {} {bytes}", hwm_kib());
}

fn out_dir() -> PathBuf {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    base.parent().map(|p| p.join("criterion")).unwrap_or(base)
}

fn main() {
    if let (Ok(mode), Ok(path)) = (
        std::env::var("SEAM_RSS_MODE"),
        std::env::var("SEAM_RSS_FILE"),
    ) {
        child(&mode, Path::new(&path));
        return;
    }
    let sizes: Vec<u64> = if quick() {
        vec![1 << 20]
    } else {
        vec![64 << 20, 512 << 20]
    };
    let dir = scratch();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => panic!("cannot find this binary: {e}"),
    };
    let mut rows = Vec::new();
    println!(
        "{:<20} {:>8} {:>14} {:>12} {:>14}",
        "mode", "file", "baseline KiB", "peak KiB", "growth KiB"
    );
    for size in sizes {
        let path = dir.path().join(format!("f{}.txt", label(size)));
        if let Err(e) = text_file(&path, size) {
            panic!("test data: {e}");
        }
        std::hint::black_box(raw::read_to_string(&path));
        for mode in MODES {
            let out = match Command::new(&exe)
                .env("SEAM_RSS_MODE", mode)
                .env("SEAM_RSS_FILE", &path)
                .output()
            {
                Ok(o) => o,
                Err(e) => panic!("cannot run the child: {e}"),
            };
            let text = String::from_utf8_lossy(&out.stdout);
            let nums: Vec<u64> = text
                .split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect();
            let [before, peak, bytes] = nums[..] else {
                panic!(
                    "child said {text:?} {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            };
            assert!(
                bytes > 0 && bytes <= size,
                "the child read {bytes} of {size} bytes"
            );
            let growth = peak.saturating_sub(before);
            println!(
                "{mode:<20} {:>8} {before:>14} {peak:>12} {growth:>14}",
                label(size)
            );
            rows.push(serde_json::json!({
                "mode": mode, "bytes": size, "baseline_kib": before, "peak_kib": peak, "growth_kib": growth
            }));
            if *mode == "local_stream_text" {
                assert!(
                    growth <= 8 * 1024,
                    "stream_text grew {growth} KiB on {}",
                    label(size)
                );
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    if !quick() {
        let dir = out_dir();
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("rss.json");
        if let Err(e) = std::fs::write(&file, serde_json::Value::Array(rows).to_string()) {
            eprintln!("cannot write {}: {e}", file.display());
        } else {
            println!("wrote {}", file.display());
        }
    }
}
