//! The namespace operations through a broken variant: forwarded with the variant's version
//! tokens translated both ways (what the caller was shown in, what the provider issues out), and
//! the four classic namespace mistakes:
//!
//! * [`Fault::RenameByCopy`] moves a file by writing a copy and deleting the original: not
//!   atomic, and the copy is a new file with new bits, not the file that was moved;
//! * [`Fault::RemoveFollowsLink`] removes what a link points to instead of the link;
//! * [`Fault::RemoveIgnoresGuard`] removes whatever is there, whatever version the caller saw;
//! * [`Fault::RemoveGuardCheckedApart`] checks the version in one critical section and removes
//!   in another: a write at the same version in between, and both win;
//! * [`Fault::RenameIgnoresCancel`] moves the entry whatever its signal says;
//! * [`Fault::RenameReplacesWithoutGuard`] moves onto an existing destination it was never
//!   allowed to replace;
//! * [`Fault::EmptinessCheckedAtRemoval`] leaves a directory's emptiness to the removal itself,
//!   after its `before_stage` checkpoint.

use crate::Fault;
use crate::faulty::Faulty;
use seam::{
    CancelPoint, Checkpoint, CreateDirOptions, CreateDirOutcome, FsError, FsKind, FsPathKind,
    FsVersion, RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome, ResolveOptions,
    SandboxPolicy, Signal, Verb, WriteIntent,
};

impl Faulty {
    /// [`Fault::StaleInstanceCache`]: this instance's own changes drop its copies (right within
    /// one instance).
    async fn forget_paths(&self, paths: &[&str], options: ResolveOptions<'_>) {
        if self.fault != Fault::StaleInstanceCache {
            return;
        }
        for p in paths {
            if let Ok(t) = self.inner.resolve(p, options, &Signal::none()).await {
                self.forget(&t);
            }
        }
    }

    /// The key a path's version is shown under (as `lstat` shows it).
    async fn key_for(&self, path: &str, options: ResolveOptions<'_>) -> String {
        match self.inner.resolve(path, options, &Signal::none()).await {
            Ok(t) => t.key.as_str().to_string(),
            Err(_) => path.to_string(),
        }
    }

    /// The provider's own version for a guard the caller took from this variant: the entry's
    /// current version when that is what the caller was shown, else the guard as given.
    async fn entry_guard(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        asked: Option<&FsVersion>,
    ) -> Option<FsVersion> {
        let asked = asked?.clone();
        let Ok(Some(now)) = self.inner.lstat(path, options, &Signal::none()).await else {
            return Some(asked);
        };
        let key = self.key_for(path, options).await;
        let shown = self.shown(now.version.clone(), now.kind == FsPathKind::Directory, &key);
        Some(if shown == asked { now.version } else { asked })
    }

    pub(crate) async fn ns_create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        let out = self
            .inner
            .create_dir(path, options, request, sandbox, signal)
            .await?;
        let key = self.key_for(path, options).await;
        Ok(CreateDirOutcome {
            version: self.shown(out.version, true, &key),
            ..out
        })
    }

    pub(crate) async fn ns_remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        self.forget_paths(&[path], options).await;
        let mut request = RemoveOptions {
            if_version: self
                .entry_guard(path, options, request.if_version.as_ref())
                .await,
            ..request.clone()
        };
        // A lock that lives in the instance covers every mutation of the instance: right within
        // one instance (the writes take it too), nothing across two.
        let _held = if self.fault == Fault::InstanceLocalLock {
            Some(self.instance_lock.lock().await)
        } else {
            None
        };
        match self.fault {
            Fault::RemoveIgnoresGuard => request.if_version = None,
            Fault::RemoveGuardCheckedApart if request.if_version.is_some() => {
                // The guard in one critical section, the removal in another.
                let now = self
                    .inner
                    .lstat(path, options, &Signal::none())
                    .await?
                    .map(|i| i.version);
                if now != request.if_version {
                    return Err(FsError::changed_since_read(seam::Verb::Remove, path));
                }
                crate::concurrency::between_sections();
                request.if_version = None;
            }
            Fault::EmptinessCheckedAtRemoval if request.directory => {
                // Every check but emptiness, then `before_stage`, then the removal itself finds
                // the entries (`rmdir` alone): a cancel there hides that it never could remove.
                if let Ok(Some(entry)) = self.inner.lstat(path, options, &Signal::none()).await
                    && entry.kind == FsPathKind::Directory
                    && request
                        .if_version
                        .as_ref()
                        .is_none_or(|v| *v == entry.version)
                    && let Ok(t) = self.inner.resolve(path, options, &Signal::none()).await
                    && self
                        .inner
                        .list_dir(&t, &Signal::none())
                        .await
                        .is_ok_and(|entries| !entries.is_empty())
                {
                    signal.checkpoint(&seam::Checkpoint {
                        point: seam::CancelPoint::BeforeStage,
                        verb: seam::Verb::Remove,
                        display_path: &t.display_path,
                        staging: &[],
                    })?;
                    return Err(FsError::directory_not_empty(&t.display_path));
                }
            }
            Fault::RemoveFollowsLink => {
                // What the path leads to, links followed: the link's target goes, the link stays.
                if let Ok(Some(entry)) = self.inner.lstat(path, options, &Signal::none()).await
                    && entry.kind == FsPathKind::Symlink
                    && let Ok(t) = self.inner.resolve(path, options, &Signal::none()).await
                    && let Ok(Some(info)) = self.inner.stat(&t, &Signal::none()).await
                    && info.kind != FsKind::Directory
                {
                    let followed = self.inner.process_path(&t);
                    request.if_version = None;
                    // It says it removed the link it was asked to remove.
                    return self
                        .inner
                        .remove(&followed, options, &request, sandbox, signal)
                        .await
                        .map(|_| RemoveOutcome {
                            kind: FsPathKind::Symlink,
                        });
                }
            }
            _ => {}
        }
        self.inner
            .remove(path, options, &request, sandbox, signal)
            .await
    }

    pub(crate) async fn ns_rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        self.forget_paths(&[from, to], options).await;
        let mut request = RenameOptions {
            if_version: self
                .entry_guard(from, options, request.if_version.as_ref())
                .await,
            replace: self
                .entry_guard(to, options, request.replace.as_ref())
                .await,
        };
        let _held = if self.fault == Fault::InstanceLocalLock {
            Some(self.instance_lock.lock().await)
        } else {
            None
        };
        match self.fault {
            Fault::RenameReplacesWithoutGuard if request.replace.is_none() => {
                // Whatever is at the destination is replaced, asked or not.
                if let Ok(Some(there)) = self.inner.lstat(to, options, &Signal::none()).await {
                    request.replace = Some(there.version);
                }
            }
            Fault::RenameByCopy => {
                if let Some(out) = self
                    .copy_then_delete(from, to, options, &request, signal)
                    .await
                {
                    return out;
                }
            }
            _ => {}
        }
        // The signal the inner rename is given: none at all, for the variant that ignores it.
        let none = Signal::none();
        let signal = if self.fault == Fault::RenameIgnoresCancel {
            &none
        } else {
            signal
        };
        let out = self
            .inner
            .rename(from, to, options, &request, sandbox, signal)
            .await?;
        let key = self.key_for(to, options).await;
        Ok(RenameOutcome {
            version: self.shown(out.version, out.kind == FsPathKind::Directory, &key),
            ..out
        })
    }

    /// [`Fault::RenameByCopy`]: a regular text file with nothing at the destination is written
    /// anew there and the original removed. `None` for anything else (moved properly). It
    /// honours its signal as a rename does (cancelled before it starts, checkpoints before it
    /// stages and once committed): the variant departs only in how it moves.
    async fn copy_then_delete(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        signal: &Signal,
    ) -> Option<Result<RenameOutcome, FsError>> {
        let none = Signal::none();
        let info = self.inner.lstat(from, options, &none).await.ok()??;
        if info.kind != FsPathKind::File
            || request.replace.is_some()
            || request
                .if_version
                .as_ref()
                .is_some_and(|v| *v != info.version)
            || self.inner.lstat(to, options, &none).await.ok()?.is_some()
            || !matches!(
                self.inner.lstat(&format!("{to}/.."), options, &none).await,
                Ok(Some(p)) if p.kind == FsPathKind::Directory
            )
        {
            return None;
        }
        let at = |point| Checkpoint {
            point,
            verb: Verb::Rename,
            display_path: from,
            staging: &[],
        };
        if let Err(err) = signal.checkpoint(&at(CancelPoint::BeforeStage)) {
            return Some(Err(err));
        }
        let source = self.inner.resolve(from, options, &none).await.ok()?;
        let text = self.inner.read_text(&source, &none).await.ok()?;
        let dest = self.inner.resolve(to, options, &none).await.ok()?;
        let written = self
            .inner
            .write_text(
                &dest,
                &text,
                Some(&WriteIntent::CreateIfAbsent),
                None,
                &none,
            )
            .await
            .ok()?;
        let _ = self
            .inner
            .remove(from, options, &RemoveOptions::default(), None, &none)
            .await;
        signal.committed(&at(CancelPoint::Committed));
        Some(Ok(RenameOutcome {
            kind: FsPathKind::File,
            replaced: false,
            version: written.version,
        }))
    }
}
