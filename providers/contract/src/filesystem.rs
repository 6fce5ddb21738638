//! The trait every backend implements.
//!
//! It is object-safe (`Arc<dyn FileSystem>`) because providers are chosen at run time, and async
//! because remote backends need it. Every method takes a [`Signal`]; mutations also take the
//! per-call [`SandboxPolicy`], which only a fencing backend reads.

use crate::{
    Capabilities, EditOutcome, EditRequest, FsDirEntry, FsError, FsInfo, FsPathInfo, FsTarget,
    FsVersion, SandboxMode, SandboxPolicy, Signal, WriteIntent, WriteOutcome,
};
use std::pin::Pin;

/// A stream of text chunks from [`FileSystem::stream_text`]. Chunk boundaries mean nothing;
/// the concatenation equals what [`FileSystem::read_text`] returns.
pub type TextStream =
    Pin<Box<dyn futures_core::Stream<Item = Result<String, FsError>> + Send + 'static>>;

/// Options for path-shaped calls.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResolveOptions<'a> {
    /// The directory a relative path is resolved against; the backend's default when `None`.
    /// Absolute paths ignore it.
    pub cwd: Option<&'a str>,
}

/// One filesystem world, as an agent harness sees it.
///
/// The rules each method follows (error codes, decoding, ordering, atomicity) are the contract;
/// `seam-conformance` checks them against a reference model.
#[async_trait::async_trait]
pub trait FileSystem: Send + Sync {
    /// What this backend claims to support.
    fn capabilities(&self) -> Capabilities;

    /// The default sandbox mode of a fencing backend; `None` for a backend that does not fence.
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        None
    }

    /// Resolves a path to a target. A blank path or a path through a regular file is
    /// `FS_NOT_FOUND`. Two spellings of one file share one key; the key of a missing path is
    /// stable across its creation.
    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError>;

    /// The canonical absolute path a subprocess in the same world can open.
    fn process_path(&self, target: &FsTarget) -> String;

    /// The canonical `file:` URL of the target.
    fn file_url(&self, target: &FsTarget) -> String;

    /// Whether `child` is `parent` or lies beneath it, without parsing keys.
    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool;

    /// Metadata, following links; `Ok(None)` when nothing is there.
    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError>;

    /// Metadata of the path itself, not following its final link; `Ok(None)` when absent.
    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError>;

    /// The whole text of a regular UTF-8 file, without a leading BOM.
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError>;

    /// The same text as [`FileSystem::read_text`], in chunks and bounded memory.
    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError>;

    /// Raw bytes, at most `max_bytes` (inclusive); a larger file is `FS_TOO_LARGE`, never
    /// truncated.
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError>;

    /// The direct children of a directory, in byte order of their names.
    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError>;

    /// Atomically creates or replaces a file with `content`, under an optional guard.
    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError>;

    /// Atomically applies a literal edit, under an optional version guard checked before
    /// matching. A missing file is `FS_STALE_VERSION`, guarded or not.
    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError>;
}
