//! The directories a test-control server makes its cases in (`world/case` without a root).
//!
//! A conformance run asks for thousands of cases, one after another, and on the disk the gate
//! measures on, making a directory in the (spread) base and removing it again cost most of
//! what a short case spent of its own on the server. So a server asked to
//! ([`crate::Server::with_case_reuse`]; the gate's own `seam serve --test-control
//! --reuse-case-dirs`) empties a case's directory when its case is done (the connection's next
//! `world/case`, or the connection closing) and keeps it for a case to come — [`USES`] cases at
//! most, [`SPARES_KEPT`] directories at most — rather than removing it. It is removed instead
//! when it cannot be emptied, when a call still holds the backend that worked in it (a
//! cancelled call may still be writing: [`CaseDir::discard`]), and while a second connection
//! has it open (`world/reopen`: [`CaseDirs::reopened`]); `world/reopen` refuses a kept one. A
//! kept one found written into when it is taken again is removed and a fresh one made. A server
//! killed outright leaves the kept ones behind, empty.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How many emptied directories are kept.
const SPARES_KEPT: usize = 4;
/// How many cases one directory serves before it is removed.
const USES: u32 = 16;

/// The base directory and the emptied directories kept in it.
pub(crate) struct CaseDirs {
    base: PathBuf,
    /// How many emptied directories may be kept (0: none is).
    keep: usize,
    spares: Mutex<Vec<(PathBuf, u32)>>,
    /// The case directories a second connection has open (`world/reopen`), and how many.
    reopened: Mutex<std::collections::HashMap<PathBuf, usize>>,
}

impl CaseDirs {
    /// Cases' directories in `base`; emptied ones kept for later cases when `reuse`.
    pub(crate) fn new(base: PathBuf, reuse: bool) -> Arc<Self> {
        Arc::new(Self {
            base,
            keep: if reuse { SPARES_KEPT } else { 0 },
            spares: Mutex::new(Vec::new()),
            reopened: Mutex::new(std::collections::HashMap::new()),
        })
    }

    fn reopened_map(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<PathBuf, usize>> {
        self.reopened.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A second connection opens the case directory `path` (`world/reopen`): never kept while
    /// it is open, until the returned guard drops. `None` when `path` is a kept one, not a
    /// case's.
    pub(crate) fn reopened(self: &Arc<Self>, path: &Path) -> Option<Reopened> {
        if self.spares().iter().any(|(p, _)| p == path) {
            return None;
        }
        *self.reopened_map().entry(path.to_path_buf()).or_insert(0) += 1;
        Some(Reopened {
            path: path.to_path_buf(),
            dirs: self.clone(),
        })
    }

    /// Where the cases' directories are made.
    pub(crate) fn base(&self) -> &Path {
        &self.base
    }

    fn spares(&self) -> std::sync::MutexGuard<'_, Vec<(PathBuf, u32)>> {
        self.spares.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An empty directory for a case: a kept one, or a fresh one in the base.
    pub(crate) fn make(self: &Arc<Self>) -> std::io::Result<CaseDir> {
        loop {
            let Some((path, uses)) = self.spares().pop() else {
                break;
            };
            if is_empty(&path) {
                return Ok(CaseDir {
                    path: Some(path),
                    uses: uses + 1,
                    dirs: self.clone(),
                });
            }
            let _ = std::fs::remove_dir_all(&path);
        }
        let path = tempfile::Builder::new()
            .prefix("case-")
            .tempdir_in(&self.base)?
            .keep();
        Ok(CaseDir {
            path: Some(path),
            uses: 1,
            dirs: self.clone(),
        })
    }
}

impl Drop for CaseDirs {
    /// The kept directories go with the server (a server killed outright leaves them, empty).
    fn drop(&mut self) {
        for (path, _) in self.spares().drain(..) {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// One case's directory: emptied and kept, or removed, when dropped.
pub(crate) struct CaseDir {
    path: Option<PathBuf>,
    uses: u32,
    dirs: Arc<CaseDirs>,
}

impl CaseDir {
    pub(crate) fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    /// Not to be kept: removed when dropped (a call may still be writing in it).
    pub(crate) fn discard(&mut self) {
        self.uses = USES;
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        let Some(path) = self.path.take() else {
            return;
        };
        let keep = self.dirs.keep;
        let open_elsewhere = || self.dirs.reopened_map().contains_key(&path);
        let room = || self.uses < USES && self.dirs.spares().len() < keep && !open_elsewhere();
        if room() && emptied(&path).is_ok() {
            let mut spares = self.dirs.spares();
            if spares.len() < keep && !open_elsewhere() {
                spares.push((path, self.uses));
                return;
            }
        }
        let _ = std::fs::remove_dir_all(&path);
    }
}

/// A case directory a second connection has open (see [`CaseDirs::reopened`]).
pub(crate) struct Reopened {
    path: PathBuf,
    dirs: Arc<CaseDirs>,
}

impl Drop for Reopened {
    fn drop(&mut self) {
        let mut open = self.dirs.reopened_map();
        if let Some(n) = open.get_mut(&self.path) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.path);
            }
        }
    }
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// Empties `dir` and makes it private to its owner again, as a fresh one is.
fn emptied(dir: &Path) -> std::io::Result<()> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::CaseDirs;

    #[test]
    fn a_case_directory_is_emptied_and_used_again_then_removed_after_its_uses() {
        let base = tempfile::tempdir().expect("base");
        let dirs = CaseDirs::new(base.path().to_path_buf(), true);
        let first = dirs.make().expect("a directory");
        let path = first.path().to_path_buf();
        std::fs::create_dir_all(path.join("d/e")).expect("content");
        std::fs::write(path.join("d/e/f"), b"x").expect("content");
        std::os::unix::fs::symlink("/", path.join("l")).expect("a link");
        drop(first);
        assert!(path.is_dir(), "kept");
        let again = dirs.make().expect("a directory");
        assert_eq!(again.path(), path, "the kept one");
        assert_eq!(std::fs::read_dir(&path).expect("list").count(), 0, "empty");
        drop(again);
        // A directory discarded (a call still held its backend) is removed, not kept.
        let mut busy = dirs.make().expect("a directory");
        let busy_path = busy.path().to_path_buf();
        assert_eq!(busy_path, path, "the kept one again");
        busy.discard();
        drop(busy);
        assert!(!busy_path.exists(), "a discarded directory was kept");
        let again = dirs.make().expect("a directory");
        let path = again.path().to_path_buf();
        drop(again);
        // Something written into a kept directory after its case: it is not handed out again.
        std::fs::write(path.join("late"), b"x").expect("a late write");
        let fresh = dirs.make().expect("a directory");
        assert_ne!(fresh.path(), path);
        assert!(!path.exists(), "the littered one is removed");
        let path = fresh.path().to_path_buf();
        drop(fresh);
        // Used USES times, a directory is removed rather than kept.
        for _ in 1..super::USES {
            let dir = dirs.make().expect("a directory");
            assert_eq!(dir.path(), path, "one directory serves every case");
        }
        assert!(!path.exists(), "removed after its last use");
        assert_eq!(std::fs::read_dir(base.path()).expect("list").count(), 0);
        // While a second connection has a case's directory open, it is not kept; a kept one
        // cannot be reopened.
        let owned = dirs.make().expect("a directory");
        let owned_path = owned.path().to_path_buf();
        let second = dirs.reopened(&owned_path).expect("a case's directory");
        drop(owned);
        assert!(
            !owned_path.exists(),
            "kept while another connection had it open"
        );
        drop(second);
        let kept = dirs.make().expect("a directory");
        let kept_path = kept.path().to_path_buf();
        drop(kept);
        assert!(kept_path.exists(), "kept");
        assert!(
            dirs.reopened(&kept_path).is_none(),
            "a kept directory reopened"
        );
        // The kept ones go with the server.
        let kept = dirs.make().expect("a directory");
        let path = kept.path().to_path_buf();
        drop(kept);
        assert!(path.exists(), "kept");
        drop(dirs);
        assert!(!path.exists(), "left behind by the server");
    }

    #[test]
    fn a_server_not_asked_to_reuse_removes_every_case_directory() {
        let base = tempfile::tempdir().expect("base");
        let dirs = CaseDirs::new(base.path().to_path_buf(), false);
        let first = dirs.make().expect("a directory");
        let path = first.path().to_path_buf();
        drop(first);
        assert!(!path.exists(), "kept without being asked to");
        assert_eq!(std::fs::read_dir(base.path()).expect("list").count(), 0);
    }
}
