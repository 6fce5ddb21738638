//! What `glob` and `grep` share: the backend's search (the contract's [`seam::Search`], never a
//! subprocess), where a result too long for the model goes ([`SpillStore`]), paths shown
//! relative to the session's cwd, and the seed's argument texts.
//!
//! The walk and its rules (links never followed, one ignore policy, VCS metadata never listed,
//! hidden names on request) are the backend's: see [`seam::search`].

use crate::args::Args;
use crate::exec::Exec;
use crate::output::{ErrorCode, ToolError};
use crate::paths::resolve;
use seam::{FsTarget, Search, SearchError};

/// Where the complete result of an over-cap search is saved, so the model can be told where
/// to find it. Supplied by the composition (a harness's spill directory); without one an
/// over-cap result says it could not be saved.
///
/// It is async so that a store on disk writes off the executor's threads (a spilled result can
/// be megabytes).
#[async_trait::async_trait]
pub trait SpillStore: Send + Sync {
    /// Saves `text` under a name like `suggested` and returns where it is (a path the model
    /// can read), or why it could not.
    async fn save(&self, suggested: &str, text: String) -> Result<String, String>;
}

/// The backend's search, or the error a backend without one gets.
pub(crate) fn search_of<'e>(exec: &'e Exec, tool: &str) -> Result<&'e dyn Search, ToolError> {
    exec.fs.search().ok_or_else(|| {
        ToolError::search(
            ErrorCode::SearchFailed,
            format!("{tool} is not available: this filesystem backend offers no search"),
        )
    })
}

/// A search failure as the model reads it.
pub(crate) fn search_error(tool: &str, e: SearchError) -> ToolError {
    match e {
        SearchError::InvalidPattern(why) => ToolError::search(
            ErrorCode::SearchInvalidPattern,
            format!("{tool} pattern rejected: {why}"),
        ),
        SearchError::Fs(e) => ToolError::fs(e),
    }
}

/// `path`, when given: not blank, and no name in it longer than a file name may be (as
/// [`Args::path`] refuses it).
pub(crate) fn optional_path<'a>(args: &Args<'a>) -> Result<Option<&'a str>, ToolError> {
    match args.get("path") {
        None => Ok(None),
        Some(v) => match v.as_str() {
            Some(s) if !s.trim().is_empty() => args.path("path").map(Some),
            _ => Err(ToolError::arguments(
                "path must be a non-empty string when given",
            )),
        },
    }
}

/// The search root: `path` against the session's cwd, or the cwd itself.
pub(crate) async fn root_of(exec: &Exec, path: Option<&str>) -> Result<FsTarget, ToolError> {
    let spelled = path.or(exec.cwd.as_deref()).unwrap_or(".");
    resolve(exec, spelled, false).await.map_err(ToolError::fs)
}

/// A found path as the model sees it: relative to the session's cwd when beneath it, else the
/// display path. `rel` is relative to the root (empty for the root itself).
pub(crate) fn shown(cwd: Option<&str>, root: &FsTarget, rel: &str) -> String {
    let base = root.display_path.trim_end_matches('/');
    let full = match (rel.is_empty(), base.is_empty()) {
        (true, _) => root.display_path.clone(),
        (false, true) => format!("/{rel}"),
        (false, false) => format!("{base}/{rel}"),
    };
    match cwd.map(|c| c.trim_end_matches('/')) {
        Some(cwd) if full == cwd => ".".to_string(),
        Some(cwd) => full
            .strip_prefix(cwd)
            .and_then(|r| r.strip_prefix('/'))
            .map_or(full.clone(), str::to_string),
        None => full,
    }
}

/// Saves `text` and says where, or says it could not.
pub(crate) async fn spill(
    store: Option<&dyn SpillStore>,
    suggested: &str,
    text: String,
    saved: &str,
    unsaved: &str,
) -> String {
    let Some(store) = store else {
        return unsaved.to_string();
    };
    match store.save(suggested, text).await {
        Ok(at) => format!("{saved} {at}."),
        Err(_) => unsaved.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::FsTargetKey;

    fn target(display: &str) -> FsTarget {
        FsTarget {
            key: FsTargetKey::new(display),
            display_path: display.into(),
        }
    }

    #[test]
    fn found_paths_are_shown_relative_to_the_cwd() {
        let w = Some("/w");
        assert_eq!(shown(w, &target("/w"), "src/a.rs"), "src/a.rs");
        assert_eq!(shown(w, &target("/w/src"), "a.rs"), "src/a.rs");
        assert_eq!(shown(w, &target("/w"), ""), ".");
        assert_eq!(shown(w, &target("/other"), "a"), "/other/a");
        assert_eq!(shown(w, &target("/wx"), "a"), "/wx/a", "whole components");
        assert_eq!(shown(None, &target("/w"), "a"), "/w/a");
        assert_eq!(shown(w, &target("/"), "etc/x"), "/etc/x");
    }
}
