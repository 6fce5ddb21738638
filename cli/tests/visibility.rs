//! `atomic-visibility` counts what the backend served, not what the suite sent.
//!
//! * The memory provider claims cancel points: its readers are answered while each mutation is
//!   paused at a checkpoint, on one instance and on a second one, so the property checks real
//!   overlaps (and reaches `visibility.whole`) however busy the machine is.
//! * A backend that serves one call at a time (here the local provider behind one lock held for
//!   the whole of every call, as a single-threaded adapter does) answers no read while a write
//!   is in flight: the property says it does not apply, why, in every report format — and
//!   claims no checks. The same provider without the lock, at the same seed, passes with
//!   overlaps counted.

use seam::{
    Capabilities, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo, FsPathInfo,
    FsTarget, FsVersion, ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream,
    WriteIntent, WriteOutcome,
};
use seam_cli::providers::{LocalFactory, MemoryFactory};
use seam_conformance::{
    CaseOptions, Coverage, Factory, Report, SequenceConfig, Status, Subject, SuiteConfig, Verdict,
    run_suite,
};
use std::sync::Arc;
use tokio::sync::Mutex;

/// A provider that serves one call at a time: every call holds one lock from start to end.
struct OneAtATime {
    inner: Arc<dyn FileSystem>,
    lock: Arc<Mutex<()>>,
}

#[async_trait::async_trait]
impl FileSystem for OneAtATime {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.inner.sandbox_mode()
    }
    async fn resolve(
        &self,
        p: &str,
        o: ResolveOptions<'_>,
        s: &Signal,
    ) -> Result<FsTarget, FsError> {
        let _one = self.lock.lock().await;
        self.inner.resolve(p, o, s).await
    }
    fn process_path(&self, t: &FsTarget) -> String {
        self.inner.process_path(t)
    }
    fn file_url(&self, t: &FsTarget) -> String {
        self.inner.file_url(t)
    }
    fn contains(&self, p: &FsTarget, c: &FsTarget) -> bool {
        self.inner.contains(p, c)
    }
    async fn stat(&self, t: &FsTarget, s: &Signal) -> Result<Option<FsInfo>, FsError> {
        let _one = self.lock.lock().await;
        self.inner.stat(t, s).await
    }
    async fn lstat(
        &self,
        p: &str,
        o: ResolveOptions<'_>,
        s: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        let _one = self.lock.lock().await;
        self.inner.lstat(p, o, s).await
    }
    async fn read_text(&self, t: &FsTarget, s: &Signal) -> Result<String, FsError> {
        let _one = self.lock.lock().await;
        self.inner.read_text(t, s).await
    }
    async fn stream_text(&self, t: &FsTarget, s: &Signal) -> Result<TextStream, FsError> {
        // The whole stream is served under the lock, as a single-threaded server would.
        let _one = self.lock.lock().await;
        let text = self.inner.read_text(t, s).await?;
        Ok(Box::pin(futures_util::stream::iter([Ok(text)])))
    }
    async fn read_bytes(&self, t: &FsTarget, m: u64, s: &Signal) -> Result<Vec<u8>, FsError> {
        let _one = self.lock.lock().await;
        self.inner.read_bytes(t, m, s).await
    }
    async fn list_dir(&self, t: &FsTarget, s: &Signal) -> Result<Vec<FsDirEntry>, FsError> {
        let _one = self.lock.lock().await;
        self.inner.list_dir(t, s).await
    }
    async fn write_text(
        &self,
        t: &FsTarget,
        c: &str,
        e: Option<&WriteIntent>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        let _one = self.lock.lock().await;
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
        let _one = self.lock.lock().await;
        self.inner.edit_text(t, e, v, p, s).await
    }
}

/// The local provider, one call at a time. It does not claim shared storage (a second instance
/// would have a lock of its own).
struct OneAtATimeFactory;

impl Factory for OneAtATimeFactory {
    fn name(&self) -> String {
        "local+one-at-a-time".into()
    }
    fn configurations(&self) -> Vec<String> {
        LocalFactory.configurations()
    }
    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let s = LocalFactory.make(options)?;
        Ok(Subject {
            fs: Arc::new(OneAtATime {
                inner: Arc::new(WithoutSharedStorage(s.fs)),
                lock: Arc::new(Mutex::new(())),
            }),
            world: s.world,
            diff_basis_max_bytes: s.diff_basis_max_bytes,
            keep_alive: s.keep_alive,
        })
    }
}

/// Claims what the inner provider claims, less shared storage.
struct WithoutSharedStorage(Arc<dyn FileSystem>);

#[async_trait::async_trait]
impl FileSystem for WithoutSharedStorage {
    fn capabilities(&self) -> Capabilities {
        let mut caps = self.0.capabilities();
        caps.shared_storage = false;
        caps
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.0.sandbox_mode()
    }
    async fn resolve(
        &self,
        p: &str,
        o: ResolveOptions<'_>,
        s: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.0.resolve(p, o, s).await
    }
    fn process_path(&self, t: &FsTarget) -> String {
        self.0.process_path(t)
    }
    fn file_url(&self, t: &FsTarget) -> String {
        self.0.file_url(t)
    }
    fn contains(&self, p: &FsTarget, c: &FsTarget) -> bool {
        self.0.contains(p, c)
    }
    async fn stat(&self, t: &FsTarget, s: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.0.stat(t, s).await
    }
    async fn lstat(
        &self,
        p: &str,
        o: ResolveOptions<'_>,
        s: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        self.0.lstat(p, o, s).await
    }
    async fn read_text(&self, t: &FsTarget, s: &Signal) -> Result<String, FsError> {
        self.0.read_text(t, s).await
    }
    async fn stream_text(&self, t: &FsTarget, s: &Signal) -> Result<TextStream, FsError> {
        self.0.stream_text(t, s).await
    }
    async fn read_bytes(&self, t: &FsTarget, m: u64, s: &Signal) -> Result<Vec<u8>, FsError> {
        self.0.read_bytes(t, m, s).await
    }
    async fn list_dir(&self, t: &FsTarget, s: &Signal) -> Result<Vec<FsDirEntry>, FsError> {
        self.0.list_dir(t, s).await
    }
    async fn write_text(
        &self,
        t: &FsTarget,
        c: &str,
        e: Option<&WriteIntent>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        self.0.write_text(t, c, e, p, s).await
    }
    async fn edit_text(
        &self,
        t: &FsTarget,
        e: &EditRequest,
        v: Option<&FsVersion>,
        p: Option<&SandboxPolicy>,
        s: &Signal,
    ) -> Result<EditOutcome, FsError> {
        self.0.edit_text(t, e, v, p, s).await
    }
}

fn visibility_only(seed: u64) -> SuiteConfig {
    SuiteConfig {
        sequences: SequenceConfig {
            seed,
            ..SequenceConfig::default()
        },
        only: vec!["atomic-visibility".into()],
        ..SuiteConfig::default()
    }
}

fn run(factory: Arc<dyn Factory>, seed: u64) -> Report {
    run_suite(factory, &visibility_only(seed), &mut |_| {}).expect("the suite runs")
}

fn visibility(report: &Report) -> &seam_conformance::PropertyResult {
    report
        .properties
        .iter()
        .find(|p| p.name == "atomic-visibility")
        .expect("in the report")
}

fn rule(report: &Report) -> &seam_conformance::RuleLine {
    report
        .rules
        .iter()
        .find(|r| r.id == "visibility.whole")
        .expect("the rule")
}

#[test]
fn the_memory_provider_is_read_while_paused_at_every_checkpoint_on_both_instances() {
    for seed in [24228, 1, 2] {
        let report = run(Arc::new(MemoryFactory), seed);
        let p = visibility(&report);
        assert_eq!(p.status, Status::Passed, "{}", report.render());
        // Four mutations, three checkpoints each, two readers each (`read_bytes` too where
        // claimed), on two instances: every one of them answered while the writer waited.
        let reads = if report.capabilities.read_bytes { 3 } else { 2 };
        assert_eq!(report.stats.paused_reads_served, 2 * 4 * 3 * reads);
        assert_eq!(report.stats.paused_reads_unserved, 0);
        assert_eq!(rule(&report).coverage, Coverage::Reached);
        let detail = p.detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains("answered while a mutation was paused"),
            "{detail}"
        );
    }
}

#[test]
fn a_backend_that_serves_one_call_at_a_time_is_told_visibility_does_not_apply_in_every_format() {
    let seed = 24228;
    // Beside it, the same provider serving calls at once: overlaps made and counted.
    let plain = run(Arc::new(LocalFactory), seed);
    assert_eq!(visibility(&plain).status, Status::Passed);
    assert!(plain.stats.paused_reads_served > 0);
    assert!(visibility(&plain).checks >= plain.stats.paused_reads_served);

    let report = run(Arc::new(OneAtATimeFactory), seed);
    let p = visibility(&report);
    let Status::DoesNotApply(why) = &p.status else {
        panic!("expected does-not-apply:\n{}", report.render());
    };
    assert!(why.contains("serves one call at a time"), "{why}");
    assert!(why.contains("crash check"), "{why}");
    // Nothing claims an overlap that did not happen: no read was answered during a write (the
    // checks it made are of the mutations themselves, and of the reads once answered).
    let detail = p.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("0 reads answered while a mutation was paused at a checkpoint")
            && detail.contains(" 0 of "),
        "{detail}"
    );
    assert_eq!(report.stats.paused_reads_served, 0);
    assert!(report.stats.paused_reads_unserved > 0);
    let r = rule(&report);
    assert_eq!(r.coverage, Coverage::NotApplicable);
    assert!(
        r.needs
            .as_deref()
            .is_some_and(|n| n.contains("atomic-visibility")),
        "{r:?}"
    );
    // Not a failure, and not a gap of the run.
    assert_ne!(report.verdict, Verdict::Fail);
    if let Verdict::Incomplete(reasons) = &report.verdict {
        assert!(
            !reasons.iter().any(|r| r.contains("atomic-visibility")),
            "{reasons:?}"
        );
    }

    let text = report.render();
    assert!(
        text.contains("atomic-visibility      does not apply: the backend answered no read while a write was in flight"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).expect("json");
    let prop = json["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "atomic-visibility"))
        .expect("in the json");
    assert_eq!(prop["status"]["status"], "does_not_apply", "{prop}");
    assert!(
        prop["status"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("serves one call at a time")),
        "{prop}"
    );
    let xml = report.to_junit();
    assert!(
        xml.contains("<skipped message=\"does not apply: the backend answered no read"),
        "{xml}"
    );
}
