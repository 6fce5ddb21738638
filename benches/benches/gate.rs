//! The gate's own speed: steps per second of the generated sequences over the in-memory
//! provider (a backend whose calls cost microseconds, so what is measured is the gate), beside
//! the same steps replayed through the reference model alone (`seam_benches::floor`) in the
//! same run. The ratio of the medians is the gate's overhead over its floor. Two parts of the
//! gate are measured on their own: drawing the cases, and checking them once drawn
//! (`seam_benches::checking`: four at a time as the gate runs them, nothing drawn), which no
//! way of drawing avoids.
//!
//! One seed is one sample: what a run costs depends on what its seed draws (a case with a few
//! half-megabyte texts costs as much as a dozen without), and the gate's cost over the model's
//! differs from one draw to the next. So each iteration runs the gate at [`SEEDS`], one run
//! per seed, and the floor replays the cases of all of them.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use seam_benches::{checking, floor, quick};
use seam_conformance::{SequenceConfig, Step, generated_cases, run_sequences};
use seam_memory_testkit::MemoryFactory;
use std::sync::Arc;
use std::time::Duration;

/// The `seam` binary's allocator, so that what is measured is the gate as it ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The seeds every iteration runs.
const SEEDS: [u64; 4] = [5, 6, 7, 8];

fn config(seed: u64) -> SequenceConfig {
    SequenceConfig {
        cases: if quick() { 4 } else { 64 },
        seed,
        ..SequenceConfig::default()
    }
}

/// The gate at every seed; the steps it ran.
fn gate_runs() -> Result<u64, String> {
    let mut steps = 0;
    for seed in SEEDS {
        match run_sequences(Arc::new(MemoryFactory), &config(seed), &mut |_| {}) {
            Ok(o) if o.failure.is_none() => steps += o.stats.steps,
            Ok(o) => return Err(format!("seed {seed}: {:?}", o.failure.map(|f| f.failure))),
            Err(e) => return Err(format!("seed {seed}: the gate did not run: {e}")),
        }
    }
    Ok(steps)
}

fn gate(c: &mut Criterion) {
    let ran = gate_runs().unwrap_or_else(|e| panic!("the gate failed memory: {e}"));
    let drawn: Vec<(SequenceConfig, Vec<Vec<Step>>)> = SEEDS
        .iter()
        .map(|&seed| {
            let config = config(seed);
            let cases = generated_cases(&MemoryFactory, &config).expect("the cases");
            (config, cases)
        })
        .collect();
    let all: Vec<Vec<Step>> = drawn.iter().flat_map(|(_, c)| c.iter().cloned()).collect();
    let steps: u64 = all.iter().map(|c| c.len() as u64).sum();
    // The floor replays exactly the steps the gate ran, and so does the checking alone.
    assert_eq!(steps, ran, "the same cases, step for step");
    let check_all = || -> Result<u64, String> {
        drawn
            .iter()
            .map(|(config, cases)| checking::check(&MemoryFactory, config, cases))
            .sum()
    };
    assert_eq!(
        check_all(),
        Ok(steps),
        "the cases checked alone, step for step"
    );
    let mut g = c.benchmark_group("gate/sequences");
    g.throughput(Throughput::Elements(steps));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(if quick() { 1 } else { 20 }));
    let label = format!("{}seeds-{}cases", SEEDS.len(), config(0).cases);
    g.bench_function(BenchmarkId::new("memory", &label), |b| b.iter(gate_runs));
    g.bench_function(BenchmarkId::new("model-alone", &label), |b| {
        b.iter(|| floor::replay(&all))
    });
    g.bench_function(BenchmarkId::new("generation-alone", &label), |b| {
        b.iter(|| {
            SEEDS
                .iter()
                .map(|&seed| generated_cases(&MemoryFactory, &config(seed)).map(|c| c.len()))
                .sum::<Result<usize, _>>()
        })
    });
    g.bench_function(BenchmarkId::new("checking-alone", &label), |b| {
        b.iter(check_all)
    });
    g.finish();
}

criterion_group!(benches, gate);
criterion_main!(benches);
