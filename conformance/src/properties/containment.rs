//! `containment`: for a backend that claims sandbox modes, mutations under `workspace-write`
//! with the workspace a directory of the case (`ws/`) are attacked with every way out that
//! published escapes used — absolute, relative and chained links to a directory outside, links
//! to files outside, a dangling link that points out, `..` spellings, a sibling whose name
//! extends the workspace's (`ws2/`: a lexical prefix check without a separator lets it
//! through), new files and new parents under a linked-out directory, and a directory swapped for
//! a link to outside after the target was resolved (a fence that checks the resolved path and
//! then opens by name follows it). Every way out must be `FS_SANDBOX_DENIED` with the contract's
//! text (a dangling link may instead be refused as not a regular file); the whole world is read
//! back after every attack, and any change outside the workspace — a canary's bytes, a new
//! entry — is an escape. Ways that stay inside must land where they lead.
//!
//! The attacks are enumerated (each way out × write, create-if-absent and edit), each on a fresh
//! subject. The factory must not make the case's directory writable through a temp root: the
//! suite's "outside" is the rest of the case's directory.
//!
//! A backend that can be deployed with its reads confined ([`seam::Capability::ReadFence`]) has
//! its reads attacked the same way, under the deployment's own fence ([`super::read_fence`]).

use super::fence_layout::{fenced_with_links, layout, link, outside};
use super::{Applicability, Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{
    EditRequest, FileSystem, FsError, FsErrorCode, ResolveOptions, SandboxMode, SandboxPolicy,
    Signal, WriteIntent,
};
use seam_model::{SnapEntry, WorldEffect};

/// `containment`.
pub struct Containment;

/// What an attack does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    Write,
    Create,
    Edit,
}

/// What must come of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// `FS_SANDBOX_DENIED`, nothing changed anywhere.
    Denied,
    /// Denied, or refused as not a regular file; nothing changed anywhere.
    Refused,
    /// Lands at this path beneath the root; nothing else changes.
    Lands(&'static str),
}

/// One attack: the path (`{root}` for the case's directory), the act, the expectation, and
/// the text of a link to outside that `ws/d` is swapped for after the target was resolved.
struct Attack {
    path: &'static str,
    act: Act,
    expect: Expect,
    swap: Option<&'static str>,
}

/// Texts of links to outside that a directory is swapped for: absolute, relative, relative
/// through a directory inside, a chain, and absolute through the workspace and `..`.
const SWAPS: &[&str] = &[
    "{root}/out",
    "../out",
    "in/../../out",
    "rel",
    "{root}/ws/../out",
];

const fn attack(path: &'static str, act: Act, expect: Expect) -> Attack {
    Attack {
        path,
        act,
        expect,
        swap: None,
    }
}

/// Every attack.
fn attacks() -> Vec<Attack> {
    use Act::*;
    use Expect::*;
    let mut v = vec![
        attack("{root}/out/canary", Write, Denied),
        attack("{root}/out/canary", Edit, Denied),
        attack("{root}/out/new", Create, Denied),
        attack("ws/../out/new", Write, Denied),
        attack("ws/in/../../out/canary", Edit, Denied),
        attack("{root}/ws2/new", Write, Denied),
        attack("{root}/ws2/canary", Edit, Denied),
        attack("ws/abs/canary", Write, Denied),
        attack("ws/abs/canary", Edit, Denied),
        attack("ws/abs/new", Create, Denied),
        attack("ws/abs/newdir/new", Write, Denied),
        attack("ws/rel/canary", Edit, Denied),
        attack("ws/rel/sub/new", Write, Denied),
        attack("ws/chain/new", Write, Denied),
        attack("ws/chain/canary", Edit, Denied),
        attack("ws/file-abs", Write, Denied),
        attack("ws/file-abs", Edit, Denied),
        attack("ws/file-rel", Write, Denied),
        attack("ws/sib/new", Write, Denied),
        attack("ws/root/tmp-escape", Write, Denied),
        attack("ws/dang", Write, Refused),
        attack("ws/dang", Create, Refused),
        attack("ws/in/file", Edit, Lands("ws/in/file")),
        attack("ws/in/file", Write, Lands("ws/in/file")),
        attack("ws/new", Create, Lands("ws/new")),
        attack("ws/inlink/x", Write, Lands("ws/in/x")),
        attack("ws/in/../y", Write, Lands("ws/y")),
        attack("ws/deep/er/z", Write, Lands("ws/deep/er/z")),
    ];
    for text in SWAPS {
        for (path, act) in [("ws/d/f", Write), ("ws/d/f", Edit), ("ws/d/new", Create)] {
            v.push(Attack {
                path,
                act,
                expect: Denied,
                swap: Some(text),
            });
        }
    }
    v
}

impl Property for Containment {
    fn name(&self) -> &'static str {
        "containment"
    }

    fn summary(&self) -> &'static str {
        "under workspace-write nothing reaches outside the workspace — nor, where reads are confined, is anything outside read: links out of every kind, `..`, a sibling prefix, a directory swapped for a link after resolution"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        fenced_with_links(cx)
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rt = cx.runtime()?;
        for a in attacks() {
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
            let path = a.path.replace("{root}", &root);
            let what = format!(
                "{:?} of {:?}{}",
                a.act,
                a.path,
                a.swap.map_or(String::new(), |t| format!(
                    " (ws/d swapped for a link {t:?} after resolution)"
                ))
            );
            let policy = SandboxPolicy {
                mode: SandboxMode::WorkspaceWrite,
                workspace_root: format!("{root}/ws"),
            };
            let none = Signal::none();
            let target = rt
                .block_on(fs.resolve(&path, ResolveOptions { cwd: Some(&root) }, &none))
                .map_err(|e| {
                    fail(
                        FailureKind::Outcome,
                        format!("{what}: resolve failed: {}", e.message()),
                    )
                })?;
            if let Some(text) = a.swap {
                world
                    .apply(&WorldEffect::Remove {
                        path: "ws/d".into(),
                    })
                    .map_err(setup)?;
                world
                    .apply(&link("ws/d", &text.replace("{root}", &root)))
                    .map_err(setup)?;
            }
            let before = world.snapshot().map_err(setup)?;
            let result = rt.block_on(mutate(fs.as_ref(), &target, a.act, &policy));
            let after = world.snapshot().map_err(setup)?;
            out.stats.check();
            if outside(&after) != outside(&before) {
                let changed: Vec<&String> = after
                    .iter()
                    .filter(|(k, v)| before.get(*k) != Some(*v))
                    .map(|(k, _)| k)
                    .chain(before.keys().filter(|k| !after.contains_key(*k)))
                    .filter(|k| *k != "ws" && !k.starts_with("ws/"))
                    .collect();
                return Err(fail(
                    FailureKind::Sandbox,
                    format!(
                        "an escape: {what} changed {changed:?} outside the workspace (it answered {result:?})"
                    ),
                ));
            }
            let denied = FsError::sandbox_denied(&target.display_path, SandboxMode::WorkspaceWrite);
            out.stats.check();
            match (a.expect, &result) {
                (Expect::Denied, Err(e)) if *e == denied => {}
                (Expect::Refused, Err(e))
                    if *e == denied || e.code() == FsErrorCode::NotRegularFile => {}
                (Expect::Lands(_), Ok(())) => {}
                (expect, other) => {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!("{what}: expected {expect:?}, got {other:?}"),
                    ));
                }
            }
            out.stats.check();
            match a.expect {
                Expect::Lands(rel) => {
                    let landed = matches!(after.get(rel), Some(SnapEntry::File { bytes, .. }) if bytes == expected_bytes(a.act).as_bytes());
                    // Nothing else changed: not an entry that was there, not a new one beside
                    // the target and the parents it needed.
                    let stray = after
                        .keys()
                        .chain(before.keys())
                        .filter(|k| k.as_str() != rel && !rel.starts_with(&format!("{k}/")))
                        .any(|k| after.get(k) != before.get(k));
                    if !landed || stray {
                        return Err(fail(
                            FailureKind::Sandbox,
                            format!(
                                "{what} was allowed but did not land at {rel:?} alone: {:?}",
                                after.get(rel)
                            ),
                        ));
                    }
                    out.stats.rule(Rule::SandboxContainedLands);
                }
                _ => {
                    if after != before {
                        return Err(fail(
                            FailureKind::Sandbox,
                            format!("{what} was refused but changed the workspace"),
                        ));
                    }
                    out.stats.rule(if a.swap.is_some() {
                        Rule::SandboxSwappedLinkDenied
                    } else {
                        Rule::SandboxWayOutDenied
                    });
                }
            }
        }
        if cx.caps.namespace {
            super::containment_ns::attack(cx, out)?;
        }
        super::read_fence::attack(cx, out)?;
        Ok(())
    }
}

/// The bytes an allowed act leaves.
fn expected_bytes(act: Act) -> &'static str {
    match act {
        Act::Write | Act::Create => "pwned\n",
        Act::Edit => "inPWNED\n",
    }
}

async fn mutate(
    fs: &dyn FileSystem,
    target: &seam::FsTarget,
    act: Act,
    policy: &SandboxPolicy,
) -> Result<(), FsError> {
    let none = Signal::none();
    match act {
        Act::Write => fs
            .write_text(target, "pwned\n", None, Some(policy), &none)
            .await
            .map(|_| ()),
        Act::Create => fs
            .write_text(
                target,
                "pwned\n",
                Some(&WriteIntent::CreateIfAbsent),
                Some(policy),
                &none,
            )
            .await
            .map(|_| ()),
        Act::Edit => {
            let edit = EditRequest {
                old_string: "side".into(),
                new_string: "PWNED".into(),
                replace_all: false,
            };
            fs.edit_text(target, &edit, None, Some(policy), &none)
                .await
                .map(|_| ())
        }
    }
}
