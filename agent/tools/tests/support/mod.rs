//! Shared test setup: the real local provider on a fresh temp dir, the real policy (or none),
//! world access through `std::fs` (to set files up behind the tools' back and to read the bytes
//! back), and rendering with the temp dir redacted so snapshots are stable.
#![allow(dead_code)]

pub mod counting;
pub mod fence;
pub mod images;

use seam::{FileSystem, Gate, Signal};
use seam_local::{Durability, LocalConfig, LocalFileSystem};
use seam_policy::{ObservationPolicy, Owner};
use seam_tools::{Exec, ToolResult, Toolset};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// One test's world.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub root: String,
    pub fs: Arc<dyn FileSystem>,
    pub policy: Option<ObservationPolicy>,
    pub owner: Owner,
    pub tools: Toolset,
    pub signal: Signal,
}

pub fn local(root: &str) -> LocalFileSystem {
    LocalFileSystem::new(LocalConfig::new(root.to_string()).with_durability(Durability::None))
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("seam-tools-")
        .tempdir()
        .expect("tempdir")
}

impl Harness {
    /// Local provider + observation policy, one owner.
    pub fn with_policy() -> Self {
        Self::build(true, |root| Arc::new(local(root)))
    }

    /// Local provider, no policy (the bare gate).
    pub fn bare() -> Self {
        Self::build(false, |root| Arc::new(local(root)))
    }

    /// A custom provider over the temp dir.
    pub fn build(policy: bool, make: impl FnOnce(&str) -> Arc<dyn FileSystem>) -> Self {
        let dir = tempdir();
        let root = dir.path().to_string_lossy().into_owned();
        let fs = make(&root);
        let tools = Toolset::builder(fs.as_ref()).build();
        Self {
            dir,
            root,
            fs,
            policy: policy.then(ObservationPolicy::new),
            owner: Owner::new(),
            tools,
            signal: Signal::none(),
        }
    }

    pub fn gate(&self) -> Arc<dyn Gate> {
        match &self.policy {
            Some(p) => Arc::new(p.clone()),
            None => Arc::new(seam::BareGate),
        }
    }

    /// The call context of the harness's session: its owner, cwd = the temp dir.
    pub fn exec(&self) -> Exec {
        self.exec_as(&self.owner)
    }

    pub fn exec_as(&self, owner: &Owner) -> Exec {
        Exec::new(self.fs.clone())
            .with_gate(self.gate())
            .with_actor(owner.clone())
            .with_signal(self.signal.clone())
            .with_cwd(self.root.clone())
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.call_with(tool, args, &self.exec()).await
    }

    pub async fn call_with(&self, tool: &str, args: Value, exec: &Exec) -> ToolResult {
        self.tools
            .get(tool)
            .unwrap_or_else(|| panic!("no tool {tool}"))
            .execute(&args, exec)
            .await
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The path as the tools display it.
    pub fn display(&self, rel: &str) -> String {
        format!("{}/{rel}", self.root)
    }

    /// World write, behind the tools' back.
    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, bytes).expect("world write");
    }

    /// World read-back: the bytes on disk.
    pub fn bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).expect("world read")
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).symlink_metadata().is_ok()
    }

    /// The temp dir replaced by `[TMP]`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.root, "[TMP]")
    }

    /// What the model reads, redacted; errors also show `{ name, code }`.
    pub fn render(&self, result: &ToolResult) -> String {
        match result {
            Ok(out) => self.redact(&out.text()),
            Err(e) => self.redact(&format!(
                "{}\n-- name: {} code: {}",
                e.render(),
                e.name(),
                e.code().map_or("none", |c| c.as_str())
            )),
        }
    }

    /// Pretty JSON metadata, redacted.
    /// A success's metadata as pretty JSON, the temp dir redacted and a version (an opaque
    /// token that differs run to run) shown as `[VERSION]` once checked to be a non-empty string.
    pub fn metadata(&self, result: &ToolResult) -> String {
        let out = result.as_ref().expect("a successful call");
        let mut metadata = out.metadata.clone();
        if let Some(v) = metadata.get_mut("version") {
            assert!(v.as_str().is_some_and(|t| !t.is_empty()), "a version: {v}");
            *v = serde_json::Value::String("[VERSION]".into());
        }
        self.redact(&serde_json::to_string_pretty(&metadata).expect("json"))
    }
}

/// The error's filesystem code name, or a panic showing the output.
pub fn code(result: &ToolResult) -> &'static str {
    match result {
        Ok(out) => panic!("expected an error, got {:?}", out.text()),
        Err(e) => e.code().map_or("none", |c| c.as_str()),
    }
}

pub fn message(result: &ToolResult) -> String {
    match result {
        Ok(out) => panic!("expected an error, got {:?}", out.text()),
        Err(e) => e.message().to_string(),
    }
}

pub fn text(result: &ToolResult) -> String {
    match result {
        Ok(out) => out.text(),
        Err(e) => panic!("expected success, got {}", e.render()),
    }
}
