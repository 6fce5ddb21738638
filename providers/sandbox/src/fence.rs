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

/// The real path of each root, once; a root that is relative or does not resolve matches
/// nothing (a relative one would otherwise mean whatever the process's working directory is).
pub(crate) fn writable_roots(workspace: &str, temp: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for root in std::iter::once(workspace).chain(temp.iter().map(String::as_str)) {
        if !root.starts_with('/') {
            continue;
        }
        let Ok(real) = seam_local::real_path(root) else {
            continue;
        };
        let Some(real) = real.to_str().map(str::to_string) else {
            continue;
        };
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}

/// Whether the writable root `root` (a real path) holds `key`. A key is a real path — except
/// a path through a regular file, which has none and is kept as spelled
/// ([`seam_local::entry_parent`]): spelled beneath the deployment's directory `cwd` where that
/// is reached through a link (`/tmp/w` on macOS is `/private/tmp/w`), it is judged by the real
/// path of `cwd` followed by the rest as spelled, as the caller sees the two. The mutation then
/// runs confined beneath the real root, so no spelling can widen what it reaches.
fn holds(root: &str, key: &str, cwd: &str) -> bool {
    seam::paths::is_within(root, key)
        || real_spelling(key, cwd).is_some_and(|k| seam::paths::is_within(root, &k))
}

/// `key` with its prefix `cwd` replaced by the real path of `cwd`, where the two differ.
fn real_spelling(key: &str, cwd: &str) -> Option<String> {
    let cwd = cwd.trim_end_matches('/');
    let rest = key.strip_prefix(cwd)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let real = seam_local::real_path(cwd).ok()?;
    let real = real.to_str()?;
    (real != cwd).then(|| format!("{real}{rest}"))
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
    cwd: &str,
) -> Option<Decision> {
    match mode {
        SandboxMode::DangerFullAccess => Some(Decision::Anywhere),
        SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite => writable_roots(workspace, temp)
            .into_iter()
            .filter(|root| holds(root, key, cwd))
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
    cwd: &str,
) -> Decision {
    match mode {
        SandboxMode::DangerFullAccess => Decision::Anywhere,
        SandboxMode::ReadOnly => {
            Decision::Deny(FsError::sandbox_denied(&target.display_path, mode))
        }
        SandboxMode::WorkspaceWrite => writable_roots(workspace, temp)
            .into_iter()
            .filter(|root| holds(root, target.key.as_str(), cwd))
            .min_by_key(String::len)
            .map_or_else(
                || Decision::Deny(FsError::sandbox_denied(&target.display_path, mode)),
                Decision::Beneath,
            ),
    }
}
