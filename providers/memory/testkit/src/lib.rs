//! The in-memory provider's test world: [`MemoryFactory`] makes each case a fresh store rooted
//! at [`MEMORY_ROOT`], and [`MemoryCaseWorld`] changes and reads that store behind the
//! backend's back through its out-of-band handle, as the suite does on a disk.
//!
//! It depends on the suite and on the provider; the provider never depends on it
//! (ARCHITECTURE.md, rule 5).

use seam_conformance::{
    CaseOptions, EntryMode, Factory, Killable, NotKillable, NotPlaced, SUITE_DIFF_LIMIT, Subject,
    World,
};
use seam_memory::{
    MemoryConfig, MemoryEntry, MemoryFileSystem, MemoryKind, MemoryStore, MemoryWorld,
};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where each case of the in-memory provider lives in its store: absolute, no trailing slash.
pub const MEMORY_ROOT: &str = "/mem";

/// The in-memory provider on a fresh store per case, its root [`MEMORY_ROOT`]. The store is the
/// subject's keep-alive, so that [`Factory::reopen`] can open a second instance over it.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryFactory;

impl MemoryFactory {
    fn config() -> MemoryConfig {
        MemoryConfig::new(MEMORY_ROOT).with_diff_basis_max_bytes(SUITE_DIFF_LIMIT)
    }
}

impl Factory for MemoryFactory {
    fn name(&self) -> String {
        "memory".into()
    }

    /// Read in the suite's own process: no window of chunks in flight, no credit to keep.
    fn streams_through_a_window(&self) -> bool {
        false
    }

    fn make(&self, _options: &CaseOptions) -> Result<Subject, String> {
        let store = MemoryStore::new();
        let world = store.world();
        world
            .create_dir_all(MEMORY_ROOT)
            .map_err(|e| format!("cannot make the case root: {e}"))?;
        Ok(Subject {
            fs: Arc::new(MemoryFileSystem::new(store.clone(), Self::config())),
            world: Arc::new(MemoryCaseWorld { world }),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(store),
        })
    }

    /// Killing the process loses the store itself: a crash is nothing a file can survive here.
    fn killable(&self, _options: &CaseOptions) -> Result<Killable, NotKillable> {
        Err(NotKillable::Volatile(
            "the in-memory store lives in the provider's process".into(),
        ))
    }

    /// The store is not a directory: a power cut loses it whole.
    fn in_directory(
        &self,
        _options: &CaseOptions,
        _dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        Err(NotPlaced::Volatile(
            "the in-memory store is not kept in a directory, and lives in the provider's process"
                .into(),
        ))
    }

    fn reopen(
        &self,
        _options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let store = (*subject.keep_alive).downcast_ref::<MemoryStore>()?;
        Some(Ok(Arc::new(MemoryFileSystem::new(
            store.clone(),
            Self::config(),
        ))))
    }
}

/// The suite's world over a store's out-of-band handle, rooted at [`MEMORY_ROOT`].
pub struct MemoryCaseWorld {
    world: MemoryWorld,
}

impl MemoryCaseWorld {
    fn at(rel: &str) -> String {
        MemoryWorld::join(MEMORY_ROOT, rel)
    }
}

impl World for MemoryCaseWorld {
    fn root_display(&self) -> String {
        MEMORY_ROOT.to_string()
    }

    fn apply(&self, effect: &WorldEffect) -> std::io::Result<()> {
        match effect {
            WorldEffect::CreateFile { path, bytes, mode } => {
                self.world
                    .create_file(&Self::at(path), bytes.to_vec(), *mode)
            }
            // The store has no clock: every rewrite changes the version, restored mtime or not.
            WorldEffect::RewriteFile { path, bytes, .. } => {
                self.world.rewrite_file(&Self::at(path), bytes.to_vec())
            }
            WorldEffect::CreateDir { path } => self.world.create_dir(&Self::at(path)),
            WorldEffect::Symlink { path, target } => self.world.symlink(&Self::at(path), target),
            WorldEffect::Remove { path } => self.world.remove(&Self::at(path)),
            WorldEffect::Chmod { path, mode } => self.world.chmod(&Self::at(path), *mode),
            WorldEffect::Mkfifo { path } => self.world.create_other(&Self::at(path)),
        }
    }

    fn snapshot(&self) -> std::io::Result<BTreeMap<String, SnapEntry>> {
        Ok(self
            .world
            .snapshot(MEMORY_ROOT)?
            .into_iter()
            .map(|(path, entry)| {
                let snap = match entry {
                    MemoryEntry::File { bytes, mode } => SnapEntry::File {
                        bytes,
                        mode: Some(mode),
                    },
                    MemoryEntry::Dir { mode } => SnapEntry::Dir { mode: Some(mode) },
                    MemoryEntry::Symlink { text } => SnapEntry::Symlink { target: text },
                    MemoryEntry::Other => SnapEntry::Other,
                };
                (path, snap)
            })
            .collect())
    }

    fn entry_mode(&self, path: &str) -> std::io::Result<Option<EntryMode>> {
        Ok(self.world.entry(path)?.map(|e| EntryMode {
            is_dir: e.kind == MemoryKind::Dir,
            mode: e.mode,
        }))
    }

    fn supports_fifos(&self) -> bool {
        true
    }
}
