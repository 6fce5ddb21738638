//! `atomic-visibility`: readers that run while a large file is written and edited see the old
//! content or the new one — never an empty file, a prefix, a mix of two versions, or nothing.
//!
//! Without it, a backend that publishes by truncating and rewriting in place passes every
//! sequential check (each step starts after the previous one finished). A read only checks
//! something if the backend really served it while a write was in flight, so the overlap is
//! made where the backend allows it and measured where it does not:
//!
//! * **Made** — for a backend that claims cancel points, each write and edit of a round carries
//!   [`Interfere::ReadersAtCheckpoints`]: the mutation is paused at each of its checkpoints while
//!   readers read through the same instance (and, where shared storage is claimed, through a
//!   second one). Before publication they must see the old file, at `committed` the new one.
//!   This is deterministic, and a replayable trace like any other step.
//! * **Measured** — for every backend, free-running rounds: a writer makes eight 1 MiB writes
//!   and edits while three readers read in a loop. A read counts as *during* a write only if the
//!   backend answered it within that write: sent after the write was sent, answered before the
//!   write was. A read that merely queued behind the write counts for nothing.
//!
//! A backend that answered no read while a write was in flight — reads were sent during writes
//! and every one came back after them — serves one call at a time: through it no reader can
//! see a write half done, and the property says so (*does not apply*, with the reason, the rule
//! `visibility.whole` with it) instead of claiming checks it did not make. Such a backend's
//! atomicity on its storage is for a crash check to judge, not for luck. If no read was even
//! sent during a write (a machine too busy to schedule the readers), nothing is known and the
//! property says it did not run.

use super::{Context, NotChecked, Property, Run, scenario};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Interfere, Op, Step, WriteGuard};
use seam::{EditRequest, FileSystem, FsTarget, ResolveOptions, Signal};
use seam_model::{WorldEffect, WorldOp};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// `atomic-visibility`.
pub struct AtomicVisibility;

/// Lines in each state of a free-running round's file (about 1 MiB).
const LINES: usize = 16 * 1024;
/// Lines in each state of a paused round's file (about 256 KiB: several stream chunks; the
/// writer waits at each checkpoint, so size buys no overlap there).
const PAUSED_LINES: usize = 4 * 1024;
/// Mutations per round.
const MUTATIONS: usize = 8;
/// Free-running rounds (each a fresh subject).
const ROUNDS: usize = 3;
/// More free-running rounds, when no read was even sent while a write was in flight.
const EXTRA_ROUNDS: usize = 3;
/// Concurrent readers in a free-running round.
const READERS: usize = 3;

impl Property for AtomicVisibility {
    fn name(&self) -> &'static str {
        "atomic-visibility"
    }

    fn summary(&self) -> &'static str {
        "readers running during large writes and edits see the old or the new content, never a partial, empty or mixed file"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        // Made: readers at every checkpoint of every mutation, on each instance.
        if cx.caps.cancel_points {
            let instances: &[u8] = if cx.caps.shared_storage {
                &[0, 1]
            } else {
                &[0]
            };
            for &instance in instances {
                scenario(cx, self.name(), paused_round(instance), &[], out)?;
            }
        }
        let served_paused = out.stats.paused_reads_served;
        let unserved_paused = out.stats.paused_reads_unserved;

        // Measured: free-running rounds.
        let mut tally = Tally::default();
        for r in 0..ROUNDS + EXTRA_ROUNDS {
            if r >= ROUNDS && tally.sent_during > 0 {
                break;
            }
            let t = free_round(cx, r)
                .map_err(|f| Failure::new(f.kind, format!("round {r}: {}", f.message)))?;
            tally.add(&t);
        }
        out.stats.checks(tally.served_during);
        if tally.served_during > 0 {
            out.stats.rule(Rule::VisibilityWhole);
        }
        out.detail = Some(format!(
            "{}{} of {} free-running reads answered within a write ({} sent during one)",
            if cx.caps.cancel_points {
                format!(
                    "{served_paused} reads answered while a mutation was paused at a checkpoint, {unserved_paused} only after it went on; "
                )
            } else {
                "no cancel points claimed, so no reads at checkpoints; ".to_string()
            },
            tally.served_during,
            tally.reads,
            tally.sent_during
        ));

        // Where the backend claims cancel points, the paused readers decide: a backend that
        // answers no read while a mutation waits at a checkpoint serves one call at a time,
        // whatever the threads' clocks made of the free-running reads.
        let overlapped = if cx.caps.cancel_points && served_paused + unserved_paused > 0 {
            served_paused > 0
        } else {
            tally.served_during > 0
        };
        if overlapped {
            return Ok(());
        }
        out.not_checked = Some(if unserved_paused + tally.sent_during > 0 {
            NotChecked::DoesNotApply {
                reason: format!(
                    "the backend answered no read while a write was in flight ({unserved_paused} reads sent while a mutation was paused at a checkpoint were answered only after it went on; {} of {} reads sent during free-running writes, all answered after the write) — it serves one call at a time, so no reader can see a write half done through it; whether its writes are atomic on its storage is for a crash check to judge",
                    tally.sent_during, tally.reads
                ),
                rules: vec![Rule::VisibilityWhole],
            }
        } else {
            NotChecked::NotRun(format!(
                "no read was even sent while a write was in flight in {} free-running rounds ({}), and the backend claims no cancel points: nothing was checked",
                ROUNDS + EXTRA_ROUNDS,
                crate::timing::Load::now()
                    .map_or_else(|| "load unknown".to_string(), |l| l.to_string())
            ))
        });
        Ok(())
    }
}

/// The `i`-th whole content a round's file takes: every line names the state, so a mix of two
/// states or a prefix of one is never another state.
fn state(i: usize, marker: &str, lines: usize) -> String {
    let mut s = String::with_capacity(lines * 64);
    for line in 0..lines {
        s.push_str(&format!(
            "state {i:02} line {line:06} ................................. ok\n"
        ));
    }
    s.push_str(marker);
    s.push('\n');
    s
}

/// A round's mutations: writes of new states and edits of the last line's marker, alternating.
fn plan(round: usize, lines: usize) -> (String, Vec<Mutation>) {
    let first = state(0, "marker-0", lines);
    let mut plan = Vec::new();
    for m in 1..=MUTATIONS {
        if m % 2 == 1 {
            plan.push(Mutation::Write(state(
                m + round,
                &format!("marker-{m}"),
                lines,
            )));
        } else {
            plan.push(Mutation::Edit(
                format!("marker-{}", m - 1),
                format!("marker-{m}"),
            ));
        }
    }
    (first, plan)
}

/// The steps of a paused round through `instance`: the file, then every mutation with readers
/// at its checkpoints. The harness checks everything else about each step as usual.
fn paused_round(instance: u8) -> Vec<Step> {
    let (first, plan) = plan(usize::from(instance), PAUSED_LINES);
    let mut steps = vec![Step::plain(Op::World(WorldOp::Write {
        path: "big".into(),
        bytes: first.into_bytes(),
        mode: 0o644,
    }))];
    for m in plan {
        let op = match m {
            Mutation::Write(content) => Op::Write {
                path: "big".into(),
                content,
                guard: WriteGuard::None,
            },
            Mutation::Edit(old, new) => Op::Edit {
                path: "big".into(),
                old,
                new,
                replace_all: false,
                guard: None,
            },
        };
        let mut step = Step::plain(op);
        step.interfere = Interfere::ReadersAtCheckpoints(instance);
        steps.push(step);
    }
    steps
}

fn setup(e: impl std::fmt::Display) -> Failure {
    fail(FailureKind::Setup, e.to_string())
}

/// What free-running reads were, by when they were sent and answered.
#[derive(Default)]
struct Tally {
    /// Reads made.
    reads: u64,
    /// Reads sent while a write was in flight.
    sent_during: u64,
    /// Reads sent after a write was sent and answered before it was: the backend served them
    /// while it served the write.
    served_during: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.reads += other.reads;
        self.sent_during += other.sent_during;
        self.served_during += other.served_during;
    }
}

/// When a call was sent and when its answer came.
type Span = (Instant, Instant);

/// One free-running round on a fresh subject: every read is checked, and counted by when it was
/// sent and answered against the writes' spans.
fn free_round(cx: &Context, r: usize) -> Result<Tally, Failure> {
    let options = cx.options();
    let subject = cx.factory.make(&options).map_err(setup)?;
    let root = subject.world.root_display();
    let fs: Arc<dyn FileSystem> = subject.fs.clone();
    // Readers alternate between two instances where the storage is shared.
    let second: Arc<dyn FileSystem> = if cx.caps.shared_storage {
        match cx.factory.reopen(&options, &subject) {
            Some(Ok(fs)) => fs,
            Some(Err(e)) => return Err(setup(format!("cannot open a second instance: {e}"))),
            None => {
                return Err(fail(
                    FailureKind::Claim,
                    "the backend claims shared_storage but its factory gives no second instance (Factory::reopen)",
                ));
            }
        }
    } else {
        fs.clone()
    };
    let (first, plan) = plan(r, LINES);
    subject
        .world
        .apply(&WorldEffect::CreateFile {
            path: "big".into(),
            bytes: first.clone().into_bytes(),
            mode: 0o644,
        })
        .map_err(setup)?;
    let rt = cx.runtime()?;
    let target = rt
        .block_on(fs.resolve("big", ResolveOptions { cwd: Some(&root) }, &Signal::none()))
        .map_err(|e| fail(FailureKind::Outcome, e.message()))?;
    let through = super::let_through(fs.as_ref(), &root);

    // Every state the writer will produce, known before it starts.
    let mut states: Vec<String> = vec![first];
    for m in &plan {
        let next = match m {
            Mutation::Write(content) => content.clone(),
            Mutation::Edit(old, new) => states
                .last()
                .map(|s| s.replacen(old.as_str(), new, 1))
                .unwrap_or_default(),
        };
        states.push(next);
    }
    let valid: Arc<HashSet<String>> = Arc::new(states.into_iter().collect());
    let done = Arc::new(AtomicBool::new(false));
    let bytes = cx.caps.read_bytes;

    let result: Result<(Vec<Span>, Vec<Vec<Span>>), Failure> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|k| {
                let fs = if k % 2 == 1 {
                    second.clone()
                } else {
                    fs.clone()
                };
                let (target, valid, done) = (target.clone(), valid.clone(), done.clone());
                s.spawn(move || -> Result<Vec<Span>, Failure> {
                    let rt = crate::sequences::runtime().map_err(setup)?;
                    let mut spans = Vec::new();
                    while !done.load(Ordering::Acquire) {
                        let how = match (k + spans.len()) % 3 {
                            2 if bytes => How::Bytes,
                            1 | 2 => How::Stream,
                            _ => How::Text,
                        };
                        let sent = Instant::now();
                        let got = rt.block_on(read(fs.as_ref(), &target, how))?;
                        spans.push((sent, Instant::now()));
                        if !valid.contains(&got) {
                            return Err(fail(
                                FailureKind::TornRead,
                                format!(
                                    "a {how:?} read during the writes returned {} bytes that are no state the file ever had ({})",
                                    got.len(),
                                    describe(&got)
                                ),
                            ));
                        }
                    }
                    Ok(spans)
                })
            })
            .collect();
        let mut writes = Vec::new();
        let writer = (|| -> Result<(), Failure> {
            for m in &plan {
                let sent = Instant::now();
                let result = match m {
                    Mutation::Write(content) => rt
                        .block_on(fs.write_text(
                            &target,
                            content,
                            None,
                            through.as_ref(),
                            &Signal::none(),
                        ))
                        .map(|_| ()),
                    Mutation::Edit(old, new) => rt
                        .block_on(fs.edit_text(
                            &target,
                            &EditRequest {
                                old_string: old.clone(),
                                new_string: new.clone(),
                                replace_all: false,
                            },
                            None,
                            through.as_ref(),
                            &Signal::none(),
                        ))
                        .map(|_| ()),
                };
                writes.push((sent, Instant::now()));
                result.map_err(|e| {
                    fail(
                        FailureKind::Outcome,
                        format!("a {} of the big file failed: {}", m.verb(), e.message()),
                    )
                })?;
            }
            Ok(())
        })();
        done.store(true, Ordering::Release);
        let mut first_failure = writer.err();
        let mut reads = Vec::new();
        for h in readers {
            match h.join() {
                Ok(Ok(spans)) => reads.push(spans),
                Ok(Err(f)) => {
                    if first_failure.is_none() || f.kind == FailureKind::TornRead {
                        first_failure = Some(f);
                    }
                }
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        match first_failure {
            Some(f) => Err(f),
            None => Ok((writes, reads)),
        }
    });
    let (writes, reads) = result?;
    Ok(tally(&writes, reads.iter().flatten()))
}

/// Counts reads by when they were sent and answered against the writes' spans. A read served
/// within a write must clear the write's ends by a margin (a tenth of the write, at least 2 ms):
/// the times are taken by the threads around the calls, so a read queued just ahead of the
/// write, or answered just after it, may carry times just inside it.
fn tally<'a>(writes: &[Span], reads: impl Iterator<Item = &'a Span>) -> Tally {
    let mut t = Tally::default();
    for &(sent, answered) in reads {
        t.reads += 1;
        if writes.iter().any(|&(ws, we)| sent > ws && sent < we) {
            t.sent_during += 1;
        }
        let within = |&(ws, we): &Span| {
            let margin = ((we - ws) / 10).max(std::time::Duration::from_millis(2));
            sent > ws + margin && answered + margin < we
        };
        if writes.iter().any(within) {
            t.served_during += 1;
        }
    }
    t
}

enum Mutation {
    Write(String),
    Edit(String, String),
}

impl Mutation {
    fn verb(&self) -> &'static str {
        match self {
            Mutation::Write(_) => "write",
            Mutation::Edit(..) => "edit",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum How {
    Text,
    Stream,
    Bytes,
}

async fn read(fs: &dyn FileSystem, target: &FsTarget, how: How) -> Result<String, Failure> {
    let torn = |e: seam::FsError| {
        fail(
            FailureKind::TornRead,
            format!(
                "a {how:?} read during the writes failed: {} {} (a reader must see the old or the new file)",
                e.code(),
                e.message()
            ),
        )
    };
    match how {
        How::Text => fs.read_text(target, &Signal::none()).await.map_err(torn),
        How::Bytes => {
            let b = fs
                .read_bytes(target, 8 * 1024 * 1024, &Signal::none())
                .await
                .map_err(torn)?;
            Ok(String::from_utf8_lossy(&b).into_owned())
        }
        How::Stream => {
            let mut stream = fs
                .stream_text(target, &Signal::none())
                .await
                .map_err(torn)?;
            let mut text = String::new();
            while let Some(chunk) =
                std::future::poll_fn(|cx| futures_core::Stream::poll_next(stream.as_mut(), cx))
                    .await
            {
                text.push_str(&chunk.map_err(torn)?);
            }
            Ok(text)
        }
    }
}

/// What a torn content looks like, briefly: its first and last state markers.
fn describe(got: &str) -> String {
    let first = got.lines().next().unwrap_or("");
    let last = got.lines().last().unwrap_or("");
    if got.is_empty() {
        "empty".into()
    } else {
        format!("starts {first:?}, ends {last:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Only a read the backend answered within a write counts; one that queued behind it (sent
    /// during, answered after) or was answered before it was sent does not.
    #[test]
    fn a_read_counts_as_during_a_write_only_if_answered_within_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let writes = [(at(100), at(200))];
        let reads = [
            (at(120), at(180)), // served within
            (at(150), at(250)), // queued behind
            (at(50), at(150)),  // sent before, answered within: the write may not have started
            (at(210), at(220)), // after
            (at(105), at(180)), // sent just inside: may have been queued ahead of the write
            (at(120), at(195)), // answered just inside: may have come just after the write's
        ];
        let t = tally(&writes, reads.iter());
        assert_eq!((t.reads, t.sent_during, t.served_during), (6, 4, 1));
    }
}
