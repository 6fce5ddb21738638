//! `FS_PERMISSION_DENIED`, for real. Root ignores permission bits, and CI runs as root, so a
//! permission test that runs in-process as root proves nothing. This property sets up files and
//! directories the current user cannot use (mode 000, a read-only directory, a directory without
//! search permission) and runs each case as an unprivileged user: in-process when we already are
//! one, otherwise through an [`Unprivileged`] runner the composition root provides (the `seam`
//! binary re-executes itself with a dropped uid).

use super::{Applicability, Context, NotChecked, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::Capability;
use seam::{EditRequest, FileSystem, FsErrorCode, ResolveOptions, Signal};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;

pub use crate::unprivileged::{
    CaseOutcome, PermissionCase, PermissionOp, Unprivileged, UnprivilegedError,
};

/// The cases; every one must be `FS_PERMISSION_DENIED`.
pub fn cases() -> Vec<PermissionCase> {
    let c = |op, path: &str| PermissionCase {
        op,
        path: path.into(),
    };
    vec![
        c(PermissionOp::ReadText, "secret"),
        c(PermissionOp::StreamText, "secret"),
        c(PermissionOp::ReadBytes, "secret"),
        c(PermissionOp::Edit, "secret"),
        c(PermissionOp::Write, "ro/f"),
        c(PermissionOp::Write, "ro/new"),
        c(PermissionOp::Edit, "ro/f"),
        c(PermissionOp::ListDir, "locked"),
        c(PermissionOp::Resolve, "locked/x"),
        c(PermissionOp::Lstat, "locked/x"),
        c(PermissionOp::ListDir, "noexec"),
        c(PermissionOp::Write, "locked/x"),
    ]
}

/// The controls: what the same user must be let do beside the refusals — read a file every
/// user may read, list a directory every user may list. A backend that refuses these too (or a
/// case its user cannot reach at all) would have every refusal for the wrong reason.
pub fn controls() -> Vec<PermissionCase> {
    vec![
        PermissionCase {
            op: PermissionOp::ReadText,
            path: "open".into(),
        },
        PermissionCase {
            op: PermissionOp::ListDir,
            path: "pub".into(),
        },
    ]
}

/// Runs `cases` against `fs` with relative paths under `root`.
pub async fn run_cases(
    fs: &dyn FileSystem,
    root: &str,
    cases: &[PermissionCase],
) -> Vec<CaseOutcome> {
    let mut out = Vec::with_capacity(cases.len());
    let opts = ResolveOptions { cwd: Some(root) };
    let none = Signal::none();
    let through = super::let_through(fs, root);
    let through = through.as_ref();
    for case in cases {
        let result: Result<(), seam::FsError> = async {
            if case.op == PermissionOp::Lstat {
                return fs.lstat(&case.path, opts, &none).await.map(|_| ());
            }
            let t = fs.resolve(&case.path, opts, &none).await?;
            match case.op {
                PermissionOp::Resolve | PermissionOp::Lstat => Ok(()),
                PermissionOp::ReadText => fs.read_text(&t, &none).await.map(|_| ()),
                PermissionOp::StreamText => {
                    use futures_util::StreamExt;
                    let mut s = fs.stream_text(&t, &none).await?;
                    while let Some(c) = s.next().await {
                        c?;
                    }
                    Ok(())
                }
                PermissionOp::ReadBytes => fs.read_bytes(&t, 1 << 20, &none).await.map(|_| ()),
                PermissionOp::ListDir => fs.list_dir(&t, &none).await.map(|_| ()),
                PermissionOp::Write => fs
                    .write_text(&t, "x", None, through, &none)
                    .await
                    .map(|_| ()),
                PermissionOp::Edit => {
                    let e = EditRequest {
                        old_string: "s".into(),
                        new_string: "t".into(),
                        replace_all: false,
                    };
                    fs.edit_text(&t, &e, None, through, &none).await.map(|_| ())
                }
            }
        }
        .await;
        out.push(match result {
            Ok(()) => CaseOutcome {
                code: None,
                message: String::new(),
            },
            Err(e) => CaseOutcome {
                code: Some(e.code()),
                message: e.message().to_string(),
            },
        });
    }
    out
}

fn setup_effects() -> Vec<WorldEffect> {
    let file = |path: &str, mode| WorldEffect::CreateFile {
        path: path.into(),
        bytes: b"s\n".to_vec().into(),
        mode,
    };
    let chmod = |path: &str, mode| WorldEffect::Chmod {
        path: path.into(),
        mode,
    };
    vec![
        file("open", 0o644),
        file("pub/z", 0o644),
        file("secret", 0o000),
        file("ro/f", 0o666),
        chmod("ro", 0o555),
        file("locked/x", 0o644),
        chmod("locked", 0o000),
        file("noexec/y", 0o644),
        chmod("noexec", 0o644),
    ]
}

fn teardown() -> Vec<WorldEffect> {
    ["ro", "locked", "noexec"]
        .into_iter()
        .map(|p| WorldEffect::Chmod {
            path: p.into(),
            mode: 0o755,
        })
        .collect()
}

/// `permission-denied`.
pub struct PermissionDenied;

impl Property for PermissionDenied {
    fn name(&self) -> &'static str {
        "permission-denied"
    }

    fn summary(&self) -> &'static str {
        "what the OS refuses is FS_PERMISSION_DENIED (checked as an unprivileged user), naming the path, changing nothing"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        let claimed = Applicability::needs(&cx.caps, &[Capability::Permissions]);
        if claimed != Applicability::Runs {
            return claimed;
        }
        if rustix::process::geteuid().is_root() && cx.config.unprivileged.is_none() {
            return Applicability::CannotRun(
                "this process is root and no way to drop privileges was provided \
                 (SuiteConfig::unprivileged; the seam binary provides one)"
                    .into(),
            );
        }
        Applicability::Runs
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        // Like a backend the gate cannot kill for `crash`: a fact of how it is deployed.
        if let Err(why) = cx.factory.permissions_checkable() {
            out.not_checked = Some(NotChecked::NotOffered {
                reason: format!("the gate cannot check what this backend refuses: {why}"),
                need: "a backend the gate can run as an unprivileged user".into(),
                rules: vec![Rule::PermissionDenied],
            });
            return Ok(());
        }
        run(cx, out)?;
        out.stats.rule(Rule::PermissionDenied);
        Ok(())
    }
}

fn op_name(op: PermissionOp) -> &'static str {
    match op {
        PermissionOp::Resolve => "resolve",
        PermissionOp::Lstat => "lstat",
        PermissionOp::ReadText => "read_text",
        PermissionOp::StreamText => "stream_text",
        PermissionOp::ReadBytes => "read_bytes",
        PermissionOp::ListDir => "list_dir",
        PermissionOp::Write => "write_text",
        PermissionOp::Edit => "edit_text",
    }
}

fn setup(e: impl std::fmt::Display) -> Failure {
    fail(FailureKind::Setup, e.to_string())
}

fn run(cx: &Context, out: &mut Run) -> Result<(), Failure> {
    let as_root = rustix::process::geteuid().is_root();
    let subject = cx.factory.make(&cx.options()).map_err(setup)?;
    let world = subject.world.clone();
    let root = world.root_display();
    for e in setup_effects() {
        world
            .apply(&e)
            .map_err(|err| setup(format!("setup {e:?}: {err}")))?;
    }
    world
        .open_to_others()
        .map_err(|e| setup(format!("cannot open the root to other users: {e}")))?;
    let before: BTreeMap<String, SnapEntry> = world.snapshot().map_err(setup)?;
    // The controls first, then the refusals, in one run.
    let controls = controls();
    let refusals = cases();
    let cases: Vec<PermissionCase> = controls.iter().chain(&refusals).cloned().collect();
    let outcomes = match cx.config.unprivileged.as_ref().filter(|_| as_root) {
        Some(runner) => match runner.run(&root, &cases) {
            Ok(outcomes) => outcomes,
            Err(UnprivilegedError::CannotStart(why)) => {
                for e in teardown() {
                    let _ = world.apply(&e);
                }
                out.not_checked = Some(NotChecked::NotRun(why));
                return Ok(());
            }
            Err(e @ UnprivilegedError::Failed(_)) => return Err(setup(e)),
        },
        None => cx
            .runtime()?
            .block_on(run_cases(subject.fs.as_ref(), &root, &cases)),
    };
    let after = world.snapshot().map_err(setup);
    for e in teardown() {
        let _ = world.apply(&e);
    }
    out.stats.check();
    if outcomes.len() != cases.len() {
        return Err(setup(format!(
            "{} outcomes for {} cases",
            outcomes.len(),
            cases.len()
        )));
    }
    let (control_outcomes, outcomes) = outcomes.split_at(controls.len());
    for (case, got) in controls.iter().zip(control_outcomes) {
        out.stats.check();
        if let Some(code) = got.code {
            return Err(fail(
                FailureKind::Outcome,
                format!(
                    "{:?} {:?}: refused ({code:?} {:?}) to the unprivileged user, though every \
                     user may do it — the refusals would be for the wrong reason",
                    case.op, case.path, got.message
                ),
            ));
        }
        out.stats.op(op_name(case.op));
    }
    for (case, got) in refusals.iter().zip(outcomes) {
        let display = format!("{root}/{}", case.path);
        out.stats.check();
        if got.code != Some(FsErrorCode::PermissionDenied) {
            return Err(fail(
                FailureKind::Outcome,
                format!(
                    "{:?} {:?}: expected FS_PERMISSION_DENIED, got {:?} {:?}",
                    case.op, case.path, got.code, got.message
                ),
            ));
        }
        out.stats.check();
        if !got.message.contains(&format!("\"{display}"))
            && !got.message.contains(&format!("\"{root}/"))
        {
            return Err(fail(
                FailureKind::Message,
                format!(
                    "{:?} {:?}: the message does not name the path: {:?}",
                    case.op, case.path, got.message
                ),
            ));
        }
        out.stats.code(FsErrorCode::PermissionDenied);
        out.stats.op(op_name(case.op));
    }
    out.stats.check();
    if after? != before {
        return Err(fail(
            FailureKind::BytesOnDisk,
            "a refused operation changed the world",
        ));
    }
    Ok(())
}
