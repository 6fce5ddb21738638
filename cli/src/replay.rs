//! `seam replay`: re-runs a saved trace step by step against a provider, showing what the model
//! expected and what the provider did, and stops where they part. A trace that runs steps at
//! the same time (a race, a linearizability batch, readers during writes) is run again on a
//! fresh subject until it departs, up to `--attempts` times (100 by default for such a trace):
//! a race does not recur on every run.

use crate::select::factory;
use seam_conformance::{MessageCheck, ReplayConfig, Timing, Trace, replay_with};
use std::path::Path;
use std::sync::Arc;

/// What `seam replay` was asked to do.
pub struct ReplayArgs<'a> {
    pub path: &'a Path,
    pub provider: &'a str,
    pub fault: Option<&'a str>,
    pub messages: MessageCheck,
    pub attempts: Option<u32>,
    pub timing: Timing,
}

/// Replays; returns whether the provider followed the model to the end.
pub fn run(args: &ReplayArgs<'_>) -> Result<bool, crate::Usage> {
    let _run = seam_conformance::case_dirs::hold();
    seam_remote_testkit::give_adapters_temp_dirs();
    let path = args.path;
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::Usage(format!("cannot read trace {}: {e}", path.display())))?;
    let trace =
        Trace::parse(&text).map_err(|e| crate::Usage(format!("{}: {e}", path.display())))?;
    // A trace found against another provider names that provider's configuration: this one
    // builds its own first configuration then.
    let factory = seam_cli::providers::Reference::around(
        factory(args.provider, args.fault).map_err(crate::Usage)?,
    );
    let attempts = args
        .attempts
        .unwrap_or_else(|| ReplayConfig::attempts_for(&trace));
    println!(
        "replaying {} ({} steps, found against {} by {}) on {}{}",
        path.display(),
        trace.steps.len(),
        trace.provider,
        trace.property,
        factory.name(),
        if attempts > 1 {
            format!(", up to {attempts} runs until it departs")
        } else {
            String::new()
        }
    );
    // A server someone else started may still be on its way up, as for `seam check`.
    if (args.provider.starts_with("unix:") || args.provider.starts_with("tcp:"))
        && let Ok(address) = args.provider.parse::<seam_remote::Address>()
        && let Err(e) = seam_remote_testkit::wait_listening(&address, args.timing.start_after)
    {
        println!("cannot replay on {}: {e}", factory.name());
        return Ok(false);
    }
    let config = ReplayConfig {
        messages: args.messages,
        timing: args.timing,
        attempts,
    };
    let agent: Arc<dyn seam_conformance::AgentFactory> =
        Arc::new(seam_cli::agent::ToolAgentFactory);
    let name = factory.name();
    let outcome = replay_with(factory.clone(), Some(agent), &trace, &config);
    // Interrupted meanwhile: the steps after it ran without their directories and backends,
    // and say nothing of the backend; the cleanup ends the process.
    seam_cli::interrupt::unless_interrupted(());
    // The factory goes first, as at the end of `seam check`: an `exec:` adapter serving the run
    // sees its input end and removes its cases itself. Only then is what a call given up on
    // kept alive on its thread stopped (killed before, the adapter left its cases in TMPDIR).
    drop(factory);
    seam_remote::children::stop_all();
    seam_conformance::case_dirs::remove_abandoned();
    let outcome = match outcome {
        Ok(o) => o,
        // The backend did not start (or the run could not): not a usage mistake, and not a
        // departure at a step either — said, exit 1.
        Err(f) => {
            println!("cannot replay on {name}: {f}");
            return Ok(false);
        }
    };
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
            if attempts > 1 {
                println!(
                    "the provider departs from the model at step {} (on run {} of at most {attempts})",
                    r.index, outcome.attempts
                );
            } else {
                println!("the provider departs from the model at step {}", r.index);
            }
            Ok(false)
        }
        None => {
            println!(
                "the provider follows the model through all {} steps{}",
                outcome.records.len(),
                if outcome.attempts > 1 {
                    format!(", in each of {} runs", outcome.attempts)
                } else {
                    String::new()
                }
            );
            Ok(true)
        }
    }
}
