//! The whole default conformance suite against the in-memory provider, through a factory and a
//! world defined here (the provider itself knows nothing of the suite). The run must pass:
//! every property that applies agreed with the model, and every core rule was reached.

use seam::FileSystem;
use seam_conformance::{
    CaseOptions, EntryMode, Factory, Killable, NotKillable, Subject, SuiteConfig, Verdict, World,
    run_suite,
};
use seam_memory::{
    MemoryConfig, MemoryEntry, MemoryFileSystem, MemoryKind, MemoryStore, MemoryWorld,
};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

/// Where each case lives in its store.
const ROOT: &str = "/mem";

/// A small diff-basis limit, so generated contents cross it.
const DIFF_LIMIT: u64 = 1024;

/// The suite's world over a store's out-of-band handle.
struct CaseWorld {
    world: MemoryWorld,
}

impl CaseWorld {
    fn at(rel: &str) -> String {
        MemoryWorld::join(ROOT, rel)
    }
}

impl World for CaseWorld {
    fn root_display(&self) -> String {
        ROOT.to_string()
    }

    fn apply(&self, effect: &WorldEffect) -> io::Result<()> {
        match effect {
            WorldEffect::CreateFile { path, bytes, mode } => {
                self.world
                    .create_file(&Self::at(path), bytes.to_vec(), *mode)
            }
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

    fn snapshot(&self) -> io::Result<BTreeMap<String, SnapEntry>> {
        Ok(self
            .world
            .snapshot(ROOT)?
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

    fn entry_mode(&self, path: &str) -> io::Result<Option<EntryMode>> {
        Ok(self.world.entry(path)?.map(|e| EntryMode {
            is_dir: e.kind == MemoryKind::Dir,
            mode: e.mode,
        }))
    }

    fn supports_fifos(&self) -> bool {
        true
    }
}

/// A fresh store per case, its root made.
struct MemoryFactory;

impl Factory for MemoryFactory {
    fn name(&self) -> String {
        "memory".into()
    }

    fn make(&self, _options: &CaseOptions) -> Result<Subject, String> {
        let store = MemoryStore::new();
        let world = store.world();
        world.create_dir_all(ROOT).map_err(|e| e.to_string())?;
        Ok(Subject {
            fs: Arc::new(MemoryFileSystem::new(store.clone(), config())),
            world: Arc::new(CaseWorld { world }),
            diff_basis_max_bytes: DIFF_LIMIT,
            keep_alive: Box::new(store),
        })
    }

    /// Killing the process loses the store itself: `crash` does not apply (and says so).
    fn killable(&self, _options: &CaseOptions) -> Result<Killable, NotKillable> {
        Err(NotKillable::Volatile(
            "the in-memory store lives in the provider's process".into(),
        ))
    }

    fn reopen(
        &self,
        _options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn FileSystem>, String>> {
        let store = (*subject.keep_alive).downcast_ref::<MemoryStore>()?;
        Some(Ok(Arc::new(MemoryFileSystem::new(store.clone(), config()))))
    }
}

fn config() -> MemoryConfig {
    MemoryConfig::new(ROOT).with_diff_basis_max_bytes(DIFF_LIMIT)
}

#[test]
fn the_memory_provider_passes_the_default_run() {
    let report = run_suite(
        Arc::new(MemoryFactory),
        &SuiteConfig::default(),
        &mut |_| {},
    )
    .expect("the suite ran");
    println!("{}", report.render());
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.render());
}
