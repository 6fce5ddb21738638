//! `FS_PERMISSION_DENIED`, for real. Root ignores permission bits, and CI runs as root, so a
//! permission test that runs in-process as root proves nothing. This property sets up files and
//! directories the current user cannot use (mode 000, a read-only directory, a directory without
//! search permission) and runs each case as an unprivileged user: in-process when we already are
//! one, otherwise through an [`Unprivileged`] runner the composition root provides (the `seam`
//! binary re-executes itself with a dropped uid).

use super::Context;
use crate::report::PropertyResult;
use crate::stats::Stats;
use seam::{EditRequest, FileSystem, FsErrorCode, ResolveOptions, Signal};
use seam_model::{SnapEntry, WorldEffect};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const NAME: &str = "permission-denied";
const SUMMARY: &str = "what the OS refuses is FS_PERMISSION_DENIED (checked as an unprivileged user), naming the path, changing nothing";

/// The operation of a permission case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOp {
    /// `resolve`.
    Resolve,
    /// `lstat`.
    Lstat,
    /// `read_text`.
    ReadText,
    /// `stream_text`.
    StreamText,
    /// `read_bytes`.
    ReadBytes,
    /// `list_dir`.
    ListDir,
    /// `write_text` (unguarded).
    Write,
    /// `edit_text` (unguarded).
    Edit,
}

/// One case: an operation on a path relative to the root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionCase {
    /// The operation.
    pub op: PermissionOp,
    /// Path relative to the root.
    pub path: String,
}

/// What a case did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseOutcome {
    /// The error code, `None` for success.
    pub code: Option<FsErrorCode>,
    /// The error message (empty for success).
    pub message: String,
}

/// Runs cases as an unprivileged user against a provider rooted at `root`.
pub trait Unprivileged: Send + Sync {
    /// Runs `cases` and returns one outcome per case, in order.
    fn run(&self, root: &str, cases: &[PermissionCase]) -> Result<Vec<CaseOutcome>, String>;
}

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

/// Runs `cases` against `fs` with relative paths under `root`.
pub async fn run_cases(
    fs: &dyn FileSystem,
    root: &str,
    cases: &[PermissionCase],
) -> Vec<CaseOutcome> {
    let mut out = Vec::with_capacity(cases.len());
    let opts = ResolveOptions { cwd: Some(root) };
    let none = Signal::none();
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
                PermissionOp::Write => fs.write_text(&t, "x", None, None, &none).await.map(|_| ()),
                PermissionOp::Edit => {
                    let e = EditRequest {
                        old_string: "s".into(),
                        new_string: "t".into(),
                        replace_all: false,
                    };
                    fs.edit_text(&t, &e, None, None, &none).await.map(|_| ())
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

fn setup() -> Vec<WorldEffect> {
    let file = |path: &str, mode| WorldEffect::CreateFile {
        path: path.into(),
        bytes: b"s\n".to_vec(),
        mode,
    };
    let chmod = |path: &str, mode| WorldEffect::Chmod {
        path: path.into(),
        mode,
    };
    vec![
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

/// Runs the property; `unprivileged` is needed when this process is root.
pub fn run(
    cx: &Context<'_>,
    unprivileged: Option<&dyn Unprivileged>,
    stats: &mut Stats,
) -> PropertyResult {
    if !cx.caps.permissions {
        return PropertyResult::not_claimed(NAME, SUMMARY, "no permission bits");
    }
    let as_root = rustix::process::geteuid().is_root();
    if as_root && unprivileged.is_none() {
        return PropertyResult::not_claimed(
            NAME,
            SUMMARY,
            "running as root and no way to drop privileges was provided",
        );
    }
    let started = std::time::Instant::now();
    let result = (|| -> Result<u64, String> {
        let subject = cx.factory.make(&cx.options())?;
        let world = subject.world.clone();
        let root = world.root_display();
        for e in setup() {
            world
                .apply(&e)
                .map_err(|err| format!("setup {e:?}: {err}"))?;
        }
        world
            .open_to_others()
            .map_err(|e| format!("cannot open the root to other users: {e}"))?;
        let before: BTreeMap<String, SnapEntry> = world.snapshot().map_err(|e| e.to_string())?;
        let cases = cases();
        let outcomes = match unprivileged.filter(|_| as_root) {
            Some(runner) => runner.run(&root, &cases)?,
            None => cx
                .rt
                .block_on(run_cases(subject.fs.as_ref(), &root, &cases)),
        };
        let after = world.snapshot().map_err(|e| e.to_string());
        for e in teardown() {
            let _ = world.apply(&e);
        }
        if outcomes.len() != cases.len() {
            return Err(format!(
                "{} outcomes for {} cases",
                outcomes.len(),
                cases.len()
            ));
        }
        for (case, out) in cases.iter().zip(&outcomes) {
            let display = format!("{root}/{}", case.path);
            if out.code != Some(FsErrorCode::PermissionDenied) {
                return Err(format!(
                    "{:?} {:?}: expected FS_PERMISSION_DENIED, got {:?} {:?}",
                    case.op, case.path, out.code, out.message
                ));
            }
            if !out.message.contains(&format!("\"{display}"))
                && !out.message.contains(&format!("\"{root}/"))
            {
                return Err(format!(
                    "{:?} {:?}: the message does not name the path: {:?}",
                    case.op, case.path, out.message
                ));
            }
            stats.code(FsErrorCode::PermissionDenied);
            stats.op(match case.op {
                PermissionOp::Resolve => "resolve",
                PermissionOp::Lstat => "lstat",
                PermissionOp::ReadText => "read_text",
                PermissionOp::StreamText => "stream_text",
                PermissionOp::ReadBytes => "read_bytes",
                PermissionOp::ListDir => "list_dir",
                PermissionOp::Write => "write_text",
                PermissionOp::Edit => "edit_text",
            });
        }
        if after? != before {
            return Err("a refused operation changed the world".into());
        }
        Ok(cases.len() as u64 + 1)
    })();
    let mut r = match result {
        Ok(n) => PropertyResult::passed(NAME, SUMMARY, n),
        Err(e) => PropertyResult::failed(NAME, SUMMARY, 0, e),
    };
    r.seconds = started.elapsed().as_secs_f64();
    r
}
