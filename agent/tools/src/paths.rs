//! Where a tool's path points: the session's cwd, with two rules from the seed.
//!
//! * A `..` in the cwd or in the path is interpreted against the *physical* cwd: the cwd is
//!   canonicalised first (through the provider, so this works in any world), because a
//!   symlinked cwd plus `..` would otherwise land somewhere the user did not mean.
//! * A mutation under a confining provider resolves against the call's workspace root, the
//!   directory its fence is drawn around.

use crate::exec::Exec;
use seam::{FsError, FsInfo, FsKind, FsObservation, FsTarget, ResolveOptions, Verb};

/// Whether `path` has a `..` component (either separator).
fn has_parent_segment(path: &str) -> bool {
    path.split(['/', '\\']).any(|c| c == "..")
}

/// The directory the tool's `path` is resolved against for this call (see the module docs).
pub(crate) async fn base_of(exec: &Exec, path: &str, mutation: bool) -> Option<String> {
    let confining = exec.fs.sandbox_mode().is_some();
    let mut base: Option<String> = match (&exec.sandbox, mutation && confining) {
        (Some(policy), true) => Some(policy.workspace_root.clone()),
        _ => exec.cwd.clone(),
    };
    if let Some(cwd) = &base
        && !path.starts_with('/')
        && (has_parent_segment(cwd) || has_parent_segment(path))
        && let Ok(t) = exec
            .fs
            .resolve(cwd, ResolveOptions::default(), &exec.signal)
            .await
    {
        // The provider's canonical path of the cwd; left as spelled if it cannot be resolved.
        base = Some(exec.fs.process_path(&t));
    }
    base
}

/// Resolves the tool's `path` for this call.
pub(crate) async fn resolve(exec: &Exec, path: &str, mutation: bool) -> Result<FsTarget, FsError> {
    let base = base_of(exec, path, mutation).await;
    exec.fs
        .resolve(
            path,
            ResolveOptions {
                cwd: base.as_deref(),
            },
            &exec.signal,
        )
        .await
}

/// The one `stat` a reading tool makes: a regular file's facts, or — for nothing there — the
/// absence recorded with the gate before `FS_NOT_FOUND` (so a later write may create the file),
/// or `FS_NOT_REGULAR_FILE`.
pub(crate) async fn stat_regular(exec: &Exec, target: &FsTarget) -> Result<FsInfo, FsError> {
    let display = &target.display_path;
    match exec.fs.stat(target, &exec.signal).await? {
        None => {
            exec.gate
                .observed(target, &FsObservation::Absent, exec.actor());
            Err(FsError::not_found(Verb::Read, display))
        }
        Some(info) if info.kind != FsKind::File => {
            Err(FsError::not_regular_file(Verb::Read, display))
        }
        Some(info) => Ok(info),
    }
}

#[cfg(test)]
mod tests {
    use super::has_parent_segment;

    #[test]
    fn parent_segments_are_whole_components() {
        assert!(has_parent_segment(".."));
        assert!(has_parent_segment("a/../b"));
        assert!(has_parent_segment("a\\..\\b"));
        assert!(has_parent_segment("a/.."));
        assert!(!has_parent_segment("a/..b"));
        assert!(!has_parent_segment("..a/b"));
        assert!(!has_parent_segment("a/b"));
    }
}
