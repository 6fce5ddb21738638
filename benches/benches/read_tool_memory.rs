//! Peak memory of one `read` tool call on a 1 GiB file of lines and on a 1 GiB file that is a
//! single line, against `stream_text` alone on the same file. Measured like `memory.rs`: in a
//! child process, `VmHWM` after the runtime, provider and tools are set up and again after the
//! call. The files are written fresh (real bytes, no holes) in a scratch directory and removed.
//!
//! `cargo bench -p seam-benches --bench read_tool_memory` (1 GiB; 1 MiB under `cargo test`).

use futures_util::StreamExt;
use seam::{FileSystem, Signal};
use seam_benches::{label, local, quick, runtime, scratch, target};
use seam_local::Durability;
use seam_tools::{Exec, Toolset};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const MODES: &[&str] = &["local_stream_text", "tool_read"];
const BLOCK: usize = 1 << 20;

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

/// One block of `BLOCK` bytes of UTF-8 text, whole characters, with or without line breaks.
fn block(lines: bool) -> Vec<u8> {
    let pattern = if lines {
        "fn main() { let crab = '🦀'; let s = \"é café 日本語\"; }\n"
    } else {
        "fn main() { let crab = '🦀'; let s = \"é café 日本語\"; } "
    };
    let mut out = String::with_capacity(BLOCK + 64);
    while out.len() + pattern.len() <= BLOCK {
        out.push_str(pattern);
    }
    while out.len() < BLOCK {
        out.push('a');
    }
    out.into_bytes()
}

fn write_file(path: &Path, size: u64, lines: bool) -> std::io::Result<()> {
    let b = block(lines);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for _ in 0..(size / BLOCK as u64) {
        f.write_all(&b)?;
    }
    f.flush()?;
    f.get_ref().sync_all()
}

fn child(mode: &str, path: &Path) {
    let rt = runtime();
    let dir = path.parent().unwrap_or(Path::new("/"));
    let fs: Arc<dyn FileSystem> = Arc::new(local(dir, Durability::Full));
    let tools = Toolset::builder(fs.as_ref()).build();
    let exec = Exec::new(fs.clone());
    let t = target(&rt, fs.as_ref(), path);
    let before = hwm_kib();
    let summary = match mode {
        "tool_read" => {
            let args = json!({ "file_path": path.to_string_lossy() });
            match tools
                .get("read")
                .map(|r| rt.block_on(r.execute(&args, &exec)))
            {
                Some(Ok(out)) => {
                    let text = out.text();
                    let footer = text.lines().rev().nth(1).unwrap_or("").to_string();
                    format!("{} {footer}", text.len())
                }
                Some(Err(e)) => format!("0 error: {}", e.render()),
                None => "0 no read tool".to_string(),
            }
        }
        _ => rt.block_on(async {
            let mut n = 0;
            if let Ok(mut s) = fs.stream_text(&t, &Signal::none()).await {
                while let Some(Ok(c)) = s.next().await {
                    n += c.len();
                }
            }
            format!("{n} streamed")
        }),
    };
    println!("{before} {} {summary}", hwm_kib());
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
    let size: u64 = if quick() { 1 << 20 } else { 1 << 30 };
    let dir = scratch();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => panic!("cannot find this binary: {e}"),
    };
    let mut rows = Vec::new();
    println!(
        "{:<18} {:<9} {:>8} {:>13} {:>10} {:>11}  output",
        "mode", "file", "size", "baseline KiB", "peak KiB", "growth KiB"
    );
    for (shape, lines) in [("lines", true), ("one_line", false)] {
        let path = dir.path().join(format!("{shape}{}.txt", label(size)));
        if let Err(e) = write_file(&path, size, lines) {
            panic!("test data: {e}");
        }
        for mode in MODES {
            let out = match Command::new(&exe)
                .env("SEAM_RSS_MODE", mode)
                .env("SEAM_RSS_FILE", &path)
                .output()
            {
                Ok(o) => o,
                Err(e) => panic!("cannot run the child: {e}"),
            };
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let mut parts = text.splitn(4, ' ');
            let (Some(before), Some(peak), Some(bytes), summary) = (
                parts.next().and_then(|n| n.parse::<u64>().ok()),
                parts.next().and_then(|n| n.parse::<u64>().ok()),
                parts.next().and_then(|n| n.parse::<u64>().ok()),
                parts.next().unwrap_or(""),
            ) else {
                panic!(
                    "child said {text:?} {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            };
            assert!(bytes > 0, "{mode} on {shape}: {summary}");
            if *mode == "tool_read" {
                let expected = if lines {
                    "(Output capped. Showing lines 1-"
                } else {
                    "(End of file - total 1 lines)"
                };
                assert!(summary.starts_with(expected), "{shape}: {summary}");
            }
            let growth = peak.saturating_sub(before);
            println!(
                "{mode:<18} {shape:<9} {:>8} {before:>13} {peak:>10} {growth:>11}  {summary}",
                label(size)
            );
            rows.push(serde_json::json!({
                "mode": mode, "file": shape, "bytes": size, "baseline_kib": before,
                "peak_kib": peak, "growth_kib": growth
            }));
            assert!(
                growth <= 8 * 1024,
                "{mode} grew {growth} KiB on a {} {shape} file",
                label(size)
            );
        }
        let _ = std::fs::remove_file(&path);
    }
    if !quick() {
        let dir = out_dir();
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join("read_tool_rss.json");
        if let Err(e) = std::fs::write(&file, serde_json::Value::Array(rows).to_string()) {
            eprintln!("cannot write {}: {e}", file.display());
        } else {
            println!("wrote {}", file.display());
        }
    }
}
