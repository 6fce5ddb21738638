//! Forwarding layers: a wrapper around a backend states only what it changes.
//!
//! Wrappers are everywhere a backend is composed: a spy that counts calls, a fault that breaks
//! one rule, a lock, a fence in front of another provider. Written against [`FileSystem`]
//! directly, each one repeats every method, and one it forgets takes the trait's default — a
//! wrapper that forgets [`FileSystem::sandbox_mode`] or [`FileSystem::search`] silently hides
//! what the backend beneath it has. A [`Layer`] names the backend beneath
//! ([`Layer::inner`]) and overrides only the methods it changes; every other call reaches the
//! inner backend unchanged, and every `Layer` is a [`FileSystem`]:
//!
//! ```
//! use seam::{FileSystem, FsError, FsTarget, Layer, Signal};
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//!
//! /// Counts reads; everything else passes through.
//! struct CountReads {
//!     inner: Arc<dyn FileSystem>,
//!     reads: AtomicUsize,
//! }
//!
//! #[async_trait::async_trait]
//! impl Layer for CountReads {
//!     fn inner(&self) -> &dyn FileSystem {
//!         self.inner.as_ref()
//!     }
//!     async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
//!         self.reads.fetch_add(1, Ordering::Relaxed);
//!         self.inner.read_text(target, signal).await
//!     }
//! }
//!
//! fn wrap(inner: Arc<dyn FileSystem>) -> Arc<dyn FileSystem> {
//!     Arc::new(CountReads { inner, reads: AtomicUsize::new(0) })
//! }
//! ```
//!
//! OpenDAL's layers are the model. A layer is bound by the contract like any backend: what it
//! changes must keep every rule of [`FileSystem`] (a layer that breaks one on purpose belongs
//! with the suite's broken variants, never in a provider).

use crate::{
    Capabilities, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest, FileSystem,
    FsDirEntry, FsError, FsInfo, FsPathInfo, FsTarget, FsVersion, RemoveOptions, RemoveOutcome,
    RenameOptions, RenameOutcome, ResolveOptions, SandboxMode, SandboxPolicy, Signal, TextStream,
    WriteIntent, WriteOutcome,
};

/// A wrapper that forwards to [`Layer::inner`] every call it does not override. See the
/// [module documentation](self).
#[async_trait::async_trait]
pub trait Layer: Send + Sync {
    /// The backend beneath this layer.
    fn inner(&self) -> &dyn FileSystem;

    /// [`FileSystem::capabilities`]; the inner backend's by default.
    fn capabilities(&self) -> Capabilities {
        self.inner().capabilities()
    }

    /// [`FileSystem::sandbox_mode`]; the inner backend's by default.
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.inner().sandbox_mode()
    }

    /// [`FileSystem::search`]; the inner backend's by default.
    fn search(&self) -> Option<&dyn crate::Search> {
        self.inner().search()
    }

    /// [`FileSystem::resolve`].
    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        self.inner().resolve(path, options, signal).await
    }

    /// [`FileSystem::process_path`].
    fn process_path(&self, target: &FsTarget) -> String {
        self.inner().process_path(target)
    }

    /// [`FileSystem::file_url`].
    fn file_url(&self, target: &FsTarget) -> String {
        self.inner().file_url(target)
    }

    /// [`FileSystem::contains`].
    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        self.inner().contains(parent, child)
    }

    /// [`FileSystem::stat`].
    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        self.inner().stat(target, signal).await
    }

    /// [`FileSystem::lstat`].
    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        self.inner().lstat(path, options, signal).await
    }

    /// [`FileSystem::read_text`].
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        self.inner().read_text(target, signal).await
    }

    /// [`FileSystem::stream_text`].
    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        self.inner().stream_text(target, signal).await
    }

    /// [`FileSystem::read_bytes`].
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        self.inner().read_bytes(target, max_bytes, signal).await
    }

    /// [`FileSystem::list_dir`].
    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        self.inner().list_dir(target, signal).await
    }

    /// [`FileSystem::write_text`].
    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        self.inner()
            .write_text(target, content, expected, sandbox, signal)
            .await
    }

    /// [`FileSystem::edit_text`].
    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        self.inner()
            .edit_text(target, edit, expected, sandbox, signal)
            .await
    }

    /// [`FileSystem::create_dir`].
    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        self.inner()
            .create_dir(path, options, request, sandbox, signal)
            .await
    }

    /// [`FileSystem::remove`].
    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        self.inner()
            .remove(path, options, request, sandbox, signal)
            .await
    }

    /// [`FileSystem::rename`].
    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        self.inner()
            .rename(from, to, options, request, sandbox, signal)
            .await
    }
}

#[async_trait::async_trait]
impl<L: Layer> FileSystem for L {
    fn capabilities(&self) -> Capabilities {
        Layer::capabilities(self)
    }

    fn sandbox_mode(&self) -> Option<SandboxMode> {
        Layer::sandbox_mode(self)
    }

    fn search(&self) -> Option<&dyn crate::Search> {
        Layer::search(self)
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        Layer::resolve(self, path, options, signal).await
    }

    fn process_path(&self, target: &FsTarget) -> String {
        Layer::process_path(self, target)
    }

    fn file_url(&self, target: &FsTarget) -> String {
        Layer::file_url(self, target)
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        Layer::contains(self, parent, child)
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        Layer::stat(self, target, signal).await
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        Layer::lstat(self, path, options, signal).await
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        Layer::read_text(self, target, signal).await
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        Layer::stream_text(self, target, signal).await
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        Layer::read_bytes(self, target, max_bytes, signal).await
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        Layer::list_dir(self, target, signal).await
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        Layer::write_text(self, target, content, expected, sandbox, signal).await
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        Layer::edit_text(self, target, edit, expected, sandbox, signal).await
    }
    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        Layer::create_dir(self, path, options, request, sandbox, signal).await
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        Layer::remove(self, path, options, request, sandbox, signal).await
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
        Layer::rename(self, from, to, options, request, sandbox, signal).await
    }
}
