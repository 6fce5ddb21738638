//! Sandbox modes, for a backend that claims them: `read-only` denies writes and edits with
//! `FS_SANDBOX_DENIED` (the contract's text) and changes nothing on disk; `danger-full-access`,
//! and `workspace-write` with the test root as the workspace, let a mutation through. Until a
//! backend fences for real, a claim of sandbox modes without this behaviour fails here.
//! (Containment against links and `..` is the sandbox provider's own property.)

use super::{Applicability, Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::Capability;
use seam::{EditRequest, FsError, ResolveOptions, SandboxMode, SandboxPolicy, Signal};
use seam_model::{SnapEntry, WorldEffect};

/// `sandbox-modes`.
pub struct SandboxModes;

impl Property for SandboxModes {
    fn name(&self) -> &'static str {
        "sandbox-modes"
    }

    fn summary(&self) -> &'static str {
        "read-only denies mutations with FS_SANDBOX_DENIED and changes nothing; wider modes let them through"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        Applicability::needs(&cx.caps, &[Capability::SandboxModes])
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rt = cx.runtime()?;
        let subject = cx
            .factory
            .make(&cx.options())
            .map_err(|e| fail(FailureKind::Setup, e))?;
        let (fs, world) = (subject.fs.clone(), subject.world.clone());
        let root = world.root_display();
        world
            .apply(&WorldEffect::CreateFile {
                path: "old".into(),
                bytes: b"one\n".to_vec().into(),
                mode: 0o644,
            })
            .map_err(|e| fail(FailureKind::Setup, e.to_string()))?;
        let snapshot = || {
            world.snapshot().map_err(|e| {
                fail(
                    FailureKind::Setup,
                    format!("cannot read the world back: {e}"),
                )
            })
        };
        let opts = ResolveOptions { cwd: Some(&root) };
        let none = Signal::none();
        let policy = |mode| SandboxPolicy {
            mode,
            workspace_root: root.clone(),
        };
        let edit = EditRequest {
            old_string: "one".into(),
            new_string: "two".into(),
            replace_all: false,
        };
        let before = snapshot()?;
        let read_only = policy(SandboxMode::ReadOnly);
        for (path, is_edit) in [("new", false), ("old", false), ("old", true)] {
            let result = rt.block_on(async {
                let t = fs.resolve(path, opts, &none).await?;
                let denied = FsError::sandbox_denied(&t.display_path, SandboxMode::ReadOnly);
                let r = if is_edit {
                    fs.edit_text(&t, &edit, None, Some(&read_only), &none)
                        .await
                        .map(|_| ())
                } else {
                    fs.write_text(&t, "x\n", None, Some(&read_only), &none)
                        .await
                        .map(|_| ())
                };
                Ok::<_, FsError>((r, denied))
            });
            let (r, denied) = result.map_err(|e| {
                fail(
                    FailureKind::Outcome,
                    format!("resolve {path:?}: {}", e.message()),
                )
            })?;
            out.stats.check();
            match r {
                Err(e) if e == denied => {}
                other => {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!(
                            "a {} of {path:?} under read-only gave {other:?}, must be {denied:?}",
                            if is_edit { "edit" } else { "write" }
                        ),
                    ));
                }
            }
            out.stats.check();
            if snapshot()? != before {
                return Err(fail(
                    FailureKind::Sandbox,
                    format!("a denied mutation of {path:?} changed the world"),
                ));
            }
        }
        out.stats.rule(Rule::SandboxReadOnly);
        for (path, mode) in [
            ("full", SandboxMode::DangerFullAccess),
            ("workspace", SandboxMode::WorkspaceWrite),
        ] {
            let p = policy(mode);
            let r = rt.block_on(async {
                let t = fs.resolve(path, opts, &none).await?;
                fs.write_text(&t, "ok\n", None, Some(&p), &none).await
            });
            out.stats.check();
            if let Err(e) = r {
                return Err(fail(
                    FailureKind::Sandbox,
                    format!("a write of {path:?} under {} failed: {e:?}", mode.as_str()),
                ));
            }
            match snapshot()?.get(path) {
                Some(SnapEntry::File { bytes, .. }) if bytes[..] == b"ok\n"[..] => {}
                other => {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!("after an allowed write, {path:?} is {other:?}"),
                    ));
                }
            }
        }
        out.stats.rule(Rule::SandboxFullAccess);
        Ok(())
    }
}
