//! The temporary directories the shipped disk providers' cases live in. A case is dropped with
//! its directory when it ends — unless a call into it hung: the suite then gives the call up
//! with its thread, and what the thread holds is never dropped. So every case directory is
//! listed here while it lives, and a command that gives calls up removes what is left with
//! [`remove_abandoned`] before it exits (as it stops the processes, `seam_remote::children`),
//! leaving TMPDIR as it found it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The directories of cases that have not been dropped.
struct Registry(Mutex<Vec<PathBuf>>);

impl Registry {
    const fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    fn live(&self) -> MutexGuard<'_, Vec<PathBuf>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn make(&'static self, prefix: &str) -> std::io::Result<CaseDir> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        self.live().push(dir.path().to_path_buf());
        Ok(CaseDir {
            dir,
            registry: self,
        })
    }

    fn remove_all(&self) -> usize {
        let paths = std::mem::take(&mut *self.live());
        for path in &paths {
            let _ = std::fs::remove_dir_all(path);
        }
        paths.len()
    }
}

static CASES: Registry = Registry::new();

/// A case's temporary directory: removed when dropped, or by [`remove_abandoned`] if never.
pub struct CaseDir {
    dir: tempfile::TempDir,
    registry: &'static Registry,
}

impl CaseDir {
    /// A fresh directory in TMPDIR whose name starts with `prefix`.
    pub fn new(prefix: &str) -> std::io::Result<Self> {
        CASES.make(prefix)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        // The directory itself goes with the `TempDir` right after.
        let path = self.dir.path();
        self.registry.live().retain(|p| p != path);
    }
}

/// Removes every case directory still listed (their cases were given up on) and forgets them;
/// returns how many there were. Only for the end of a command: a case still running would lose
/// its directory.
pub fn remove_abandoned() -> usize {
    CASES.remove_all()
}

#[cfg(test)]
mod tests {
    use super::Registry;

    #[test]
    fn a_case_never_dropped_is_removed_at_the_end_and_a_dropped_one_is_not_listed() {
        static REGISTRY: Registry = Registry::new();
        let dropped = REGISTRY.make("seam-case-dirs-test-").expect("a dir");
        let dropped_path = dropped.path().to_path_buf();
        drop(dropped);
        assert!(!dropped_path.exists());
        let abandoned = REGISTRY.make("seam-case-dirs-test-").expect("a dir");
        let path = abandoned.path().to_path_buf();
        std::fs::create_dir_all(path.join("d/e")).expect("content");
        std::fs::write(path.join("d/e/f"), b"x").expect("content");
        // What a thread given up on does with its case: never drops it.
        std::mem::forget(abandoned);
        assert!(path.exists());
        assert_eq!(REGISTRY.remove_all(), 1);
        assert!(!path.exists(), "{} is left", path.display());
        assert_eq!(REGISTRY.remove_all(), 0);
    }
}
