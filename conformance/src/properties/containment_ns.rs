//! The namespace operations under `containment`: `create_dir`, `remove` and `rename` attacked
//! with the same ways out as writes (links to a directory outside, absolute and relative, a
//! sibling whose name extends the workspace's, `..`), at either end of a rename. A rename out
//! through a link, a rename in of something outside, a remove or a new directory through a link
//! out must be `FS_SANDBOX_DENIED` naming the end that leads out, and change nothing anywhere;
//! removing or moving a link that points out touches only the link, inside. The whole world is
//! read back after every attack, and any change outside the workspace is an escape.
//!
//! (A directory swapped for a link *while* a namespace operation runs needs a checkpoint inside
//! it; these operations have none, so their confinement is checked here on links that are there
//! when the call starts — the walk beneath the root that makes the call is the same one a write
//! uses, which the swapped-link attacks on writes exercise.)

use super::fence_layout::{layout, outside};
use super::{Context, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{
    CreateDirOptions, FileSystem, FsError, RemoveOptions, RenameOptions, ResolveOptions,
    SandboxMode, SandboxPolicy, Signal,
};
use seam_model::SnapEntry;

/// What an attack does.
#[derive(Clone, Copy, Debug)]
enum Act {
    Mkdir(&'static str),
    Remove(&'static str),
    Rename(&'static str, &'static str),
}

/// What must come of it.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// `FS_SANDBOX_DENIED` naming this path; nothing changed anywhere.
    DeniedAt(&'static str),
    /// Allowed: these entries change (inside the workspace), nothing else.
    Changes(&'static [&'static str]),
}

fn attacks() -> Vec<(Act, Expect)> {
    use Act::*;
    use Expect::*;
    vec![
        (
            Rename("ws/in/file", "ws/abs/stolen"),
            DeniedAt("ws/abs/stolen"),
        ),
        (
            Rename("ws/in/file", "ws/rel/sub/x"),
            DeniedAt("ws/rel/sub/x"),
        ),
        (Rename("ws/in/file", "ws/../out/x"), DeniedAt("out/x")),
        (Rename("ws/in/file", "{root}/ws2/x"), DeniedAt("ws2/x")),
        (Rename("ws/abs/canary", "ws/got"), DeniedAt("ws/abs/canary")),
        (
            Rename("ws/chain/canary", "ws/got"),
            DeniedAt("ws/chain/canary"),
        ),
        (
            Rename("{root}/ws2/canary", "ws/got"),
            DeniedAt("ws2/canary"),
        ),
        (Remove("ws/abs/canary"), DeniedAt("ws/abs/canary")),
        (Remove("ws/rel/canary"), DeniedAt("ws/rel/canary")),
        (Remove("{root}/out/canary"), DeniedAt("out/canary")),
        (Mkdir("ws/abs/newdir"), DeniedAt("ws/abs/newdir")),
        (Mkdir("ws/rel/sub/new"), DeniedAt("ws/rel/sub/new")),
        (Mkdir("ws/sib/new"), DeniedAt("ws/sib/new")),
        // A link that points out is an entry inside: removing or moving it touches it alone.
        (Remove("ws/file-abs"), Changes(&["ws/file-abs"])),
        (Remove("ws/abs"), Changes(&["ws/abs"])),
        (Rename("ws/abs", "ws/abs2"), Changes(&["ws/abs", "ws/abs2"])),
        (
            Rename("ws/in", "ws/inner"),
            Changes(&["ws/in", "ws/in/file", "ws/inner", "ws/inner/file"]),
        ),
        (Mkdir("ws/in/new"), Changes(&["ws/in/new"])),
    ]
}

async fn act(
    fs: &dyn FileSystem,
    act: Act,
    root: &str,
    policy: &SandboxPolicy,
) -> Result<(), FsError> {
    let none = Signal::none();
    let opts = ResolveOptions { cwd: Some(root) };
    let p = |s: &str| s.replace("{root}", root);
    match act {
        Act::Mkdir(path) => {
            let request = CreateDirOptions {
                parents: true,
                exist_ok: false,
            };
            fs.create_dir(&p(path), opts, request, Some(policy), &none)
                .await
                .map(|_| ())
        }
        Act::Remove(path) => {
            let request = RemoveOptions {
                if_version: None,
                directory: true,
            };
            fs.remove(&p(path), opts, &request, Some(policy), &none)
                .await
                .map(|_| ())
        }
        Act::Rename(from, to) => fs
            .rename(
                &p(from),
                &p(to),
                opts,
                &RenameOptions::default(),
                Some(policy),
                &none,
            )
            .await
            .map(|_| ()),
    }
}

/// Runs every namespace attack, each on a fresh subject.
pub(super) fn attack(cx: &Context, out: &mut Run) -> Result<(), Failure> {
    let rt = cx.runtime()?;
    for (a, expect) in attacks() {
        let subject = cx
            .factory
            .make(&cx.options())
            .map_err(|e| fail(FailureKind::Setup, e))?;
        let (fs, world) = (subject.fs.clone(), subject.world.clone());
        let root = world.root_display();
        let setup = |e: std::io::Error| fail(FailureKind::Setup, e.to_string());
        for effect in layout(&root) {
            world.apply(&effect).map_err(setup)?;
        }
        let policy = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            workspace_root: format!("{root}/ws"),
        };
        let what = format!("{a:?}");
        let before = world.snapshot().map_err(setup)?;
        let result = rt.block_on(act(fs.as_ref(), a, &root, &policy));
        let after = world.snapshot().map_err(setup)?;
        out.stats.check();
        if outside(&after) != outside(&before) {
            let changed: Vec<&String> = after
                .keys()
                .chain(before.keys())
                .filter(|k| after.get(*k) != before.get(*k))
                .filter(|k| *k != "ws" && !k.starts_with("ws/"))
                .collect();
            return Err(fail(
                FailureKind::Sandbox,
                format!(
                    "an escape: {what} changed {changed:?} outside the workspace (it answered {result:?})"
                ),
            ));
        }
        out.stats.check();
        match (expect, &result) {
            (Expect::DeniedAt(rel), Err(e)) => {
                let denied =
                    FsError::sandbox_denied(&format!("{root}/{rel}"), SandboxMode::WorkspaceWrite);
                if *e != denied || after != before {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!(
                            "{what}: expected {} {:?} and nothing changed, got {} {:?}",
                            denied.code(),
                            denied.message(),
                            e.code(),
                            e.message()
                        ),
                    ));
                }
                out.stats.rule(Rule::SandboxNamespaceDenied);
            }
            (Expect::Changes(changes), Ok(())) => {
                let stray: Vec<&String> = after
                    .keys()
                    .chain(before.keys())
                    .filter(|k| after.get(*k) != before.get(*k))
                    .filter(|k| !changes.contains(&k.as_str()))
                    .collect();
                if !stray.is_empty() {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!("{what} was allowed but also changed {stray:?}"),
                    ));
                }
                if let Act::Rename(from, to) = a
                    && (after.contains_key(from) || !after.contains_key(to))
                {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!(
                            "{what} was allowed but did not move it: {:?}",
                            after.get(to)
                        ),
                    ));
                }
                if let (Act::Rename(from, to), Some(SnapEntry::Symlink { target })) = (
                    a,
                    before.get(match a {
                        Act::Rename(f, _) => f,
                        _ => "",
                    }),
                ) && after.get(to)
                    != Some(&SnapEntry::Symlink {
                        target: target.clone(),
                    })
                {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!("{what}: the link {from:?} did not arrive as the same link"),
                    ));
                }
                out.stats.rule(Rule::SandboxNamespaceLinkInside);
            }
            (expect, other) => {
                return Err(fail(
                    FailureKind::Sandbox,
                    format!("{what}: expected {expect:?}, got {other:?}"),
                ));
            }
        }
    }
    Ok(())
}
