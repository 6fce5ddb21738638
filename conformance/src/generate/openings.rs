//! Openings: short, aimed beginnings of a generated sequence. Some situations need two or three
//! things to line up — a file with an edge content *and* a stream of it, a fresh name *and* a
//! create-if-absent *and* a competitor — and the free generator lines them up too rarely for a
//! default run to reach every rule at every seed. So most sequences start with one to three of
//! these recipes (names, contents, guards and interference still drawn at random), and then go
//! on freely. (A recipe's listing of a file is plain or cancelled depending on the name drawn,
//! so both situations occur.) The first recipe meets an empty world; a later one may meet what
//! an earlier one made, which only varies the situation further.

use super::alphabet::{late_invalid_shared, nul_at_shared, straddling_shared, style_window_shared};
use super::{GenConfig, name};
use crate::step::{Interfere, Op, Step, WriteGuard};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use seam::CancelPoint;
use seam::text::NUL_SAMPLE_BYTES;
use seam_model::{Change, Competitor, WorldOp};
use std::sync::Arc;

fn world(op: WorldOp) -> Step {
    Step::plain(Op::World(op))
}

fn write(path: &str, content: impl Into<Arc<str>>, guard: WriteGuard) -> Step {
    Step::plain(Op::Write {
        path: path.to_string(),
        content: content.into(),
        guard,
    })
}

fn pick<T: Clone + std::fmt::Debug + 'static>(items: Vec<T>) -> BoxedStrategy<T> {
    proptest::sample::select(items).boxed()
}

/// A read of `path` that the caps allow: text, stream, or bytes around `size`.
fn read_of(config: &GenConfig, path: String, size: usize) -> BoxedStrategy<Step> {
    let mut kinds = vec![0u8, 1];
    if config.caps.read_bytes {
        kinds.push(2);
    }
    (pick(kinds), 0u64..3)
        .prop_map(move |(k, d)| {
            Step::plain(match k {
                0 => Op::ReadText { path: path.clone() },
                1 => Op::StreamText { path: path.clone() },
                _ => Op::ReadBytes {
                    path: path.clone(),
                    max: (size as u64 + d).saturating_sub(1),
                },
            })
        })
        .boxed()
}

/// The opening of a sequence: nothing (one time in six), or one to three aimed recipes.
pub(crate) fn opening(config: &GenConfig) -> BoxedStrategy<Vec<Step>> {
    let one = recipe(config);
    prop_oneof![
        1 => Just(Vec::new()),
        2 => one.clone(),
        2 => (one.clone(), one.clone()).prop_map(|(a, b)| [a, b].concat()),
        1 => (one.clone(), one.clone(), one).prop_map(|(a, b, c)| [a, b, c].concat()),
    ]
    .boxed()
}

/// One aimed recipe.
fn recipe(config: &GenConfig) -> BoxedStrategy<Vec<Step>> {
    let caps = config.caps;
    let limit = config.diff_limit;
    let c = config.clone();
    let corpora = super::alphabet::corpora(limit);
    let mut recipes: Vec<(u32, BoxedStrategy<Vec<Step>>)> = Vec::new();

    // An edge content written, then read in some way.
    recipes.push((
        3,
        (name(), super::pick_shared(corpora.edges.clone()))
            .prop_flat_map(move |(n, content)| {
                let size = content.len();
                let first = write(&n, content, WriteGuard::None);
                read_of(&c, n, size).prop_map(move |r| vec![first.clone(), r])
            })
            .boxed(),
    ));
    // The straddling text and the NUL edges, streamed or read (the stream rules need them).
    recipes.push((
        2,
        (
            name(),
            super::pick_shared(corpora.stream_edges.clone()),
            any::<bool>(),
        )
            .prop_map(|(n, content, stream)| {
                let read = if stream {
                    Op::StreamText { path: n.clone() }
                } else {
                    Op::ReadText { path: n.clone() }
                };
                vec![write(&n, content, WriteGuard::None), Step::plain(read)]
            })
            .boxed(),
    ));
    // A NUL at or past the end of the read window in a file an edit would otherwise change:
    // the edit must still refuse it (an edit sees the whole file, not a read's window).
    recipes.push((
        2,
        (
            name(),
            pick(vec![NUL_SAMPLE_BYTES, NUL_SAMPLE_BYTES + 100]),
            any::<bool>(),
        )
            .prop_map(|(n, at, all)| {
                vec![
                    write(&n, nul_at_shared(at), WriteGuard::None),
                    Step::plain(Op::Edit {
                        path: n,
                        old: if all { "aaaa".into() } else { "tail".into() },
                        new: "b".into(),
                        replace_all: all,
                        guard: None,
                    }),
                ]
            })
            .boxed(),
    ));
    // The straddling text streamed: the chunk-boundary rules.
    recipes.push((
        2,
        name()
            .prop_map(|n| {
                vec![
                    write(&n, straddling_shared(), WriteGuard::None),
                    Step::plain(Op::StreamText { path: n }),
                ]
            })
            .boxed(),
    ));
    // Any operation called with a cancelled signal, on a file that exists; and a file listed.
    let read_bytes = caps.read_bytes;
    recipes.push((
        3,
        (name(), 0u8..9)
            .prop_map(move |(n, k)| {
                let path = n.clone();
                let op = match k {
                    0 => Op::Resolve { path },
                    1 => Op::Stat { path },
                    2 => Op::Lstat { path },
                    3 => Op::ReadText { path },
                    4 => Op::StreamText { path },
                    5 if read_bytes => Op::ReadBytes { path, max: 64 },
                    5 | 6 => Op::ListDir { path },
                    7 => Op::Write {
                        path,
                        content: "x\n".into(),
                        guard: WriteGuard::None,
                    },
                    _ => Op::Edit {
                        path,
                        old: "one".into(),
                        new: "two".into(),
                        replace_all: false,
                        guard: None,
                    },
                };
                let mut step = Step::plain(op);
                // Half of the listings are plain: listing a file is its own rule.
                if !(k == 6 && n.len() % 2 == 0) {
                    step.interfere = Interfere::CancelledBeforeStart;
                }
                vec![write(&n, "one\n", WriteGuard::None), step]
            })
            .boxed(),
    ));
    // Invalid UTF-8 after the first 256 KiB, streamed.
    recipes.push((
        1,
        name()
            .prop_map(|n| {
                vec![
                    world(WorldOp::Write {
                        path: n.clone(),
                        bytes: late_invalid_shared(),
                        mode: 0o644,
                    }),
                    Step::plain(Op::StreamText { path: n }),
                ]
            })
            .boxed(),
    ));
    // The style window: an edit that inserts line breaks into a file whose first 4096
    // characters say LF and whose whole says CRLF.
    recipes.push((
        1,
        (name(), pick(vec!["x\ny", "\n", "\r\n"]), any::<bool>())
            .prop_map(|(n, new, all)| {
                vec![
                    write(&n, style_window_shared(), WriteGuard::None),
                    Step::plain(Op::Edit {
                        path: n,
                        old: "style".into(),
                        new: new.into(),
                        replace_all: all,
                        guard: None,
                    }),
                ]
            })
            .boxed(),
    ));
    // CRLF, mixed and BOM files edited across and around line breaks.
    recipes.push((
        4,
        (
            name(),
            pick(vec![
                "one\r\ntwo\r\n",
                "a\r\nb\r\nc\nd\r\n",
                "\u{feff}bom\r\nline\r\n",
                "mixed\r\nlf\nlone\rcr\n",
            ]),
            pick(vec![
                "\n", "one\ntwo", "a\n", "\nb", "bom", "line\n", "lf\nlone", "c\nd",
            ]),
            pick(vec!["b", "x\ny", "\r\n", "$&", "Z"]),
            any::<bool>(),
        )
            .prop_map(|(n, content, old, new, all)| {
                vec![
                    world(WorldOp::Write {
                        path: n.clone(),
                        bytes: content.as_bytes().to_vec().into(),
                        mode: 0o640,
                    }),
                    Step::plain(Op::Edit {
                        path: n,
                        old: old.into(),
                        new: new.into(),
                        replace_all: all,
                        guard: None,
                    }),
                ]
            })
            .boxed(),
    ));
    // An overwrite at the edges of the diff basis, or of a file that is not text.
    if !corpora.diff_contents.is_empty() {
        let (priors, contents) = (corpora.diff_priors.clone(), corpora.diff_contents.clone());
        recipes.push((
            2,
            (
                name(),
                super::pick_shared(priors),
                super::pick_shared(contents),
            )
                .prop_map(|(n, prior, content)| {
                    vec![
                        world(WorldOp::Write {
                            path: n.clone(),
                            bytes: prior,
                            mode: 0o644,
                        }),
                        write(&n, content, WriteGuard::None),
                    ]
                })
                .boxed(),
        ));
    }
    // A directory observed before and after it gains an entry.
    recipes.push((
        2,
        (pick(vec![".", "d"]), name())
            .prop_map(|(dir, n)| {
                let child = if dir == "." { n } else { format!("d/{n}") };
                vec![
                    world(WorldOp::Mkdir { path: "d".into() }),
                    Step::plain(Op::Stat { path: dir.into() }),
                    world(WorldOp::Write {
                        path: child,
                        bytes: b"x\n".to_vec().into(),
                        mode: 0o644,
                    }),
                    Step::plain(Op::Stat { path: dir.into() }),
                ]
            })
            .boxed(),
    ));
    // A target resolved, then its parent replaced by a file: stat finds nothing, the rest
    // fail coded.
    recipes.push((
        2,
        (name(), 0u8..5)
            .prop_map(|(n, k)| {
                let path = format!("d/{n}");
                let mut last = Step::plain(match k {
                    0 | 1 => Op::Stat { path: path.clone() },
                    2 => Op::ReadText { path: path.clone() },
                    3 => Op::Write {
                        path: path.clone(),
                        content: "x\n".into(),
                        guard: WriteGuard::None,
                    },
                    _ => Op::Edit {
                        path: path.clone(),
                        old: "one".into(),
                        new: "two".into(),
                        replace_all: false,
                        guard: None,
                    },
                });
                last.reuse = true;
                vec![
                    world(WorldOp::Write {
                        path: path.clone(),
                        bytes: b"one\n".to_vec().into(),
                        mode: 0o644,
                    }),
                    Step::plain(Op::Stat { path }),
                    world(WorldOp::Remove { path: "d".into() }),
                    world(WorldOp::Write {
                        path: "d".into(),
                        bytes: b"now a file\n".to_vec().into(),
                        mode: 0o644,
                    }),
                    last,
                ]
            })
            .boxed(),
    ));
    // A name of 200 to 255 bytes, created, replaced and edited (a backend's staging name built
    // from it may not fit).
    recipes.push((
        2,
        (pick(vec![200usize, 233, 234, 240, 254]), any::<bool>())
            .prop_map(|(len, guarded)| {
                let n = "L".repeat(len);
                vec![
                    write(&n, "one\n", WriteGuard::None),
                    write(
                        &n,
                        "one two\n",
                        if guarded {
                            WriteGuard::ReplaceIfVersion(crate::step::VersionRef::Target)
                        } else {
                            WriteGuard::None
                        },
                    ),
                    Step::plain(Op::Edit {
                        path: n,
                        old: "two".into(),
                        new: "three".into(),
                        replace_all: false,
                        guard: None,
                    }),
                ]
            })
            .boxed(),
    ));
    // Names a file URL must percent-encode, asked for their path facts.
    recipes.push((
        1,
        pick(vec!["q?", "s p", "h#", "p%", "a?b#c d%e"])
            .prop_map(|n| {
                vec![
                    world(WorldOp::Write {
                        path: n.to_string(),
                        bytes: b"x\n".to_vec().into(),
                        mode: 0o644,
                    }),
                    Step::plain(Op::Facts {
                        path: n.to_string(),
                        other: ".".into(),
                    }),
                ]
            })
            .boxed(),
    ));
    if caps.cancel_points {
        // A competitor appears where nothing was.
        let mut kinds = vec![Competitor::File("theirs\n".into()), Competitor::Dir];
        if caps.symlinks {
            kinds.push(Competitor::DanglingLink);
        }
        recipes.push((
            4,
            (
                name(),
                pick(kinds),
                pick(vec![
                    WriteGuard::CreateIfAbsent,
                    WriteGuard::CreateIfAbsent,
                    WriteGuard::None,
                ]),
            )
                .prop_map(|(n, c, guard)| {
                    let mut s = write(&n, "mine\n", guard);
                    s.interfere = Interfere::Competitor(c);
                    vec![s]
                })
                .boxed(),
        ));
        // A file changed by someone else between a guarded write's check (or an edit's read)
        // and its publication: stale when guarded; an unguarded edit made again on what is
        // there now (the replacement still holds "one", so that edit succeeds).
        recipes.push((
            3,
            (
                name(),
                0u8..3,
                pick(vec![CancelPoint::BeforeStage, CancelPoint::Staged]),
                pick(vec![
                    Change::Scribble,
                    Change::Replace("one, theirs\n".into()),
                    Change::Remove,
                ]),
            )
                .prop_map(|(n, kind, point, change)| {
                    let target = Some(crate::step::VersionRef::Target);
                    let mut s = match kind {
                        0 => write(
                            &n,
                            "mine\n",
                            WriteGuard::ReplaceIfVersion(crate::step::VersionRef::Target),
                        ),
                        k => Step::plain(Op::Edit {
                            path: n.clone(),
                            old: "one".into(),
                            new: "three".into(),
                            replace_all: false,
                            guard: if k == 1 { target } else { None },
                        }),
                    };
                    s.interfere = Interfere::ChangeAt(point, change);
                    vec![write(&n, "one two\n", WriteGuard::None), s]
                })
                .boxed(),
        ));
        // A write that had to create parents, cancelled.
        recipes.push((
            2,
            (
                name(),
                pick(vec![CancelPoint::BeforeStage, CancelPoint::Staged]),
            )
                .prop_map(|(n, point)| {
                    let mut s = write(&format!("q/r/{n}"), "x\n", WriteGuard::None);
                    s.interfere = Interfere::CancelAt(point);
                    vec![s]
                })
                .boxed(),
        ));
    }
    if caps.symlinks {
        // A link loop, met by a read, a stat or a listing.
        recipes.push((
            1,
            (any::<bool>(), 0u8..3)
                .prop_map(|(pair, op)| {
                    let mut v = vec![world(WorldOp::Symlink {
                        path: "l".into(),
                        target: if pair { "m".into() } else { "l".into() },
                    })];
                    if pair {
                        v.push(world(WorldOp::Symlink {
                            path: "m".into(),
                            target: "l".into(),
                        }));
                    }
                    let path = "l".to_string();
                    v.push(Step::plain(match op {
                        0 => Op::Stat { path },
                        1 => Op::ReadText { path },
                        _ => Op::Resolve { path },
                    }));
                    v
                })
                .boxed(),
        ));
        // `..` right after a linked directory: lexical, not physical.
        recipes.push((
            1,
            (name(), any::<bool>())
                .prop_map(|(n, stat)| {
                    let path = format!("l/../{n}");
                    vec![
                        world(WorldOp::Mkdir { path: "d".into() }),
                        world(WorldOp::Symlink {
                            path: "l".into(),
                            target: "d".into(),
                        }),
                        Step::plain(if stat {
                            Op::Stat { path }
                        } else {
                            Op::Resolve { path }
                        }),
                    ]
                })
                .boxed(),
        ));
        // A missing path under a linked directory, resolved.
        recipes.push((
            1,
            (name(), any::<bool>())
                .prop_map(|(n, stat)| {
                    let path = format!("l/{n}");
                    vec![
                        world(WorldOp::Mkdir { path: "d".into() }),
                        world(WorldOp::Symlink {
                            path: "l".into(),
                            target: "d".into(),
                        }),
                        Step::plain(if stat {
                            Op::Stat { path }
                        } else {
                            Op::Resolve { path }
                        }),
                    ]
                })
                .boxed(),
        ));
        // A target resolved, then a live link put at its key: a write or an edit must not
        // follow it; a read does.
        recipes.push((
            2,
            (name(), 0u8..4)
                .prop_map(|(n, k)| {
                    let path = n.clone();
                    let mut last = Step::plain(match k {
                        0 | 1 => Op::Write {
                            path: path.clone(),
                            content: "mine\n".into(),
                            guard: WriteGuard::None,
                        },
                        2 => Op::Edit {
                            path: path.clone(),
                            old: "one".into(),
                            new: "two".into(),
                            replace_all: false,
                            guard: None,
                        },
                        _ => Op::ReadText { path: path.clone() },
                    });
                    last.reuse = true;
                    vec![
                        world(WorldOp::Write {
                            path: path.clone(),
                            bytes: b"one\n".to_vec().into(),
                            mode: 0o644,
                        }),
                        world(WorldOp::Write {
                            path: "e/b".into(),
                            bytes: b"one elsewhere\n".to_vec().into(),
                            mode: 0o644,
                        }),
                        Step::plain(Op::Stat { path: path.clone() }),
                        world(WorldOp::Remove { path: path.clone() }),
                        world(WorldOp::Symlink {
                            path,
                            target: "e/b".into(),
                        }),
                        last,
                    ]
                })
                .boxed(),
        ));
        // A directory listed through a link to it.
        recipes.push((
            1,
            (name(), pick(vec!["d", "/d"]), pick(vec!["l", "m"]))
                .prop_map(|(n, target, link)| {
                    vec![
                        world(WorldOp::Write {
                            path: format!("d/{n}"),
                            bytes: b"x\n".to_vec().into(),
                            mode: 0o644,
                        }),
                        world(WorldOp::Symlink {
                            path: link.to_string(),
                            target: target.to_string(),
                        }),
                        Step::plain(Op::ListDir {
                            path: link.to_string(),
                        }),
                    ]
                })
                .boxed(),
        ));
        // Writes and edits through a live link; a write that would create through a dangling one.
        recipes.push((
            3,
            (any::<bool>(), any::<bool>())
                .prop_map(|(edit, dangling)| {
                    let mut v = vec![
                        world(WorldOp::Write {
                            path: "a".into(),
                            bytes: b"one\n".to_vec().into(),
                            mode: 0o644,
                        }),
                        world(WorldOp::Symlink {
                            path: "l".into(),
                            target: if dangling {
                                "nowhere".into()
                            } else {
                                "a".into()
                            },
                        }),
                    ];
                    v.push(if dangling {
                        write("l/x", "x\n", WriteGuard::None)
                    } else if edit {
                        Step::plain(Op::Edit {
                            path: "l".into(),
                            old: "one".into(),
                            new: "two".into(),
                            replace_all: false,
                            guard: None,
                        })
                    } else {
                        write("l", "two\n", WriteGuard::None)
                    });
                    v
                })
                .boxed(),
        ));
    }
    if config.fifos {
        recipes.push((
            1,
            (name(), any::<bool>())
                .prop_map(|(n, stream)| {
                    let read = if stream {
                        Op::StreamText { path: n.clone() }
                    } else {
                        Op::ReadText { path: n.clone() }
                    };
                    vec![world(WorldOp::Mkfifo { path: n }), Step::plain(read)]
                })
                .boxed(),
        ));
    }
    if let super::Policies::Drawn(_) = config.policies {
        // A fencing backend: the fence's attack layout.
        recipes.push((4, super::fence::attack()));
    }
    proptest::strategy::Union::new_weighted(recipes).boxed()
}
