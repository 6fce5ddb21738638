//! Compare-and-swap under real concurrency: many lanes mutate one file at the same version, or
//! create one file with create-if-absent, at the same moment. Exactly one may win; every loser
//! gets the guard's code; the file holds the winner's bytes and nothing else is left behind.
//!
//! Each round is a trace like any other — a group of steps run together
//! ([`crate::step::Op::Together`]) after the file is set up and its version seen — so a round
//! that fails is saved, and `seam replay` runs it again.
//!
//! For a backend that claims [`seam::Capability::SharedStorage`] the same rounds run again with
//! the racers spread over two provider instances over one storage: two agents rarely share a
//! provider object, they share the files, and a lock that lives only in one instance lets two
//! guarded writers win.

use super::{Context, Property, Run, scenario};
use crate::failure::Failure;
use crate::rules::Rule;
use crate::step::{Lane, Op, Step, VersionRef, WriteGuard};
use seam_model::WorldOp;

/// `cas-races`.
pub struct CasRaces;

impl Property for CasRaces {
    fn name(&self) -> &'static str {
        "cas-races"
    }

    fn summary(&self) -> &'static str {
        "concurrent guarded writes/edits (and removes and renames, where claimed) at one version and concurrent create-if-absent have exactly one winner"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        for r in 0..ROUNDS {
            scenario(cx, self.name(), round(r % 2 == 0, false), &[], out)
                .map_err(|f| Failure::new(f.kind, format!("round {r}: {}", f.message)))?;
        }
        out.stats.rule(Rule::RaceOneWinner);
        if cx.caps.namespace {
            for r in 0..ROUNDS {
                scenario(cx, self.name(), namespace_round(r, false), &[], out).map_err(|f| {
                    Failure::new(
                        f.kind,
                        format!("round {r} of removes and renames: {}", f.message),
                    )
                })?;
            }
            out.stats.rule(Rule::RaceNamespace);
            if cx.caps.shared_storage {
                // The same rounds with the racers over two instances (file locks, not an
                // instance's own, must order them), and two files moved onto each other from
                // two instances at once (locks taken in opposite orders wait for each other).
                for r in 0..ROUNDS_ACROSS {
                    let steps = if r % 2 == 0 {
                        namespace_round(r, true)
                    } else {
                        swap_round()
                    };
                    scenario(cx, self.name(), steps, &[], out).map_err(|f| {
                        Failure::new(
                            f.kind,
                            format!(
                                "round {r} of removes and renames across two instances: {}",
                                f.message
                            ),
                        )
                    })?;
                }
            }
        }
        if cx.caps.shared_storage {
            for r in 0..ROUNDS_ACROSS {
                scenario(cx, self.name(), round(r % 2 == 0, true), &[], out).map_err(|f| {
                    Failure::new(
                        f.kind,
                        format!("round {r} across two instances: {}", f.message),
                    )
                })?;
            }
            out.stats.rule(Rule::RaceAcrossInstances);
        }
        Ok(())
    }
}

/// Lanes per round.
const RACERS: usize = 6;
/// Rounds.
const ROUNDS: usize = 12;
/// Rounds across two instances (a cross-instance lock is slower to get wrong visibly).
pub const ROUNDS_ACROSS: usize = 24;

/// One round's steps: six racers creating `a`, or — after `a` exists and its version is seen —
/// three guarded writes and three guarded edits at that version. Across two instances, racers
/// go to the subject and a second instance in pairs.
fn round(create: bool, across: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    if !create {
        steps.push(Step::plain(Op::World(WorldOp::Write {
            path: "a".into(),
            bytes: b"base\n".to_vec().into(),
            mode: 0o644,
        })));
        steps.push(Step::plain(Op::Stat { path: "a".into() }));
    }
    let lanes = (0..RACERS)
        .map(|i| {
            let op = match (create, i % 2) {
                (true, _) => Op::Write {
                    path: "a".into(),
                    content: format!("racer {i}\n").into(),
                    guard: WriteGuard::CreateIfAbsent,
                },
                (false, 0) => Op::Write {
                    path: "a".into(),
                    content: format!("racer {i}\n").into(),
                    guard: WriteGuard::ReplaceIfVersion(VersionRef::Target),
                },
                (false, _) => Op::Edit {
                    path: "a".into(),
                    old: "base".into(),
                    new: format!("racer {i}"),
                    replace_all: false,
                    guard: Some(VersionRef::Target),
                },
            };
            let mut lane = Lane::of(vec![Step::plain(op)]);
            lane.instance = u8::from(across && (i / 2) % 2 == 1);
            lane
        })
        .collect();
    steps.push(Step::plain(Op::Together {
        lanes,
        on: crate::step::Spawn::Threads,
    }));
    steps
}

/// A round that mixes the namespace operations into the race: after `a` exists and its version
/// is seen, guarded writes, guarded removes and guarded renames (each to a name of its own) at
/// that version, all at once. Exactly one may win — a remove that takes the file away after a
/// write replaced it, or a rename that moves it twice, is a lost update — and every loser is
/// `FS_STALE_VERSION`.
fn namespace_round(r: usize, across: bool) -> Vec<Step> {
    let mut steps = vec![
        Step::plain(Op::World(WorldOp::Write {
            path: "a".into(),
            bytes: b"base\n".to_vec().into(),
            mode: 0o644,
        })),
        Step::plain(Op::Stat { path: "a".into() }),
    ];
    let lanes = (0..RACERS)
        .map(|i| {
            let op = match (i + r) % 3 {
                0 => Op::Write {
                    path: "a".into(),
                    content: format!("racer {i}\n").into(),
                    guard: WriteGuard::ReplaceIfVersion(VersionRef::Target),
                },
                1 => Op::Remove {
                    path: "a".into(),
                    guard: Some(VersionRef::Target),
                    directory: false,
                },
                _ => Op::Rename {
                    from: "a".into(),
                    to: format!("moved{i}"),
                    guard: Some(VersionRef::Target),
                    replace: None,
                },
            };
            let mut lane = Lane::of(vec![Step::plain(op)]);
            lane.instance = u8::from(across && i % 2 == 1);
            lane
        })
        .collect();
    steps.push(Step::plain(Op::Together {
        lanes,
        on: crate::step::Spawn::Threads,
    }));
    steps
}

/// Two files, each moved onto the other at the version seen of it, from two instances at once:
/// one move wins, the other finds its destination gone (stale), and neither waits for the other.
fn swap_round() -> Vec<Step> {
    let mut steps = Vec::new();
    for f in ["a", "b"] {
        steps.push(Step::plain(Op::World(WorldOp::Write {
            path: f.into(),
            bytes: format!("{f}\n").into_bytes().into(),
            mode: 0o644,
        })));
        steps.push(Step::plain(Op::Stat { path: f.into() }));
    }
    let lanes = [("a", "b", 0), ("b", "a", 1)]
        .into_iter()
        .map(|(from, to, instance)| {
            let mut lane = Lane::of(vec![Step::plain(Op::Rename {
                from: from.into(),
                to: to.into(),
                guard: None,
                replace: Some(VersionRef::Target),
            })]);
            lane.instance = instance;
            lane
        })
        .collect();
    steps.push(Step::plain(Op::Together {
        lanes,
        on: crate::step::Spawn::Threads,
    }));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_across_instances_spreads_its_racers_in_pairs() {
        let steps = round(false, true);
        assert_eq!(steps.len(), 3, "the file, its version seen, the race");
        let Op::Together { lanes, .. } = &steps[2].op else {
            panic!("the race is a group");
        };
        let instances: Vec<u8> = lanes.iter().map(|l| l.instance).collect();
        assert_eq!(instances, vec![0, 0, 1, 1, 0, 0]);
        assert!(!round(true, false)[0].uses_second_instance());
    }
}
