//! Where an MCP session's over-cap search results go: a private directory the server owns,
//! one new file per spill (a later search never overwrites a path the model was given), written
//! on tokio's blocking pool.
//!
//! A session left running spills again and again: only the most recent spills are kept (at most
//! [`SPILLS_KEPT`] files and [`SPILL_BYTES_KEPT`] bytes, the newest always), the older ones are
//! removed, so the directory cannot fill a disk.

use seam_tools::SpillStore;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Spill files kept at most.
pub const SPILLS_KEPT: usize = 32;

/// Bytes of spill files kept at most (the newest is kept whatever its size).
pub const SPILL_BYTES_KEPT: u64 = 256 * 1024 * 1024;

/// A spill directory: `save` writes `<n>-<suggested>` in it and answers its absolute path.
#[derive(Debug)]
pub struct SpillDir {
    dir: PathBuf,
    next: AtomicU64,
    /// The files kept, oldest first, with their sizes.
    kept: Mutex<VecDeque<(PathBuf, u64)>>,
    keep_files: usize,
    keep_bytes: u64,
}

impl SpillDir {
    /// Spills into `dir`, which must exist (the caller owns its lifetime).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            next: AtomicU64::new(1),
            kept: Mutex::new(VecDeque::new()),
            keep_files: SPILLS_KEPT,
            keep_bytes: SPILL_BYTES_KEPT,
        }
    }

    /// The same directory keeping at most `files` spills and `bytes` of them (the newest is
    /// always kept).
    pub fn keeping(mut self, files: usize, bytes: u64) -> Self {
        self.keep_files = files.max(1);
        self.keep_bytes = bytes;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[async_trait::async_trait]
impl SpillStore for SpillDir {
    async fn save(&self, suggested: &str, text: String) -> Result<String, String> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // Only the last component of the suggestion, so a name cannot climb out.
        let name = Path::new(suggested)
            .file_name()
            .map_or_else(|| "result.txt".into(), |n| n.to_string_lossy().into_owned());
        let at = self.dir.join(format!("{n}-{name}"));
        let path = at.clone();
        let bytes = text.len() as u64;
        tokio::task::spawn_blocking(move || {
            std::os::unix::fs::OpenOptionsExt::mode(
                std::fs::OpenOptions::new().write(true).create_new(true),
                0o600,
            )
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot save {}: {e}", at.display()))?;
        let evicted = {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            kept.push_back((at.clone(), bytes));
            let mut total: u64 = kept.iter().map(|(_, b)| b).sum();
            let mut evicted = Vec::new();
            while kept.len() > 1 && (kept.len() > self.keep_files || total > self.keep_bytes) {
                if let Some((old, b)) = kept.pop_front() {
                    total -= b;
                    evicted.push(old);
                }
            }
            evicted
        };
        if !evicted.is_empty() {
            let _ = tokio::task::spawn_blocking(move || {
                for old in evicted {
                    let _ = std::fs::remove_file(old);
                }
            })
            .await;
        }
        Ok(at.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_newest_spills_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spill = SpillDir::new(dir.path()).keeping(4, 1000);
        let mut paths = Vec::new();
        for i in 0..7 {
            paths.push(spill.save("r.txt", format!("{i}")).await.expect("saved"));
        }
        let left = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(left, 4);
        for gone in &paths[..3] {
            assert!(!Path::new(gone).exists(), "{gone}");
        }
        let newest = paths.last().expect("one");
        assert_eq!(std::fs::read_to_string(newest).expect("kept"), "6");
        // One spill over the byte bound is kept alone, whole.
        let at = spill
            .save("big.txt", "x".repeat(1001))
            .await
            .expect("saved");
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1);
        assert_eq!(std::fs::metadata(&at).expect("kept").len(), 1001);
    }
}
