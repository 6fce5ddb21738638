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

use crate::step::{Op, Step};
use aimed::aimed;
use seam::Capabilities;
use seam_model::WorldOp;
use steps::{changes, seconds, singles, world};

mod aimed;
mod steps;
#[cfg(test)]
mod tests;

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
        bytes: TEXT.as_bytes().to_vec().into(),
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
