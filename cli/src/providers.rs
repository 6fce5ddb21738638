//! The shipped providers, as the suite sees them: one [`Factory`] per name. This is the only
//! place that knows which concrete providers exist.

use seam_conformance::{CaseDurability, CaseOptions, DiskWorld, Factory, Subject, World};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use std::sync::Arc;

/// Every provider `seam check` runs when none is named.
pub const SHIPPED: &[&str] = &["local"];

/// The diff-basis limit the suite gives the local provider: small, so generated contents cross
/// it and `before: null` is exercised (the production default is 10 MiB).
pub const SUITE_DIFF_LIMIT: u64 = 1024;

/// The local provider on a fresh temporary directory per case, in two configurations: staging
/// in an `O_TMPFILE` inode (`tmpfile`, the default) and in a private directory (`directory`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFactory;

impl LocalFactory {
    fn staging(configuration: &str) -> Result<Staging, String> {
        match configuration {
            "tmpfile" => Ok(Staging::Auto),
            "directory" => Ok(Staging::Directory),
            other => Err(format!(
                "unknown configuration {other:?} of the local provider (tmpfile, directory)"
            )),
        }
    }
}

impl Factory for LocalFactory {
    fn name(&self) -> String {
        "local".into()
    }

    fn configurations(&self) -> Vec<String> {
        vec!["tmpfile".into(), "directory".into()]
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let dir = tempfile::Builder::new()
            .prefix("seam-check-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let world = DiskWorld::new(dir.path()).map_err(|e| e.to_string())?;
        let config = LocalConfig::new(world.root_display())
            .with_durability(match options.durability {
                CaseDurability::Full => Durability::Full,
                CaseDurability::Relaxed => Durability::None,
            })
            .with_diff_basis_max_bytes(SUITE_DIFF_LIMIT)
            .with_seeded_nonces(options.seed)
            .with_staging(Self::staging(&options.configuration)?);
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }
}

/// The factory for a provider name.
pub fn factory(name: &str) -> Result<Arc<dyn Factory>, String> {
    match name {
        "local" => Ok(Arc::new(LocalFactory)),
        other => Err(format!(
            "unknown provider {other:?} (shipped: {})",
            SHIPPED.join(", ")
        )),
    }
}

/// A provider rooted at an existing directory, for the unprivileged child.
pub fn provider_at(name: &str, root: &str) -> Result<Arc<dyn seam::FileSystem>, String> {
    match name {
        "local" => Ok(Arc::new(LocalFileSystem::new(LocalConfig::new(root)))),
        other => Err(format!("unknown provider {other:?}")),
    }
}
