//! The gate without its drawing: cases already drawn, each run through the harness against a
//! fresh subject — the model, the provider, the read-back and the laws of every step — a few
//! at a time on threads of their own, as the gate runs them, with nothing drawn and nothing
//! supervised (no call is timed or named, as the gate's watch does). What this costs beyond
//! the model alone ([`crate::floor`]) is checking the cases, which any way of drawing them
//! pays; what the gate costs beyond this is drawing them and watching every call.

use seam_conformance::{
    CASES_AT_ONCE, CaseDurability, CaseOptions, DEFAULT_CONFIGURATION, Factory, HarnessConfig,
    SequenceConfig, Step, run_steps,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs every case as the gate runs it (full durability every n-th case, the factory's
/// configurations in turn, no step's answers kept as text, [`CASES_AT_ONCE`] at a time);
/// returns the steps run, or why a case could not run or did not pass.
pub fn check(
    factory: &(dyn Factory + Sync),
    config: &SequenceConfig,
    cases: &[Vec<Step>],
) -> Result<u64, String> {
    let configurations = factory.configurations();
    let every = u64::from(config.full_durability_every.max(1));
    let harness = HarnessConfig {
        step_texts: false,
        messages: config.messages,
        ..HarnessConfig::default()
    };
    let next = AtomicUsize::new(0);
    let outcome: Mutex<Result<u64, String>> = Mutex::new(Ok(0));
    let lane = || -> Result<u64, String> {
        let rt = seam_conformance::runtime().map_err(|e| format!("no runtime: {e}"))?;
        let mut steps = 0;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(case) = cases.get(i) else {
                return Ok(steps);
            };
            let durability = if (i as u64).is_multiple_of(every) {
                CaseDurability::Full
            } else {
                CaseDurability::Relaxed
            };
            let configuration = configurations
                .get(i % configurations.len().max(1))
                .cloned()
                .unwrap_or_else(|| DEFAULT_CONFIGURATION.to_string());
            let options = CaseOptions::new(config.seed, durability, configuration);
            let (records, _) = run_steps(factory, &rt, &options, harness, case)
                .map_err(|f| format!("case {i} did not run: {}", f.message))?;
            if let Some(f) = records.iter().find_map(|r| r.failure.as_ref()) {
                return Err(format!("case {i} failed: {}", f.message));
            }
            steps += records.len() as u64;
        }
    };
    std::thread::scope(|scope| {
        for _ in 0..CASES_AT_ONCE {
            scope.spawn(|| {
                let got = lane();
                let mut total = outcome.lock().unwrap_or_else(|p| p.into_inner());
                *total = match (total.clone(), got) {
                    (Ok(a), Ok(b)) => Ok(a + b),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                };
            });
        }
    });
    outcome.into_inner().unwrap_or_else(|p| p.into_inner())
}
