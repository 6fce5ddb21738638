//! Generators. The alphabets are small on purpose: a handful of names, contents and link targets
//! make operations collide on the same files again and again, through aliases, `..` and absolute
//! spellings, so that a sequence of forty steps reaches the corners where backends go wrong.

use crate::step::{Interfere, Op, ROOT_TOKEN, Step, VersionRef, WriteGuard};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use seam::{CancelPoint, Capabilities};
use seam_model::{Competitor, Interference, Model, SnapEntry, WorldOp};

/// Names, with weights: lower and upper case (byte order vs locale order), a multi-byte name,
/// and the names that directories and links tend to get. `a` is the hot file.
const NAMES: &[(u32, &str)] = &[
    (8, "a"),
    (2, "b"),
    (3, "B"),
    (1, "é"),
    (4, "d"),
    (2, "e"),
    (3, "l"),
    (2, "m"),
];

/// Link texts: to files and directories, relative and root-absolute, climbing with `..`,
/// dangling, and to each other (loops).
const LINK_TARGETS: &[&str] = &[
    "a", "d", "d/a", "../a", "../d", "/a", "/d", "/d/a", "nowhere", "l", "m", "e/a",
];

/// Permission bits the world sets.
const MODES: &[u32] = &[0o600, 0o644, 0o640, 0o755, 0o444];

/// Caps for `read_bytes`.
const CAPS: &[u64] = &[0, 1, 3, 4, 5, 16, 64, 1 << 20];

/// The text corpus (also in `fixtures/corpus/`): endings of every kind, a BOM, multi-byte
/// characters, replacement patterns, early and late NUL, and text past small diff limits.
pub fn text_corpus() -> Vec<String> {
    let mut late_nul = "a".repeat(8300);
    late_nul.push('\0');
    late_nul.push_str("tail\n");
    vec![
        String::new(),
        "a".into(),
        "a a a".into(),
        "hello\n".into(),
        "one\r\ntwo\r\n".into(),
        "mixed\r\nlf\nlone\rcr\n".into(),
        "\u{feff}bom\r\nline\r\n".into(),
        "\u{feff}a\n".into(),
        "é日本🦀\n".into(),
        "$& $$ $1 $'".into(),
        "x\0y".into(),
        late_nul,
        "a\r\r\nb\r".into(),
        "a\r\nb\r\nc\nd\r\n".into(),
        "line a\n".repeat(300),
    ]
}

/// Raw bytes the world writes: the corpus plus bytes that are not UTF-8.
fn byte_corpus() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = text_corpus().into_iter().map(String::into_bytes).collect();
    v.push(b"h\xFFi".to_vec());
    v.push(b"ok\n\xC3".to_vec());
    v.push(b"\xEF\xBB\xBF".to_vec());
    v
}

const OLD_STRINGS: &[&str] = &[
    "a",
    "a a",
    "\n",
    "\r\n",
    "o",
    "one\ntwo",
    "one\r\ntwo",
    "lf\nlone",
    "bom",
    "é",
    "🦀",
    "$&",
    "",
    "x",
    "a\n",
    "\nb",
    "line",
    "mixed\n",
];
const NEW_STRINGS: &[&str] = &["b", "", "$&", "x\ny", "\r\n", "Z", "é", "\n", "a"];

fn pick<T: Clone + std::fmt::Debug + 'static>(items: Vec<T>) -> BoxedStrategy<T> {
    proptest::sample::select(items).boxed()
}

fn name() -> BoxedStrategy<&'static str> {
    proptest::strategy::Union::new_weighted(
        NAMES.iter().map(|(w, n)| (*w, Just(*n).boxed())).collect(),
    )
    .boxed()
}

/// Names that tend to be directories (or links to them) when they lead a longer path.
fn dir_name() -> BoxedStrategy<&'static str> {
    prop_oneof![6 => Just("d"), 2 => Just("e"), 2 => Just("l"), 1 => Just("a"), 1 => Just("m")]
        .boxed()
}

fn rel_path() -> BoxedStrategy<String> {
    let name = name();
    let dir = dir_name();
    prop_oneof![
        6 => name.clone().prop_map(|n| n.to_string()),
        3 => (dir.clone(), name.clone()).prop_map(|(a, b)| format!("{a}/{b}")),
        1 => (dir.clone(), dir, name).prop_map(|(a, b, c)| format!("{a}/{b}/{c}")),
    ]
    .boxed()
}

/// Paths where a directory is wanted.
fn dir_path() -> BoxedStrategy<String> {
    let dir = dir_name();
    prop_oneof![
        4 => dir.clone().prop_map(str::to_string),
        1 => (dir.clone(), dir).prop_map(|(a, b)| format!("{a}/{b}")),
    ]
    .boxed()
}

/// What the world holds at this point of a sequence, to aim steps at it.
#[derive(Clone, Debug, Default)]
pub struct Hints {
    /// Relative paths of existing entries.
    pub paths: Vec<String>,
    /// Relative paths of existing regular files.
    pub files: Vec<String>,
    /// Relative paths of existing directories.
    pub dirs: Vec<String>,
    /// Words that occur in existing text files.
    pub words: Vec<String>,
}

impl Hints {
    /// Hints from the generation model's state.
    pub fn from_model(model: &Model) -> Hints {
        let snap = model.snapshot();
        let mut words: Vec<String> = Vec::new();
        for e in snap.values() {
            if let SnapEntry::File { bytes, .. } = e
                && let Ok(text) = std::str::from_utf8(bytes)
            {
                for w in text
                    .split([' ', '\n'])
                    .filter(|w| !w.is_empty() && w.len() <= 12)
                {
                    if !words.iter().any(|x| x == w) && words.len() < 16 {
                        words.push(w.to_string());
                    }
                }
            }
        }
        let of = |want: fn(&SnapEntry) -> bool| -> Vec<String> {
            snap.iter()
                .filter(|(_, e)| want(e))
                .map(|(p, _)| p.clone())
                .collect()
        };
        Hints {
            files: of(|e| matches!(e, SnapEntry::File { .. })),
            dirs: std::iter::once(".".to_string())
                .chain(of(|e| matches!(e, SnapEntry::Dir { .. })))
                .collect(),
            paths: snap.keys().cloned().collect(),
            words,
        }
    }
}

/// The root the generation model uses (paths are only hints there).
pub const GEN_ROOT: &str = "/seam-gen-root";

/// Applies a step to the generation model, roughly: enough to know what exists next.
pub fn apply_hint(mut model: Model, step: &Step) -> Model {
    let root = GEN_ROOT;
    let p = |path: &str| crate::step::render_path(path, root);
    match &step.op {
        Op::World(op) => {
            let _ = model.world(op);
        }
        Op::Write { path, content, .. } => {
            let _ = model.write_text(&p(path), content, None, &Interference::None);
        }
        Op::Edit {
            path,
            old,
            new,
            replace_all,
            ..
        } => {
            let _ = model.edit_text(&p(path), old, new, *replace_all, None, &Interference::None);
        }
        _ => {}
    }
    model
}

/// A spelling of a path the way a model might type it, aimed at existing entries half the time
/// (at entries of the kind the operation wants, when there are some).
fn spelling_hinted(hints: &Hints, want: &[String]) -> BoxedStrategy<String> {
    let pool = if want.is_empty() { &hints.paths } else { want };
    if pool.is_empty() {
        return spelling();
    }
    let existing = pick(pool.to_vec());
    prop_oneof![
        7 => existing.clone(),
        1 => existing.prop_map(|p| format!("{ROOT_TOKEN}/{p}")),
        3 => spelling(),
    ]
    .boxed()
}

fn old_string(hints: &Hints) -> BoxedStrategy<String> {
    let fixed = pick(OLD_STRINGS.to_vec()).prop_map(str::to_string);
    if hints.words.is_empty() {
        return fixed.boxed();
    }
    prop_oneof![1 => fixed, 2 => pick(hints.words.clone())].boxed()
}

/// A spelling of a path the way a model might type it.
fn spelling() -> BoxedStrategy<String> {
    let name = name();
    prop_oneof![
        30 => rel_path(),
        5 => rel_path().prop_map(|p| format!("{ROOT_TOKEN}/{p}")),
        3 => (name.clone(), rel_path()).prop_map(|(d, p)| format!("{d}/../{p}")),
        2 => rel_path().prop_map(|p| format!("./{p}")),
        1 => rel_path().prop_map(|p| format!("{p}/")),
        2 => Just(".".to_string()),
        1 => Just(ROOT_TOKEN.to_string()),
        1 => pick(vec!["", "  "]).prop_map(str::to_string),
        1 => Just("a\0b".to_string()),
        1 => Just("x".repeat(256)),
    ]
    .boxed()
}

fn version_ref() -> BoxedStrategy<VersionRef> {
    prop_oneof![
        12 => Just(VersionRef::Target),
        4 => Just(VersionRef::Recent(0)),
        2 => Just(VersionRef::Recent(1)),
        1 => Just(VersionRef::Recent(2)),
        1 => Just(VersionRef::Recent(3)),
    ]
    .boxed()
}

fn world_op(caps: Capabilities, fifos: bool) -> BoxedStrategy<Step> {
    let write = (rel_path(), pick(byte_corpus()), pick(MODES.to_vec()))
        .prop_map(|(path, bytes, mode)| WorldOp::Write { path, bytes, mode });
    let mode_for_write = caps.permissions;
    let write = write.prop_map(move |w| match w {
        WorldOp::Write { path, bytes, .. } if !mode_for_write => WorldOp::Write {
            path,
            bytes,
            mode: 0o644,
        },
        other => other,
    });
    let mut options: Vec<(u32, BoxedStrategy<WorldOp>)> = vec![
        (12, write.boxed()),
        (
            4,
            (rel_path(), any::<bool>())
                .prop_map(|(path, restore_mtime)| WorldOp::Scribble {
                    path,
                    restore_mtime,
                })
                .boxed(),
        ),
        (
            2,
            (
                rel_path(),
                pick(vec![b"\n".to_vec(), b"z".to_vec(), b"\r\n".to_vec()]),
            )
                .prop_map(|(path, bytes)| WorldOp::Append { path, bytes })
                .boxed(),
        ),
        (
            6,
            dir_path().prop_map(|path| WorldOp::Mkdir { path }).boxed(),
        ),
        (
            3,
            rel_path().prop_map(|path| WorldOp::Remove { path }).boxed(),
        ),
    ];
    if caps.symlinks {
        options.push((
            7,
            (rel_path(), pick(LINK_TARGETS.to_vec()))
                .prop_map(|(path, target)| WorldOp::Symlink {
                    path,
                    target: target.to_string(),
                })
                .boxed(),
        ));
    }
    if caps.permissions {
        options.push((
            2,
            (rel_path(), pick(MODES.to_vec()))
                .prop_map(|(path, mode)| WorldOp::Chmod { path, mode })
                .boxed(),
        ));
    }
    if fifos {
        options.push((
            1,
            rel_path().prop_map(|path| WorldOp::Mkfifo { path }).boxed(),
        ));
    }
    proptest::strategy::Union::new_weighted(options)
        .prop_map(|w| Step::plain(Op::World(w)))
        .boxed()
}

fn mutation_interference(caps: Capabilities, competitors: bool) -> BoxedStrategy<Interfere> {
    let mut options: Vec<(u32, BoxedStrategy<Interfere>)> = vec![
        (80, Just(Interfere::None).boxed()),
        (3, Just(Interfere::CancelledBeforeStart).boxed()),
    ];
    if caps.cancel_points {
        options.push((
            9,
            pick(vec![
                CancelPoint::BeforeStage,
                CancelPoint::Staged,
                CancelPoint::Committed,
            ])
            .prop_map(Interfere::CancelAt)
            .boxed(),
        ));
        if competitors {
            let mut kinds = vec![Competitor::File("theirs\n".into()), Competitor::Dir];
            if caps.symlinks {
                kinds.push(Competitor::DanglingLink);
            }
            options.push((8, pick(kinds).prop_map(Interfere::Competitor).boxed()));
        }
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

fn read_interference() -> BoxedStrategy<Interfere> {
    prop_oneof![97 => Just(Interfere::None), 3 => Just(Interfere::CancelledBeforeStart)].boxed()
}

/// The strategy for one step, given what the backend claims, what its world can do, and what
/// exists at this point of the sequence.
pub fn step_strategy(caps: Capabilities, fifos: bool, hints: &Hints) -> BoxedStrategy<Step> {
    let spelling = || spelling_hinted(hints, &[]);
    let file_spelling = || spelling_hinted(hints, &hints.files);
    let dir_spelling = || spelling_hinted(hints, &hints.dirs);
    let read = |op: BoxedStrategy<Op>| {
        (op, read_interference())
            .prop_map(|(op, interfere)| Step { op, interfere })
            .boxed()
    };
    let write_guard = prop_oneof![
        4 => Just(WriteGuard::None),
        3 => Just(WriteGuard::CreateIfAbsent),
        3 => version_ref().prop_map(WriteGuard::ReplaceIfVersion),
    ];
    let write = (file_spelling(), pick(text_corpus()), write_guard)
        .prop_flat_map(move |(path, content, guard)| {
            // A competitor only matters where nothing was there to replace.
            let competitors = !matches!(guard, WriteGuard::ReplaceIfVersion(_));
            mutation_interference(caps, competitors).prop_map(move |interfere| Step {
                op: Op::Write {
                    path: path.clone(),
                    content: content.clone(),
                    guard,
                },
                interfere,
            })
        })
        .boxed();
    let edit = (
        file_spelling(),
        old_string(hints),
        pick(NEW_STRINGS.to_vec()),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.25, version_ref()),
        mutation_interference(caps, false),
    )
        .prop_map(|(path, old, new, replace_all, guard, interfere)| Step {
            op: Op::Edit {
                path,
                old,
                new: new.to_string(),
                replace_all,
                guard,
            },
            interfere,
        })
        .boxed();
    let mut options: Vec<(u32, BoxedStrategy<Step>)> = vec![
        (35, world_op(caps, fifos)),
        (14, write),
        (14, edit),
        (
            6,
            read(spelling().prop_map(|path| Op::Stat { path }).boxed()),
        ),
        (
            4,
            read(spelling().prop_map(|path| Op::Lstat { path }).boxed()),
        ),
        (
            3,
            read(spelling().prop_map(|path| Op::Resolve { path }).boxed()),
        ),
        (
            6,
            read(
                file_spelling()
                    .prop_map(|path| Op::ReadText { path })
                    .boxed(),
            ),
        ),
        (
            3,
            read(
                file_spelling()
                    .prop_map(|path| Op::StreamText { path })
                    .boxed(),
            ),
        ),
        (
            5,
            read(dir_spelling().prop_map(|path| Op::ListDir { path }).boxed()),
        ),
    ];
    if caps.read_bytes {
        options.push((
            3,
            read(
                (file_spelling(), pick(CAPS.to_vec()))
                    .prop_map(|(path, max)| Op::ReadBytes { path, max })
                    .boxed(),
            ),
        ));
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}
