//! The suite itself: generated steps per second against each provider (relaxed durability, as
//! the generated runs use; one case in eight runs at full durability).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use seam_benches::quick;
use seam_conformance::{SequenceConfig, run_sequences};
use seam_local_testkit::LocalFactory as Local;
use std::sync::Arc;
use std::time::Duration;

fn suite(c: &mut Criterion) {
    let config = SequenceConfig {
        cases: if quick() { 4 } else { 32 },
        seed: 1,
        ..SequenceConfig::default()
    };
    let steps = match run_sequences(Arc::new(Local), &config, &mut |_| {}) {
        Ok(o) if o.failure.is_none() => o.stats.steps,
        Ok(o) => panic!(
            "the suite failed on local: {:?}",
            o.failure.map(|f| f.failure)
        ),
        Err(e) => panic!("the suite did not run: {e}"),
    };
    let mut g = c.benchmark_group("suite/steps");
    g.throughput(Throughput::Elements(steps));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(if quick() { 1 } else { 10 }));
    g.bench_function(
        BenchmarkId::new("local", format!("{}cases", config.cases)),
        |b| b.iter(|| run_sequences(Arc::new(Local), &config, &mut |_| {}).map(|o| o.stats.steps)),
    );
    g.finish();
}

criterion_group!(benches, suite);
criterion_main!(benches);
