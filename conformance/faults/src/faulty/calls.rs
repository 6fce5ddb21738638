//! The contract's calls of the broken provider: each delegates to the provider it wraps,
//! except where the chosen fault changes the answer or what the world holds.

use super::{Faulty, Writing};
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
use seam_model::WorldEffect;

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
            // On the executor's thread, as a backend that blocks it would: until its test
            // releases it ([`crate::Hangs`]).
            self.hangs.block();
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
                // Its first chunk never comes (until its test releases it: then the stream
                // ends, having yielded nothing).
                let hangs = self.hangs.clone();
                Ok(Box::pin(
                    futures_util::stream::once(async move {
                        hangs.wait().await;
                    })
                    .filter_map(|()| std::future::ready(None::<Result<String, FsError>>)),
                ))
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
