//! Prints the performance tables from criterion's saved estimates: medians with their 95 %
//! interval, per-iteration min–max, and each provider operation as a ratio to its raw baseline
//! measured in the same run.
//!
//! `cargo bench -p seam-benches --bench table` after the other benches have run.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which raw benchmark each provider benchmark is compared with.
const PAIRS: &[(&str, &str)] = &[
    ("local/read_text", "raw/read_to_string"),
    ("local/stream_text", "raw/chunked_utf8"),
    ("local/stat", "raw/statx"),
    ("local/resolve", "raw/statx"),
    ("local/list_dir", "raw/read_dir+statx"),
    ("local/replace", "raw/replace"),
    ("local/guarded_replace", "raw/replace"),
    ("local/create", "raw/create"),
    ("local/edit_text", "raw/read+replace"),
    ("tool/read", "local/read_text"),
    ("tool/read+policy", "local/read_text"),
    ("local/resolve+stat+read_text", "local/read_text"),
    ("local/glob", "raw/rg --files"),
    ("local/grep", "raw/rg -n"),
];

struct Bench {
    median_ns: f64,
    low_ns: f64,
    high_ns: f64,
    min_ns: f64,
    max_ns: f64,
    throughput: Option<(String, f64)>,
}

fn read(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn collect(dir: &Path, out: &mut BTreeMap<String, BTreeMap<String, Bench>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().and_then(|n| n.to_str()) == Some("new") {
                let (Some(b), Some(est)) = (
                    read(&p.join("benchmark.json")),
                    read(&p.join("estimates.json")),
                ) else {
                    continue;
                };
                let sample = read(&p.join("sample.json"));
                let per_iter: Vec<f64> = sample
                    .as_ref()
                    .and_then(|s| {
                        Some((
                            s["iters"].as_array()?.clone(),
                            s["times"].as_array()?.clone(),
                        ))
                    })
                    .map(|(i, t)| {
                        i.iter()
                            .zip(t.iter())
                            .filter_map(|(i, t)| Some(t.as_f64()? / i.as_f64()?))
                            .collect()
                    })
                    .unwrap_or_default();
                let group = b["group_id"].as_str().unwrap_or("?").to_string();
                let id = format!(
                    "{}/{}",
                    b["function_id"].as_str().unwrap_or("?"),
                    b["value_str"].as_str().unwrap_or("")
                );
                let throughput = b["throughput"].as_object().and_then(|t| {
                    t.iter()
                        .next()
                        .and_then(|(k, v)| Some((k.clone(), v.as_f64()?)))
                });
                out.entry(group).or_default().insert(
                    id,
                    Bench {
                        median_ns: est["median"]["point_estimate"].as_f64().unwrap_or(f64::NAN),
                        low_ns: est["median"]["confidence_interval"]["lower_bound"]
                            .as_f64()
                            .unwrap_or(f64::NAN),
                        high_ns: est["median"]["confidence_interval"]["upper_bound"]
                            .as_f64()
                            .unwrap_or(f64::NAN),
                        min_ns: per_iter.iter().copied().fold(f64::INFINITY, f64::min),
                        max_ns: per_iter.iter().copied().fold(0.0, f64::max),
                        throughput,
                    },
                );
            } else {
                collect(&p, out);
            }
        }
    }
}

fn time(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.2} s", n / 1e9),
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.2} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

fn rate(b: &Bench) -> String {
    match &b.throughput {
        Some((kind, n)) if kind == "Bytes" => format!("{:.2} GB/s", n / b.median_ns),
        Some((_, n)) => format!("{:.0}/s", n / b.median_ns * 1e9),
        None => String::new(),
    }
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|p| p.join("criterion"))
        .unwrap_or_default();
    let mut groups = BTreeMap::new();
    collect(&dir, &mut groups);
    if groups.is_empty() {
        eprintln!(
            "no criterion results under {}: run `cargo bench -p seam-benches` first",
            dir.display()
        );
        return;
    }
    println!(
        "| group | benchmark | median | 95% CI of median | min–max per iteration | rate | ratio to raw |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (group, benches) in &groups {
        for (id, b) in benches {
            let ratio = PAIRS
                .iter()
                .find(|(l, _)| *l == id)
                .and_then(|(_, r)| benches.get(*r).map(|raw| (r, raw)))
                .map(|(r, raw)| format!("{:.2}× time of {r}", b.median_ns / raw.median_ns))
                .unwrap_or_default();
            println!(
                "| {group} | {id} | {} | {}–{} | {}–{} | {} | {ratio} |",
                time(b.median_ns),
                time(b.low_ns),
                time(b.high_ns),
                time(b.min_ns),
                time(b.max_ns),
                rate(b)
            );
        }
    }
    if let Some(rss) = read(&dir.join("rss.json")) {
        println!();
        println!("| read | file | peak RSS growth |");
        println!("| --- | --- | --- |");
        for row in rss.as_array().into_iter().flatten() {
            println!(
                "| {} | {} MiB | {} KiB |",
                row["mode"].as_str().unwrap_or("?"),
                row["bytes"].as_u64().unwrap_or(0) >> 20,
                row["growth_kib"].as_u64().unwrap_or(0)
            );
        }
    }
}
