#![allow(dead_code)] // each test binary uses part of this module

//! A factory for the local provider, for the suite's own tests (the suite itself never names a
//! provider).

use seam_conformance::{CaseDurability, CaseOptions, DiskWorld, Factory, Subject, World};
use seam_local::{Durability, Fault, LocalConfig, LocalFileSystem, Staging};
use std::sync::Arc;

/// The diff-basis limit the tests give the provider, small enough that the corpus crosses it.
pub const DIFF_LIMIT: u64 = 1024;

pub struct LocalFactory {
    pub fault: Option<Fault>,
    pub staging: Staging,
}

impl LocalFactory {
    pub fn correct() -> Self {
        Self {
            fault: None,
            staging: Staging::Auto,
        }
    }

    pub fn broken(fault: Fault) -> Self {
        Self {
            fault: Some(fault),
            staging: Staging::Auto,
        }
    }
}

impl Factory for LocalFactory {
    fn name(&self) -> String {
        match self.fault {
            Some(f) => format!("local+{}", f.name()),
            None => "local".into(),
        }
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let world = DiskWorld::new(dir.path()).map_err(|e| e.to_string())?;
        let root = world.root_display();
        let config = LocalConfig::new(root)
            .with_durability(match options.durability {
                CaseDurability::Full => Durability::Full,
                CaseDurability::Relaxed => Durability::None,
            })
            .with_diff_basis_max_bytes(DIFF_LIMIT)
            .with_seeded_nonces(options.seed)
            .with_staging(self.staging)
            .with_fault(self.fault);
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }
}
