//! The wrapper that breaks a provider: every method delegates, except where the chosen fault
//! changes what is returned or what the world holds.

use crate::Fault;
use crate::text::{chunked_decode, edit_ignoring_late_nul, normalise_endings, nul_at_window_edge};
use futures_util::StreamExt;
use seam::{
    Capabilities, Capability, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest,
    FileSystem, FsDirEntry, FsError, FsErrorCode, FsInfo, FsKind, FsPathInfo, FsPathKind, FsTarget,
    FsTargetKey, FsVersion, RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome,
    ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream, Verb, WriteIntent,
    WriteOutcome,
};
use seam_conformance::World;
use seam_model::WorldEffect;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) struct Faulty {
    pub(crate) inner: Arc<dyn FileSystem>,
    pub(crate) world: Arc<dyn World>,
    root: String,
    pub(crate) fault: Fault,
    /// This instance's own lock ([`Fault::InstanceLocalLock`]).
    pub(crate) instance_lock: futures_util::lock::Mutex<()>,
    /// File contents as they were when their key was last resolved.
    pins: Mutex<HashMap<String, Vec<u8>>>,
    /// Texts this instance read, by key ([`Fault::StaleInstanceCache`]).
    cache: Mutex<HashMap<FsTargetKey, String>>,
    /// The inner provider's diff-basis limit, for a `before` the fault computes itself.
    pub(crate) diff_limit: u64,
    /// Writes and edits running now ([`Fault::ListingShowsStaging`]); under
    /// [`Fault::ListingShowsStagingInPublish`], those not waiting at a checkpoint.
    writing: Arc<std::sync::atomic::AtomicUsize>,
}

/// A write or edit counted as running while it lives.
struct Writing(Arc<std::sync::atomic::AtomicUsize>);

impl Writing {
    fn start(count: &Arc<std::sync::atomic::AtomicUsize>) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The local provider's token without its last field (ctime); other tokens unchanged.
fn without_ctime(v: FsVersion) -> FsVersion {
    let fields: Vec<&str> = v.as_str().split(':').collect();
    if fields.len() == 5 {
        FsVersion::new(fields[..4].join(":"))
    } else {
        v
    }
}

fn dir_token(key: &str) -> FsVersion {
    FsVersion::new(format!("dir:{key}"))
}

impl Faulty {
    /// Under [`Fault::ListingShowsStagingInPublish`], a signal for the inner call that shows
    /// each checkpoint to `outer` (whose probe may pause the mutation there, and cancel it) with
    /// this write taken out of the running ones meanwhile: its staging is listed only between
    /// checkpoints. Otherwise `outer` itself.
    fn unseen_at_checkpoints(&self, outer: &Signal) -> Signal {
        if self.fault != Fault::ListingShowsStagingInPublish
            || !outer.is_live()
            || outer.is_cancelled()
        {
            return outer.clone();
        }
        let (outer, writing) = (outer.clone(), self.writing.clone());
        Signal::with_probe(move |cp| {
            writing.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            let cancel = if cp.point == seam::CancelPoint::Committed {
                outer.committed(cp);
                false
            } else {
                outer.checkpoint(cp).is_err()
            };
            writing.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            cancel
        })
    }

    /// A broken sandbox fence, for the fence faults under `workspace-write`: `None` when the
    /// fault does not apply (the call goes on as asked); otherwise the fault's own decision — a
    /// denial, or the target to mutate with the fence opened (`danger-full-access`).
    ///
    /// Everything but the fault's own mistake is as the sandbox does it: an already-cancelled
    /// signal first, then the workspace by its real path (one that does not exist, or is not a
    /// directory, matches nothing).
    async fn broken_fence(
        &self,
        target: &FsTarget,
        sandbox: Option<&SandboxPolicy>,
        verb: Verb,
        signal: &Signal,
    ) -> Option<Result<(FsTarget, Option<SandboxPolicy>), FsError>> {
        if self.fault == Fault::FenceIgnoresItsDefault
            && sandbox.is_none()
            && self.inner.sandbox_mode() == Some(SandboxMode::WorkspaceWrite)
        {
            return Some(Ok((
                target.clone(),
                Some(SandboxPolicy {
                    mode: SandboxMode::DangerFullAccess,
                    workspace_root: "/".into(),
                }),
            )));
        }
        let policy = sandbox.filter(|p| p.mode == SandboxMode::WorkspaceWrite)?;
        if !matches!(
            self.fault,
            Fault::FencePrefixWithoutSeparator
                | Fault::FenceChecksKeyThenOpensByName
                | Fault::FenceNewFileParentOnly
        ) {
            return None;
        }
        if let Err(e) = signal.check(verb) {
            return Some(Err(e));
        }
        let open = Some(SandboxPolicy {
            mode: SandboxMode::DangerFullAccess,
            workspace_root: policy.workspace_root.clone(),
        });
        let denied = || FsError::sandbox_denied(&target.display_path, SandboxMode::WorkspaceWrite);
        let Some(real) = std::fs::canonicalize(&policy.workspace_root)
            .ok()
            .filter(|p| p.is_dir())
            .and_then(|p| p.to_str().map(str::to_string))
        else {
            return Some(Err(denied()));
        };
        let ws = real.as_str();
        let key = target.key.as_str();
        match self.fault {
            Fault::FencePrefixWithoutSeparator => Some(if key.starts_with(ws) {
                Ok((target.clone(), open))
            } else {
                Err(denied())
            }),
            Fault::FenceChecksKeyThenOpensByName => Some(if seam::paths::is_within(ws, key) {
                Ok((target.clone(), open))
            } else {
                Err(denied())
            }),
            Fault::FenceNewFileParentOnly => {
                let absent = matches!(self.inner.stat(target, &Signal::none()).await, Ok(None));
                let parent = key.rsplit_once('/').map_or("/", |(p, _)| p);
                if !absent || !seam::paths::is_within(ws, parent) {
                    return None;
                }
                // "A new file": the parent is inside, so write — following a dangling link.
                let Ok(text) = std::fs::read_link(key) else {
                    return None;
                };
                let dest = text.to_string_lossy().into_owned();
                let resolved = self
                    .inner
                    .resolve(&dest, ResolveOptions { cwd: Some(parent) }, &Signal::none())
                    .await;
                Some(resolved.map(|t| (t, open)))
            }
            _ => None,
        }
    }
    /// [`Fault::IgnoresCwd`]: the working directory the call gives replaced by the root.
    fn cwd_of<'a>(&'a self, options: ResolveOptions<'a>) -> ResolveOptions<'a> {
        if self.fault == Fault::IgnoresCwd {
            ResolveOptions {
                cwd: Some(&self.root),
            }
        } else {
            options
        }
    }

    /// [`Fault::RefusalNamesNormalised`]: a refusal of a spelling naming it normalised.
    fn refusal(&self, e: FsError, path: &str, options: ResolveOptions<'_>) -> FsError {
        if self.fault != Fault::RefusalNamesNormalised {
            return e;
        }
        let raw = seam::paths::raw_display(path, options.cwd.unwrap_or(&self.root));
        let normal = seam::paths::lexical(&raw);
        if e.code() == FsErrorCode::NotFound && raw != normal && e.message().contains(&raw) {
            FsError::new(e.code(), e.message().replace(&raw, &normal))
        } else {
            e
        }
    }

    /// [`Fault::TornAcrossInstances`]: this instance's reads wait for its writes.
    async fn own_reads_wait(&self) -> Option<futures_util::lock::MutexGuard<'_, ()>> {
        if self.fault == Fault::TornAcrossInstances {
            Some(self.instance_lock.lock().await)
        } else {
            None
        }
    }

    /// [`Fault::ResetsModeOnRewrite`]: the rewritten file's bits set to 0644 (through the
    /// world, so any backend's storage), and the version a fresh stat then gives — so the
    /// version laws hold and only the mode is wrong.
    async fn reset_mode(&self, target: &FsTarget) -> Option<FsVersion> {
        let rel = self.rel(&target.display_path)?;
        self.world
            .apply(&WorldEffect::Chmod {
                path: rel,
                mode: 0o644,
            })
            .ok()?;
        match self.inner.stat(target, &Signal::none()).await {
            Ok(Some(info)) => Some(info.version),
            _ => None,
        }
    }

    /// [`Fault::FenceReadsCheckKeyThenOpenByName`]: the read's key is checked against the
    /// deployment's workspace as a path string, then the file is read by that name with
    /// nothing confining the walk. `None` when this is not that fault, or reads are not
    /// confined here.
    fn read_by_name(&self, target: &FsTarget, signal: &Signal) -> Option<Result<Vec<u8>, FsError>> {
        if self.fault != Fault::FenceReadsCheckKeyThenOpenByName
            || !self.inner.capabilities().read_fence
        {
            return None;
        }
        let mode = self.inner.sandbox_mode()?;
        if let Err(e) = signal.check(Verb::Read) {
            return Some(Err(e));
        }
        let workspace = format!(
            "{}/{}",
            self.world.root_display(),
            seam_conformance::DEPLOYMENT_WORKSPACE
        );
        let inside = std::fs::canonicalize(&workspace)
            .ok()
            .and_then(|p| p.to_str().map(str::to_string))
            .is_some_and(|ws| seam::paths::is_within(&ws, target.key.as_str()));
        if !inside {
            return Some(Err(FsError::read_denied(
                Verb::Read,
                &target.display_path,
                mode,
            )));
        }
        Some(
            std::fs::read(target.key.as_str()).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    FsError::not_found(Verb::Read, &target.display_path)
                }
                _ => FsError::io(Verb::Read, &target.display_path, &e.to_string()),
            }),
        )
    }

    pub fn new(
        inner: Arc<dyn FileSystem>,
        world: Arc<dyn World>,
        fault: Fault,
        diff_limit: u64,
    ) -> Self {
        Self {
            root: world.root_display(),
            inner,
            world,
            fault,
            pins: Mutex::new(HashMap::new()),
            cache: Mutex::new(HashMap::new()),
            instance_lock: futures_util::lock::Mutex::new(()),
            diff_limit,
            writing: Arc::default(),
        }
    }

    /// The text this instance read of `target`, if it kept one.
    fn cached(&self, target: &FsTarget) -> Option<String> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&target.key)
            .cloned()
    }

    /// Drops this instance's copy of `target`.
    pub(crate) fn forget(&self, target: &FsTarget) {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&target.key);
    }

    pub(crate) fn rel(&self, path: &str) -> Option<String> {
        path.strip_prefix(&self.root)?
            .strip_prefix('/')
            .map(str::to_string)
    }

    /// A version as the broken provider would report it.
    pub(crate) fn shown(&self, v: FsVersion, kind_is_dir: bool, key: &str) -> FsVersion {
        match self.fault {
            Fault::VersionWithoutCtime => without_ctime(v),
            Fault::DirVersionIgnoresEntries if kind_is_dir => dir_token(key),
            _ => v,
        }
    }

    pub(crate) async fn current(&self, t: &FsTarget) -> Option<FsVersion> {
        match self.inner.stat(t, &Signal::none()).await {
            Ok(Some(info)) => Some(info.version),
            _ => None,
        }
    }

    /// The guard the broken provider really checks, as a guard the inner provider understands.
    async fn guard(&self, t: &FsTarget, asked: Option<&FsVersion>) -> Option<FsVersion> {
        let asked = asked?.clone();
        match self.fault {
            Fault::IgnoresVersionGuard => Some(self.current(t).await.unwrap_or(asked)),
            Fault::VersionWithoutCtime => match self.current(t).await {
                Some(now) if without_ctime(now.clone()) == asked => Some(now),
                _ => Some(asked),
            },
            _ => Some(asked),
        }
    }

    pub(crate) async fn raw(&self, t: &FsTarget) -> Option<Vec<u8>> {
        self.inner
            .read_bytes(t, u64::MAX, &Signal::none())
            .await
            .ok()
    }

    /// Rewrites the file behind a successful edit, as a broken edit would have written it.
    async fn rewrite(&self, t: &FsTarget, out: EditOutcome, bytes: Vec<u8>) -> EditOutcome {
        let Ok(text) = String::from_utf8(bytes) else {
            return out;
        };
        let guard = WriteIntent::ReplaceIfVersion {
            version: out.version.clone(),
        };
        match self
            .inner
            .write_text(t, &text, Some(&guard), None, &Signal::none())
            .await
        {
            Ok(w) => EditOutcome {
                version: w.version,
                ..out
            },
            Err(_) => out,
        }
    }

    /// A signal whose checkpoints also loosen staging to world-readable.
    fn loosened(&self, signal: &Signal) -> Signal {
        if self.fault != Fault::WorldReadableStaging {
            return signal.clone();
        }
        let world = self.world.clone();
        // A staging path is under the root as displayed or under its real path.
        let roots = [self.root.clone(), self.world.process_root()];
        signal.layered(move |cp| {
            for path in cp.staging {
                let Some(rel) = roots
                    .iter()
                    .find_map(|root| path.strip_prefix(root.as_str())?.strip_prefix('/'))
                else {
                    continue;
                };
                let is_dir = matches!(world.entry_mode(path), Ok(Some(m)) if m.is_dir);
                let _ = world.apply(&WorldEffect::Chmod {
                    path: rel.to_string(),
                    mode: if is_dir { 0o755 } else { 0o644 },
                });
            }
            false
        })
    }
}

#[async_trait::async_trait]
impl FileSystem for Faulty {
    fn capabilities(&self) -> Capabilities {
        match self.fault {
            Fault::ClaimsNothing => Capabilities::none(),
            Fault::ClaimsSandboxWithoutFence => {
                self.inner.capabilities().with(Capability::SandboxModes)
            }
            _ => self.inner.capabilities(),
        }
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        match self.fault {
            Fault::ClaimsSandboxWithoutFence => Some(SandboxMode::WorkspaceWrite),
            _ => self.inner.sandbox_mode(),
        }
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        let options = self.cwd_of(options);
        let t = self
            .inner
            .resolve(path, options, signal)
            .await
            .map_err(|e| self.refusal(e, path, options))?;
        if self.fault == Fault::TargetPinsContent {
            let bytes = self.raw(&t).await;
            let mut pins = self.pins.lock().unwrap_or_else(|p| p.into_inner());
            match bytes {
                Some(b) => pins.insert(t.key.as_str().to_string(), b),
                None => pins.remove(t.key.as_str()),
            };
        }
        Ok(t)
    }

    fn process_path(&self, target: &FsTarget) -> String {
        match self.fault {
            Fault::ProcessPathIsDisplay => target.display_path.clone(),
            _ => self.inner.process_path(target),
        }
    }

    fn file_url(&self, target: &FsTarget) -> String {
        self.url_shown(self.inner.file_url(target))
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        match self.fault {
            Fault::ContainsByPrefix => child.key.as_str().starts_with(parent.key.as_str()),
            _ => self.inner.contains(parent, child),
        }
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        if self.fault == Fault::HangsInStat {
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        let info = self.inner.stat(target, signal).await?;
        if info.is_none()
            && let Some(e) = self.stat_through_file(target)
        {
            return Err(e);
        }
        Ok(info.map(|i| FsInfo {
            version: self.shown(i.version, i.kind == FsKind::Directory, target.key.as_str()),
            ..i
        }))
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        let options = self.cwd_of(options);
        let info = self
            .inner
            .lstat(path, options, signal)
            .await
            .map_err(|e| self.refusal(e, path, options))?;
        let key = match self.inner.resolve(path, options, &Signal::none()).await {
            Ok(t) => t.key.as_str().to_string(),
            Err(_) => path.to_string(),
        };
        Ok(info.map(|i| FsPathInfo {
            version: self.shown(i.version, i.kind == FsPathKind::Directory, &key),
            ..i
        }))
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        let _held = self.own_reads_wait().await;
        if let Some(bytes) = self.read_by_name(target, signal) {
            return bytes.and_then(|b| {
                seam_model::decode_for_read(&b).map_err(|e| match e {
                    seam_model::NotText::Binary => {
                        FsError::binary(Verb::Read, &target.display_path)
                    }
                    seam_model::NotText::InvalidUtf8 => {
                        FsError::invalid_utf8(Verb::Read, &target.display_path)
                    }
                })
            });
        }
        if self.fault == Fault::StaleInstanceCache {
            if let Some(text) = self.cached(target) {
                return Ok(text);
            }
            let text = self.inner.read_text(target, signal).await?;
            self.cache
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(target.key.clone(), text.clone());
            return Ok(text);
        }
        let text = self.inner.read_text(target, signal).await;
        match self.fault {
            Fault::MessagesNameTheKey => text.map_err(|e| {
                let named = e
                    .message()
                    .replace(&target.display_path, target.key.as_str());
                FsError::new(e.code(), named)
            }),
            Fault::RewordsReadErrors => {
                text.map_err(|e| FsError::new(e.code(), format!("{} (reworded)", e.message())))
            }
            Fault::NulWindowOffByOne if text.is_ok() => {
                if self
                    .raw(target)
                    .await
                    .is_some_and(|b| nul_at_window_edge(&b))
                {
                    return Err(FsError::binary(Verb::Read, &target.display_path));
                }
                text
            }
            Fault::TargetPinsContent if text.is_ok() => {
                let pinned = self
                    .pins
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(target.key.as_str())
                    .cloned();
                match pinned {
                    Some(bytes) => seam::text::decode_for_read(bytes)
                        .map_err(|e| e.into_error(Verb::Read, &target.display_path)),
                    None => text,
                }
            }
            _ => text,
        }
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        match self.fault {
            Fault::TornAcrossInstances => {
                // The whole stream read under this instance's lock, then handed out chunk by
                // chunk as the provider gave it.
                let _held = self.instance_lock.lock().await;
                let stream = self.inner.stream_text(target, signal).await?;
                let chunks: Vec<Result<String, FsError>> = stream.collect().await;
                Ok(Box::pin(futures_util::stream::iter(chunks)))
            }
            Fault::HangsInStream => {
                let _ = self.inner.stream_text(target, signal).await?;
                Ok(Box::pin(futures_util::stream::pending()))
            }
            Fault::NulWindowOffByOne => {
                let bytes = match self.inner.read_text(target, signal).await {
                    Ok(_) => self.raw(target).await.unwrap_or_default(),
                    Err(_) => Vec::new(),
                };
                if nul_at_window_edge(&bytes) {
                    let err = FsError::binary(Verb::Read, &target.display_path);
                    return Ok(Box::pin(futures_util::stream::iter(vec![Err(err)])));
                }
                self.inner.stream_text(target, signal).await
            }
            Fault::StreamSplitsCharacters => {
                // Every failure of a read comes first, as from the real provider.
                self.inner.read_text(target, signal).await?;
                let bytes = self.raw(target).await.unwrap_or_default();
                let items: Vec<Result<String, FsError>> = if self.fault == Fault::NulWindowOffByOne
                    && nul_at_window_edge(&bytes)
                {
                    vec![Err(FsError::binary(Verb::Read, &target.display_path))]
                } else {
                    match chunked_decode(&bytes) {
                        Some(chunks) => chunks.into_iter().map(Ok).collect(),
                        None => vec![Err(FsError::invalid_utf8(Verb::Read, &target.display_path))],
                    }
                };
                Ok(Box::pin(futures_util::stream::iter(items)))
            }
            _ => self.inner.stream_text(target, signal).await,
        }
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        let _held = self.own_reads_wait().await;
        if let Some(bytes) = self.read_by_name(target, signal) {
            return bytes.and_then(|b| {
                if b.len() as u64 > max_bytes {
                    Err(FsError::too_large(
                        &target.display_path,
                        b.len() as u64,
                        max_bytes,
                    ))
                } else {
                    Ok(b)
                }
            });
        }
        let bytes = self.inner.read_bytes(target, max_bytes, signal).await?;
        if self.fault == Fault::ReadBytesCapExclusive && bytes.len() as u64 == max_bytes {
            return Err(FsError::too_large(
                &target.display_path,
                bytes.len() as u64,
                max_bytes,
            ));
        }
        Ok(bytes)
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        if let Some(e) = self.listing_through_link(target) {
            return Err(e);
        }
        let mut entries = self.inner.list_dir(target, signal).await?;
        if matches!(
            self.fault,
            Fault::ListingShowsStaging | Fault::ListingShowsStagingInPublish
        ) && self.writing.load(std::sync::atomic::Ordering::SeqCst) > 0
        {
            // The staging file of the write in flight, in whatever directory is listed.
            let name = ".stage-0001.tmp";
            let display = format!("{}/{name}", target.display_path.trim_end_matches('/'));
            entries.push(FsDirEntry {
                name: name.into(),
                kind: FsKind::File,
                target: FsTarget {
                    key: FsTargetKey::new(display.clone()),
                    display_path: display,
                },
                version: Some(FsVersion::new("staging")),
                size: Some(0),
            });
            entries.sort_by(|a, b| a.name.cmp(&b.name));
        }
        if self.fault == Fault::ListingKeepsFirstPage {
            entries.truncate(1024);
        }
        if self.fault == Fault::LocaleOrderedListing {
            entries.sort_by(|a, b| {
                a.name
                    .to_lowercase()
                    .cmp(&b.name.to_lowercase())
                    .then_with(|| a.name.cmp(&b.name))
            });
        }
        for e in &mut entries {
            if let Some(v) = e.version.take() {
                e.version = Some(self.shown(v, e.kind == FsKind::Directory, e.target.key.as_str()));
            }
        }
        Ok(entries)
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        let _writing = Writing::start(&self.writing);
        let signal = &self.unseen_at_checkpoints(signal);
        if let Some(e) = self.staging_overflow(target, Verb::Write) {
            return Err(e);
        }
        let by_name = self.by_name(target).await;
        let target = &by_name;
        let asked = match expected {
            Some(WriteIntent::ReplaceIfVersion { version }) => Some(version),
            _ => None,
        };
        if self.guard_checked_once(target, asked).await.is_some() {
            return self
                .inner
                .write_text(target, content, None, sandbox, signal)
                .await;
        }
        if self.fault == Fault::StaleInstanceCache {
            // This instance's own changes drop its copy: right within one instance.
            self.forget(target);
            return self
                .inner
                .write_text(target, content, expected, sandbox, signal)
                .await;
        }
        if self.fault.is_concurrency() {
            signal.check(Verb::Write)?;
        }
        if let Some(broken) = self
            .racy_write(target, content, expected, sandbox, signal)
            .await
        {
            return broken;
        }
        let signal = self.loosened(signal);
        let signal = if self.fault == Fault::WriteIgnoresEntryCancel && signal.is_cancelled() {
            Signal::none()
        } else {
            signal
        };
        let guard = self
            .guard(target, asked)
            .await
            .map(|version| WriteIntent::ReplaceIfVersion { version });
        let mut expected = match expected {
            Some(WriteIntent::ReplaceIfVersion { .. }) => guard,
            other => other.cloned(),
        };
        match self.fault {
            Fault::CheckThenRename if expected == Some(WriteIntent::CreateIfAbsent) => {
                // Check, then publish with a plain replace: whatever appears in between is lost.
                let is_file = matches!(
                    self.inner.stat(target, &Signal::none()).await,
                    Ok(Some(ref i)) if i.kind == FsKind::File
                );
                if is_file {
                    return Err(FsError::exists_not_observed(&target.display_path));
                }
                expected = None;
            }
            Fault::ReplacesDanglingLink if expected.is_none() => {
                let link = self
                    .inner
                    .lstat(
                        &target.display_path,
                        ResolveOptions::default(),
                        &Signal::none(),
                    )
                    .await;
                if matches!(link, Ok(Some(ref i)) if i.kind == FsPathKind::Symlink)
                    && self.current(target).await.is_none()
                    && let Some(rel) = self.rel(&target.display_path)
                {
                    let _ = self.world.apply(&WorldEffect::Remove { path: rel });
                }
            }
            _ => {}
        }
        let (target, sandbox) = match self
            .broken_fence(target, sandbox, Verb::Write, &signal)
            .await
        {
            Some(Ok(opened)) => opened,
            Some(Err(denied)) => return Err(denied),
            None => (target.clone(), sandbox.cloned()),
        };
        let target = &target;
        let absent_before = self.fault == Fault::CompetitorTakenForAFile
            && expected == Some(WriteIntent::CreateIfAbsent)
            && matches!(
                self.inner
                    .lstat(
                        &target.display_path,
                        ResolveOptions::default(),
                        &Signal::none()
                    )
                    .await,
                Ok(None)
            );
        let written = self
            .inner
            .write_text(
                target,
                content,
                expected.as_ref(),
                sandbox.as_ref(),
                &signal,
            )
            .await;
        let mut out = match written {
            // Nothing was there at the check, and the publication refused: "a file is there",
            // whatever is.
            Err(e) if absent_before && e.code() == FsErrorCode::NotRegularFile => {
                return Err(FsError::exists_not_observed(&target.display_path));
            }
            other => other?,
        };
        if self.fault == Fault::ResetsModeOnRewrite
            && out.operation == seam::WriteOperation::Update
            && let Some(version) = self.reset_mode(target).await
        {
            out.version = version;
        }
        out.version = self.shown(out.version, false, target.key.as_str());
        Ok(out)
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        let _writing = Writing::start(&self.writing);
        let signal = &self.unseen_at_checkpoints(signal);
        if self.fault == Fault::PanicsInEdit {
            panic!("a deliberately broken edit_text");
        }
        if let Some(e) = self.staging_overflow(target, Verb::Edit) {
            return Err(e);
        }
        let by_name = self.by_name(target).await;
        let target = &by_name;
        if self.guard_checked_once(target, expected).await.is_some() {
            return self
                .inner
                .edit_text(target, edit, None, sandbox, signal)
                .await;
        }
        if self.fault == Fault::StaleInstanceCache {
            self.forget(target);
            return self
                .inner
                .edit_text(target, edit, expected, sandbox, signal)
                .await;
        }
        if self.fault.is_concurrency() {
            signal.check(Verb::Edit)?;
        }
        if let Some(broken) = self.racy_edit(target, edit, expected, sandbox).await {
            return broken;
        }
        let signal = self.loosened(signal);
        let guard = self.guard(target, expected).await;
        let (opened, sandbox) = match self
            .broken_fence(target, sandbox, Verb::Edit, &signal)
            .await
        {
            Some(Ok(opened)) => opened,
            Some(Err(denied)) => return Err(denied),
            None => (target.clone(), sandbox.cloned()),
        };
        let sandbox = sandbox.as_ref();
        let result = self
            .inner
            .edit_text(&opened, edit, guard.as_ref(), sandbox, &signal)
            .await;
        let out = match (self.fault, result) {
            (Fault::EditSamplesNul, Err(e)) if e.code() == FsErrorCode::NotText => {
                let bytes = self.raw(target).await.ok_or_else(|| e.clone())?;
                let edited = edit_ignoring_late_nul(&bytes, edit).ok_or_else(|| e.clone())?;
                let text = String::from_utf8(edited).map_err(|_| e.clone())?;
                let w = self
                    .inner
                    .write_text(target, &text, None, sandbox, &Signal::none())
                    .await?;
                EditOutcome {
                    version: w.version,
                    before: String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
                    after: w.after,
                }
            }
            (_, Err(e)) => return Err(e),
            (Fault::EditNormalisesEndings, Ok(out)) => match self.raw(target).await {
                Some(bytes) => match normalise_endings(&bytes) {
                    Some(n) if n != bytes => self.rewrite(target, out, n).await,
                    _ => out,
                },
                None => out,
            },
            (Fault::DropsBomOnEdit, Ok(out)) => match self.raw(target).await {
                Some(bytes) if bytes.starts_with(seam::text::BOM) => {
                    let stripped = bytes[seam::text::BOM.len()..].to_vec();
                    self.rewrite(target, out, stripped).await
                }
                _ => out,
            },
            (_, Ok(out)) => out,
        };
        Ok(EditOutcome {
            version: self.shown(out.version, false, target.key.as_str()),
            ..out
        })
    }

    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        let options = self.cwd_of(options);
        self.ns_create_dir(path, options, request, sandbox, signal)
            .await
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        let options = self.cwd_of(options);
        self.ns_remove(path, options, request, sandbox, signal)
            .await
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
        let options = self.cwd_of(options);
        self.ns_rename(from, to, options, request, sandbox, signal)
            .await
    }
}
