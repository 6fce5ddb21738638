//! The shipped providers, as the suite sees them: one [`Factory`] per name. This is the only
//! place that knows which concrete providers exist.

use seam::SandboxMode;
use seam_conformance::{
    CaseDurability, CaseOptions, DiskWorld, EntryMode, Factory, Killable, NotKillable, NotPlaced,
    Subject, World,
};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use seam_memory::{
    MemoryConfig, MemoryEntry, MemoryFileSystem, MemoryKind, MemoryStore, MemoryWorld,
};
use seam_model::{SnapEntry, WorldEffect};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

/// The `seam` binary the shipped providers run in when the suite kills them (the `crash`
/// property): set by the binary itself at start, or by a test that drives the suite in its
/// own process (`env!("CARGO_BIN_EXE_seam")`).
static HOST: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Names the `seam` binary a shipped provider runs in when the suite kills it. The first call
/// wins.
pub fn set_host_binary(exe: impl Into<std::path::PathBuf>) {
    let _ = HOST.set(exe.into());
}

/// A killable subject of a shipped disk provider: `seam serve` on stdio in a child process.
fn killable_shipped(provider: &str, options: &CaseOptions) -> Result<Killable, NotKillable> {
    let Some(exe) = HOST.get() else {
        return Err(NotKillable::Cannot(
            "no seam binary to run the provider in a process of its own (providers::set_host_binary)".into(),
        ));
    };
    let (command, base) = crate::world_client::serve_stdio_command(exe, provider)?;
    crate::world_client::killable_at(command, base, Some(LocalFactory.configurations()), options)
}

pub use crate::world_client::SUITE_DIFF_LIMIT;

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
                    .create_file(&Self::at(path), bytes.clone(), *mode)
            }
            // The store has no clock: every rewrite changes the version, restored mtime or not.
            WorldEffect::RewriteFile { path, bytes, .. } => {
                self.world.rewrite_file(&Self::at(path), bytes.clone())
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

    /// The local provider in `seam serve` on stdio, in a child process the suite may kill.
    fn killable(&self, options: &CaseOptions) -> Result<Killable, NotKillable> {
        killable_shipped("local", options)
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        crate::world_client::recover_at(options, killed)
    }

    fn configurations(&self) -> Vec<String> {
        vec!["tmpfile".into(), "directory".into()]
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        let (world, config) = placed(dir, options)?;
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(()),
        })
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let (dir, world, config) = case_root(options)?;
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }

    /// A second `LocalFileSystem` on the same directory: what a second agent process opens.
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let root = subject.world.root_display();
        Some(
            local_config(&root, options, second_seed(options))
                .map(|c| Arc::new(LocalFileSystem::new(c)) as Arc<dyn seam::FileSystem>),
        )
    }
}

/// A fresh temporary directory for one case, its world, and the local configuration the case
/// asks for.
///
/// The provider is given the case's root through a link, as a user on macOS gives `/tmp/w`
/// (really `/private/tmp/w`): the root is `…/seam-check-…/tmp/case-…/root`, where `tmp` is the
/// run directory's link to its `private` beside it ([`CaseDir::through_link`]). Every path the
/// case asks about is then spelled differently from the real path it leads to, though the root
/// itself is a directory, so messages and display paths must name the path as the caller wrote
/// it, not the key (the real path) — in every case, not only through the case's own links
/// (`DiskWorld::through_link`). The case directory is `0711`, like the run directory, so that
/// an unprivileged child opened to the root can pass; the root is a directory in it, so that
/// `..` from the root is still the case's own.
///
/// [`CaseDir::through_link`]: crate::case_dirs::CaseDir::through_link
fn case_root(
    options: &CaseOptions,
) -> Result<(crate::case_dirs::CaseDir, DiskWorld, LocalConfig), String> {
    let dir = crate::case_dirs::CaseDir::aliased("case-")
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let base = std::fs::canonicalize(dir.path()).map_err(|e| {
        format!(
            "cannot find the case directory {}: {e}",
            dir.path().display()
        )
    })?;
    let real = base.join("root");
    let made = std::fs::create_dir(&real)
        .and_then(|()| std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o711)));
    made.map_err(|e| format!("cannot lay out the case directory {}: {e}", base.display()))?;
    let alias = dir
        .through_link(&dir.path().join("root"))
        .ok_or("the case directory is not in the run directory")?;
    let alias = alias
        .to_str()
        .ok_or("the case directory is not valid UTF-8")?;
    let world = DiskWorld::through_link(&real, alias).map_err(|e| e.to_string())?;
    let config = local_config(&world.root_display(), options, options.seed)?;
    Ok((dir, world, config))
}

/// The world over a directory the suite chose, and the local configuration a case asks for on
/// it.
fn placed(
    dir: &std::path::Path,
    options: &CaseOptions,
) -> Result<(DiskWorld, LocalConfig), NotPlaced> {
    let world = DiskWorld::new(dir)
        .map_err(|e| NotPlaced::Failed(format!("the directory {}: {e}", dir.display())))?;
    let config =
        local_config(&world.root_display(), options, options.seed).map_err(NotPlaced::Failed)?;
    Ok((world, config))
}

/// The local configuration a case asks for, on `root`, its staging names drawn from `seed`.
fn local_config(root: &str, options: &CaseOptions, seed: u64) -> Result<LocalConfig, String> {
    Ok(LocalConfig::new(root)
        .with_durability(match options.durability {
            CaseDurability::Full => Durability::Full,
            CaseDurability::Relaxed => Durability::None,
        })
        .with_diff_basis_max_bytes(SUITE_DIFF_LIMIT)
        .with_seeded_nonces(seed)
        .with_staging(LocalFactory::staging(&options.configuration)?))
}

/// The seed of a second instance's staging names: another process draws other names.
fn second_seed(options: &CaseOptions) -> u64 {
    options.seed ^ 0x5EC0_17D0
}

/// The sandbox configuration of `mode` on a case root (its reads confined when the case asks).
fn sandbox_config(
    mode: SandboxMode,
    root: &str,
    local: LocalConfig,
    options: &CaseOptions,
) -> SandboxConfig {
    let workspace = format!("{root}/{}", seam_conformance::DEPLOYMENT_WORKSPACE);
    SandboxConfig::new(workspace, mode)
        .with_local(local)
        .with_temp_roots(Vec::new())
        .with_confined_reads(options.confine_reads)
}

/// The sandbox provider in one mode, its default workspace the suite's `d` in the case's
/// directory ([`seam_conformance::DEPLOYMENT_WORKSPACE`]; relative paths still resolve against
/// the case's directory) and no other writable root, so that the rest of the case is the
/// deployment's outside.
#[derive(Clone, Copy, Debug)]
pub struct SandboxFactory(pub SandboxMode);

impl Factory for SandboxFactory {
    fn name(&self) -> String {
        format!("sandbox:{}", self.0.as_str())
    }

    /// The sandbox in `seam serve` on stdio, in a child process the suite may kill.
    fn killable(&self, options: &CaseOptions) -> Result<Killable, NotKillable> {
        killable_shipped(&self.name(), options)
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        crate::world_client::recover_at(options, killed)
    }

    fn configurations(&self) -> Vec<String> {
        LocalFactory.configurations()
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        let (world, local) = placed(dir, options)?;
        let config = sandbox_config(self.0, &world.root_display(), local, options);
        Ok(Subject {
            fs: Arc::new(SandboxFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(()),
        })
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let (dir, world, local) = case_root(options)?;
        let config = sandbox_config(self.0, &world.root_display(), local, options);
        Ok(Subject {
            fs: Arc::new(SandboxFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }

    /// A second sandboxed provider on the same directory, deployed the same way.
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let root = subject.world.root_display();
        Some(
            local_config(&root, options, second_seed(options)).map(|local| {
                Arc::new(SandboxFileSystem::new(sandbox_config(
                    self.0, &root, local, options,
                ))) as Arc<dyn seam::FileSystem>
            }),
        )
    }
}

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
            crate::world_client::reopened_exec(&other["exec:".len()..], root)
        }
        other => Err(format!("unknown provider {other:?}")),
    }
}
