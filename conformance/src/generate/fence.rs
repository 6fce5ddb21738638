//! Per-call sandbox policies for a fencing backend, and the layouts that attack its fence.
//!
//! A mutation of a generated sequence carries a policy now and then: the call's mode (narrower
//! or wider than the deployment's), and a workspace that is the test root, a directory in it, a
//! link to one, or nothing at all. A workspace below the test root makes everything beside it
//! the outside, so the links the generator already makes (`../a`, `/d`, chains, dangling ones,
//! `/` itself) become ways out, and every file beside the workspace is a canary: the harness
//! compares the whole world with the model after every step, and a denied mutation changes
//! nothing anywhere.
//!
//! The attack opening lines the rarest of these up at once: a workspace `d` with links out of
//! every kind, a canary beside it, and a directory swapped for a link to outside after a target
//! beneath it was resolved.

use super::{GenConfig, name, pick};
use crate::step::{CallSandbox, Op, ROOT_TOKEN, Step, WriteGuard};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use seam::SandboxMode;
use seam_model::WorldOp;

/// Which per-call policies the mutations of a run carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policies {
    /// None: the backend does not fence (or the run compares it with a reference that does
    /// not, under a deployment that lets the test root through).
    None,
    /// Drawn at random, around a deployment in this default mode.
    Drawn(SandboxMode),
    /// `workspace-write` on the test root on every mutation: a run under a read-only deployment
    /// that is about something else (a comparison with a reference, the agent surface).
    CaseRoot,
}

/// Workspaces a call may name: the test root, directories the generator makes, a name that is
/// often a link to one, one that never exists, `..` after a link and after a directory, and a
/// relative spelling.
/// (`..` after a link: the real parent of where it leads; a relative spelling: never a root.)
const WORKSPACES: &[&str] = &[
    "", "/d", "/d", "/dd", "/e", "/l", "/d/d", "/nowhere", "/l/..", "/d/../e", "d",
];

fn workspace(spelled: &str) -> String {
    if spelled.is_empty() || spelled.starts_with('/') {
        format!("{ROOT_TOKEN}{spelled}")
    } else {
        spelled.to_string()
    }
}

/// The policy of one generated mutation.
pub(crate) fn call_sandbox(policies: Policies) -> BoxedStrategy<Option<CallSandbox>> {
    let deployment = match policies {
        Policies::None => return Just(None).boxed(),
        Policies::CaseRoot => return Just(Some(CallSandbox::case_root())).boxed(),
        Policies::Drawn(mode) => mode,
    };
    // Under a read-only deployment most calls widen, or nothing but denials would be checked.
    let default_weight = if deployment == SandboxMode::ReadOnly {
        1
    } else {
        3
    };
    let ws = pick(WORKSPACES.to_vec()).prop_map(|w| {
        Some(CallSandbox {
            mode: SandboxMode::WorkspaceWrite,
            workspace: workspace(w),
        })
    });
    let other = pick(vec![SandboxMode::ReadOnly, SandboxMode::DangerFullAccess]).prop_map(|m| {
        Some(CallSandbox {
            mode: m,
            workspace: workspace(""),
        })
    });
    prop_oneof![
        default_weight => Just(None),
        5 => ws,
        2 => other,
    ]
    .boxed()
}

/// Stamps `workspace-write` on the test root on every mutation that has no policy, when the
/// deployment would refuse the recipes (read-only, or workspace-write on its workspace `d`) or
/// the run wants every call let through. (Free steps keep their drawn policy, or none.)
pub(crate) fn let_through(config: &GenConfig, plan: Vec<Step>) -> Vec<Step> {
    plan.into_iter()
        .map(|s| let_through_one(config.policies, s))
        .collect()
}

/// [`let_through`] for one step.
pub(crate) fn let_through_one(policies: Policies, step: Step) -> Step {
    // The deployment's default refuses most of the case (read-only: all of it; workspace-write:
    // everything outside its workspace `d`), which would starve the recipes.
    let stamp = matches!(
        policies,
        Policies::CaseRoot | Policies::Drawn(SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite)
    );
    if stamp && step.op.is_mutation() && step.sandbox.is_none() {
        step.fenced(CallSandbox::case_root())
    } else {
        step
    }
}

fn world(op: WorldOp) -> Step {
    Step::plain(Op::World(op))
}

fn link(path: &str, target: &str) -> Step {
    world(WorldOp::Symlink {
        path: path.into(),
        target: target.into(),
    })
}

/// The attack opening: workspace `d`, a canary `a` beside it, directories `e` and `dd` outside
/// (`dd` extends the workspace's name, for a fence that compares prefixes as text), and links
/// in `d` that lead out (relative, absolute, chained, dangling, to the test root) or stay in;
/// then mutations through each under `workspace-write` on `d`, and a directory of `d` swapped
/// for a link to outside under a target resolved before the swap.
pub(crate) fn attack() -> BoxedStrategy<Vec<Step>> {
    let ways = vec![
        "sibling", "up", "abs", "out", "chain", "dangling", "top", "inside", "sub/x",
    ];
    (
        proptest::sample::subsequence(ways, 2..=5),
        name(),
        any::<bool>(),
    )
        .prop_map(|(ways, n, edit)| {
            let on_d = CallSandbox {
                mode: SandboxMode::WorkspaceWrite,
                workspace: workspace("/d"),
            };
            let mut steps = vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                world(WorldOp::Mkdir {
                    path: "d/sub".into(),
                }),
                world(WorldOp::Mkdir { path: "e".into() }),
                world(WorldOp::Mkdir { path: "dd".into() }),
                world(WorldOp::Write {
                    path: "a".into(),
                    bytes: b"canary\n".to_vec().into(),
                    mode: 0o644,
                }),
                link("d/up", "../a"),
                link("d/abs", "/a"),
                link("d/out", "../e"),
                link("d/chain", "up"),
                link("d/dangling", "../nowhere"),
                link("d/top", "/"),
                link("d/inside", "sub"),
            ];
            for way in ways {
                let path = match way {
                    // A sibling whose name extends the workspace's: outside, by whole components.
                    "sibling" => format!("dd/{n}"),
                    "out" | "top" | "inside" => format!("d/{way}/{n}"),
                    other => format!("d/{other}"),
                };
                let op = if edit && way != "dangling" {
                    Op::Edit {
                        path,
                        old: "canary".into(),
                        new: "pwned".into(),
                        replace_all: false,
                        guard: None,
                    }
                } else {
                    Op::Write {
                        path,
                        content: "pwned\n".into(),
                        guard: WriteGuard::None,
                    }
                };
                steps.push(Step::plain(op).fenced(on_d.clone()));
            }
            // The swap: resolved while `d/sub` is a directory, written after it became a link
            // to outside.
            let swapped = format!("d/sub/{n}");
            steps.push(Step::plain(Op::Resolve {
                path: swapped.clone(),
            }));
            steps.push(world(WorldOp::Remove {
                path: "d/sub".into(),
            }));
            steps.push(link("d/sub", "../e"));
            steps.push(
                Step::plain(Op::Write {
                    path: swapped,
                    content: "pwned\n".into(),
                    guard: WriteGuard::None,
                })
                .reusing()
                .fenced(on_d),
            );
            steps
        })
        .boxed()
}
