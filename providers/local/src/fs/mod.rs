//! [`LocalFileSystem`]: the contract on the host disk. The methods here check the signal, take
//! the key's lock for mutations, and hand the slow part to the blocking pool
//! ([`crate::offload`]); the mechanics live in one file per job (`write`, `edit`, `read`,
//! `stream`, `list`, `publish`, `stage`, `parents`, `sweep`).

use crate::config::LocalConfig;
use crate::core::Core;
use crate::offload::{offload, owned_in_steps};
use crate::paths::key_of;
use seam::{
    Capabilities, Capability, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest,
    FileSystem, FsDirEntry, FsError, FsInfo, FsPathInfo, FsTarget, FsTargetKey, FsVersion,
    RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome, ResolveOptions, SandboxPolicy,
    Signal, TextStream, Verb, WriteIntent, WriteOutcome,
};
use std::sync::Arc;

mod beneath;

/// The local-disk provider.
#[derive(Clone)]
pub struct LocalFileSystem {
    core: Arc<Core>,
}

impl std::fmt::Debug for LocalFileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalFileSystem")
            .field("config", &self.core.config)
            .finish_non_exhaustive()
    }
}

impl LocalFileSystem {
    /// A provider with this configuration.
    pub fn new(config: LocalConfig) -> Self {
        Self {
            core: Arc::new(Core::new(config)),
        }
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// Reads on the host, beneath `/`.
    fn host(&self) -> crate::reads::Seen {
        crate::reads::Seen::Host(self.core.clone())
    }

    /// The configuration.
    pub fn config(&self) -> &LocalConfig {
        &self.core.config
    }

    fn cwd<'a>(&'a self, options: &ResolveOptions<'a>) -> &'a str {
        options.cwd.unwrap_or(&self.core.config.cwd)
    }
}

#[async_trait::async_trait]
impl FileSystem for LocalFileSystem {
    fn capabilities(&self) -> Capabilities {
        let caps = Capabilities::none()
            .with(Capability::Symlinks)
            .with(Capability::Permissions)
            .with(Capability::Modes)
            .with(Capability::ReadBytes)
            .with(Capability::CancelPoints)
            .with(Capability::StagingProbe)
            .with(Capability::SharedStorage)
            .with(Capability::Namespace);
        // Only a deployment that syncs the file and the directory promises what a power cut
        // leaves.
        if self.core.config.durability == crate::Durability::Full {
            caps.with(Capability::Durable)
        } else {
            caps
        }
    }

    fn search(&self) -> Option<&dyn seam::Search> {
        Some(self)
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        signal.check(Verb::Resolve)?;
        let display = seam::paths::display_path(path, self.cwd(&options), Verb::Resolve)?;
        let key = key_of(&display)?;
        signal.check(Verb::Resolve)?;
        Ok(FsTarget {
            key: FsTargetKey::new(key),
            display_path: display,
        })
    }

    fn process_path(&self, target: &FsTarget) -> String {
        target.key.as_str().to_string()
    }

    fn file_url(&self, target: &FsTarget) -> String {
        seam::paths::file_url(target.key.as_str())
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        seam::paths::is_within(parent.key.as_str(), child.key.as_str())
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.host().stat(target, signal).await
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        signal.check(Verb::Lstat)?;
        let display = seam::paths::display_path(path, self.cwd(&options), Verb::Lstat)?;
        self.host().lstat(&display, &display, signal).await
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.host().read_text(target, signal).await
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        self.host().stream_text(target, signal).await
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.host().read_bytes(target, max_bytes, signal).await
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        self.host().list_dir(target, signal).await
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        signal.check(Verb::Write)?;
        let guard = self.core.locks.lock(target.key.as_str()).await;
        let core = self.core.clone();
        let content = owned_in_steps(content).await;
        let target = target.clone();
        let (expected, signal) = (expected.cloned(), signal.clone());
        offload(Verb::Write, &target.display_path.clone(), move || {
            let _guard = guard;
            core.write(&core.root, &target, &content, expected.as_ref(), &signal)
        })
        .await
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        signal.check(Verb::Edit)?;
        let guard = self.core.locks.lock(target.key.as_str()).await;
        let core = self.core.clone();
        let (target, edit) = (target.clone(), edit.clone());
        let (expected, signal) = (expected.cloned(), signal.clone());
        offload(Verb::Edit, &target.display_path.clone(), move || {
            let _guard = guard;
            core.edit(&core.root, &target, &edit, expected.as_ref(), &signal)
        })
        .await
    }

    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        signal.check(Verb::Mkdir)?;
        let display = seam::paths::display_path(path, self.cwd(&options), Verb::Mkdir)?;
        self.create_dir_in(&crate::namespace::Within::Host, &display, request, signal)
            .await
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        signal.check(Verb::Remove)?;
        let display = seam::paths::display_path(path, self.cwd(&options), Verb::Remove)?;
        self.remove_in(&crate::namespace::Within::Host, &display, request, signal)
            .await
    }

    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        signal.check(Verb::Rename)?;
        let cwd = self.cwd(&options);
        let from = seam::paths::display_path(from, cwd, Verb::Rename)?;
        let to = seam::paths::display_path(to, cwd, Verb::Rename)?;
        self.rename_in(&crate::namespace::Within::Host, &from, &to, request, signal)
            .await
    }
}
