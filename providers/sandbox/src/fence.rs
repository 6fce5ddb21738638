//! The decision: which mode applies to a call, which roots are writable, and beneath which one
//! a mutation runs.

use seam::{FsError, FsTarget, SandboxMode};

/// What the fence decided for one mutation.
pub(crate) enum Decision {
    /// Denied: nothing is touched.
    Deny(FsError),
    /// Unfenced (`danger-full-access`).
    Anywhere,
    /// Beneath this writable root (a real path).
    Beneath(String),
}

/// A writable root: its real path, and its spelling as configured (the two differ where the
/// root is reached through a link, as `/tmp/w` is `/private/tmp/w` on macOS).
struct Root {
    real: String,
    spelled: String,
}

impl Root {
    /// Whether `key` lies beneath the root. A key is a real path — except for a path through a
    /// regular file, which has none and is kept as spelled ([`seam_local::entry_parent`]): that
    /// one is judged by the root's spelling, as the caller sees both. Either way the mutation
    /// then runs confined beneath the real root, so a spelling can deny, never widen.
    fn holds(&self, key: &str) -> bool {
        seam::paths::is_within(&self.real, key) || seam::paths::is_within(&self.spelled, key)
    }
}

/// The real path of each root, once; a root that is relative or does not resolve matches
/// nothing (a relative one would otherwise mean whatever the process's working directory is).
fn writable_roots(workspace: &str, temp: &[String]) -> Vec<Root> {
    let mut out: Vec<Root> = Vec::new();
    for root in std::iter::once(workspace).chain(temp.iter().map(String::as_str)) {
        if !root.starts_with('/') {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(root) else {
            continue;
        };
        let Some(real) = real.to_str().map(str::to_string) else {
            continue;
        };
        if !out.iter().any(|r| r.real == real) {
            out.push(Root {
                real,
                spelled: root.trim_end_matches('/').to_string(),
            });
        }
    }
    out
}

/// The fence for a read of `key` (a real path; for `lstat`, the entry's parent's real path and its name) under
/// the deployment's `mode`, for a provider that confines reads: the widest of the roots that
/// holds it, or `None` when none does (`danger-full-access` reads anywhere: `Anywhere`). The
/// denial itself is the caller's, with its verb.
pub(crate) fn decide_read(
    key: &str,
    mode: SandboxMode,
    workspace: &str,
    temp: &[String],
) -> Option<Decision> {
    match mode {
        SandboxMode::DangerFullAccess => Some(Decision::Anywhere),
        SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => writable_roots(workspace, temp)
            .into_iter()
            .filter(|root| root.holds(key))
            .map(|root| root.real)
            .min_by_key(String::len)
            .map(Decision::Beneath),
    }
}

/// The fence for a mutation of `target` in `mode`: the widest writable root that holds its key
/// (so that a link from one place beneath it to another stays allowed).
pub(crate) fn decide(
    target: &FsTarget,
    mode: SandboxMode,
    workspace: &str,
    temp: &[String],
) -> Decision {
    match mode {
        SandboxMode::DangerFullAccess => Decision::Anywhere,
        SandboxMode::ReadOnly => {
            Decision::Deny(FsError::sandbox_denied(&target.display_path, mode))
        }
        SandboxMode::WorkspaceWrite => writable_roots(workspace, temp)
            .into_iter()
            .filter(|root| root.holds(target.key.as_str()))
            .map(|root| root.real)
            .min_by_key(String::len)
            .map_or_else(
                || Decision::Deny(FsError::sandbox_denied(&target.display_path, mode)),
                Decision::Beneath,
            ),
    }
}
