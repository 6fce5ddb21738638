//! Generation for the agent side: two sessions reading, writing and editing through the tools,
//! while the world changes files behind their backs (a person saving in an editor, a linter, a
//! deletion) and another process writes directly. Openings aim at the policy's promises: a stale
//! mutation and its remedy (re-read, retry), a deleted file recreated after a failed re-read, one
//! session's read never authorising the other, a windowed read authorising an edit.

use super::{
    GenConfig, GenState, Hints, NEW_STRINGS, name, old_string, pick, pick_shared, pick_static,
    rel_path, world_op,
};
use crate::step::{Op, Step, WriteGuard};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use seam_model::WorldOp;

/// The first session most of the time, the second now and then.
fn owner() -> BoxedStrategy<u8> {
    prop_oneof![3 => Just(0u8), 1 => Just(1u8)].boxed()
}

fn agent_content() -> BoxedStrategy<String> {
    pick(vec![
        "one\ntwo\nthree\n".to_string(),
        "alpha beta\r\ngamma\r\n".to_string(),
        "x".to_string(),
        String::new(),
        "\u{feff}bom\nline\n".to_string(),
    ])
}

/// An edit's old and new strings: never empty, never equal (the tool refuses those before any
/// file is touched).
fn edit_strings(hints: &Hints) -> BoxedStrategy<(String, String)> {
    (old_string(hints), pick_static(NEW_STRINGS))
        .prop_map(|(old, new)| {
            let old = if old.is_empty() {
                "one".to_string()
            } else {
                old
            };
            let new = if new == old {
                format!("{new}!")
            } else {
                new.to_string()
            };
            (old, new)
        })
        .boxed()
}

/// One step of an agent sequence.
pub(crate) fn agent_step_strategy(config: &GenConfig, state: &GenState) -> BoxedStrategy<Step> {
    if let Some(next) = state.plan.first() {
        return Just(next.clone()).boxed();
    }
    let hints = &Hints::from_state(state);
    let files = hints.file_paths();
    // Valid paths only: the tools refuse a blank or NUL path as bad arguments, before the
    // provider or the policy sees it (the provider's own refusals are `sequences`' business).
    let file = || {
        if files.is_empty() {
            rel_path()
        } else {
            prop_oneof![4 => pick_shared(files.clone()), 1 => rel_path()].boxed()
        }
    };
    let read = (owner(), file(), prop::bool::weighted(0.3))
        .prop_map(|(owner, path, window)| {
            Step::plain(Op::AgentRead {
                owner,
                path,
                window,
            })
        })
        .boxed();
    let write = (owner(), file(), agent_content())
        .prop_map(|(owner, path, content)| {
            Step::plain(Op::AgentWrite {
                owner,
                path,
                content: content.into(),
            })
        })
        .boxed();
    let edit = (
        owner(),
        file(),
        edit_strings(hints),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(owner, path, (old, new), replace_all)| {
            Step::plain(Op::AgentEdit {
                owner,
                path,
                old,
                new,
                replace_all,
            })
        })
        .boxed();
    // Another process writing directly, past the tools.
    let direct = (file(), agent_content())
        .prop_map(|(path, content)| {
            Step::plain(Op::Write {
                path,
                content: content.into(),
                guard: WriteGuard::None,
            })
        })
        .boxed();
    proptest::strategy::Union::new_weighted(vec![
        (24, world_op(config, hints)),
        (18, read),
        (14, write),
        (16, edit),
        (3, direct),
    ])
    .boxed()
}

fn agent_read(owner: u8, path: &str, window: bool) -> Step {
    Step::plain(Op::AgentRead {
        owner,
        path: path.to_string(),
        window,
    })
}

fn agent_write(owner: u8, path: &str, content: &str) -> Step {
    Step::plain(Op::AgentWrite {
        owner,
        path: path.to_string(),
        content: content.to_string().into(),
    })
}

fn agent_edit(owner: u8, path: &str, old: &str, new: &str) -> Step {
    Step::plain(Op::AgentEdit {
        owner,
        path: path.to_string(),
        old: old.to_string(),
        new: new.to_string(),
        replace_all: false,
    })
}

/// The world's change to a file a session has read: a rewrite in an editor, an append, a
/// same-size rewrite with its mtime put back, or a deletion.
fn external_change(path: String, restore_mtime: bool) -> BoxedStrategy<WorldOp> {
    let p = path.clone();
    let q = path.clone();
    let r = path.clone();
    prop_oneof![
        Just(WorldOp::Write {
            path: p,
            bytes: b"one\ntwo\ntheirs\n".to_vec().into(),
            mode: 0o644,
        }),
        Just(WorldOp::Append {
            path: q,
            bytes: b"more\n".to_vec(),
        }),
        Just(WorldOp::Scribble {
            path: r,
            restore_mtime,
        }),
        Just(WorldOp::Remove { path }),
    ]
    .boxed()
}

/// The opening of an agent sequence: nothing now and then, or one of the policy's situations.
pub(crate) fn agent_opening(config: &GenConfig) -> BoxedStrategy<Vec<Step>> {
    let restore_mtime = config.restore_mtime;
    let seed_file = |path: &str| {
        Step::plain(Op::World(WorldOp::Write {
            path: path.to_string(),
            bytes: b"one\ntwo\nthree\n".to_vec().into(),
            mode: 0o644,
        }))
    };
    // Read, changed behind the session's back, a stale mutation, the remedy.
    let remedy = (name(), any::<bool>(), any::<bool>())
        .prop_flat_map(move |(n, edit, window)| {
            external_change(n.clone(), restore_mtime).prop_map(move |change| {
                let mutate = || {
                    if edit {
                        agent_edit(0, &n, "two", "TWO")
                    } else {
                        agent_write(0, &n, "mine\n")
                    }
                };
                let retry = if edit && matches!(change, WorldOp::Remove { .. }) {
                    // Nothing is left to edit: recreate it instead.
                    agent_write(0, &n, "mine\n")
                } else {
                    mutate()
                };
                vec![
                    seed_file(&n),
                    agent_read(0, &n, window),
                    Step::plain(Op::World(change)),
                    mutate(),
                    agent_read(0, &n, false),
                    retry,
                ]
            })
        })
        .boxed();
    // One session's read never authorises the other.
    let owners = (name(), any::<bool>())
        .prop_map(move |(n, edit)| {
            vec![
                seed_file(&n),
                agent_read(0, &n, false),
                if edit {
                    agent_edit(1, &n, "two", "2")
                } else {
                    agent_write(1, &n, "theirs\n")
                },
            ]
        })
        .boxed();
    // A windowed read authorises an edit.
    let windowed = name()
        .prop_map(move |n| {
            vec![
                seed_file(&n),
                agent_read(0, &n, true),
                agent_edit(0, &n, "three", "3"),
            ]
        })
        .boxed();
    prop_oneof![
        1 => Just(Vec::new()),
        4 => remedy,
        2 => owners,
        2 => windowed,
    ]
    .boxed()
}
