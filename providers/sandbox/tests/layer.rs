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
