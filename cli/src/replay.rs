//! `seam replay`: re-runs a saved trace step by step against a provider, showing what the model
//! expected and what the provider did, and stops where they part.

use crate::select::factory;
use seam_conformance::{MessageCheck, Trace, replay_with};
use std::path::Path;

/// Replays; returns whether the provider followed the model to the end.
pub fn run(
    path: &Path,
    provider: &str,
    fault: Option<&str>,
    messages: MessageCheck,
) -> Result<bool, crate::Usage> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::Usage(format!("cannot read trace {}: {e}", path.display())))?;
    let trace =
        Trace::parse(&text).map_err(|e| crate::Usage(format!("{}: {e}", path.display())))?;
    let factory = factory(provider, fault).map_err(crate::Usage)?;
    println!(
        "replaying {} ({} steps, found against {} by {}) on {}",
        path.display(),
        trace.steps.len(),
        trace.provider,
        trace.property,
        factory.name()
    );
    let agent = seam_cli::agent::ToolAgentFactory;
    let outcome = replay_with(factory.as_ref(), Some(&agent), &trace, messages)
        .map_err(|f| crate::Usage(format!("cannot replay: {f}")))?;
    for r in &outcome.records {
        let mark = if r.failure.is_some() { "✗" } else { "✓" };
        println!("{mark} {:>2}. {}", r.index, r.description);
        if r.failure.is_some() || !r.expected.is_empty() {
            println!("       model:    {}", r.expected);
            println!("       provider: {}", r.actual);
        }
        if let Some(f) = &r.failure {
            println!("       DEPARTS: {f}");
        }
    }
    match outcome.departure() {
        Some(r) => {
            println!("the provider departs from the model at step {}", r.index);
            Ok(false)
        }
        None => {
            println!(
                "the provider follows the model through all {} steps",
                outcome.records.len()
            );
            Ok(true)
        }
    }
}
