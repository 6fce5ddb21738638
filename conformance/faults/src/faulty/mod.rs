//! The wrapper that breaks a provider: every method delegates, except where the chosen fault
//! changes what is returned or what the world holds.

use crate::Fault;
use seam::{
    EditOutcome, FileSystem, FsError, FsErrorCode, FsTarget, FsTargetKey, FsVersion,
    ResolveOptions, SandboxMode, SandboxPolicy, Signal, Verb, WriteIntent,
};
use seam_conformance::World;
use seam_model::WorldEffect;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod calls;

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
    /// Where its planted hangs wait ([`Fault::HangsInStat`], [`Fault::HangsInStream`]).
    pub(crate) hangs: Arc<crate::Hangs>,
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
        hangs: Arc<crate::Hangs>,
    ) -> Self {
        Self {
            hangs,
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
