//! The diagnosis an author gets when a provider holds a lock across `Signal::checkpoint` that its
//! world needs (the obvious in-memory design: one state lock around the whole mutation). The
//! suite must not hang: it waits a bounded time for the competitor, then fails the step with a
//! message that says what is wrong and where to read about it.

use seam::{
    EditOutcome, EditRequest, FileSystem, FsError, FsTarget, FsVersion, Layer, SandboxPolicy,
    Signal, WriteIntent, WriteOutcome,
};
use seam_conformance::{
    CaseDurability, CaseOptions, EntryMode, Factory, FailureKind, HarnessConfig, Interfere, Op,
    Step, Subject, World, WriteGuard, run_steps, runtime,
};
use seam_local_testkit::LocalFactory;
use seam_model::{Competitor, SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// The local provider, holding one lock for the whole of every write.
struct HoldsLock {
    inner: Arc<dyn FileSystem>,
    lock: Arc<Mutex<()>>,
}

#[async_trait::async_trait]
impl Layer for HoldsLock {
    fn inner(&self) -> &dyn FileSystem {
        self.inner.as_ref()
    }
    async fn write_text(
        &self,
        t: &FsTarget,
        c: &str,
        e: Option<&WriteIntent>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        // The mistake: the state lock stays held while the checkpoints are shown.
        let _held = self.lock.lock().await;
        self.inner.write_text(t, c, e, p, s).await
    }
    async fn edit_text(
        &self,
        t: &FsTarget,
        e: &EditRequest,
        v: Option<&FsVersion>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<EditOutcome, FsError> {
        let _held = self.lock.lock().await;
        self.inner.edit_text(t, e, v, p, s).await
    }
}

/// Its world, which needs the same lock to change anything.
struct LockedWorld {
    inner: Arc<dyn World>,
    lock: Arc<Mutex<()>>,
}

impl World for LockedWorld {
    fn root_display(&self) -> String {
        self.inner.root_display()
    }
    fn apply(&self, effect: &WorldEffect) -> std::io::Result<()> {
        let _held = self.lock.blocking_lock();
        self.inner.apply(effect)
    }
    fn snapshot(&self) -> std::io::Result<BTreeMap<String, SnapEntry>> {
        self.inner.snapshot()
    }
    fn entry_mode(&self, path: &str) -> std::io::Result<Option<EntryMode>> {
        self.inner.entry_mode(path)
    }
}

struct HoldsLockFactory;

impl Factory for HoldsLockFactory {
    fn name(&self) -> String {
        "local+holds-lock".into()
    }
    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let s = LocalFactory.make(options)?;
        let lock = Arc::new(Mutex::new(()));
        Ok(Subject {
            fs: Arc::new(HoldsLock {
                inner: s.fs,
                lock: lock.clone(),
            }),
            world: Arc::new(LockedWorld {
                inner: s.world,
                lock,
            }),
            diff_basis_max_bytes: s.diff_basis_max_bytes,
            keep_alive: s.keep_alive,
        })
    }
}

#[test]
fn a_lock_held_across_a_checkpoint_is_diagnosed_not_a_hang() {
    let rt = runtime().expect("runtime");
    let mut write = Step::plain(Op::Write {
        path: "a".into(),
        content: "mine\n".into(),
        guard: WriteGuard::CreateIfAbsent,
    });
    write.interfere = Interfere::Competitor(Competitor::File("theirs\n".into()));
    let config = HarnessConfig {
        checkpoint_wait: Duration::from_millis(300),
        ..HarnessConfig::default()
    };
    let options = CaseOptions::new(1, CaseDurability::Relaxed, "tmpfile");
    let (records, _) =
        run_steps(&HoldsLockFactory, &rt, &options, config, &[write]).expect("the step ran");
    let failure = records
        .last()
        .and_then(|r| r.failure.clone())
        .expect("the step failed");
    assert_eq!(failure.kind, FailureKind::Checkpoint, "{}", failure.message);
    assert!(
        failure
            .message
            .contains("does the provider hold a lock its world needs")
            && failure.message.contains("seam::signal"),
        "{}",
        failure.message
    );
}
