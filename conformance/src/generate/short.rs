//! The short cases: every case of one or two operations over a bounded alphabet, built by
//! construction rather than drawn, so that a departure reachable in two steps is found at every
//! run whatever its seed (the seed only chooses the longer random sequences).
//!
//! A case is a *world shape* (what is at the path before the first call, set up through the
//! world) followed by the operations. The alphabet:
//!
//! * **shapes** — nothing; a file; an empty directory; a directory with an entry; a link to a
//!   file, to a directory, a dangling and a looping link (links claimed); a FIFO (the world can
//!   make one); a path through a regular file; a path under a missing directory; a missing
//!   path under a link to a directory (links claimed);
//! * **one operation** on the shape's path — every read (each also called already cancelled);
//!   `write_text` under each guard (none, create-if-absent, replace at the version just seen,
//!   replace at a version never issued) with each interference it can meet (none, cancelled
//!   before it starts, cancelled at each checkpoint, a file, a directory or a dangling link
//!   appearing mid-write, the file rewritten, replaced or removed at each checkpoint);
//!   `edit_text` that matches once, never, ambiguously, with `replace_all`, under each guard,
//!   the matching one with every interference; `create_dir` with each of `parents` and
//!   `exist_ok`; `remove` with each guard, with and without `directory`; `rename` to each
//!   destination shape (nothing, a file, a directory, beneath itself, under a missing
//!   directory) with each guard on either end; the namespace calls with each interference
//!   they show (namespace claimed);
//! * **two operations** — on the shapes nothing, a file, an empty directory, a link to a file
//!   and a dangling link: a change (a write, an edit, `create_dir`, `remove`, `rename` away, or
//!   the world rewriting, appending to, re-permissioning, replacing or removing the file) made
//!   after the path was looked at, then a read, a guarded or unguarded write or edit, a guarded
//!   `remove` or `rename`, or a `create_dir` — on the same instance, on a target resolved
//!   before the change, and (shared storage claimed) on a second instance.
//!
//! A guard "at the version just seen" is [`VersionRef::Target`]: the case looks at the path
//! (`stat`) first, so the guard names what was there. What the backend does not claim is left
//! out, exactly as the random generator leaves it out.

use crate::step::{Interfere, Op, Step, VersionRef, WriteGuard};
use seam::{CancelPoint, Capabilities};
use seam_model::{Change, Competitor, WorldOp};

/// What the enumeration needs to know about the backend.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShortConfig {
    /// What it claims.
    pub caps: Capabilities,
    /// Whether its world can make FIFOs.
    pub fifos: bool,
    /// Whether its world can put an mtime back exactly.
    pub restore_mtime: bool,
    /// Its diff-basis limit.
    pub diff_limit: u64,
}

/// One enumerated case.
#[derive(Clone, Debug)]
pub(crate) struct ShortCase {
    /// The world shape it starts from, for reports.
    pub shape: &'static str,
    /// The steps: the shape's world changes, then the operations.
    pub steps: Vec<Step>,
}

/// The content of every file a shape makes (eight bytes: `read_bytes` caps of 7 and 8 sit one
/// under and exactly at its size).
const TEXT: &str = "one\ntwo\n";

/// What a write writes.
const NEW: &str = "new\n";

struct Shape {
    name: &'static str,
    setup: Vec<WorldOp>,
    path: &'static str,
}

fn file(path: &str, caps: Capabilities) -> WorldOp {
    WorldOp::Write {
        path: path.into(),
        bytes: TEXT.as_bytes().to_vec(),
        mode: if caps.modes { 0o640 } else { 0o644 },
    }
}

fn link(path: &str, target: &str) -> WorldOp {
    WorldOp::Symlink {
        path: path.into(),
        target: target.into(),
    }
}

fn shapes(config: &ShortConfig) -> Vec<Shape> {
    let caps = config.caps;
    let mut out = vec![
        Shape {
            name: "nothing",
            setup: vec![],
            path: "t",
        },
        Shape {
            name: "a file",
            setup: vec![file("t", caps)],
            path: "t",
        },
        Shape {
            name: "an empty directory",
            setup: vec![WorldOp::Mkdir { path: "t".into() }],
            path: "t",
        },
        Shape {
            name: "a directory with an entry",
            setup: vec![file("t/a", caps)],
            path: "t",
        },
    ];
    if caps.symlinks {
        out.extend([
            Shape {
                name: "a link to a file",
                setup: vec![file("f", caps), link("t", "f")],
                path: "t",
            },
            Shape {
                name: "a link to a directory",
                setup: vec![file("d/a", caps), link("t", "d")],
                path: "t",
            },
            Shape {
                name: "a dangling link",
                setup: vec![link("t", "nowhere")],
                path: "t",
            },
            Shape {
                name: "a looping link",
                setup: vec![link("t", "t")],
                path: "t",
            },
        ]);
    }
    if config.fifos {
        out.push(Shape {
            name: "a FIFO",
            setup: vec![WorldOp::Mkfifo { path: "t".into() }],
            path: "t",
        });
    }
    out.push(Shape {
        name: "a path through a file",
        setup: vec![file("p", caps)],
        path: "p/t",
    });
    out.push(Shape {
        name: "a path under a missing directory",
        setup: vec![],
        path: "n/t",
    });
    if caps.symlinks {
        out.push(Shape {
            name: "a missing path under a link to a directory",
            setup: vec![WorldOp::Mkdir { path: "d".into() }, link("l", "d")],
            path: "l/t",
        });
    }
    out
}

/// The shapes the two-operation cases start from.
const PAIR_SHAPES: &[&str] = &[
    "nothing",
    "a file",
    "an empty directory",
    "a link to a file",
    "a dangling link",
];

fn world(op: WorldOp) -> Step {
    Step::plain(Op::World(op))
}

fn with(op: Op, interfere: Interfere) -> Step {
    Step {
        interfere,
        ..Step::plain(op)
    }
}

/// Every read of `path`.
fn reads(path: &str, caps: Capabilities) -> Vec<Op> {
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

fn write(path: &str, guard: WriteGuard) -> Op {
    Op::Write {
        path: path.into(),
        content: NEW.into(),
        guard,
    }
}

fn edit(path: &str, old: &str, replace_all: bool, guard: Option<VersionRef>) -> Op {
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
const NEVER: VersionRef = VersionRef::Recent(0);

/// The interferences a write or an edit can meet: `competitors` where nothing it may replace
/// was checked (a write not guarded by a version), `changes` where a file was checked (a
/// version-guarded write, an edit).
fn mutation_interference(caps: Capabilities, competitors: bool, changes: bool) -> Vec<Interfere> {
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
fn namespace_interference(caps: Capabilities) -> Vec<Interfere> {
    let mut out = vec![Interfere::None, Interfere::CancelledBeforeStart];
    if caps.cancel_points {
        out.push(Interfere::CancelAt(CancelPoint::BeforeStage));
        out.push(Interfere::CancelAt(CancelPoint::Committed));
    }
    out
}

/// A guarded step preceded by a look at the path, so that [`VersionRef::Target`] names what is
/// there (a version seen, as a careful caller would have).
fn looked(path: &str, step: Step) -> Vec<Step> {
    vec![Step::plain(Op::Stat { path: path.into() }), step]
}

/// A guarded step: with [`NEVER`] nothing is looked at first (so its token was never issued);
/// otherwise the path is looked at first, as a careful caller would.
fn guarded(path: &str, guard: Option<VersionRef>, step: Step) -> Vec<Step> {
    match guard {
        Some(VersionRef::Recent(_)) => vec![step],
        _ => looked(path, step),
    }
}

/// A namespace step guarded by what is at `path` itself (its `lstat`): looked at first when the
/// guard is [`VersionRef::Target`], not when it is [`NEVER`] or absent.
fn entry_guarded(paths: &[&str], guard: Option<VersionRef>, step: Step) -> Vec<Step> {
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
fn stale(path: &str, step: Step) -> Vec<Step> {
    vec![
        Step::plain(Op::Stat { path: path.into() }),
        world(WorldOp::Write {
            path: path.into(),
            bytes: b"theirs\n".to_vec(),
            mode: 0o644,
        }),
        step,
    ]
}

/// The destinations of a rename from `path`: their world setup and spelling.
fn destinations(path: &str, caps: Capabilities) -> Vec<(Vec<WorldOp>, String)> {
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
fn singles(path: &str, caps: Capabilities) -> Vec<(Vec<WorldOp>, Vec<Step>)> {
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
fn changes(path: &str, config: &ShortConfig) -> Vec<Step> {
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
            bytes: b"theirs\n".to_vec(),
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
fn seconds(path: &str, caps: Capabilities) -> Vec<Step> {
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

/// The aimed cases: for every rule whose situation needs a particular content or layout (a
/// NUL at the last byte of the sniff window, half a megabyte of characters straddling every
/// chunk boundary, a file one byte under the diff-basis limit, a link after which `..` climbs),
/// the few steps that set it up and the call that exercises it — so that such a rule is reached
/// at every run by construction, not by the random sequences' luck. (With `--cases 1` a rule
/// may still wait for the breadth of the property it belongs to — a sandbox deployment's
/// default decision, for one; at the default breadth every rule is reached.)
fn aimed(config: &ShortConfig) -> Vec<ShortCase> {
    use super::alphabet::{late_invalid, nul_at, sized, straddling_text, style_window_text};
    use seam::text::NUL_SAMPLE_BYTES;
    let caps = config.caps;
    let write_bytes = |path: &str, bytes: Vec<u8>| {
        world(WorldOp::Write {
            path: path.into(),
            bytes,
            mode: 0o644,
        })
    };
    let text = |path: &str, t: String| write_bytes(path, t.into_bytes());
    let read = |path: &str| Step::plain(Op::ReadText { path: path.into() });
    let stream = |path: &str| Step::plain(Op::StreamText { path: path.into() });
    let edit_to = |old: &str, new: &str| {
        Step::plain(Op::Edit {
            path: "t".into(),
            old: old.into(),
            new: new.into(),
            replace_all: false,
            guard: None,
        })
    };
    let mut out: Vec<(&'static str, Vec<Step>)> = vec![
        (
            "a refused spelling with ./ and ..",
            vec![
                Step::plain(Op::Stat {
                    path: "./a\0b".into(),
                }),
                Step::plain(Op::Resolve {
                    path: format!("d/../{}/", "x".repeat(256)),
                }),
            ],
        ),
        (
            "a relative path in a working directory",
            vec![text("d/a", TEXT.into()), {
                let mut s = read("a");
                s.cwd = Some("d".into());
                s
            }],
        ),
        (
            "NULs around the sniff window",
            vec![
                text("w1", nul_at(NUL_SAMPLE_BYTES - 1)),
                read("w1"),
                text("w2", nul_at(NUL_SAMPLE_BYTES)),
                read("w2"),
                text("w3", nul_at(NUL_SAMPLE_BYTES + 100)),
                read("w3"),
                Step::plain(Op::Edit {
                    path: "w3".into(),
                    old: "tail".into(),
                    new: "b".into(),
                    replace_all: false,
                    guard: None,
                }),
            ],
        ),
        (
            "a BOM",
            vec![
                text("t", "\u{feff}bom\r\nline\r\n".into()),
                read("t"),
                edit_to("bom", "x"),
            ],
        ),
        (
            "a large stream",
            vec![text("big", straddling_text()), stream("big")],
        ),
        (
            "invalid UTF-8 past the first chunks",
            vec![write_bytes("bad", late_invalid()), stream("bad")],
        ),
        (
            "names whose byte order is not their case order",
            vec![
                text("B", TEXT.into()),
                text("a", TEXT.into()),
                world(WorldOp::Mkdir { path: "d".into() }),
                Step::plain(Op::ListDir { path: ".".into() }),
            ],
        ),
        (
            "a replaced file that was not text",
            vec![
                write_bytes("t", b"h\xFFi".to_vec()),
                Step::plain(write("t", WriteGuard::None)),
            ],
        ),
        (
            "mixed line endings",
            vec![
                text("t", "mixed\r\nlf\nlone\rcr\n".into()),
                edit_to("lf", "LF"),
            ],
        ),
        (
            "CRLF lines",
            vec![
                text("t", "one\r\ntwo\r\nthree\r\n".into()),
                edit_to("one\ntwo", "x"),
                edit_to("three", "3\n4"),
                edit_to("x", "$& $$"),
            ],
        ),
        (
            "a style window that disagrees with the file",
            vec![text("t", style_window_text()), edit_to("style", "s\nt")],
        ),
        (
            "a directory's version after its entries changed",
            vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                Step::plain(Op::Stat { path: "d".into() }),
                text("d/x", TEXT.into()),
                Step::plain(Op::Stat { path: "d".into() }),
            ],
        ),
        (
            "a target resolved earlier whose parent became a file",
            vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                text("d/t", TEXT.into()),
                read("d/t"),
                world(WorldOp::Remove { path: "d/t".into() }),
                world(WorldOp::Remove { path: "d".into() }),
                text("d", TEXT.into()),
                read("d/t").reusing(),
                Step::plain(write("d/t", WriteGuard::None)).reusing(),
                Step::plain(Op::Stat { path: "d/t".into() }).reusing(),
            ],
        ),
    ];
    if caps.read_bytes {
        out.push((
            "read_bytes around a size, of bytes not text",
            vec![
                text("t", TEXT.into()),
                Step::plain(Op::ReadBytes {
                    path: "t".into(),
                    max: TEXT.len() as u64 + 1,
                }),
                write_bytes("bin", b"h\xFFi".to_vec()),
                Step::plain(Op::ReadBytes {
                    path: "bin".into(),
                    max: 16,
                }),
            ],
        ));
    }
    if caps.symlinks {
        out.push((
            "links: .. after a link, a broken one listed, a parent through a dangling one",
            vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                text("a", TEXT.into()),
                world(link("l", "d")),
                read("l/../a"),
                world(link("n", "nowhere")),
                Step::plain(Op::ListDir { path: ".".into() }),
                Step::plain(write("n/a", WriteGuard::None)),
            ],
        ));
        out.push((
            "a target whose key became a link",
            vec![
                text("t", TEXT.into()),
                text("f", TEXT.into()),
                Step::plain(Op::Stat { path: "t".into() }),
                world(WorldOp::Remove { path: "t".into() }),
                world(link("t", "f")),
                Step::plain(write("t", WriteGuard::None)).reusing(),
            ],
        ));
    }
    if caps.sandbox_modes {
        // A call's own workspace `d` below the test root: outside it, a way out of it, inside.
        let fenced = |path: &str| {
            Step::plain(write(path, WriteGuard::None)).fenced(crate::step::CallSandbox {
                mode: seam::SandboxMode::WorkspaceWrite,
                workspace: format!("{}/d", crate::step::ROOT_TOKEN),
            })
        };
        let mut steps = vec![
            world(WorldOp::Mkdir { path: "d".into() }),
            fenced("a"),
            fenced("d/x"),
            // No call policy, outside the deployment's workspace: its mode decides.
            Step::plain(write("b", WriteGuard::None)),
            // A call's workspace that does not exist matches nothing.
            Step::plain(write("b", WriteGuard::None)).fenced(crate::step::CallSandbox {
                mode: seam::SandboxMode::WorkspaceWrite,
                workspace: format!("{}/nowhere", crate::step::ROOT_TOKEN),
            }),
        ];
        if caps.symlinks {
            steps.push(world(link("d/dang", "../nowhere")));
            steps.push(fenced("d/dang"));
        }
        out.push(("a call's workspace below the root", steps));
    }
    let limit = config.diff_limit;
    if super::alphabet::diff_limit_generated(limit)
        && let Ok(l) = usize::try_from(limit)
    {
        for size in [l - 1, l, l + 1] {
            out.push((
                "contents around the diff-basis limit",
                vec![
                    text("t", "small\n".into()),
                    Step::plain(Op::Write {
                        path: "t".into(),
                        content: sized(size),
                        guard: WriteGuard::None,
                    }),
                ],
            ));
        }
    }
    out.into_iter()
        .map(|(shape, steps)| ShortCase { shape, steps })
        .collect()
}

/// Every short case for a backend, in a fixed order: the enumeration, then the aimed cases.
/// The names of the world shapes the enumeration runs over (the aimed cases are named apart).
pub(crate) fn shape_names(config: &ShortConfig) -> Vec<&'static str> {
    shapes(config).iter().map(|s| s.name).collect()
}

pub(crate) fn short_cases(config: &ShortConfig) -> Vec<ShortCase> {
    let caps = config.caps;
    let mut out = Vec::new();
    for shape in shapes(config) {
        let setup = || shape.setup.iter().cloned().map(world);
        for (extra, ops) in singles(shape.path, caps) {
            let steps = setup()
                .chain(extra.into_iter().map(world))
                .chain(ops)
                .collect();
            out.push(ShortCase {
                shape: shape.name,
                steps,
            });
        }
        if !PAIR_SHAPES.contains(&shape.name) {
            continue;
        }
        for first in changes(shape.path, config) {
            for second in seconds(shape.path, caps) {
                let steps = setup()
                    .chain([
                        Step::plain(Op::Stat {
                            path: shape.path.into(),
                        }),
                        first.clone(),
                        second,
                    ])
                    .collect();
                out.push(ShortCase {
                    shape: shape.name,
                    steps,
                });
            }
        }
    }
    out.extend(aimed(config));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
                                        && *guard
                                            == WriteGuard::ReplaceIfVersion(VersionRef::Target)
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
                    !(matches!(w[0].op, Op::Stat { .. } | Op::Lstat { .. })
                        && carries_never(&w[1].op)),
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
}
