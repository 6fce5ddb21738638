//! [`SandboxFileSystem`]: a mutation is decided by the fence ([`crate::fence`]) and then runs
//! unfenced, or beneath the writable root that allowed it, or not at all. Reads go straight to
//! the local provider — unless the deployment confines them ([`SandboxConfig::confine_reads`]):
//! then a read is decided by the deployment's own mode and roots and runs beneath the root that
//! holds it, the same confined walk as a mutation's.

use crate::config::SandboxConfig;
use crate::fence::{Decision, decide, decide_read};
use seam::search::{FoundFile, GlobQuery, GrepFound, GrepQuery, Search, SearchError};
use seam::{
    Capabilities, Capability, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest,
    FileSystem, FsDirEntry, FsError, FsInfo, FsPathInfo, FsTarget, FsTargetKey, FsVersion,
    RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome, ResolveOptions, SandboxMode,
    SandboxPolicy, Signal, TextStream, Verb, WriteIntent, WriteOutcome,
};
use seam_local::{Confinement, LocalFileSystem, Within, entry_parent, is_escape};
use std::sync::Arc;

/// The local provider behind the sandbox fence.
#[derive(Clone, Debug)]
pub struct SandboxFileSystem {
    local: LocalFileSystem,
    config: SandboxConfig,
}

impl SandboxFileSystem {
    /// A sandbox with this configuration.
    pub fn new(config: SandboxConfig) -> Self {
        Self {
            local: LocalFileSystem::new(config.local.clone()),
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The fence's decision for a mutation of `target` under `policy` (or the default).
    fn fence(&self, target: &FsTarget, policy: Option<&SandboxPolicy>) -> (SandboxMode, Decision) {
        let (mode, workspace) = match policy {
            Some(p) => (p.mode, p.workspace_root.as_str()),
            None => (self.config.mode, self.config.workspace_root.as_str()),
        };
        (
            mode,
            decide(
                target,
                mode,
                workspace,
                &self.config.temp_roots,
                &self.config.local.cwd,
            ),
        )
    }

    /// Opens the root a mutation was allowed beneath; a root that cannot be held is a denial.
    fn confinement(
        root: &str,
        target: &FsTarget,
        mode: SandboxMode,
    ) -> Result<Arc<Confinement>, FsError> {
        Confinement::open(root)
            .map(Arc::new)
            .map_err(|_| FsError::sandbox_denied(&target.display_path, mode))
    }
}

impl SandboxFileSystem {
    /// The display path of `path` for a namespace operation, and the fence's decision on the
    /// directory that holds its entry (a denial names the entry).
    fn entry_fence(
        &self,
        path: &str,
        options: &ResolveOptions<'_>,
        verb: Verb,
        policy: Option<&SandboxPolicy>,
    ) -> Result<(String, SandboxMode, Decision), FsError> {
        let cwd = options.cwd.unwrap_or(&self.config.local.cwd);
        let display = seam::paths::display_path(path, cwd, verb)?;
        let parent = entry_parent(&display, verb)?;
        let at = FsTarget {
            key: FsTargetKey::new(parent),
            display_path: display.clone(),
        };
        let (mode, decision) = self.fence(&at, policy);
        Ok((display, mode, decision))
    }

    /// Where an allowed namespace operation runs: unfenced, or beneath its root.
    fn within(decision: Decision, display: &str, mode: SandboxMode) -> Result<Within, FsError> {
        match decision {
            Decision::Deny(e) => Err(e),
            Decision::Anywhere => Ok(Within::Host),
            Decision::Beneath(root) => Confinement::open(&root)
                .map(|c| Within::Confined(Arc::new(c)))
                .map_err(|_| FsError::sandbox_denied(display, mode)),
        }
    }
}

/// An escape from a confinement is the named entry's denial; anything else is its own failure.
fn entry_denied_if_escape(e: FsError, display: &str, mode: SandboxMode) -> FsError {
    if is_escape(&e) {
        FsError::sandbox_denied(display, mode)
    } else {
        e
    }
}

/// An escape from a readable root is the read's denial; anything else is its own failure.
fn read_denied_if_escape(e: FsError, verb: Verb, display: &str, mode: SandboxMode) -> FsError {
    if is_escape(&e) {
        FsError::read_denied(verb, display, mode)
    } else {
        e
    }
}

impl SandboxFileSystem {
    /// Where a read of `key` may run: `Ok(None)` unfenced (reads not confined, or
    /// `danger-full-access`), `Ok(Some(root))` beneath that readable root, `Err` its denial.
    fn read_fence(
        &self,
        key: &str,
        verb: Verb,
        display: &str,
    ) -> Result<Option<Arc<Confinement>>, FsError> {
        if !self.config.confine_reads {
            return Ok(None);
        }
        let mode = self.config.mode;
        let denied = || FsError::read_denied(verb, display, mode);
        match decide_read(
            key,
            mode,
            &self.config.workspace_root,
            &self.config.temp_roots,
            &self.config.local.cwd,
        ) {
            Some(Decision::Anywhere) => Ok(None),
            Some(Decision::Beneath(root)) => Confinement::open(&root)
                .map(|c| Some(Arc::new(c)))
                .map_err(|_| denied()),
            Some(Decision::Deny(_)) | None => Err(denied()),
        }
    }
}

/// An escape from the root is a denial; anything else is the mutation's own failure.
fn denied_if_escape(e: FsError, target: &FsTarget, mode: SandboxMode) -> FsError {
    if is_escape(&e) {
        FsError::sandbox_denied(&target.display_path, mode)
    } else {
        e
    }
}

#[async_trait::async_trait]
impl FileSystem for SandboxFileSystem {
    fn capabilities(&self) -> Capabilities {
        let caps = self.local.capabilities().with(Capability::SandboxModes);
        // A danger-full-access deployment confines nothing: it does not claim the read fence.
        if self.config.confine_reads && self.config.mode != SandboxMode::DangerFullAccess {
            caps.with(Capability::ReadFence)
        } else {
            caps
        }
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        Some(self.config.mode)
    }

    /// Search reads: the local provider's, whose walk never leaves the root it is given —
    /// and, when reads are confined, beneath the readable root that holds that root.
    fn search(&self) -> Option<&dyn seam::Search> {
        if self.config.confine_reads {
            Some(self)
        } else {
            self.local.search()
        }
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.local.resolve(path, options, signal).await
    }

    fn process_path(&self, target: &FsTarget) -> String {
        self.local.process_path(target)
    }

    fn file_url(&self, target: &FsTarget) -> String {
        self.local.file_url(target)
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.local.contains(parent, child)
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        signal.check(Verb::Stat)?;
        let (key, display) = (target.key.as_str(), target.display_path.as_str());
        match self.read_fence(key, Verb::Stat, display)? {
            None => self.local.stat(target, signal).await,
            Some(within) => self
                .local
                .stat_beneath(&within, target, signal)
                .await
                .map_err(|e| read_denied_if_escape(e, Verb::Stat, display, self.config.mode)),
        }
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        if !self.config.confine_reads {
            return self.local.lstat(path, options, signal).await;
        }
        signal.check(Verb::Lstat)?;
        let cwd = options.cwd.unwrap_or(&self.config.local.cwd);
        let display = seam::paths::display_path(path, cwd, Verb::Lstat)?;
        // The entry itself, its final link not followed: its parent's real path and its name,
        // so that a root reached through a link (`/tmp` on macOS) still holds it.
        let key = seam_local::entry_key(&display, Verb::Lstat)?;
        match self.read_fence(&key, Verb::Lstat, &display)? {
            None => self.local.lstat(path, options, signal).await,
            Some(within) => self
                .local
                .lstat_beneath(&within, &key, &display, signal)
                .await
                .map_err(|e| read_denied_if_escape(e, Verb::Lstat, &display, self.config.mode)),
        }
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        signal.check(Verb::Read)?;
        let (key, display) = (target.key.as_str(), target.display_path.as_str());
        match self.read_fence(key, Verb::Read, display)? {
            None => self.local.read_text(target, signal).await,
            Some(within) => self
                .local
                .read_text_beneath(&within, target, signal)
                .await
                .map_err(|e| read_denied_if_escape(e, Verb::Read, display, self.config.mode)),
        }
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        signal.check(Verb::Read)?;
        let (key, display) = (target.key.as_str(), target.display_path.as_str());
        match self.read_fence(key, Verb::Read, display)? {
            None => self.local.stream_text(target, signal).await,
            Some(within) => self
                .local
                .stream_text_beneath(&within, target, signal)
                .await
                .map_err(|e| read_denied_if_escape(e, Verb::Read, display, self.config.mode)),
        }
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        signal.check(Verb::Read)?;
        let (key, display) = (target.key.as_str(), target.display_path.as_str());
        match self.read_fence(key, Verb::Read, display)? {
            None => self.local.read_bytes(target, max_bytes, signal).await,
            Some(within) => self
                .local
                .read_bytes_beneath(&within, target, max_bytes, signal)
                .await
                .map_err(|e| read_denied_if_escape(e, Verb::Read, display, self.config.mode)),
        }
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        signal.check(Verb::List)?;
        let (key, display) = (target.key.as_str(), target.display_path.as_str());
        match self.read_fence(key, Verb::List, display)? {
            None => self.local.list_dir(target, signal).await,
            Some(within) => self
                .local
                .list_dir_beneath(&within, target, signal)
                .await
                .map_err(|e| read_denied_if_escape(e, Verb::List, display, self.config.mode)),
        }
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        signal.check(Verb::Write)?;
        match self.fence(target, sandbox) {
            (_, Decision::Deny(e)) => Err(e),
            (_, Decision::Anywhere) => {
                self.local
                    .write_text(target, content, expected, None, signal)
                    .await
            }
            (mode, Decision::Beneath(root)) => {
                let within = Self::confinement(&root, target, mode)?;
                self.local
                    .write_text_beneath(&within, target, content, expected, signal)
                    .await
                    .map_err(|e| denied_if_escape(e, target, mode))
            }
        }
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        signal.check(Verb::Edit)?;
        match self.fence(target, sandbox) {
            (_, Decision::Deny(e)) => Err(e),
            (_, Decision::Anywhere) => {
                self.local
                    .edit_text(target, edit, expected, None, signal)
                    .await
            }
            (mode, Decision::Beneath(root)) => {
                let within = Self::confinement(&root, target, mode)?;
                self.local
                    .edit_text_beneath(&within, target, edit, expected, signal)
                    .await
                    .map_err(|e| denied_if_escape(e, target, mode))
            }
        }
    }
    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        signal.check(Verb::Mkdir)?;
        let (display, mode, decision) = self.entry_fence(path, &options, Verb::Mkdir, sandbox)?;
        let within = Self::within(decision, &display, mode)?;
        self.local
            .create_dir_in(&within, &display, request, signal)
            .await
            .map_err(|e| entry_denied_if_escape(e, &display, mode))
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        signal.check(Verb::Remove)?;
        let (display, mode, decision) = self.entry_fence(path, &options, Verb::Remove, sandbox)?;
        let within = Self::within(decision, &display, mode)?;
        self.local
            .remove_in(&within, &display, request, signal)
            .await
            .map_err(|e| entry_denied_if_escape(e, &display, mode))
    }

    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        signal.check(Verb::Rename)?;
        // Both spellings are checked before anything is looked at: a bad destination is said
        // before a loop on the source's way is found, as by every other backend.
        let cwd = options.cwd.unwrap_or(&self.config.local.cwd);
        seam::paths::display_path(from, cwd, Verb::Rename)?;
        let to_display = seam::paths::display_path(to, cwd, Verb::Rename)?;
        let (from, mode, source) = self.entry_fence(from, &options, Verb::Rename, sandbox)?;
        // The source's end is decided first; the move never runs unconfined unless it allows
        // everything.
        let source = Self::within(source, &from, mode)?;
        let Ok((to, _, dest)) = self.entry_fence(to, &options, Verb::Rename, sandbox) else {
            // The destination names no place now (a loop on the way). The call still runs
            // beneath the source's root, so that whatever the destination leads to by the time
            // it runs — a link flipped to outside meanwhile — it cannot leave that root: the
            // provider then says what is wrong, in the contract's order, or refuses the way out.
            return self
                .local
                .rename_in(&source, &from, &to_display, request, signal)
                .await
                .map_err(|e| entry_denied_if_escape(e, &to_display, mode));
        };
        // Both ends must be allowed, and beneath one root: the move runs confined to it. When
        // the destination is denied, the source's end is still the one decided first: a source
        // whose parent lies inside by its real path but whose walk leaves (a dangling link out)
        // is denied by name before the destination is.
        let dest = match Self::within(dest, &to, mode) {
            Ok(dest) => dest,
            Err(denied) => {
                if let Within::Confined(c) = &source
                    && c.leads_out(&entry_parent(&from, Verb::Rename)?)
                {
                    return Err(FsError::sandbox_denied(&from, mode));
                }
                return Err(denied);
            }
        };
        let within = match (source, dest) {
            (Within::Host, Within::Host) => Within::Host,
            (Within::Confined(a), Within::Confined(b)) if a.path() == b.path() => {
                Within::Confined(a)
            }
            _ => return Err(FsError::sandbox_denied(&to, mode)),
        };
        // Both ends are fenced before the move looks at anything else (its guard among them):
        // a walk that leaves the root — the source's first, then the destination's, through a
        // link on its way whose text leads out, dangling or not — is denied before a stale
        // version is found. A look that only picks the answer: the move itself stays confined.
        if let Within::Confined(c) = &within {
            if c.leads_out(&entry_parent(&from, Verb::Rename)?) {
                return Err(FsError::sandbox_denied(&from, mode));
            }
            if c.leads_out(&entry_parent(&to, Verb::Rename)?) {
                return Err(FsError::sandbox_denied(&to, mode));
            }
        }
        self.local
            .rename_in(&within, &from, &to, request, signal)
            .await
            .map_err(|e| {
                // The end whose walk left the root is the one the provider's error names.
                let end = if e.message().contains(&format!("\"{to}\"")) {
                    &to
                } else {
                    &from
                };
                entry_denied_if_escape(e, end, mode)
            })
    }
}

/// Search, when reads are confined: decided on the search root like any read, then run beneath
/// the readable root that holds it (every answer confirmed there).
#[async_trait::async_trait]
impl Search for SandboxFileSystem {
    async fn glob(
        &self,
        root: &FsTarget,
        query: &GlobQuery,
        signal: &Signal,
    ) -> Result<Vec<FoundFile>, SearchError> {
        signal.check(Verb::List)?;
        let (key, display) = (root.key.as_str(), root.display_path.as_str());
        match self.read_fence(key, Verb::List, display)? {
            None => self.local.glob(root, query, signal).await,
            Some(within) => self
                .local
                .glob_beneath(&within, root, query, signal)
                .await
                .map_err(|e| match e {
                    SearchError::Fs(e) => SearchError::Fs(read_denied_if_escape(
                        e,
                        Verb::List,
                        display,
                        self.config.mode,
                    )),
                    other => other,
                }),
        }
    }

    async fn grep(
        &self,
        root: &FsTarget,
        query: &GrepQuery,
        signal: &Signal,
    ) -> Result<GrepFound, SearchError> {
        signal.check(Verb::Read)?;
        let (key, display) = (root.key.as_str(), root.display_path.as_str());
        match self.read_fence(key, Verb::Read, display)? {
            None => self.local.grep(root, query, signal).await,
            Some(within) => self
                .local
                .grep_beneath(&within, root, query, signal)
                .await
                .map_err(|e| match e {
                    SearchError::Fs(e) => SearchError::Fs(read_denied_if_escape(
                        e,
                        Verb::Read,
                        display,
                        self.config.mode,
                    )),
                    other => other,
                }),
        }
    }
}
