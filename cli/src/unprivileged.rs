//! Running permission cases as an unprivileged user. Root ignores permission bits, so when
//! `seam check` runs as root it re-executes itself as uid/gid 65534 (`nobody`) for these cases:
//! `std::process::Command` drops the supplementary groups and the ids in the child before exec,
//! which needs no unsafe code of ours.

use seam_conformance::{CaseOutcome, PermissionCase, Unprivileged, UnprivilegedError, run_cases};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The user and group the child runs as.
pub const NOBODY: u32 = 65534;

/// The child's exit status when it could not start the backend as itself (its command cannot
/// be executed by `nobody`): the permission cases were not run, which is not a failure.
pub const CANNOT_START: u8 = 3;

/// Why the child stopped.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The backend could not be made as this user ([`CANNOT_START`]).
    #[error("cannot start the backend as this user: {0}")]
    CannotStart(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// Re-executes the `seam` binary as `nobody`.
pub struct SelfExec {
    /// The `seam` binary (the running one, for `seam check`; `CARGO_BIN_EXE_seam` in tests).
    pub exe: PathBuf,
    /// The provider name to construct in the child.
    pub provider: String,
}

impl SelfExec {
    fn spawn(
        &self,
        exe: &std::path::Path,
        root: &str,
        tmp: Option<&Path>,
    ) -> std::io::Result<std::process::Child> {
        let mut command = Command::new(exe);
        if let Some(tmp) = tmp {
            command.env("TMPDIR", tmp);
        }
        command
            .args([
                "__unprivileged",
                "--provider",
                &self.provider,
                "--root",
                root,
            ])
            .uid(NOBODY)
            .gid(NOBODY)
            .current_dir(child_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    }
}

impl Unprivileged for SelfExec {
    fn run(
        &self,
        root: &str,
        cases: &[PermissionCase],
    ) -> Result<Vec<CaseOutcome>, UnprivilegedError> {
        self.run_cases(root, cases).map_err(|e| match e {
            Ran::CannotStart(why) => UnprivilegedError::CannotStart(why),
            Ran::Failed(why) => UnprivilegedError::Failed(why),
        })
    }
}

/// How running the child went wrong.
enum Ran {
    CannotStart(String),
    Failed(String),
}

impl From<String> for Ran {
    fn from(why: String) -> Self {
        Ran::Failed(why)
    }
}

/// What to do when the unprivileged user cannot start the backend.
const CANNOT_START_REMEDY: &str = "to check what the backend refuses, make its command one \
     every user may execute (an interpreter outside root's home, e.g. /usr/bin/python3, and a \
     script others may read), or run the check as a user other than root";

/// The first directory of `path` (itself or one above it) that others may not pass through
/// (its mode has no `o+x`), with that mode; `None` when every one lets them through.
fn closed_to_others(path: &Path) -> Option<(PathBuf, u32)> {
    path.ancestors()
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .find_map(|dir| {
            let mode = std::fs::metadata(dir).ok()?.permissions().mode();
            (mode & 0o001 == 0).then(|| (dir.to_path_buf(), mode & 0o7777))
        })
}

impl SelfExec {
    fn run_cases(&self, root: &str, cases: &[PermissionCase]) -> Result<Vec<CaseOutcome>, Ran> {
        // The child must reach the case to be refused by what is in it: a root below a private
        // directory (a TMPDIR made by `mktemp -d`, 0700) would have every case refused for
        // that directory, and prove nothing about the backend.
        if let Some((dir, mode)) = closed_to_others(Path::new(root)) {
            return Err(Ran::CannotStart(format!(
                "uid {NOBODY} (nobody), which permission cases must run as when the gate is root, \
                 cannot reach the case at {root}: {} (mode {mode:04o}) lets no other user through; \
                 to check what the backend refuses, run the check with a TMPDIR every user may \
                 pass through (TMPDIR=/tmp, or `chmod o+x` that directory), or as a user other \
                 than root",
                dir.display()
            )));
        }
        let exe = &self.exe;
        let input = serde_json::to_vec(cases).map_err(|e| e.to_string())?;
        // The child's TMPDIR, and its adapter's: a directory of its own in the run directory,
        // so that what it makes there goes with the run (the user's TMPDIR may be one it cannot
        // write, and is not the run's to fill).
        let tmp = seam_conformance::case_dirs::CaseDir::new("nobody-").and_then(|dir| {
            std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY))?;
            Ok(dir)
        });
        let tmp_path = tmp.as_ref().ok().map(|d| d.path());
        // The binary may live where `nobody` cannot reach (a root-owned home or checkout); then
        // run it from a directory anyone can traverse, in the run directory (removed with it
        // if the command is interrupted): a hard link where the binary is on the same
        // filesystem, a copy where not. Kept until the child is done.
        let mut _copy_dir = None;
        let mut child = match self.spawn(exe, root, tmp_path) {
            Ok(child) => child,
            Err(first) if first.kind() == std::io::ErrorKind::PermissionDenied => {
                let dir =
                    seam_conformance::case_dirs::CaseDir::new("exe-").map_err(|e| e.to_string())?;
                std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                    .map_err(|e| e.to_string())?;
                let copy: PathBuf = dir.path().join("seam");
                if std::fs::hard_link(exe, &copy).is_err() {
                    std::fs::copy(exe, &copy)
                        .map_err(|e| format!("cannot copy {}: {e}", exe.display()))?;
                    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
                        .map_err(|e| e.to_string())?;
                }
                let child = self.spawn(&copy, root, tmp_path).map_err(|e| {
                    format!("cannot start the unprivileged child as uid {NOBODY} ({first}; from {}: {e})", copy.display())
                })?;
                _copy_dir = Some(dir);
                child
            }
            Err(e) => {
                return Err(Ran::Failed(format!(
                    "cannot start the unprivileged child as uid {NOBODY}: {e}"
                )));
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&input).map_err(|e| e.to_string())?;
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(i32::from(CANNOT_START)) {
            // What the backend's command said (a shell's "Permission denied") and the child's
            // own line, as one.
            let lines: Vec<&str> = said
                .lines()
                .map(|l| l.trim().trim_start_matches("seam __unprivileged: "))
                .filter(|l| !l.is_empty())
                .collect();
            return Err(Ran::CannotStart(format!(
                "the backend could not be started as uid {NOBODY} (nobody), which permission \
                 cases must run as when the gate is root: {}; {CANNOT_START_REMEDY}",
                lines.join("; ")
            )));
        }
        if !out.status.success() {
            return Err(Ran::Failed(format!(
                "the unprivileged child failed ({}): {}",
                out.status,
                said.trim()
            )));
        }
        serde_json::from_slice(&out.stdout)
            .map_err(|e| Ran::Failed(format!("the unprivileged child answered nonsense: {e}")))
    }
}

/// The child's side: read cases from stdin, run them, print outcomes.
pub fn child(provider: &str, root: &str) -> Result<(), ChildError> {
    if rustix::process::geteuid().is_root() {
        return Err(ChildError::Other(
            "refusing to run permission cases as root".into(),
        ));
    }
    let cases: Vec<PermissionCase> = serde_json::from_reader(std::io::stdin())
        .map_err(|e| ChildError::Other(format!("bad case list on stdin: {e}")))?;
    let fs = crate::providers::provider_at(provider, root).map_err(ChildError::CannotStart)?;
    let rt = seam_conformance::runtime()
        .map_err(|e| ChildError::Other(format!("cannot start a runtime: {e}")))?;
    let outcomes = rt.block_on(run_cases(fs.as_ref(), root, &cases));
    let json = serde_json::to_string(&outcomes).map_err(|e| ChildError::Other(e.to_string()))?;
    println!("{json}");
    Ok(())
}

/// Where the child runs: this process's working directory when `nobody` can enter it (an
/// `exec:` command with a relative path, `python3 fixtures/…`, must find its script there), `/`
/// otherwise.
fn child_dir() -> PathBuf {
    let others_may_enter = |dir: &std::path::Path| {
        dir.ancestors().all(|a| {
            std::fs::metadata(a).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o001 != 0)
        })
    };
    match std::env::current_dir() {
        Ok(here) if others_may_enter(&here) => here,
        _ => PathBuf::from("/"),
    }
}
