//! The enumeration of short cases: the same whatever the seed, every rule reached.

use super::steps::NEVER;
use super::*;
use crate::step::{Interfere, VersionRef, WriteGuard};
use seam::CancelPoint;
use seam_model::{Change, Competitor};

fn everything() -> ShortConfig {
    ShortConfig {
        caps: Capabilities::default()
            .with(seam::Capability::Symlinks)
            .with(seam::Capability::Modes)
            .with(seam::Capability::ReadBytes)
            .with(seam::Capability::CancelPoints)
            .with(seam::Capability::Namespace)
            .with(seam::Capability::SharedStorage),
        fifos: true,
        restore_mtime: true,
        diff_limit: 1024,
    }
}

/// Whether `case` ends with a write or an edit under `guard` meeting `i`.
fn ends_with(case: &ShortCase, i: &Interfere, is: impl Fn(&Op) -> bool) -> bool {
    case.steps
        .last()
        .is_some_and(|s| s.interfere == *i && is(&s.op))
}

#[test]
fn the_enumeration_covers_each_guard_with_each_interference_on_every_shape() {
    let config = everything();
    let cases = short_cases(&config);
    // Written out, not taken from the generator: dropping one there must fail here.
    let cancels = [
        Interfere::None,
        Interfere::CancelledBeforeStart,
        Interfere::CancelAt(CancelPoint::BeforeStage),
        Interfere::CancelAt(CancelPoint::Staged),
        Interfere::CancelAt(CancelPoint::Committed),
    ];
    let competitors = [
        Interfere::Competitor(Competitor::File("theirs\n".into())),
        Interfere::Competitor(Competitor::Dir),
        Interfere::Competitor(Competitor::DanglingLink),
    ];
    let mut changes = Vec::new();
    for p in [CancelPoint::BeforeStage, CancelPoint::Staged] {
        changes.push(Interfere::ChangeAt(p, Change::Scribble));
        changes.push(Interfere::ChangeAt(p, Change::Replace("theirs\n".into())));
        changes.push(Interfere::ChangeAt(p, Change::Remove));
    }
    for shape in shapes(&config) {
        let on = |c: &&ShortCase| c.shape == shape.name;
        let here: Vec<&ShortCase> = cases.iter().filter(on).collect();
        for guard in [WriteGuard::None, WriteGuard::CreateIfAbsent] {
            for i in cancels.iter().chain(&competitors) {
                assert!(
                    here.iter().any(|c| ends_with(c, i, |op| matches!(op,
                        Op::Write { guard: g, .. } if *g == guard))),
                    "{}: write {guard:?} with {i:?}",
                    shape.name
                );
            }
        }
        for v in [VersionRef::Target, NEVER] {
            for i in cancels.iter().chain(&changes) {
                assert!(
                    here.iter().any(|c| ends_with(c, i, |op| matches!(op,
                        Op::Write { guard: WriteGuard::ReplaceIfVersion(g), .. } if *g == v))),
                    "{}: write at {v:?} with {i:?}",
                    shape.name
                );
                assert!(
                    here.iter().any(|c| ends_with(c, i, |op| matches!(op,
                        Op::Edit { guard: Some(g), .. } if *g == v))),
                    "{}: edit at {v:?} with {i:?}",
                    shape.name
                );
            }
        }
        // A stale guard: the path looked at, changed behind the caller's back, then used.
        for is_write in [true, false] {
            assert!(
                here.iter().any(|c| {
                    let n = c.steps.len();
                    n >= 3
                        && matches!(c.steps[n - 3].op, Op::Stat { .. })
                        && matches!(c.steps[n - 2].op, Op::World(WorldOp::Write { .. }))
                        && match &c.steps[n - 1].op {
                            Op::Write { guard, .. } => {
                                is_write
                                    && *guard == WriteGuard::ReplaceIfVersion(VersionRef::Target)
                            }
                            Op::Edit { guard, .. } => {
                                !is_write && *guard == Some(VersionRef::Target)
                            }
                            _ => false,
                        }
                }),
                "{}: a stale {} guard",
                shape.name,
                if is_write { "write" } else { "edit" }
            );
        }
    }
}

/// Whether `op` carries a guard [`NEVER`].
fn carries_never(op: &Op) -> bool {
    match op {
        Op::Write { guard, .. } => *guard == WriteGuard::ReplaceIfVersion(NEVER),
        Op::Edit { guard, .. } | Op::Remove { guard, .. } => *guard == Some(NEVER),
        Op::Rename { guard, replace, .. } => *guard == Some(NEVER) || *replace == Some(NEVER),
        _ => false,
    }
}

/// A guard "never issued" must be one: a look at the path just before it would make it the
/// version just seen, a guard that holds. Each guarded call meets it as its case's only call.
#[test]
fn a_guard_never_issued_follows_no_look() {
    let cases = short_cases(&everything());
    for c in &cases {
        for w in c.steps.windows(2) {
            assert!(
                !(matches!(w[0].op, Op::Stat { .. } | Op::Lstat { .. }) && carries_never(&w[1].op)),
                "{}: {:?}",
                c.shape,
                c.steps
            );
        }
    }
    let alone = |is: fn(&Op) -> bool| {
        cases.iter().any(|c| {
            c.shape == "a file"
                && c.steps
                    .last()
                    .is_some_and(|s| carries_never(&s.op) && is(&s.op))
                && c.steps[..c.steps.len() - 1]
                    .iter()
                    .all(|s| matches!(s.op, Op::World(_)))
        })
    };
    assert!(alone(|op| matches!(op, Op::Write { .. })), "a write");
    assert!(alone(|op| matches!(op, Op::Edit { .. })), "an edit");
    assert!(alone(|op| matches!(op, Op::Remove { .. })), "a remove");
    assert!(alone(|op| matches!(op, Op::Rename { .. })), "a rename");
}

#[test]
fn the_enumeration_is_the_same_whatever_else_runs() {
    // No seed goes in (the signature takes none); two calls give the same cases, and the
    // count is the one docs/properties.md quotes for a backend that claims everything.
    let a = short_cases(&everything());
    let b = short_cases(&everything());
    assert!(
        a.iter()
            .zip(&b)
            .all(|(x, y)| x.steps == y.steps && x.shape == y.shape)
    );
    assert_eq!(a.len(), b.len());
    // The count docs/properties.md, docs/running.md (the sample run) and docs/decisions.md
    // quote: change them with it.
    assert_eq!(a.len(), 3335);
}

#[test]
fn what_is_not_claimed_is_never_enumerated() {
    let plain = ShortConfig {
        caps: Capabilities::default(),
        fifos: false,
        restore_mtime: false,
        diff_limit: 10 << 20,
    };
    let cases = short_cases(&plain);
    assert!(!cases.is_empty());
    for c in &cases {
        for s in &c.steps {
            assert!(
                !matches!(
                    s.op,
                    Op::CreateDir { .. }
                        | Op::Remove { .. }
                        | Op::Rename { .. }
                        | Op::ReadBytes { .. }
                        | Op::World(WorldOp::Symlink { .. } | WorldOp::Mkfifo { .. })
                ),
                "{s:?}"
            );
            assert!(
                matches!(
                    s.interfere,
                    Interfere::None | Interfere::CancelledBeforeStart
                ),
                "{s:?}"
            );
            assert_eq!(s.instance, 0);
            assert!(s.sandbox.is_none());
        }
    }
}
