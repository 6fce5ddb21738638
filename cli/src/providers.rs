//! What the CLI builds from a provider's name beyond the suite's factories (those are in each
//! provider's test-world crate, named by [`crate::table`]): a reference for `--against` and
//! `seam replay`, the backend `seam serve` hosts, and the provider the unprivileged child of
//! `permission-denied` builds over an existing directory.

use seam::SandboxMode;
use seam_conformance::{CaseOptions, Factory, NotPlaced, Subject};
use seam_local::{Durability, LocalConfig, LocalFileSystem};
use seam_local_testkit::LocalFactory;
use seam_memory::{MemoryConfig, MemoryFileSystem, MemoryStore};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::sync::Arc;

/// The sandbox mode a provider name asks for (`sandbox:MODE`).
pub(crate) fn sandbox_mode(name: &str) -> Result<Option<SandboxMode>, String> {
    let Some(mode) = name.strip_prefix("sandbox:") else {
        return Ok(None);
    };
    match SandboxMode::from_name(mode) {
        Some(m) => Ok(Some(m)),
        None => Err(format!(
            "unknown sandbox mode {mode:?} (read-only, workspace-write, danger-full-access)"
        )),
    }
}

/// A provider another is compared with (`seam check --against`), or that replays another
/// provider's trace (`seam replay`): the cases it is asked for name the other provider's
/// configurations, which it may not have; it builds its own first configuration then.
/// Everything else is the provider's own.
pub struct Reference {
    inner: Arc<dyn Factory>,
}

impl Reference {
    /// `inner`, ready to be a reference.
    pub fn around(inner: Arc<dyn Factory>) -> Arc<dyn Factory> {
        Arc::new(Self { inner })
    }

    fn options(&self, options: &CaseOptions) -> CaseOptions {
        let own = self.inner.configurations();
        if own.contains(&options.configuration) {
            return options.clone();
        }
        let mut options = options.clone();
        if let Some(first) = own.into_iter().next() {
            options.configuration = first;
        }
        options
    }
}

impl Factory for Reference {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn streams_through_a_window(&self) -> bool {
        self.inner.streams_through_a_window()
    }

    fn configurations(&self) -> Vec<String> {
        self.inner.configurations()
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        self.inner.make(&self.options(options))
    }

    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        self.inner.reopen(&self.options(options), subject)
    }

    fn permissions_checkable(&self) -> Result<(), String> {
        self.inner.permissions_checkable()
    }

    fn killable(
        &self,
        options: &CaseOptions,
    ) -> Result<seam_conformance::Killable, seam_conformance::NotKillable> {
        self.inner.killable(&self.options(options))
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        self.inner.recover(&self.options(options), killed)
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        self.inner.in_directory(&self.options(options), dir)
    }
}

/// What `seam serve` hosts: `local`, `memory` or `sandbox:MODE` over `root` (the sandbox's workspace is
/// `root` itself, with no temp roots).
pub fn hosted(name: &str, root: &str) -> Result<Arc<dyn seam::FileSystem>, String> {
    provider_at(name, root)
}

/// Makes the backend for each test case of `seam serve --test-control`: the provider named,
/// configured as the suite's own factories configure it.
pub struct ServeCases(pub String);

impl seam_remote::CaseMaker for ServeCases {
    fn make(&self, spec: &seam_remote::CaseSpec) -> Result<Arc<dyn seam::FileSystem>, String> {
        let local = LocalConfig::new(spec.root.clone())
            .with_durability(if spec.durable {
                Durability::Full
            } else {
                Durability::None
            })
            .with_diff_basis_max_bytes(spec.diff_basis_max_bytes)
            .with_seeded_nonces(spec.seed)
            .with_staging(LocalFactory::staging(
                spec.configuration.as_deref().unwrap_or("tmpfile"),
            )?);
        if let Some(mode) = sandbox_mode(&self.0)? {
            let workspace = match &spec.workspace {
                Some(w) => format!("{}/{w}", spec.root),
                None => spec.root.clone(),
            };
            let config = SandboxConfig::new(workspace, mode)
                .with_local(local)
                .with_temp_roots(Vec::new())
                .with_confined_reads(spec.confine_reads);
            return Ok(Arc::new(SandboxFileSystem::new(config)));
        }
        match self.0.as_str() {
            "local" => Ok(Arc::new(LocalFileSystem::new(local))),
            other => Err(format!("unknown provider {other:?} (local, sandbox:MODE)")),
        }
    }
}

/// A provider rooted at an existing directory, for the unprivileged child. `memory` is a fresh,
/// empty store in which `root` is made (the disk directory is not read: the store is a world
/// of its own that merely spells its working directory the same way).
pub fn provider_at(name: &str, root: &str) -> Result<Arc<dyn seam::FileSystem>, String> {
    if let Some(mode) = sandbox_mode(name)? {
        let config = SandboxConfig::new(root, mode).with_temp_roots(Vec::new());
        return Ok(Arc::new(SandboxFileSystem::new(config)));
    }
    match name {
        "local" => Ok(Arc::new(LocalFileSystem::new(LocalConfig::new(root)))),
        "memory" => {
            let store = MemoryStore::new();
            store
                .world()
                .create_dir_all(root)
                .map_err(|e| format!("cannot make {root:?} in the store: {e}"))?;
            Ok(Arc::new(MemoryFileSystem::new(
                store,
                MemoryConfig::new(root),
            )))
        }
        // The local provider behind the wire, server and client in this process.
        "remote" => {
            let hosted: Arc<dyn seam::FileSystem> =
                Arc::new(LocalFileSystem::new(LocalConfig::new(root)));
            let server = Arc::new(seam_remote::Server::new(hosted).with_cwd(root.to_string()));
            let conn = seam_remote::Connection::in_process(server).map_err(|e| e.to_string())?;
            Ok(Arc::new(seam_remote::RemoteFileSystem::new(Arc::new(conn))))
        }
        // An adapter this process starts (as whoever runs it), over a case it made earlier.
        other if other.starts_with("exec:") => {
            seam_remote_testkit::reopened_exec(&other["exec:".len()..], root)
        }
        other => Err(format!("unknown provider {other:?}")),
    }
}
