//! Running permission cases as an unprivileged user. Root ignores permission bits, so when
//! `seam check` runs as root it re-executes itself as uid/gid 65534 (`nobody`) for these cases:
//! `std::process::Command` drops the supplementary groups and the ids in the child before exec,
//! which needs no unsafe code of ours.

use seam_conformance::{CaseOutcome, PermissionCase, Unprivileged, UnprivilegedError, run_cases};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
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
    fn spawn(&self, exe: &std::path::Path, root: &str) -> std::io::Result<std::process::Child> {
        Command::new(exe)
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

impl SelfExec {
    fn run_cases(&self, root: &str, cases: &[PermissionCase]) -> Result<Vec<CaseOutcome>, Ran> {
        let exe = &self.exe;
        let input = serde_json::to_vec(cases).map_err(|e| e.to_string())?;
        // The binary may live where `nobody` cannot reach (a root-owned home or checkout); then
        // run a copy from a directory anyone can traverse (kept until the child is done).
        let mut _copy_dir = None;
        let mut child = match self.spawn(exe, root) {
            Ok(child) => child,
            Err(first) if first.kind() == std::io::ErrorKind::PermissionDenied => {
                let dir = tempfile::Builder::new()
                    .prefix("seam-exe-")
                    .tempdir()
                    .map_err(|e| e.to_string())?;
                std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                    .map_err(|e| e.to_string())?;
                let copy: PathBuf = dir.path().join("seam");
                std::fs::copy(exe, &copy)
                    .map_err(|e| format!("cannot copy {}: {e}", exe.display()))?;
                std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
                    .map_err(|e| e.to_string())?;
                let child = self.spawn(&copy, root).map_err(|e| {
                    format!("cannot start the unprivileged child as uid {NOBODY} ({first}; from a copy: {e})")
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
                 cases must run as when the gate is root: {}",
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
