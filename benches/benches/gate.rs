//! The gate's own speed: steps per second of the generated sequences over the in-memory
//! provider (a backend whose calls cost microseconds, so what is measured is the gate), beside
//! the same steps replayed through the reference model alone (`seam_benches::floor`) in the
//! same run. The ratio of the medians is the gate's overhead over its floor. Two parts of the
//! gate are measured on their own: drawing the cases, and checking them once drawn
//! (`seam_benches::checking`: four at a time as the gate runs them, nothing drawn), which no
//! way of drawing avoids.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use seam_benches::{checking, floor, quick};
use seam_conformance::{SequenceConfig, generated_cases, run_sequences};
use seam_memory_testkit::MemoryFactory;
use std::sync::Arc;
use std::time::Duration;

/// The `seam` binary's allocator, so that what is measured is the gate as it ships.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn gate(c: &mut Criterion) {
    let config = SequenceConfig {
        cases: if quick() { 4 } else { 64 },
        seed: 5,
        ..SequenceConfig::default()
    };
    let outcome = match run_sequences(Arc::new(MemoryFactory), &config, &mut |_| {}) {
        Ok(o) if o.failure.is_none() => o,
        Ok(o) => panic!("the gate failed memory: {:?}", o.failure.map(|f| f.failure)),
        Err(e) => panic!("the gate did not run: {e}"),
    };
    let cases = generated_cases(&MemoryFactory, &config).expect("the cases");
    let steps: u64 = cases.iter().map(|c| c.len() as u64).sum();
    // The floor replays exactly the steps the gate ran, and so does the checking alone.
    assert_eq!(steps, outcome.stats.steps, "the same cases, step for step");
    assert_eq!(
        checking::check(&MemoryFactory, &config, &cases),
        Ok(steps),
        "the cases checked alone, step for step"
    );
    let mut g = c.benchmark_group("gate/sequences");
    g.throughput(Throughput::Elements(steps));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(if quick() { 1 } else { 15 }));
    let label = format!("{}cases", config.cases);
    g.bench_function(BenchmarkId::new("memory", &label), |b| {
        b.iter(|| {
            run_sequences(Arc::new(MemoryFactory), &config, &mut |_| {}).map(|o| o.stats.steps)
        })
    });
    g.bench_function(BenchmarkId::new("model-alone", &label), |b| {
        b.iter(|| floor::replay(&cases))
    });
    g.bench_function(BenchmarkId::new("generation-alone", &label), |b| {
        b.iter(|| generated_cases(&MemoryFactory, &config).map(|c| c.len()))
    });
    g.bench_function(BenchmarkId::new("checking-alone", &label), |b| {
        b.iter(|| checking::check(&MemoryFactory, &config, &cases))
    });
    g.finish();
}

criterion_group!(benches, gate);
criterion_main!(benches);
