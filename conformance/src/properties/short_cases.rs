//! `short-cases`: every case of one or two operations over a bounded alphabet
//! ([`crate::generate::short_cases`]), run in a fixed order, whatever the seed.
//!
//! The random sequences find a departure that needs two steps to line up only at the seeds
//! that happen to draw them: a gate that a correct-looking backend passes at one seed and fails
//! at the next teaches its users to re-run until green. Here every shape, operation, guard and
//! interference of the alphabet is run by construction, before the random sequences, so such a
//! departure is found at every run, with the case itself (a few steps, nothing to shrink) as
//! its trace. Each case runs on a fresh subject and is checked exactly like a generated step:
//! outcome, message, version laws, keys, fresh stats, bytes and modes on disk, no litter.

use super::{Context, Property, Run, let_through_step};
use crate::concurrent;
use crate::config::SuiteProgress;
use crate::factory::{CaseDurability, CaseOptions};
use crate::failure::{Failure, FailureKind};
use crate::generate::{ShortConfig, short_cases};
use crate::sequences::{Progress, Subjects, run_case_supervised};
use crate::step::Step;
use crate::trace::Trace;
use std::sync::Arc;

/// `short-cases`.
pub struct ShortCases;

impl Property for ShortCases {
    fn name(&self) -> &'static str {
        "short-cases"
    }

    fn summary(&self) -> &'static str {
        "every case of one or two operations over a bounded alphabet (each operation, guard and interference on each world shape) agrees with the model, at every seed"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let short_config = ShortConfig {
            caps: cx.caps,
            fifos: cx.fifos,
            restore_mtime: cx.restore_mtime,
            diff_limit: cx.diff_limit,
        };
        let cases = short_cases(&short_config);
        let configurations = cx.factory.configurations();
        let configurations = if configurations.is_empty() {
            vec![crate::factory::DEFAULT_CONFIGURATION.to_string()]
        } else {
            configurations
        };
        let total = cases.len() as u64;
        let mut done = 0u64;
        let names = crate::generate::shape_names(&short_config);
        let aimed = cases.iter().filter(|c| !names.contains(&c.shape)).count();
        let options: Vec<CaseOptions> = configurations
            .iter()
            .map(|c| CaseOptions::new(cx.config.sequences.seed, CaseDurability::Relaxed, c.clone()))
            .collect();
        // Case by case through the factory's configurations (the local provider's two staging
        // modes), shifted by one at every shape: a case runs in one configuration, and the same
        // call under the same guard and interference meets every configuration on consecutive
        // shapes — at the cost of one run per case, not one per case and configuration.
        let (mut shape_no, mut pos, mut last_shape) = (0usize, 0usize, "");
        let mut jobs: Vec<(&CaseOptions, Arc<[Step]>, &str)> = Vec::with_capacity(cases.len());
        for case in &cases {
            if case.shape != last_shape {
                (shape_no, pos, last_shape) = (shape_no + 1, 0, case.shape);
            }
            let options = &options[(pos + shape_no) % options.len()];
            pos += 1;
            // A fencing backend's deployment may be read-only: these cases are about the
            // contract's mechanics (the fence has properties of its own).
            let steps: Arc<[Step]> = if cx.caps.sandbox_modes {
                case.steps.iter().cloned().map(let_through_step).collect()
            } else {
                case.steps.as_slice().into()
            };
            jobs.push((options, steps, case.shape));
        }
        let subjects = Subjects {
            factory: cx.inner.clone(),
            reference: None,
            agent: None,
        };
        let config = cx.harness_config();
        let (mut finished, mut steps_so_far) = (0u64, 0u64);
        let ran = concurrent::in_order(
            jobs.len(),
            &|i| {
                let (options, steps, _) = &jobs[i];
                run_case_supervised(&subjects, &cx.monitor, false, options, config, steps, None)
            },
            &mut |result| {
                finished += 1;
                if let Ok((_, stats)) = result {
                    steps_so_far += stats.steps;
                }
                if finished.is_multiple_of(64)
                    && let Some(tx) = &cx.progress
                {
                    let _ = tx.send(SuiteProgress::Sequences(Progress::Case {
                        done: finished,
                        total,
                        steps: steps_so_far,
                    }));
                }
            },
        );
        // In the cases' order, up to the first that failed: the verdict, its trace and the
        // counts are those of a run case by case.
        for (i, result) in ran.into_iter().enumerate() {
            let (options, steps, shape) = &jobs[i];
            let (records, stats) = result?;
            out.stats.merge(&stats);
            done += 1;
            if let Some(failure) = records.last().and_then(|r| r.failure.clone()) {
                let at = records.len() - 1;
                let description = records[at].description.clone();
                out.trace = Some(Trace::failing(
                    cx.factory.name(),
                    self.name(),
                    cx.config.sequences.seed,
                    Some(options.configuration.clone()),
                    steps[..=at].to_vec(),
                    &failure,
                ));
                return Err(Failure::new(
                    failure.kind,
                    format!(
                        "step {at} ({description}): {} — short case {done} of {total}, from {shape}",
                        failure.message
                    ),
                ));
            }
        }
        if done == 0 {
            return Err(Failure::new(
                FailureKind::Setup,
                "the alphabet gave no short case to run",
            ));
        }
        out.detail = Some(format!(
            "{done} cases ran by construction, the same at every seed ({} world shapes × one or two operations, each guard and interference, and {aimed} aimed cases; case by case through {} configuration(s)), {} steps",
            names.len(),
            configurations.len(),
            out.stats.steps
        ));
        Ok(())
    }
}
