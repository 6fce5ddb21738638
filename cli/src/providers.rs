//! The shipped providers, as the suite sees them: one [`Factory`] per name. This is the only
//! place that knows which concrete providers exist.

use seam_conformance::{CaseDurability, CaseOptions, DiskWorld, Factory, Subject, World};
use seam_local::{Durability, Fault, LocalConfig, LocalFileSystem};
use std::sync::Arc;

/// Every provider `seam check` runs when none is named.
pub const SHIPPED: &[&str] = &["local"];

/// The diff-basis limit the suite gives the local provider: small, so the text corpus crosses it
/// and `before: null` is exercised (the production default is 10 MiB).
pub const SUITE_DIFF_LIMIT: u64 = 1024;

/// The local provider on a fresh temporary directory per case.
pub struct LocalFactory {
    /// A deliberately broken variant, for demonstrations and the self-test.
    pub fault: Option<Fault>,
}

impl Factory for LocalFactory {
    fn name(&self) -> String {
        match self.fault {
            Some(f) => format!("local+{}", f.name()),
            None => "local".into(),
        }
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
            .with_fault(self.fault);
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }
}

/// The factory for a provider name.
pub fn factory(name: &str, fault: Option<&str>) -> Result<Box<dyn Factory>, String> {
    let fault = match fault {
        None => None,
        Some(f) => Some(Fault::from_name(f).ok_or_else(|| {
            let known: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
            format!("unknown fault {f:?} (known: {})", known.join(", "))
        })?),
    };
    match name {
        "local" => Ok(Box::new(LocalFactory { fault })),
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
