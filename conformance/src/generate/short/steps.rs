//! The steps short cases are made of: world setup, reads, guarded writes and edits, the
//! interference a mutation may meet, and the single and second steps each shape is tried with.

use super::{NEW, ShortConfig, file};
use crate::step::{Interfere, Op, Step, VersionRef, WriteGuard};
use seam::{CancelPoint, Capabilities};
use seam_model::{Change, Competitor, WorldOp};

pub(super) fn world(op: WorldOp) -> Step {
    Step::plain(Op::World(op))
}

pub(super) fn with(op: Op, interfere: Interfere) -> Step {
    Step {
        interfere,
        ..Step::plain(op)
    }
}

/// Every read of `path`.
pub(super) fn reads(path: &str, caps: Capabilities) -> Vec<Op> {
    let p = || path.to_string();
    let mut out = vec![
        Op::Resolve { path: p() },
        Op::Stat { path: p() },
        Op::Lstat { path: p() },
        Op::ReadText { path: p() },
        Op::StreamText { path: p() },
        Op::ListDir { path: p() },
        Op::Facts {
            path: p(),
            other: ".".into(),
        },
    ];
    if caps.read_bytes {
        out.push(Op::ReadBytes { path: p(), max: 7 });
        out.push(Op::ReadBytes { path: p(), max: 8 });
    }
    out
}

pub(super) fn write(path: &str, guard: WriteGuard) -> Op {
    Op::Write {
        path: path.into(),
        content: NEW.into(),
        guard,
    }
}

pub(super) fn edit(path: &str, old: &str, replace_all: bool, guard: Option<VersionRef>) -> Op {
    Op::Edit {
        path: path.into(),
        old: old.into(),
        new: "1".into(),
        replace_all,
        guard,
    }
}

/// A version never issued: the step that carries it is the case's first look at anything, so
/// no version has been seen when the guard is read (the harness then sends a token no backend
/// issued).
pub(super) const NEVER: VersionRef = VersionRef::Recent(0);

/// The interferences a write or an edit can meet: `competitors` where nothing it may replace
/// was checked (a write not guarded by a version), `changes` where a file was checked (a
/// version-guarded write, an edit).
pub(super) fn mutation_interference(
    caps: Capabilities,
    competitors: bool,
    changes: bool,
) -> Vec<Interfere> {
    let mut out = vec![Interfere::None, Interfere::CancelledBeforeStart];
    if !caps.cancel_points {
        return out;
    }
    for p in [
        CancelPoint::BeforeStage,
        CancelPoint::Staged,
        CancelPoint::Committed,
    ] {
        out.push(Interfere::CancelAt(p));
    }
    if competitors {
        out.push(Interfere::Competitor(Competitor::File("theirs\n".into())));
        out.push(Interfere::Competitor(Competitor::Dir));
        if caps.symlinks {
            out.push(Interfere::Competitor(Competitor::DanglingLink));
        }
    }
    if changes {
        for p in [CancelPoint::BeforeStage, CancelPoint::Staged] {
            out.push(Interfere::ChangeAt(p, Change::Scribble));
            out.push(Interfere::ChangeAt(p, Change::Replace("theirs\n".into())));
            out.push(Interfere::ChangeAt(p, Change::Remove));
        }
    }
    out
}

/// The interferences a namespace call can meet.
pub(super) fn namespace_interference(caps: Capabilities) -> Vec<Interfere> {
    let mut out = vec![Interfere::None, Interfere::CancelledBeforeStart];
    if caps.cancel_points {
        out.push(Interfere::CancelAt(CancelPoint::BeforeStage));
        out.push(Interfere::CancelAt(CancelPoint::Committed));
    }
    out
}

/// A guarded step preceded by a look at the path, so that [`VersionRef::Target`] names what is
/// there (a version seen, as a careful caller would have).
pub(super) fn looked(path: &str, step: Step) -> Vec<Step> {
    vec![Step::plain(Op::Stat { path: path.into() }), step]
}

/// A guarded step: with [`NEVER`] nothing is looked at first (so its token was never issued);
/// otherwise the path is looked at first, as a careful caller would.
pub(super) fn guarded(path: &str, guard: Option<VersionRef>, step: Step) -> Vec<Step> {
    match guard {
        Some(VersionRef::Recent(_)) => vec![step],
        _ => looked(path, step),
    }
}

/// A namespace step guarded by what is at `path` itself (its `lstat`): looked at first when the
/// guard is [`VersionRef::Target`], not when it is [`NEVER`] or absent.
pub(super) fn entry_guarded(paths: &[&str], guard: Option<VersionRef>, step: Step) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    if guard == Some(VersionRef::Target) {
        for p in paths {
            out.push(Step::plain(Op::Lstat {
                path: (*p).to_string(),
            }));
        }
    }
    out.push(step);
    out
}

/// The stale cases of a guarded step: the path looked at, then written behind the caller's
/// back, then the step with the version that look saw.
pub(super) fn stale(path: &str, step: Step) -> Vec<Step> {
    vec![
        Step::plain(Op::Stat { path: path.into() }),
        world(WorldOp::Write {
            path: path.into(),
            bytes: b"theirs\n".to_vec().into(),
            mode: 0o644,
        }),
        step,
    ]
}

/// The destinations of a rename from `path`: their world setup and spelling.
pub(super) fn destinations(path: &str, caps: Capabilities) -> Vec<(Vec<WorldOp>, String)> {
    vec![
        (vec![], "u".into()),
        (vec![file("u", caps)], "u".into()),
        (vec![WorldOp::Mkdir { path: "u".into() }], "u".into()),
        (vec![], format!("{path}/x")),
        (vec![], "n/u".into()),
    ]
}

/// The operations of the one-operation cases on `path`, each with the world setup it adds to
/// the shape (a rename's destination).
pub(super) fn singles(path: &str, caps: Capabilities) -> Vec<(Vec<WorldOp>, Vec<Step>)> {
    let mut out: Vec<(Vec<WorldOp>, Vec<Step>)> = Vec::new();
    let mut push = |steps: Vec<Step>| out.push((Vec::new(), steps));
    for op in reads(path, caps) {
        push(vec![Step::plain(op.clone())]);
        push(vec![with(op, Interfere::CancelledBeforeStart)]);
    }
    for guard in [WriteGuard::None, WriteGuard::CreateIfAbsent] {
        for i in mutation_interference(caps, true, false) {
            push(vec![with(write(path, guard), i)]);
        }
    }
    for guard in [
        WriteGuard::ReplaceIfVersion(VersionRef::Target),
        WriteGuard::ReplaceIfVersion(NEVER),
    ] {
        let seen = match guard {
            WriteGuard::ReplaceIfVersion(v) => Some(v),
            _ => None,
        };
        for i in mutation_interference(caps, false, true) {
            push(guarded(path, seen, with(write(path, guard), i)));
        }
    }
    push(stale(
        path,
        Step::plain(write(
            path,
            WriteGuard::ReplaceIfVersion(VersionRef::Target),
        )),
    ));
    for guard in [None, Some(VersionRef::Target), Some(NEVER)] {
        for i in mutation_interference(caps, false, true) {
            push(guarded(
                path,
                guard,
                with(edit(path, "one", false, guard), i),
            ));
        }
        for (old, all) in [("zzz", false), ("o", false), ("o", true), ("", false)] {
            push(guarded(
                path,
                guard,
                Step::plain(edit(path, old, all, guard)),
            ));
        }
    }
    push(stale(
        path,
        Step::plain(edit(path, "one", false, Some(VersionRef::Target))),
    ));
    if !caps.namespace {
        return out;
    }
    for i in namespace_interference(caps) {
        for (parents, exist_ok) in [(false, false), (true, false), (false, true), (true, true)] {
            let op = Op::CreateDir {
                path: path.into(),
                parents,
                exist_ok,
            };
            out.push((Vec::new(), vec![with(op, i.clone())]));
        }
        for guard in [None, Some(VersionRef::Target), Some(NEVER)] {
            for directory in [false, true] {
                let op = Op::Remove {
                    path: path.into(),
                    guard,
                    directory,
                };
                out.push((
                    Vec::new(),
                    entry_guarded(&[path], guard, with(op, i.clone())),
                ));
            }
        }
    }
    for (setup, to) in destinations(path, caps) {
        for guard in [None, Some(VersionRef::Target), Some(NEVER)] {
            for replace in [None, Some(VersionRef::Target), Some(NEVER)] {
                // A token never issued cannot follow a look (it would be the version seen).
                if guard.is_some() && replace.is_some() && guard != replace {
                    continue;
                }
                let op = Op::Rename {
                    from: path.into(),
                    to: to.clone(),
                    guard,
                    replace,
                };
                let mut steps = entry_guarded(&[path], guard, Step::plain(op));
                if replace == Some(VersionRef::Target) {
                    steps.insert(0, Step::plain(Op::Lstat { path: to.clone() }));
                }
                out.push((setup.clone(), steps));
            }
        }
        for i in namespace_interference(caps).into_iter().skip(1) {
            let op = Op::Rename {
                from: path.into(),
                to: to.clone(),
                guard: Some(VersionRef::Target),
                replace: Some(VersionRef::Target),
            };
            let mut steps = entry_guarded(&[path], Some(VersionRef::Target), with(op, i));
            steps.insert(0, Step::plain(Op::Lstat { path: to.clone() }));
            out.push((setup.clone(), steps));
        }
    }
    out
}

/// The first operation of a two-operation case: a change of what is at `path`.
pub(super) fn changes(path: &str, config: &ShortConfig) -> Vec<Step> {
    let caps = config.caps;
    let mut out = vec![
        Step::plain(write(path, WriteGuard::None)),
        Step::plain(edit(path, "one", false, None)),
        world(WorldOp::Scribble {
            path: path.into(),
            restore_mtime: config.restore_mtime,
        }),
        world(WorldOp::Append {
            path: path.into(),
            bytes: b"z".to_vec(),
        }),
        world(WorldOp::Remove { path: path.into() }),
        world(WorldOp::Write {
            path: path.into(),
            bytes: b"theirs\n".to_vec().into(),
            mode: 0o644,
        }),
    ];
    if caps.modes {
        out.push(world(WorldOp::Chmod {
            path: path.into(),
            mode: 0o600,
        }));
    }
    if caps.namespace {
        out.push(Step::plain(Op::CreateDir {
            path: path.into(),
            parents: false,
            exist_ok: false,
        }));
        out.push(Step::plain(Op::Remove {
            path: path.into(),
            guard: None,
            directory: true,
        }));
        out.push(Step::plain(Op::Rename {
            from: path.into(),
            to: "u".into(),
            guard: None,
            replace: None,
        }));
    }
    out
}

/// The second operation of a two-operation case.
pub(super) fn seconds(path: &str, caps: Capabilities) -> Vec<Step> {
    let mut out = vec![
        Step::plain(Op::Stat { path: path.into() }),
        Step::plain(Op::Lstat { path: path.into() }),
        Step::plain(Op::ReadText { path: path.into() }),
        Step::plain(Op::ListDir { path: path.into() }),
        Step::plain(Op::ReadText { path: path.into() }).reusing(),
        Step::plain(write(path, WriteGuard::None)).reusing(),
    ];
    for guard in [
        WriteGuard::None,
        WriteGuard::CreateIfAbsent,
        WriteGuard::ReplaceIfVersion(VersionRef::Target),
        WriteGuard::ReplaceIfVersion(VersionRef::Recent(1)),
    ] {
        out.push(Step::plain(write(path, guard)));
    }
    for guard in [None, Some(VersionRef::Target)] {
        out.push(Step::plain(edit(path, "one", false, guard)));
    }
    if caps.namespace {
        for guard in [None, Some(VersionRef::Recent(0))] {
            out.push(Step::plain(Op::Remove {
                path: path.into(),
                guard,
                directory: true,
            }));
            out.push(Step::plain(Op::Rename {
                from: path.into(),
                to: "v".into(),
                guard,
                replace: None,
            }));
        }
        out.push(Step::plain(Op::CreateDir {
            path: path.into(),
            parents: false,
            exist_ok: true,
        }));
    }
    if caps.shared_storage {
        out.push(Step::plain(Op::ReadText { path: path.into() }).on(1));
        out.push(Step::plain(Op::Stat { path: path.into() }).on(1));
        out.push(
            Step::plain(write(
                path,
                WriteGuard::ReplaceIfVersion(VersionRef::Target),
            ))
            .on(1),
        );
    }
    out
}
