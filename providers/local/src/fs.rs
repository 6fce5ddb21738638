//! [`LocalFileSystem`]: the contract on the host disk. The methods here check the signal, take
//! the key's lock for mutations, and hand the slow part to the blocking pool
//! ([`crate::offload`]); the mechanics live in one file per job (`write`, `edit`, `read`,
//! `stream`, `list`, `publish`, `stage`, `parents`, `sweep`).

use crate::config::LocalConfig;
use crate::core::Core;
use crate::errors::os;
use crate::offload::{offload, owned_in_steps};
use crate::paths::key_of;
use crate::read::open_regular;
use seam::{
    Capabilities, Capability, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo,
    FsPathInfo, FsTarget, FsTargetKey, FsVersion, ResolveOptions, SandboxPolicy, Signal,
    TextStream, Verb, WriteIntent, WriteOutcome,
};
use std::sync::Arc;

/// Whole-file reads up to this size run inline: one page-cached `read` of 64 KiB costs about
/// 15 µs, less than a hop to the blocking pool and back (`docs/performance.md`).
pub(crate) const INLINE_READ_MAX: u64 = 64 * 1024;

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
        Capabilities::none()
            .with(Capability::Symlinks)
            .with(Capability::Permissions)
            .with(Capability::ReadBytes)
            .with(Capability::CancelPoints)
            .with(Capability::StagingProbe)
            .with(Capability::SharedStorage)
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
        signal.check(Verb::Stat)?;
        let probe = self
            .core
            .root
            .probe(target.key.as_str(), true)
            .map_err(|e| os(e, Verb::Stat, &target.display_path))?;
        signal.check(Verb::Stat)?;
        Ok(probe.map(|p| FsInfo {
            kind: p.fs_kind(),
            size: p.is_file().then_some(p.size),
            version: p.version,
        }))
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        signal.check(Verb::Lstat)?;
        let display = seam::paths::display_path(path, self.cwd(&options), Verb::Lstat)?;
        let probe = self
            .core
            .root
            .probe(display.as_str(), false)
            .map_err(|e| os(e, Verb::Lstat, &display))?;
        signal.check(Verb::Lstat)?;
        Ok(probe.map(|p| FsPathInfo {
            kind: p.path_kind(),
            size: p.reported_size(),
            version: p.version,
        }))
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        signal.check(Verb::Read)?;
        let display = target.display_path.clone();
        let (dir, rel) = self.core.root.at(target.key.as_str());
        let (file, size) = open_regular(dir, rel, &display)?;
        if size <= INLINE_READ_MAX {
            return crate::read::read_text(&file, size, &display, signal);
        }
        let signal = signal.clone();
        offload(Verb::Read, &target.display_path, move || {
            crate::read::read_text(&file, size, &display, &signal)
        })
        .await
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        signal.check(Verb::Read)?;
        let (dir, rel) = self.core.root.at(target.key.as_str());
        let (file, size) = open_regular(dir, rel, &target.display_path)?;
        Ok(crate::stream::text_stream(
            file,
            size,
            INLINE_READ_MAX,
            target.display_path.clone(),
            signal.clone(),
        ))
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        signal.check(Verb::Read)?;
        let display = target.display_path.clone();
        let (dir, rel) = self.core.root.at(target.key.as_str());
        let (file, size) = open_regular(dir, rel, &display)?;
        if size <= INLINE_READ_MAX || size > max_bytes {
            return crate::read::read_bytes(&file, size, &display, max_bytes, signal);
        }
        let signal = signal.clone();
        offload(Verb::Read, &target.display_path, move || {
            crate::read::read_bytes(&file, size, &display, max_bytes, &signal)
        })
        .await
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        signal.check(Verb::List)?;
        let (target, signal) = (target.clone(), signal.clone());
        let core = self.core.clone();
        offload(Verb::List, &target.display_path.clone(), move || {
            crate::list::list_dir(&core.root, &target, &signal)
        })
        .await
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
}
