//! `seam::Layer` over a real backend: a layer that overrides one method keeps everything else
//! of the backend beneath it — its claims, its default sandbox mode, its search, its fence and
//! its bytes — where a wrapper written against `FileSystem` by hand loses whatever it forgets
//! (`sandbox_mode` and `search` default to `None`).

use seam::{
    Capability, FileSystem, FsError, FsErrorCode, FsTarget, Layer, ResolveOptions, SandboxMode,
    Signal,
};
use seam_local::{Durability, LocalConfig};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts reads; states nothing else.
struct CountReads {
    inner: Arc<dyn FileSystem>,
    reads: AtomicUsize,
}

#[async_trait::async_trait]
impl Layer for CountReads {
    fn inner(&self) -> &dyn FileSystem {
        self.inner.as_ref()
    }
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.inner.read_text(target, signal).await
    }
}

#[test]
fn a_layer_keeps_what_it_does_not_override_and_changes_what_it_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let ws = root.join("ws");
    std::fs::create_dir(&ws).expect("ws");
    let ws = ws.to_string_lossy().into_owned();
    let sandbox: Arc<dyn FileSystem> = Arc::new(SandboxFileSystem::new(
        SandboxConfig::new(ws.clone(), SandboxMode::WorkspaceWrite)
            .with_local(LocalConfig::new(ws.clone()).with_durability(Durability::None))
            .with_temp_roots(Vec::new()),
    ));
    let layer = CountReads {
        inner: sandbox.clone(),
        reads: AtomicUsize::new(0),
    };
    let fs: &dyn FileSystem = &layer;
    assert_eq!(fs.capabilities(), sandbox.capabilities());
    assert!(fs.capabilities().has(Capability::SandboxModes));
    assert_eq!(fs.sandbox_mode(), Some(SandboxMode::WorkspaceWrite));
    assert!(fs.search().is_some());

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let none = Signal::none();
        let opts = ResolveOptions { cwd: Some(&ws) };
        let t = fs.resolve("a.txt", opts, &none).await.expect("resolve");
        fs.write_text(&t, "one\n", None, None, &none)
            .await
            .expect("write");
        assert_eq!(fs.read_text(&t, &none).await.expect("read"), "one\n");
        assert_eq!(layer.reads.load(Ordering::SeqCst), 1);
        // The fence beneath still holds: outside the workspace is refused, nothing written.
        let outside = fs
            .resolve(&format!("{}/out.txt", root.display()), opts, &none)
            .await
            .expect("resolve outside");
        let e = fs
            .write_text(&outside, "x", None, None, &none)
            .await
            .expect_err("outside the workspace");
        assert_eq!(e.code(), FsErrorCode::SandboxDenied);
    });
    assert_eq!(
        std::fs::read(root.join("ws/a.txt")).expect("written"),
        b"one\n"
    );
    assert!(!root.join("out.txt").exists());
}

/// Overrides every method of [`Layer`]; each override counts its call under the method's name,
/// then forwards.
struct Tally {
    inner: Arc<dyn FileSystem>,
    calls: std::sync::Mutex<std::collections::BTreeMap<&'static str, usize>>,
}

impl Tally {
    fn hit(&self, name: &'static str) {
        if let Ok(mut calls) = self.calls.lock() {
            *calls.entry(name).or_default() += 1;
        }
    }
}

#[async_trait::async_trait]
impl Layer for Tally {
    fn inner(&self) -> &dyn FileSystem {
        self.inner.as_ref()
    }
    fn capabilities(&self) -> seam::Capabilities {
        self.hit("capabilities");
        self.inner.capabilities()
    }
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.hit("sandbox_mode");
        self.inner.sandbox_mode()
    }
    fn search(&self) -> Option<&dyn seam::Search> {
        self.hit("search");
        self.inner.search()
    }
    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.hit("resolve");
        self.inner.resolve(path, options, signal).await
    }
    fn process_path(&self, target: &FsTarget) -> String {
        self.hit("process_path");
        self.inner.process_path(target)
    }
    fn file_url(&self, target: &FsTarget) -> String {
        self.hit("file_url");
        self.inner.file_url(target)
    }
    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.hit("contains");
        self.inner.contains(parent, child)
    }
    async fn stat(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Option<seam::FsInfo>, FsError> {
        self.hit("stat");
        self.inner.stat(target, signal).await
    }
    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<seam::FsPathInfo>, FsError> {
        self.hit("lstat");
        self.inner.lstat(path, options, signal).await
    }
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.hit("read_text");
        self.inner.read_text(target, signal).await
    }
    async fn stream_text(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<seam::TextStream, FsError> {
        self.hit("stream_text");
        self.inner.stream_text(target, signal).await
    }
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.hit("read_bytes");
        self.inner.read_bytes(target, max_bytes, signal).await
    }
    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<seam::FsDirEntry>, FsError> {
        self.hit("list_dir");
        self.inner.list_dir(target, signal).await
    }
    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&seam::WriteIntent>,
        sandbox: Option<&seam::SandboxPolicy>,
        signal: &Signal,
    ) -> Result<seam::WriteOutcome, FsError> {
        self.hit("write_text");
        self.inner
            .write_text(target, content, expected, sandbox, signal)
            .await
    }
    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &seam::EditRequest,
        expected: Option<&seam::FsVersion>,
        sandbox: Option<&seam::SandboxPolicy>,
        signal: &Signal,
    ) -> Result<seam::EditOutcome, FsError> {
        self.hit("edit_text");
        self.inner
            .edit_text(target, edit, expected, sandbox, signal)
            .await
    }
}

/// Every override is what a caller through `FileSystem` reaches: each of the fifteen methods,
/// called once through `&dyn FileSystem`, is counted once by its own override, and its answer
/// is the backend's (the file on disk read back byte for byte).
#[test]
fn every_method_a_layer_overrides_is_the_one_callers_reach() {
    use futures_util::StreamExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let ws = root.to_string_lossy().into_owned();
    let sandbox: Arc<dyn FileSystem> = Arc::new(SandboxFileSystem::new(
        SandboxConfig::new(ws.clone(), SandboxMode::WorkspaceWrite)
            .with_local(LocalConfig::new(ws.clone()).with_durability(Durability::None))
            .with_temp_roots(Vec::new()),
    ));
    let layer = Tally {
        inner: sandbox.clone(),
        calls: std::sync::Mutex::new(std::collections::BTreeMap::new()),
    };
    let fs: &dyn FileSystem = &layer;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    assert_eq!(fs.capabilities(), sandbox.capabilities());
    assert_eq!(fs.sandbox_mode(), Some(SandboxMode::WorkspaceWrite));
    assert!(fs.search().is_some());
    rt.block_on(async {
        let none = Signal::none();
        let opts = ResolveOptions { cwd: Some(&ws) };
        let t = fs.resolve("a.txt", opts, &none).await.expect("resolve");
        assert!(fs.process_path(&t).ends_with("/a.txt"));
        assert!(fs.file_url(&t).starts_with("file://"));
        let written = fs
            .write_text(&t, "one two\n", None, None, &none)
            .await
            .expect("write");
        assert_eq!(
            std::fs::read(root.join("a.txt")).expect("on disk"),
            b"one two\n"
        );
        let edit = seam::EditRequest {
            old_string: "two".into(),
            new_string: "three".into(),
            replace_all: false,
        };
        fs.edit_text(&t, &edit, Some(&written.version), None, &none)
            .await
            .expect("edit");
        assert_eq!(
            std::fs::read(root.join("a.txt")).expect("on disk"),
            b"one three\n"
        );
        assert_eq!(fs.read_text(&t, &none).await.expect("read"), "one three\n");
        assert_eq!(
            fs.read_bytes(&t, 1024, &none).await.expect("bytes"),
            b"one three\n"
        );
        let mut stream = fs.stream_text(&t, &none).await.expect("stream");
        let mut streamed = String::new();
        while let Some(chunk) = stream.next().await {
            streamed.push_str(&chunk.expect("chunk"));
        }
        assert_eq!(streamed, "one three\n");
        assert_eq!(
            fs.stat(&t, &none).await.expect("stat").and_then(|i| i.size),
            Some(10)
        );
        assert!(
            fs.lstat("a.txt", opts, &none)
                .await
                .expect("lstat")
                .is_some()
        );
        let top = fs.resolve(".", opts, &none).await.expect("resolve root");
        let names: Vec<String> = fs
            .list_dir(&top, &none)
            .await
            .expect("list")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["a.txt"]);
        assert!(fs.contains(&top, &t));
    });
    let calls = layer.calls.lock().expect("calls").clone();
    let mut expected: std::collections::BTreeMap<&'static str, usize> = [
        "capabilities",
        "sandbox_mode",
        "search",
        "process_path",
        "file_url",
        "contains",
        "stat",
        "lstat",
        "read_text",
        "stream_text",
        "read_bytes",
        "list_dir",
        "write_text",
        "edit_text",
    ]
    .into_iter()
    .map(|name| (name, 1))
    .collect();
    expected.insert("resolve", 2);
    assert_eq!(calls, expected);
}
