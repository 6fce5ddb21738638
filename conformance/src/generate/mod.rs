//! Generators. Steps are aimed at what exists (reads at files, listings at directories, edits at
//! words that occur, `read_bytes` caps around a file's size, earlier targets reused after the
//! world changed) and drawn from alphabets built to reach every rule of the contract at any seed
//! ([`alphabet`]). What a backend does not claim is never generated.

mod agent;
mod alphabet;
mod fence;
mod free;
mod hints;
mod lazy_union;
mod openings;
mod short;

pub(crate) use agent::{agent_opening, agent_step_strategy};
pub use alphabet::text_corpus;
pub(crate) use alphabet::{diff_limit_generated, longest_name};
pub use fence::Policies;
pub(crate) use fence::{let_through, let_through_one};
pub use free::step_strategy;
pub use hints::{GenState, Hints, apply_hint, keeps_links_inside};
pub(crate) use openings::opening;
pub(crate) use short::{ShortConfig, shape_names, short_cases};

use crate::step::{Interfere, Op, ROOT_TOKEN, Step, VersionRef, WriteGuard};
use alphabet::{CAPS, LINK_TARGETS, MODES, NAMES};
use bytes::Bytes;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use seam::{CancelPoint, Capabilities};
use seam_model::{Change, Competitor, WorldOp};
use std::sync::Arc;

/// What generation knows about the backend: its claims, its world, its diff-basis limit.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// The backend's claims.
    pub caps: Capabilities,
    /// Whether the world can make FIFOs.
    pub fifos: bool,
    /// Whether the world can put a file's old mtime back exactly after rewriting it.
    pub restore_mtime: bool,
    /// Whether the storage keeps permission bits at all ([`crate::World::keeps_modes`]).
    pub modes: bool,
    /// The backend's diff-basis limit.
    pub diff_limit: u64,
    /// The per-call sandbox policies mutations carry.
    pub policies: Policies,
}

/// A strategy that depends on nothing, built once per thread and shared. A strategy is a tree
/// of boxed parts; building the same ones again for every step was a large share of the
/// gate's time. The draws are the same: it is the same strategy.
macro_rules! built_once {
    ($(#[$m:meta])* $vis:vis fn $name:ident() -> $ty:ty $body:block) => {
        $(#[$m])*
        $vis fn $name() -> $ty {
            thread_local! {
                static BUILT: $ty = $body;
            }
            BUILT.with(Clone::clone)
        }
    };
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
    "tail",
    "b\n",
];
pub(crate) const NEW_STRINGS: &[&str] = &["b", "", "$&", "x\ny", "\r\n", "Z", "é", "\n", "a"];

pub(crate) fn pick<T: Clone + std::fmt::Debug + 'static>(items: Vec<T>) -> BoxedStrategy<T> {
    proptest::sample::select(items).boxed()
}

/// [`pick`] from a shared alphabet: the same draws (an index among as many), and only the item
/// drawn is cloned.
pub(crate) fn pick_shared<T: Clone + std::fmt::Debug + Send + Sync + 'static>(
    items: std::sync::Arc<[T]>,
) -> BoxedStrategy<T> {
    // `select` is an index drawn from `0..len` and mapped: the same, without a vector of the
    // indices.
    (0..items.len()).prop_map(move |i| items[i].clone()).boxed()
}

/// [`pick`] from a constant list, which is not copied.
pub(crate) fn pick_static<T: Clone + std::fmt::Debug + 'static>(
    items: &'static [T],
) -> BoxedStrategy<T> {
    proptest::sample::select(items).boxed()
}

built_once! {
    pub(crate) fn name() -> BoxedStrategy<String> {
        let mut options: Vec<(u32, BoxedStrategy<String>)> = NAMES
            .iter()
            .map(|(w, n)| (*w, Just(n.to_string()).boxed()))
            .collect();
        options.push((1, Just(longest_name()).boxed()));
        proptest::strategy::Union::new_weighted(options).boxed()
    }
}

built_once! {
    /// Names that tend to be directories (or links to them) when they lead a longer path.
    fn dir_name() -> BoxedStrategy<&'static str> {
        prop_oneof![
            6 => Just("d"),
            1 => Just("dd"),
            2 => Just("e"),
            2 => Just("l"),
            1 => Just("a"),
            1 => Just("m"),
        ]
        .boxed()
    }
}

built_once! {
    pub(crate) fn rel_path() -> BoxedStrategy<String> {
        let name = name();
        let dir = dir_name();
        prop_oneof![
            6 => name.clone(),
            3 => (dir.clone(), name.clone()).prop_map(|(a, b)| format!("{a}/{b}")),
            1 => (dir.clone(), dir, name).prop_map(|(a, b, c)| format!("{a}/{b}/{c}")),
        ]
        .boxed()
    }
}

built_once! {
    /// Paths where a directory is wanted.
    fn dir_path() -> BoxedStrategy<String> {
        let dir = dir_name();
        prop_oneof![
            4 => dir.clone().prop_map(str::to_string),
            1 => (dir.clone(), dir).prop_map(|(a, b)| format!("{a}/{b}")),
        ]
        .boxed()
    }
}

built_once! {
    /// A spelling of a path the way a model might type it.
    fn spelling() -> BoxedStrategy<String> {
        prop_oneof![
            30 => rel_path(),
            5 => rel_path().prop_map(|p| format!("{ROOT_TOKEN}/{p}")),
            3 => (dir_name(), rel_path()).prop_map(|(d, p)| format!("{d}/../{p}")),
            2 => (pick(vec!["l", "m"]), rel_path()).prop_map(|(d, p)| format!("{d}/../{p}")),
            2 => rel_path().prop_map(|p| format!("./{p}")),
            1 => rel_path().prop_map(|p| format!("{p}/")),
            2 => Just(".".to_string()),
            1 => Just(ROOT_TOKEN.to_string()),
            1 => pick(vec!["", "  "]).prop_map(str::to_string),
            1 => Just("a\0b".to_string()),
            1 => Just("x".repeat(256)),
            // Refused spellings that normalisation would change: the refusal names them as given.
            2 => pick(vec![
                "./a\0b".to_string(),
                "d/../a\0b".to_string(),
                "a\0b/".to_string(),
                format!("./{}", "x".repeat(256)),
                format!("d/../{}/", "x".repeat(256)),
            ]),
        ]
        .boxed()
    }
}

/// A spelling aimed at existing entries half the time (at entries of the kind the operation
/// wants, when there are some).
pub(crate) fn spelling_hinted(hints: &Hints, want: &Arc<[String]>) -> BoxedStrategy<String> {
    let pool = if want.is_empty() { &hints.paths } else { want };
    if pool.is_empty() {
        return spelling();
    }
    let existing = pick_shared(pool.clone());
    prop_oneof![
        7 => existing.clone(),
        1 => existing.prop_map(|p| format!("{ROOT_TOKEN}/{p}")),
        3 => spelling(),
    ]
    .boxed()
}

pub(crate) fn old_string(hints: &Hints) -> BoxedStrategy<String> {
    let fixed = pick_static(OLD_STRINGS).prop_map(str::to_string);
    if hints.words.is_empty() {
        return fixed.boxed();
    }
    prop_oneof![1 => fixed, 2 => pick_shared(hints.words.clone())].boxed()
}

built_once! {
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
}

/// Contents a provider is asked to write: the corpus, and the edge contents now and then.
fn content(config: &GenConfig) -> BoxedStrategy<Arc<str>> {
    let c = alphabet::corpora(config.diff_limit);
    prop_oneof![
        10 => pick_shared(c.texts),
        4 => pick_shared(c.edges),
    ]
    .boxed()
}

/// Raw bytes the world writes: the corpus, the edge contents, and bytes that are not UTF-8.
fn world_bytes(config: &GenConfig) -> BoxedStrategy<Bytes> {
    let c = alphabet::corpora(config.diff_limit);
    let texts = c.texts.clone();
    prop_oneof![
        9 => pick_shared(texts).prop_map(|t| alphabet::shared_bytes(&t)),
        4 => pick_shared(c.world_edges),
        2 => pick_shared(c.binary),
    ]
    .boxed()
}

/// A relative path for a world change: an existing file most of the time, when there is one.
fn world_file(hints: &Hints) -> BoxedStrategy<String> {
    if hints.files.is_empty() {
        return rel_path();
    }
    prop_oneof![3 => pick_shared(hints.file_paths()), 1 => rel_path()].boxed()
}

pub(crate) fn world_op(config: &GenConfig, hints: &Hints) -> BoxedStrategy<Step> {
    let caps = config.caps;
    let modes = caps.modes;
    let restore_mtime = config.restore_mtime;
    let write = (rel_path(), world_bytes(config), pick_static(MODES)).prop_map(
        move |(path, bytes, mode)| WorldOp::Write {
            path,
            bytes,
            mode: if modes { mode } else { 0o644 },
        },
    );
    let mut options: Vec<(u32, BoxedStrategy<WorldOp>)> = vec![
        (12, write.boxed()),
        (
            4,
            (world_file(hints), any::<bool>())
                .prop_map(move |(path, restore)| WorldOp::Scribble {
                    path,
                    restore_mtime: restore && restore_mtime,
                })
                .boxed(),
        ),
        (
            2,
            (
                world_file(hints),
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
            world_file(hints)
                .prop_map(|path| WorldOp::Remove { path })
                .boxed(),
        ),
    ];
    if caps.symlinks {
        // Links named like directories (`l`, `m`) to directories make aliases, `..` after a
        // link, and missing paths under a linked directory; the rest are anything.
        let dir_link = (
            pick(vec!["l", "m"]),
            pick(vec!["d", "../d", "/d", "dd", "e"]),
        )
            .prop_map(|(path, target)| WorldOp::Symlink {
                path: path.to_string(),
                target: target.to_string(),
            });
        let any_link =
            (rel_path(), pick_static(LINK_TARGETS)).prop_map(|(path, target)| WorldOp::Symlink {
                path,
                target: target.to_string(),
            });
        options.push((6, dir_link.boxed()));
        options.push((4, any_link.boxed()));
    }
    if caps.modes {
        options.push((
            2,
            (world_file(hints), pick_static(MODES))
                .prop_map(|(path, mode)| WorldOp::Chmod { path, mode })
                .boxed(),
        ));
    }
    if config.fifos {
        options.push((
            2,
            rel_path().prop_map(|path| WorldOp::Mkfifo { path }).boxed(),
        ));
    }
    proptest::strategy::Union::new_weighted(options)
        .prop_map(|w| Step::plain(Op::World(w)))
        .boxed()
}

/// The interference of a mutation: `competitors` where something may appear at a target that
/// was absent (writes not guarded by a version), `changes` where the file may be changed
/// under a mutation that checked it (version-guarded writes and edits).
fn mutation_interference(
    caps: Capabilities,
    competitors: bool,
    changes: bool,
) -> BoxedStrategy<Interfere> {
    type Built = Vec<((Capabilities, bool, bool), BoxedStrategy<Interfere>)>;
    thread_local! {
        static BUILT: std::cell::RefCell<Built> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = (caps, competitors, changes);
    if let Some(s) = BUILT.with(|b| {
        b.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.clone())
    }) {
        return s;
    }
    let s = build_mutation_interference(caps, competitors, changes);
    BUILT.with(|b| b.borrow_mut().push((key, s.clone())));
    s
}

fn build_mutation_interference(
    caps: Capabilities,
    competitors: bool,
    changes: bool,
) -> BoxedStrategy<Interfere> {
    let mut options: Vec<(u32, BoxedStrategy<Interfere>)> = vec![
        (80, Just(Interfere::None).boxed()),
        (4, Just(Interfere::CancelledBeforeStart).boxed()),
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
            options.push((12, pick(kinds).prop_map(Interfere::Competitor).boxed()));
        }
        if changes {
            options.push((
                6,
                (
                    pick(vec![CancelPoint::BeforeStage, CancelPoint::Staged]),
                    pick(vec![
                        Change::Scribble,
                        Change::Replace("theirs\n".into()),
                        Change::Remove,
                    ]),
                )
                    .prop_map(|(p, c)| Interfere::ChangeAt(p, c))
                    .boxed(),
            ));
        }
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

built_once! {
    fn read_interference() -> BoxedStrategy<Interfere> {
        prop_oneof![95 => Just(Interfere::None), 5 => Just(Interfere::CancelledBeforeStart)].boxed()
    }
}

built_once! {
    /// The working directory a step's relative paths resolve against, now and then: a directory,
    /// a sibling whose name extends it, a link to one (taken lexically), or nothing there.
    fn cwd() -> BoxedStrategy<Option<String>> {
        prop::option::weighted(
            0.08,
            pick(vec!["d", "d/d", "dd", "l", "e"]).prop_map(str::to_string),
        )
        .boxed()
    }
}

built_once! {
    /// Whether a step uses a target resolved earlier (about one in seven).
    fn reuse() -> BoxedStrategy<bool> {
        prop::bool::weighted(0.15).boxed()
    }
}

/// `read_bytes` caps: fixed ones, and one byte under, at and over a file's size.
fn read_bytes_op(hints: &Hints) -> BoxedStrategy<Op> {
    let fixed = (
        spelling_hinted(hints, &hints.file_paths()),
        pick_static(CAPS),
    )
        .prop_map(|(path, max)| Op::ReadBytes { path, max })
        .boxed();
    if hints.files.is_empty() {
        return fixed;
    }
    let around = (pick_shared(hints.files.clone()), 0u64..3)
        .prop_map(|((path, size), d)| Op::ReadBytes {
            path,
            max: (size + d).saturating_sub(1),
        })
        .boxed();
    prop_oneof![1 => fixed, 2 => around].boxed()
}

/// What a generated run never produces for this backend, and why: the report lists these so a
/// skipped kind of step is visible, not silent.
pub fn skipped_steps(config: &GenConfig) -> Vec<(String, String)> {
    let caps = config.caps;
    let mut out = Vec::new();
    let mut skip = |what: &str, why: &str| out.push((what.to_string(), why.to_string()));
    if !caps.symlinks {
        skip(
            "symlinks (aliases, dangling and looping links, writes through links)",
            "not claimed (symlinks)",
        );
    }
    if !config.modes {
        skip(
            "permission bits and chmod",
            "the storage keeps none (its world says \"modes\": false), so none is compared",
        );
    } else if !caps.modes {
        skip("permission bits and chmod", "not claimed (modes)");
    }
    if !caps.read_bytes {
        skip("read_bytes steps", "not claimed (read_bytes)");
    }
    if !caps.cancel_points {
        skip(
            "cancellation inside a mutation (before_stage, staged, committed)",
            "not claimed (no cancel points)",
        );
        skip(
            "competitor races (a file, directory or link appearing mid-write)",
            "not claimed (no cancel points)",
        );
    }
    if !(caps.staging_probe && caps.modes) {
        skip(
            "staging modes inspected at the staged point",
            "not claimed (staging_probe and modes)",
        );
    }
    if !caps.namespace {
        skip(
            "create_dir, remove and rename steps",
            "not claimed (namespace)",
        );
    }
    if !config.fifos {
        skip("FIFOs", "the world cannot make them");
    }
    if !config.restore_mtime {
        skip(
            "same-size rewrites that put the file's mtime back",
            "the world cannot restore an mtime exactly",
        );
    }
    if !alphabet::diff_limit_generated(config.diff_limit) {
        skip(
            "contents one byte under, at and over the diff-basis limit",
            &format!(
                "the limit ({} bytes) is over the 1 MiB the suite writes; a factory that gives the provider a limit of at most 1 MiB (Subject::diff_basis_max_bytes) checks it",
                config.diff_limit
            ),
        );
    }
    out
}
