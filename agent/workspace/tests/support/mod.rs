//! What the workspace tests share: a registry over the real local provider in a temp dir, and
//! a clock the test sets.

#![allow(dead_code)]

use seam_local::{LocalConfig, LocalFileSystem};
use seam_workspace::{Clock, Registry};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A clock that says what the test told it.
#[derive(Default)]
pub struct FixedClock(pub AtomicU64);

impl FixedClock {
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A temp dir (canonical path), its registry file and a registry over the local provider.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub file: PathBuf,
    pub clock: Arc<FixedClock>,
    pub registry: Registry,
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let file = root.join("state").join("workspaces.json");
    let clock = Arc::new(FixedClock::default());
    clock.set(1_000);
    let registry = registry_at(&root, &file).with_clock(clock.clone());
    Fixture {
        dir,
        root,
        file,
        clock,
        registry,
    }
}

pub fn local(root: &Path) -> Arc<LocalFileSystem> {
    Arc::new(LocalFileSystem::new(LocalConfig::new(s(root))))
}

pub fn registry_at(root: &Path, file: &Path) -> Registry {
    Registry::new(local(root), s(file))
}

pub fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

pub fn mkdir(p: &Path) -> String {
    std::fs::create_dir_all(p).expect("mkdir");
    s(p)
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// The registry file as JSON, read from disk.
pub fn on_disk(file: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(file).expect("registry file")).expect("registry JSON")
}
