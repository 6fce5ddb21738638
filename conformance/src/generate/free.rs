//! Free steps: after a case's opening, each step is one of a dozen kinds (a world change, a
//! write, an edit, a read, a listing, a namespace change, ...) drawn by weight, aimed at what
//! exists at that point of the sequence. Only the kind drawn is built ([`LazyUnion`]).

use super::lazy_union::LazyUnion;
use super::*;

/// The kinds of free step, in the order they are drawn from (and shrunk towards).
#[derive(Clone, Copy, Debug)]
enum StepKind {
    World,
    Write,
    Edit,
    Stat,
    Lstat,
    Resolve,
    ReadText,
    StreamText,
    ListDir,
    Facts,
    ReadBytes,
    /// One of [`namespace_steps`]' kinds, by its place there.
    Namespace(usize),
}

/// Each kind of free step a backend with `caps` is given, with its weight.
fn step_kinds(caps: Capabilities) -> Vec<(u32, StepKind)> {
    let mut kinds = vec![
        (35, StepKind::World),
        (14, StepKind::Write),
        (14, StepKind::Edit),
        (6, StepKind::Stat),
        (4, StepKind::Lstat),
        (3, StepKind::Resolve),
        (6, StepKind::ReadText),
        (4, StepKind::StreamText),
        (5, StepKind::ListDir),
        (2, StepKind::Facts),
    ];
    if caps.read_bytes {
        kinds.push((4, StepKind::ReadBytes));
    }
    if caps.namespace {
        kinds.extend(
            NAMESPACE_WEIGHTS
                .iter()
                .enumerate()
                .map(|(i, &w)| (w, StepKind::Namespace(i))),
        );
    }
    kinds
}

/// The strategy for one step, given what the backend claims, what its world can do, and what
/// exists at this point of the sequence. Only the kind drawn is built ([`LazyUnion`]).
pub fn step_strategy(config: &GenConfig, state: &GenState) -> BoxedStrategy<Step> {
    if let Some(next) = state.plan.first() {
        return Just(next.clone()).boxed();
    }
    let hints = Hints::from_state(state);
    let config = config.clone();
    LazyUnion::new(step_kinds(config.caps), move |kind| {
        free_step(&config, &hints, kind)
    })
    .boxed()
}

/// The strategy for one kind of free step.
fn free_step(config: &GenConfig, hints: &Hints, kind: StepKind) -> BoxedStrategy<Step> {
    let caps = config.caps;
    let policies = config.policies;
    let files = hints.file_paths();
    let spelling = || spelling_hinted(hints, &hints.paths);
    // Files, and above all the ones written last (a fresh edge content gets read and edited).
    let file_spelling = || {
        if hints.recent.is_empty() {
            spelling_hinted(hints, &files)
        } else {
            prop_oneof![4 => pick_shared(hints.recent.clone()), 4 => spelling_hinted(hints, &files)]
                .boxed()
        }
    };
    // Reads also go to whatever else exists: directories, FIFOs, links.
    let read_spelling =
        || prop_oneof![4 => file_spelling(), 1 => spelling_hinted(hints, &hints.paths)].boxed();
    let dir_spelling = || spelling_hinted(hints, &hints.dirs);
    let read = |op: BoxedStrategy<Op>| {
        (op, read_interference(), reuse(), cwd())
            .prop_map(|(op, interfere, reuse, cwd)| Step {
                reuse: reuse && op.takes_target(),
                op,
                interfere,
                sandbox: None,
                instance: 0,
                cwd,
            })
            .boxed()
    };
    let write = || {
        let write_guard = prop_oneof![
            4 => Just(WriteGuard::None),
            3 => Just(WriteGuard::CreateIfAbsent),
            3 => version_ref().prop_map(WriteGuard::ReplaceIfVersion),
        ];
        // Now and then a path under directories that nothing creates: the write must make them
        // (and remove them again when it is cancelled).
        let mut write_paths: Vec<(u32, BoxedStrategy<String>)> = vec![
            (12, file_spelling()),
            // Fresh names (where a competitor can appear), anything that exists (links, too), and
            // names under a directory-named entry (maybe a dangling link to create through).
            (4, rel_path()),
            (2, spelling_hinted(hints, &hints.paths)),
            (
                2,
                (dir_name(), name())
                    .prop_map(|(d, n)| format!("{d}/{n}"))
                    .boxed(),
            ),
            (2, name().prop_map(|n| format!("q/r/{n}")).boxed()),
        ];
        if !files.is_empty() {
            // Through a regular file, as if it were a directory.
            write_paths.push((
                1,
                pick_shared(files.clone())
                    .prop_map(|f| format!("{f}/x"))
                    .boxed(),
            ));
        }
        let write_path = proptest::strategy::Union::new_weighted(write_paths);
        (
            write_path,
            content(config),
            write_guard,
            reuse(),
            fence::call_sandbox(policies),
            cwd(),
        )
            .prop_flat_map(move |(path, content, guard, reuse, sandbox, cwd)| {
                // A competitor only matters where nothing was there to replace.
                let competitors = !matches!(guard, WriteGuard::ReplaceIfVersion(_));
                mutation_interference(caps, competitors, !competitors).prop_map(move |interfere| {
                    Step {
                        op: Op::Write {
                            path: path.clone(),
                            content: Arc::clone(&content),
                            guard,
                        },
                        interfere,
                        reuse,
                        sandbox: sandbox.clone(),
                        instance: 0,
                        cwd: cwd.clone(),
                    }
                })
            })
            .boxed()
    };
    let edit = || {
        let edit_path =
            prop_oneof![6 => file_spelling(), 1 => spelling_hinted(hints, &hints.paths)];
        (
            edit_path,
            old_string(hints),
            pick_static(NEW_STRINGS),
            prop::bool::weighted(0.3),
            prop::option::weighted(0.25, version_ref()),
            mutation_interference(caps, false, true),
            reuse(),
            (fence::call_sandbox(policies), cwd()),
        )
            .prop_map(
                |(path, old, new, replace_all, guard, interfere, reuse, (sandbox, cwd))| Step {
                    op: Op::Edit {
                        path,
                        old,
                        new: new.to_string(),
                        replace_all,
                        guard,
                    },
                    interfere,
                    reuse,
                    sandbox,
                    instance: 0,
                    cwd,
                },
            )
            .boxed()
    };
    match kind {
        StepKind::World => world_op(config, hints),
        StepKind::Write => write(),
        StepKind::Edit => edit(),
        StepKind::Stat => read(spelling().prop_map(|path| Op::Stat { path }).boxed()),
        StepKind::Lstat => read(spelling().prop_map(|path| Op::Lstat { path }).boxed()),
        StepKind::Resolve => read(spelling().prop_map(|path| Op::Resolve { path }).boxed()),
        StepKind::ReadText => read(
            read_spelling()
                .prop_map(|path| Op::ReadText { path })
                .boxed(),
        ),
        StepKind::StreamText => read(
            read_spelling()
                .prop_map(|path| Op::StreamText { path })
                .boxed(),
        ),
        StepKind::ListDir => read(dir_spelling().prop_map(|path| Op::ListDir { path }).boxed()),
        StepKind::Facts => (spelling(), dir_spelling())
            .prop_map(|(path, other)| Step::plain(Op::Facts { path, other }))
            .boxed(),
        StepKind::ReadBytes => read(read_bytes_op(hints)),
        StepKind::Namespace(i) => namespace_step(config, hints, i),
    }
}

/// Whether a spelling names an entry (not the root itself, which is nobody's entry and which
/// no generated step removes or moves).
fn names_an_entry(path: &str) -> bool {
    let rest = path.strip_prefix(ROOT_TOKEN).unwrap_or(path);
    let mut depth: i64 = 0;
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    depth > 0 || path.trim().is_empty() || path.contains('\0')
}

/// The namespace steps (a backend that claims them): `create_dir`, guarded `remove` and
/// `rename` over what exists (files, links, directories) and fresh names, with stale and
/// fresh guards, onto existing destinations with and without a replace guard, into a
/// directory's own subtree, fenced by a per-call policy now and then, and now and then called
/// with a cancelled signal.
fn namespace_steps(config: &GenConfig, hints: &Hints) -> Vec<BoxedStrategy<Step>> {
    let existing =
        || spelling_hinted(hints, &hints.paths).prop_filter("an entry", |p| names_an_entry(p));
    let dirs =
        || spelling_hinted(hints, &hints.dirs).prop_filter("an entry", |p| names_an_entry(p));
    let dir_prefix = || {
        spelling_hinted(hints, &hints.dirs).prop_filter("a directory to put something in", |d| {
            !d.trim().is_empty() && !d.contains('\0') && d.len() < 200
        })
    };
    let fresh = || rel_path().boxed();
    // Cancelled before the call starts, and — for a backend that shows checkpoints — at the
    // last moment nothing is changed yet (before_stage) or once the change is made (committed).
    let points = config.caps.cancel_points;
    let cancelled = move || {
        let mut options: Vec<(u32, BoxedStrategy<Interfere>)> = vec![
            (17, Just(Interfere::None).boxed()),
            (1, Just(Interfere::CancelledBeforeStart).boxed()),
        ];
        if points {
            options.push((
                1,
                Just(Interfere::CancelAt(CancelPoint::BeforeStage)).boxed(),
            ));
            options.push((1, Just(Interfere::CancelAt(CancelPoint::Committed)).boxed()));
        }
        proptest::strategy::Union::new_weighted(options)
    };
    let policies = config.policies;
    let wrap = move |op: BoxedStrategy<Op>| {
        (op, cancelled(), fence::call_sandbox(policies), cwd())
            .prop_map(|(op, interfere, sandbox, cwd)| Step {
                op,
                interfere,
                reuse: false,
                sandbox,
                instance: 0,
                cwd,
            })
            .boxed()
    };
    let mkdir_path = prop_oneof![
        4 => fresh(),
        3 => existing(),
        2 => (dir_name(), dir_name(), name()).prop_map(|(a, b, c)| format!("{a}/{b}/{c}")),
        1 => name().prop_map(|n| format!("q/r/{n}")),
    ];
    let mkdir = (
        mkdir_path,
        prop::bool::weighted(0.4),
        prop::bool::weighted(0.4),
    )
        .prop_map(|(path, parents, exist_ok)| Op::CreateDir {
            path,
            parents,
            exist_ok,
        })
        .boxed();
    let guard = || prop::option::weighted(0.5, version_ref());
    let remove_path = prop_oneof![6 => existing(), 2 => dirs(), 1 => fresh()];
    let remove = (remove_path, guard(), prop::bool::weighted(0.4))
        .prop_map(|(path, guard, directory)| Op::Remove {
            path,
            guard,
            directory,
        })
        .boxed();
    let source = prop_oneof![8 => existing(), 2 => dirs(), 1 => fresh()].boxed();
    let to = prop_oneof![
        5 => fresh(),
        3 => existing(),
        2 => (dir_prefix(), name()).prop_map(|(d, n)| format!("{d}/{n}")),
        // Beneath the source itself: a directory moved into its own subtree.
        1 => name().prop_map(|n| format!("\u{1}/{n}")),
    ]
    .boxed();
    let rename = (
        source,
        to,
        prop::option::weighted(0.3, version_ref()),
        prop::option::weighted(0.3, version_ref()),
    )
        .prop_map(|(from, to, guard, replace)| Op::Rename {
            to: to.replace('\u{1}', &from),
            from,
            guard,
            replace,
        })
        .boxed();
    vec![wrap(mkdir), wrap(remove), wrap(rename)]
}

/// The weights of [`namespace_steps`]' kinds: `create_dir`, `remove`, `rename`.
const NAMESPACE_WEIGHTS: [u32; 3] = [4, 4, 6];

/// The `which`th of [`namespace_steps`].
fn namespace_step(config: &GenConfig, hints: &Hints, which: usize) -> BoxedStrategy<Step> {
    namespace_steps(config, hints).swap_remove(which)
}
