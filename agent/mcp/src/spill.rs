//! Where an MCP session's over-cap search results go: a private directory the server owns,
//! one new file per spill (a later search never overwrites a path the model was given), written
//! on tokio's blocking pool.

use seam_tools::SpillStore;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A spill directory: `save` writes `<n>-<suggested>` in it and answers its absolute path.
#[derive(Debug)]
pub struct SpillDir {
    dir: PathBuf,
    next: AtomicU64,
}

impl SpillDir {
    /// Spills into `dir`, which must exist (the caller owns its lifetime).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            next: AtomicU64::new(1),
        }
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
        Ok(at.to_string_lossy().into_owned())
    }
}
