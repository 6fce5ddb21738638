//! The mistakes only concurrency shows: each one passes every sequential check, because a step
//! always starts after the previous one finished.
//!
//! * [`Fault::TruncatesInPlace`] publishes by truncating the file and writing it again, slowly:
//!   a reader in between sees an empty or half-written file (and over a provider with cancel
//!   points it shows its `staged` checkpoint half written, so a reader paused there sees it
//!   every time).
//! * [`Fault::GuardCheckedApart`] checks the guard in one critical section and publishes in
//!   another (a lock released before publication; a memory provider whose check and publish
//!   take the state lock twice): two writers at one version both win.
//! * [`Fault::EditReadsOutsideLock`] reads the file, edits the copy, and writes the result back
//!   unguarded: a concurrent edit in between is lost.
//! * [`Fault::InstanceLocalLock`] is right within one instance (its own lock covers check and
//!   publication) and wrong across two over one storage: the lock lives in the instance.
//! * [`Fault::TornAcrossInstances`] truncates and rewrites in place under the instance's lock,
//!   which the instance's own reads take: whole through the writer's instance, torn through a
//!   second one (its checkpoints come before and after the rewrite, so a reader paused at one
//!   sees a whole file).

use crate::Fault;
use crate::faulty::Faulty;
use seam::{
    CancelPoint, Checkpoint, EditOutcome, EditRequest, FsError, FsKind, FsTarget, FsVersion,
    SandboxPolicy, Signal, Verb, WriteIntent, WriteOperation, WriteOutcome,
};
use seam_model::WorldEffect;

impl Faulty {
    /// The guard, checked on its own (the mistake of [`Fault::GuardCheckedApart`] and friends).
    async fn check_apart(
        &self,
        target: &FsTarget,
        expected: Option<&WriteIntent>,
        verb: Verb,
    ) -> Result<Option<FsVersion>, FsError> {
        let d = &target.display_path;
        let now = self.inner.stat(target, &Signal::none()).await?;
        match (expected, &now) {
            (Some(WriteIntent::CreateIfAbsent), Some(_)) => Err(FsError::exists_not_observed(d)),
            (Some(WriteIntent::ReplaceIfVersion { .. }), None) if verb == Verb::Write => {
                Err(FsError::no_longer_exists(d))
            }
            (Some(WriteIntent::ReplaceIfVersion { version }), Some(info))
                if &info.version != version =>
            {
                Err(FsError::changed_since_read(verb, d))
            }
            _ => Ok(now.map(|i| i.version)),
        }
    }

    /// A broken write, when the fault breaks writes; `None` lets the write go on as usual.
    pub(crate) async fn racy_write(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Option<Result<WriteOutcome, FsError>> {
        match self.fault {
            Fault::TruncatesInPlace | Fault::TornAcrossInstances if expected.is_none() => {
                let across = self.fault == Fault::TornAcrossInstances;
                let rel = self.rel(&target.display_path)?;
                let info = self.inner.stat(target, &Signal::none()).await.ok()??;
                if info.kind != FsKind::File {
                    return None;
                }
                // `before` as the contract gives it: none at or over the diff-basis limit.
                let before = self
                    .inner
                    .read_text(target, &Signal::none())
                    .await
                    .ok()
                    .filter(|old| {
                        (old.len() as u64) < self.diff_limit
                            && (content.len() as u64) < self.diff_limit
                    })
                    .map(|old| seam::text::lf_normalize(&old).into_owned());
                let bytes = content.as_bytes();
                let half = &bytes[..bytes.len() / 2];
                let show = |point: CancelPoint| {
                    let cp = Checkpoint {
                        point,
                        verb: Verb::Write,
                        display_path: &target.display_path,
                        staging: &[],
                    };
                    signal.checkpoint(&cp)
                };
                let caps = self.inner.capabilities();
                if across
                    && caps.cancel_points
                    && (show(CancelPoint::BeforeStage).is_err()
                        || show(CancelPoint::Staged).is_err())
                {
                    return Some(Err(FsError::aborted(Verb::Write)));
                }
                // This instance's reads wait for the lock: they never see the file torn.
                let held = if across {
                    Some(self.instance_lock.lock().await)
                } else {
                    None
                };
                for (step, part) in [&[][..], half, bytes].into_iter().enumerate() {
                    let rewrite = WorldEffect::RewriteFile {
                        path: rel.clone(),
                        bytes: part.to_vec().into(),
                        restore_mtime: false,
                    };
                    if let Err(e) = self.world.apply(&rewrite) {
                        return Some(Err(FsError::io(
                            Verb::Write,
                            &target.display_path,
                            &e.to_string(),
                        )));
                    }
                    if step == 1 && caps.cancel_points && !across {
                        // Half written, it reaches the point where content is "staged": a
                        // reader while it waits there sees the torn file, every time.
                        let staged = Checkpoint {
                            point: CancelPoint::Staged,
                            verb: Verb::Write,
                            display_path: &target.display_path,
                            staging: &[],
                        };
                        if signal.checkpoint(&staged).is_err() {
                            return Some(Err(FsError::aborted(Verb::Write)));
                        }
                    }
                    if step < 2 {
                        // A slow writer: the file stays empty, then half-written, a moment.
                        std::thread::sleep(std::time::Duration::from_millis(if across {
                            10
                        } else {
                            2
                        }));
                    }
                }
                drop(held);
                if across && caps.cancel_points {
                    // Published: a cancel at `committed` changes nothing.
                    let _ = show(CancelPoint::Committed);
                }
                let version = self.current(target).await?;
                Some(Ok(WriteOutcome {
                    operation: WriteOperation::Update,
                    version,
                    before,
                    after: seam::text::lf_normalize(content).into_owned(),
                }))
            }
            Fault::GuardCheckedApart if expected.is_some() => {
                if let Err(e) = self.check_apart(target, expected, Verb::Write).await {
                    return Some(Err(e));
                }
                between_sections();
                Some(
                    self.inner
                        .write_text(target, content, None, sandbox, &Signal::none())
                        .await,
                )
            }
            Fault::InstanceLocalLock => {
                // Every mutation of this instance under its one lock: right within the
                // instance, nothing across two.
                let _held = self.instance_lock.lock().await;
                if let Err(e) = self.check_apart(target, expected, Verb::Write).await {
                    return Some(Err(e));
                }
                Some(
                    self.inner
                        .write_text(target, content, None, sandbox, &Signal::none())
                        .await,
                )
            }
            _ => None,
        }
    }

    /// A broken edit, when the fault breaks edits; `None` lets the edit go on as usual.
    pub(crate) async fn racy_edit(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
    ) -> Option<Result<EditOutcome, FsError>> {
        let intent = expected.map(|v| WriteIntent::ReplaceIfVersion { version: v.clone() });
        let held = match self.fault {
            Fault::InstanceLocalLock => Some(self.instance_lock.lock().await),
            Fault::GuardCheckedApart | Fault::EditReadsOutsideLock => None,
            _ => return None,
        };
        let d = &target.display_path;
        match self.check_apart(target, intent.as_ref(), Verb::Edit).await {
            Ok(Some(_)) => {}
            Ok(None) => return Some(Err(FsError::changed_since_read(Verb::Edit, d))),
            Err(e) => return Some(Err(e)),
        }
        if self.fault == Fault::GuardCheckedApart {
            between_sections();
        }
        if self.fault != Fault::EditReadsOutsideLock {
            let out = self
                .inner
                .edit_text(target, edit, None, sandbox, &Signal::none())
                .await;
            drop(held);
            return Some(out);
        }
        // Read, edit the copy, write it back: nothing stops another edit in between.
        let bytes = self.raw(target).await?;
        let edited = match seam::edit::literal_edit(bytes, edit) {
            Ok(e) => e,
            Err(e) => return Some(Err(e.into_error(d))),
        };
        let bytes: Vec<u8> = edited.parts().concat();
        let (before, after) = edited.into_before_after();
        let text = String::from_utf8(bytes).ok()?;
        Some(
            self.inner
                .write_text(target, &text, None, sandbox, &Signal::none())
                .await
                .map(|w| EditOutcome {
                    version: w.version,
                    before,
                    after,
                }),
        )
    }
}

/// What lies between a guard checked apart and its publication: in a real backend, the staging
/// write. A few milliseconds, so that racers released together all pass the check before any
/// publishes even on a loaded machine (at a load average of 10.8 on 2 cores, the memory
/// provider's microseconds between its two critical sections let one racer finish before the
/// next started, and the mistake went unseen at seed 24228).
/// (A blocking sleep, as the slow truncation above: this is a broken variant for the self-test,
/// never a provider.)
pub(crate) fn between_sections() {
    std::thread::sleep(std::time::Duration::from_millis(5));
}
