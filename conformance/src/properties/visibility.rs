//! `atomic-visibility`: readers that run while a large file is written and edited see the old
//! content or the new one — never an empty file, a prefix, a mix of two versions, or nothing.
//!
//! Without it, a backend that publishes by truncating and rewriting in place passes every
//! sequential check (each step starts after the previous one finished). A read only checks
//! something if the backend really served it while a write was in flight, so the overlap is
//! made where the backend allows it and measured where it does not:
//!
//! * **Made** — for a backend that claims cancel points, each of two writes and two edits carries
//!   [`Interfere::ReadersAtCheckpoints`]: the mutation is paused at each of its checkpoints while
//!   readers read through the same instance (and, where shared storage is claimed, through a
//!   second one). Before publication they must see the old file, at `committed` the new one.
//!   This is deterministic, and a replayable trace like any other step.
//! * **Measured** — for every backend, free-running rounds, each one group of steps
//!   ([`crate::step::Op::Together`]): a writer makes eight 1 MiB writes and edits while three
//!   readers read in a loop, and a fourth lists the file's directory in a loop. Every read must
//!   be a state the file had, no older than one the same reader saw, within what real time
//!   allows; every listing the directory's entries in such a state and nothing else beside them
//!   but the staging the backend reported — a staging file shown only *between* checkpoints,
//!   inside a publication, is litter no paused reader can see. A read counts as *during* a write only if the
//!   backend answered it within that write: sent after the write was sent, answered before the
//!   write was. A read that merely queued behind the write counts for nothing. A failing round
//!   is a trace, and `seam replay` runs it again.
//!
//! A backend that answered no read while a write was in flight — reads were sent during writes
//! and every one came back after them — serves one call at a time: through it no reader can
//! see a write half done, and the property says so (*does not apply*, with the reason, the rule
//! `visibility.whole` with it) instead of claiming checks it did not make. Such a backend's
//! atomicity on its storage is for a crash check to judge, not for luck. If no read was even
//! sent during a write (a machine too busy to schedule the readers), nothing is known and the
//! property says it did not run.

use super::{Context, NotChecked, Property, Run, scenario};
use crate::failure::Failure;
use crate::rules::Rule;
use crate::step::{Interfere, Lane, Op, ROOT_TOKEN, Spawn, Step, WriteGuard};
use seam_model::WorldOp;

/// `atomic-visibility`.
pub struct AtomicVisibility;

/// Lines in each state of a free-running round's file (about 1 MiB).
const LINES: usize = 16 * 1024;
/// Lines in each state of a paused round's file (about 256 KiB: several stream chunks; the
/// writer waits at each checkpoint, so size buys no overlap there).
const PAUSED_LINES: usize = 4 * 1024;
/// Mutations per free-running round.
const MUTATIONS: usize = 8;
/// Mutations per paused round (two writes and two edits: each shows its three checkpoints, and
/// the readers are deterministic, so more would only repeat them).
const PAUSED_MUTATIONS: usize = 4;
/// Free-running rounds (each a fresh subject).
const ROUNDS: usize = 3;
/// More free-running rounds, when no read was even sent while a write was in flight.
const EXTRA_ROUNDS: usize = 3;

/// What free-running reads were, by when they were sent and answered (counted by the harness).
struct Tally {
    /// Reads made.
    reads: u64,
    /// Reads sent while a write was in flight.
    sent_during: u64,
    /// Reads sent after a write was sent and answered before it was.
    served_during: u64,
}

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

        // Measured: free-running rounds, each a group of steps; the harness counts the reads
        // the backend answered within a write.
        let before = (
            out.stats.group_reads,
            out.stats.group_reads_sent_during,
            out.stats.group_reads_served_during,
        );
        for r in 0..ROUNDS + EXTRA_ROUNDS {
            if r >= ROUNDS && out.stats.group_reads_sent_during > before.1 {
                break;
            }
            scenario(cx, self.name(), free_round(cx, r), &[], out)
                .map_err(|f| Failure::new(f.kind, format!("round {r}: {}", f.message)))?;
        }
        let tally = Tally {
            reads: out.stats.group_reads - before.0,
            sent_during: out.stats.group_reads_sent_during - before.1,
            served_during: out.stats.group_reads_served_during - before.2,
        };
        out.stats.checks(tally.served_during);
        if tally.served_during > 0 {
            out.stats.rule(Rule::VisibilityWhole);
        }
        out.detail = Some(format!(
            "{}{} of {} free-running reads answered within a write by the threads' clocks ({} sent during one)",
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
        // The free-running tally is by the threads' clocks: on a busy machine a writer may see
        // its own answer late, and a read the backend served after the write then looks served
        // within it. Where the paused readers decided, such reads are named for what they are.
        let free = if tally.served_during == 0 {
            format!(
                "{} of {} reads sent during free-running writes, all answered after the write",
                tally.sent_during, tally.reads
            )
        } else {
            format!(
                "{} of {} reads sent during free-running writes; {} of them looked answered within one by the threads' clocks, which a busy machine skews — the paused readers, which need no clock, decide",
                tally.sent_during, tally.reads, tally.served_during
            )
        };
        out.not_checked = Some(if unserved_paused + tally.sent_during > 0 {
            NotChecked::DoesNotApply {
                reason: format!(
                    "the backend answered no read while a write was in flight ({unserved_paused} reads sent while a mutation was paused at a checkpoint were answered only after it went on; {free}) — it serves one call at a time, so no reader can see a write half done through it; whether its writes are atomic on its storage is for a crash check to judge"
                ),
                rules: vec![Rule::VisibilityWhole, Rule::VisibilityListing],
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

/// A round's `mutations`: writes of new states and edits of the last line's marker, alternating.
fn plan(round: usize, lines: usize, mutations: usize) -> (String, Vec<Mutation>) {
    let first = state(0, "marker-0", lines);
    let mut plan = Vec::new();
    for m in 1..=mutations {
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
    let (first, plan) = plan(usize::from(instance), PAUSED_LINES, PAUSED_MUTATIONS);
    let mut steps = vec![Step::plain(Op::World(WorldOp::Write {
        path: "big".into(),
        bytes: first.into_bytes().into(),
        mode: 0o644,
    }))];
    for m in plan {
        let mut step = Step::plain(m.op());
        step.interfere = Interfere::ReadersAtCheckpoints(instance);
        steps.push(step);
    }
    steps
}

/// The steps of a free-running round: the file, then one group — a writer making every
/// mutation in turn, three readers reading again and again until it is done (`read_text`,
/// `stream_text`, and `read_bytes` where claimed), one of them through a second instance where
/// the storage is shared, and a fourth listing the file's directory (the root) as often.
fn free_round(cx: &Context, r: usize) -> Vec<Step> {
    let (first, plan) = plan(r, LINES, MUTATIONS);
    let writer: Vec<Step> = plan.into_iter().map(|m| Step::plain(m.op())).collect();
    let reader = |op: Op, instance: u8| Lane {
        steps: vec![Step::plain(op)],
        instance,
        repeat: true,
    };
    let path = || "big".to_string();
    let third = if cx.caps.read_bytes {
        Op::ReadBytes {
            path: path(),
            max: 8 * 1024 * 1024,
        }
    } else {
        Op::StreamText { path: path() }
    };
    vec![
        Step::plain(Op::World(WorldOp::Write {
            path: path(),
            bytes: first.into_bytes().into(),
            mode: 0o644,
        })),
        Step::plain(Op::Together {
            lanes: vec![
                Lane::of(writer),
                reader(Op::ReadText { path: path() }, 0),
                reader(
                    Op::StreamText { path: path() },
                    u8::from(cx.caps.shared_storage),
                ),
                reader(third, 0),
                reader(
                    Op::ListDir {
                        path: ROOT_TOKEN.to_string(),
                    },
                    0,
                ),
            ],
            on: Spawn::Threads,
        }),
    ]
}

enum Mutation {
    Write(String),
    Edit(String, String),
}

impl Mutation {
    /// The mutation as a step's operation on the round's file.
    fn op(self) -> Op {
        match self {
            Mutation::Write(content) => Op::Write {
                path: "big".into(),
                content: content.into(),
                guard: WriteGuard::None,
            },
            Mutation::Edit(old, new) => Op::Edit {
                path: "big".into(),
                old,
                new,
                replace_all: false,
                guard: None,
            },
        }
    }
}
