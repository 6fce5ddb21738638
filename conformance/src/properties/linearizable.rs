//! `linearizable`: operations that really run at the same time must still be explained by *some*
//! sequential order of the model.
//!
//! Sequential sequences cannot see a lost update: an edit that read the file before another
//! writer published and then wrote its stale copy back, a guard checked in one critical section
//! and published in another, a `before` computed from a file that was replaced meanwhile. Here a
//! batch of two to four writes, edits, reads and stats (and guarded removes and renames, for a
//! backend that claims the namespace operations) on one or two files runs as one group of
//! steps ([`crate::step::Op::Together`]) on threads (or as tasks of a multi-threaded runtime),
//! through one provider instance or — for a backend that claims
//! [`seam::Capability::SharedStorage`] — alternately through two instances over one storage. The
//! harness then plays every order of the batch on the model that respects real time: the batch
//! passes when one order gives every observed outcome (code and message, or the returned text),
//! a version mapping that stays one-to-one, and the bytes now in the storage.
//!
//! Every instance reads both files before the batch (so one that caches is warm) and, across
//! instances, reads and stats them again after it: a second instance serving a stale copy of
//! what the first changed shows there. A failing batch is shrunk by dropping operations while
//! some re-run still fails, and is saved as a trace `seam replay` runs again.

use super::{Context, Property, Run, let_through_step};
use crate::failure::{Failure, FailureKind};
use crate::rules::Rule;
use crate::sequences::{run_steps, suite_runtime};
use crate::step::{Lane, Op, Spawn, Step, VersionRef, WriteGuard};
use seam_model::WorldOp;

/// `linearizable`.
pub struct Linearizable;

/// Batches per run through one instance (and as many again across two, when claimed).
pub const BATCHES: u64 = 64;
/// How often a candidate batch is re-run while shrinking (a race may not recur every time).
const SHRINK_TRIES: usize = 12;
/// The files a batch works on (the first one exists when the batch starts).
const FILES: [&str; 2] = ["a", "b"];
/// The first file's starting content: two words edits can aim at.
const BASE: &str = "alpha\nbeta\n";

impl Property for Linearizable {
    fn name(&self) -> &'static str {
        "linearizable"
    }

    fn summary(&self) -> &'static str {
        "batches of 2-4 writes, edits, reads and stats (and removes and renames, where claimed) run at the same time are explained by some sequential order of the model"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let shared = cx.caps.shared_storage;
        let mut rng = SplitMix(cx.config.sequences.seed ^ 0x11ea_71ab);
        let modes: &[bool] = if shared { &[false, true] } else { &[false] };
        for &across in modes {
            for n in 0..BATCHES {
                let steps = prepare(cx, batch(&mut rng, n, across, cx.caps.namespace));
                let found = match run(cx, &steps, out) {
                    Ok(()) => {
                        out.stats.rule(if across {
                            Rule::LinearizableAcrossInstances
                        } else {
                            Rule::Linearizable
                        });
                        continue;
                    }
                    Err(found) => found,
                };
                let where_ = if across {
                    "across two instances"
                } else {
                    "one instance"
                };
                let (steps, failure) = if found.1.kind == FailureKind::Linearizability {
                    shrink(cx, found)
                } else {
                    found
                };
                let failure = Failure::new(
                    failure.kind,
                    format!(
                        "batch {n} ({where_}), seed {}: {}",
                        cx.config.sequences.seed, failure.message
                    ),
                );
                out.trace = Some(cx.trace(self.name(), steps, &failure));
                return Err(failure);
            }
        }
        Ok(())
    }
}

/// The batch generator's randomness: SplitMix64, so a seed names the same batches on every
/// platform and version of the suite's dependencies.
struct SplitMix(u64);

impl SplitMix {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 32) as u32
    }
}

/// Batch `n`'s steps: the first file, both files' versions seen, every instance reading both,
/// the batch as one group, and — across instances — the second instance reading and stating
/// both again.
fn batch(rng: &mut SplitMix, n: u64, across: bool, namespace: bool) -> Vec<Step> {
    let len = 2 + (rng.next_u32() % 3) as usize;
    let instances: u8 = if across { 2 } else { 1 };
    let lanes: Vec<Lane> = (0..len)
        .map(|i| {
            let file = FILES[usize::from(rng.next_u32().is_multiple_of(4))].to_string();
            // A backend with the namespace operations also removes and renames in its batches.
            let kinds = if namespace { 12 } else { 10 };
            let op = match rng.next_u32() % kinds {
                0..=3 => Op::Write {
                    path: file,
                    content: format!("w{i}\nalpha\n").into(),
                    guard: match rng.next_u32() % 3 {
                        0 => WriteGuard::None,
                        1 => WriteGuard::CreateIfAbsent,
                        // The version the file had when the batch started (a version never
                        // issued where it had none).
                        _ => WriteGuard::ReplaceIfVersion(VersionRef::Target),
                    },
                },
                4..=7 => {
                    let old = if rng.next_u32().is_multiple_of(2) {
                        "alpha"
                    } else {
                        "beta"
                    };
                    Op::Edit {
                        path: file,
                        old: old.into(),
                        new: format!("e{i}"),
                        replace_all: false,
                        guard: rng
                            .next_u32()
                            .is_multiple_of(2)
                            .then_some(VersionRef::Target),
                    }
                }
                8 => Op::ReadText { path: file },
                9 => Op::Stat { path: file },
                10 => Op::Remove {
                    path: file,
                    guard: rng
                        .next_u32()
                        .is_multiple_of(2)
                        .then_some(VersionRef::Target),
                    directory: false,
                },
                _ => {
                    let other = FILES.iter().find(|f| **f != file).copied().unwrap_or("b");
                    Op::Rename {
                        from: file,
                        to: other.to_string(),
                        guard: rng
                            .next_u32()
                            .is_multiple_of(2)
                            .then_some(VersionRef::Target),
                        // Replace only the version the other file had when the batch started.
                        replace: rng
                            .next_u32()
                            .is_multiple_of(2)
                            .then_some(VersionRef::Target),
                    }
                }
            };
            let mut lane = Lane::of(vec![Step::plain(op)]);
            lane.instance = (i as u8) % instances;
            lane
        })
        .collect();
    let mut steps = vec![Step::plain(Op::World(WorldOp::Write {
        path: FILES[0].into(),
        bytes: BASE.as_bytes().to_vec().into(),
        mode: 0o644,
    }))];
    for f in FILES {
        steps.push(Step::plain(Op::Stat { path: f.into() }));
    }
    // Every instance reads every file first, so one that caches what it read is warm when the
    // batch changes the files through another.
    for inst in 0..instances {
        for f in FILES {
            steps.push(Step::plain(Op::ReadText { path: f.into() }).on(inst));
        }
    }
    steps.push(Step::plain(Op::Together {
        lanes,
        on: if n % 2 == 1 {
            Spawn::Tasks
        } else {
            Spawn::Threads
        },
    }));
    // Settled: every other instance now reads and stats what the storage holds (one that
    // serves a stale copy shows here).
    for inst in 1..instances {
        for f in FILES {
            steps.push(Step::plain(Op::ReadText { path: f.into() }).on(inst));
            steps.push(Step::plain(Op::Stat { path: f.into() }).on(inst));
        }
    }
    steps
}

/// The steps as this backend runs them (mutations let through a fence).
fn prepare(cx: &Context, steps: Vec<Step>) -> Vec<Step> {
    if cx.caps.sandbox_modes {
        steps.into_iter().map(let_through_step).collect()
    } else {
        steps
    }
}

/// Runs a batch's steps; the failing prefix and its failure when a step departs.
fn run(cx: &Context, steps: &[Step], out: &mut Run) -> Result<(), (Vec<Step>, Failure)> {
    let rt = suite_runtime().map_err(|f| (Vec::new(), f))?;
    let (records, stats) = run_steps(
        cx.factory.as_ref(),
        &rt,
        &cx.options(),
        cx.harness_config(),
        steps,
    )
    .map_err(|f| (Vec::new(), f))?;
    out.stats.merge(&stats);
    match records.iter().find(|r| r.failure.is_some()) {
        None => Ok(()),
        Some(r) => {
            let f = r.failure.clone().unwrap_or_else(|| {
                Failure::new(FailureKind::Setup, "a failing step without its failure")
            });
            Err((
                steps[..=r.index].to_vec(),
                Failure::new(
                    f.kind,
                    format!("step {} ({}): {}", r.index, r.description, f.message),
                ),
            ))
        }
    }
}

/// Drops operations from the failing batch's group while some re-run still fails for a
/// linearizability violation.
fn shrink(cx: &Context, found: (Vec<Step>, Failure)) -> (Vec<Step>, Failure) {
    let (mut best, mut failure) = found;
    let Some(at) = best
        .iter()
        .position(|s| matches!(s.op, Op::Together { .. }))
    else {
        return (best, failure);
    };
    let lanes_of = |steps: &[Step]| match &steps[at].op {
        Op::Together { lanes, .. } => lanes.len(),
        _ => 0,
    };
    let original = lanes_of(&best);
    'outer: while lanes_of(&best) > 2 {
        for skip in 0..lanes_of(&best) {
            let mut smaller = best.clone();
            if let Op::Together { lanes, .. } = &mut smaller[at].op {
                lanes.remove(skip);
            }
            for _ in 0..SHRINK_TRIES {
                let mut scratch = Run::default();
                if let Err((prefix, f)) = run(cx, &smaller, &mut scratch)
                    && f.kind == FailureKind::Linearizability
                {
                    best = prefix;
                    failure = f;
                    continue 'outer;
                }
            }
        }
        break;
    }
    let now = lanes_of(&best);
    if now < original {
        failure = Failure::new(
            failure.kind,
            format!(
                "{} (shrunk from {original} to {now} operations)",
                failure.message
            ),
        );
    }
    (best, failure)
}
