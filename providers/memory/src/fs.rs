//! The provider: the contract's operations over a [`MemoryStore`].
//!
//! Each operation takes the store's tree lock for as short a time as it can, and never across
//! a checkpoint: the suite (and any probe) changes the world through the out-of-band handle
//! *inside* a checkpoint, so a held tree lock would deadlock it. A mutation therefore decides in
//! two looks, and anything — the world, another call, another instance — may come between them.
//! The first look, before `BeforeStage`, checks the
//! guard and gives the early failures in the contract's order. The second, at publication,
//! looks at what is at the landing place *now*, refuses what the contract says publication must
//! refuse (a file that appeared under create-if-absent, a directory or link that appeared under
//! any write, a version that moved under a guard; a file that appeared under an unguarded write
//! makes it an update of that file) and installs the result before it lets go. An
//! edit whose file changed between its two looks (the world rewrote it) is matched again under
//! the lock when unguarded and refused when guarded, so the check, the match and the publication
//! still act as one critical section.

use crate::store::MemoryStore;
use crate::stream::{CHUNK, TextChunks};
use crate::sync::Arc;
use crate::tree::{NEW_FILE_MODE, Node, Tree, WalkError, components, join, token};
use seam::edit::literal_edit;
use seam::paths::{display_path, file_url, is_within};
use seam::text::{BOM, NUL_SAMPLE_BYTES, decode_for_read, lf_normalize, strip_bom};
use seam::{
    CancelPoint, Capabilities, Capability, Checkpoint, CreateDirOptions, CreateDirOutcome,
    EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo, FsKind, FsPathInfo,
    FsPathKind, FsTarget, FsTargetKey, FsVersion, RemoveOptions, RemoveOutcome, RenameOptions,
    RenameOutcome, ResolveOptions, SandboxPolicy, Signal, TextStream, Verb, WriteIntent,
    WriteOperation, WriteOutcome,
};

/// The seed's default exclusive limit on each side of an overwrite's diff basis (10 MiB).
pub const DEFAULT_DIFF_BASIS_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// How a [`MemoryFileSystem`] is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryConfig {
    cwd: String,
    diff_basis_max_bytes: u64,
}

impl MemoryConfig {
    /// Relative paths resolve against `cwd` (an absolute path in the store's namespace); the
    /// diff-basis limit is the seed's 10 MiB.
    pub fn new(cwd: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            diff_basis_max_bytes: DEFAULT_DIFF_BASIS_MAX_BYTES,
        }
    }

    /// The same configuration with an exclusive diff-basis limit of `limit` bytes: a write's
    /// `before` is `None` when the prior file or the new content is at or over it.
    #[must_use]
    pub fn with_diff_basis_max_bytes(mut self, limit: u64) -> Self {
        self.diff_basis_max_bytes = limit;
        self
    }

    /// The directory relative paths resolve against.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The exclusive diff-basis limit.
    pub fn diff_basis_max_bytes(&self) -> u64 {
        self.diff_basis_max_bytes
    }
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self::new("/")
    }
}

/// The seam over a [`MemoryStore`].
///
/// Keys are canonical absolute paths in the store's namespace (every link followed; a missing
/// suffix appended to the nearest existing ancestor), and they are also the process paths: the
/// store is its own world. Versions are numbers from the store's one counter.
///
/// Several instances may share a store ([`MemoryFileSystem::share`], or
/// [`MemoryFileSystem::new`] with a clone of the same store): they take the same lock, so two
/// instances are exactly as safe as one — a compare-and-swap has one winner whichever instances
/// the racers use, and concurrent calls are linearizable across them.
///
/// No lock is held across a checkpoint, so a [`Signal`] probe may change the store (through
/// the out-of-band [`MemoryWorld`] or another provider call) while a mutation waits there;
/// publication then decides on what it finds, as the contract says.
///
/// [`MemoryWorld`]: crate::MemoryWorld
#[derive(Clone, Debug)]
pub struct MemoryFileSystem {
    store: MemoryStore,
    config: MemoryConfig,
}

/// A file as a mutation's first look saw it.
struct Seen {
    version: u64,
    mode: u32,
    bytes: Arc<Vec<u8>>,
}

fn kind_of(node: &Node) -> FsKind {
    match node {
        Node::File { .. } => FsKind::File,
        Node::Dir { .. } => FsKind::Directory,
        Node::Symlink { .. } | Node::Other { .. } => FsKind::Other,
    }
}

fn info_of(node: &Node) -> FsInfo {
    FsInfo {
        version: token(node.version()),
        kind: kind_of(node),
        size: match node {
            Node::File { bytes, .. } => Some(bytes.len() as u64),
            _ => None,
        },
    }
}

/// The `before` of an overwrite: the prior text, LF-normalised, without a BOM; `None` when it
/// is at or over the limit, holds a NUL anywhere, or is not UTF-8.
fn diff_basis(prior: &[u8], limit: u64) -> Option<String> {
    if prior.len() as u64 >= limit || prior.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(strip_bom(prior).0).ok()?;
    Some(lf_normalize(text).into_owned())
}

fn checkpoint<'a>(point: CancelPoint, verb: Verb, display: &'a str) -> Checkpoint<'a> {
    Checkpoint {
        point,
        verb,
        display_path: display,
        staging: &[],
    }
}

/// A write's failure for a landing that cannot be used.
fn landing_error(e: WalkError, display: &str) -> FsError {
    match e {
        WalkError::Loop => FsError::symlink_loop(Verb::Write, display),
        WalkError::NotDir | WalkError::NotFound => {
            FsError::parent_not_directory(Verb::Write, display)
        }
    }
}

/// What a write finds at its key (not following a final link): a regular file, or nothing.
fn write_subject(tree: &Tree, key: &[String], display: &str) -> Result<Option<Seen>, FsError> {
    match tree.lstat(key) {
        Err(_) => Err(FsError::symlink_loop(Verb::Write, display)),
        Ok(None) => Ok(None),
        Ok(Some(Node::File {
            bytes,
            mode,
            version,
        })) => Ok(Some(Seen {
            version: *version,
            mode: *mode,
            bytes: bytes.clone(),
        })),
        Ok(Some(_)) => Err(FsError::not_regular_file(Verb::Write, display)),
    }
}

/// The guard matrix for a regular file (`Some(version)`) or nothing (`None`) at the target.
fn check_guard(
    guard: Option<&WriteIntent>,
    version: Option<u64>,
    display: &str,
) -> Result<(), FsError> {
    match (guard, version) {
        (Some(WriteIntent::CreateIfAbsent), Some(_)) => Err(FsError::exists_not_observed(display)),
        (Some(WriteIntent::ReplaceIfVersion { .. }), None) => {
            Err(FsError::no_longer_exists(display))
        }
        (Some(WriteIntent::ReplaceIfVersion { version: v }), Some(n)) if token(n) != *v => {
            Err(FsError::changed_since_read(Verb::Write, display))
        }
        _ => Ok(()),
    }
}

/// The file an edit of `key` changes: its real path and what it holds. A link that appeared at
/// the key after resolution is never followed: a live one is not a regular file, a dangling one
/// is nothing (stale), a looping one a loop.
fn edit_subject(
    tree: &Tree,
    key: &[String],
    display: &str,
) -> Result<(Vec<String>, Seen), FsError> {
    let stale = || FsError::changed_since_read(Verb::Edit, display);
    let looping = || FsError::symlink_loop(Verb::Edit, display);
    match tree.lstat(key) {
        Err(_) => return Err(looping()),
        Ok(Some(Node::Symlink { .. })) => {
            return match tree.stat_follow(key) {
                Ok(Some(_)) => Err(FsError::not_regular_file(Verb::Edit, display)),
                Ok(None) => Err(stale()),
                Err(_) => Err(looping()),
            };
        }
        Ok(_) => {}
    }
    let real = match tree.realpath(key) {
        Ok(real) => real,
        Err(WalkError::Loop) => return Err(looping()),
        Err(_) => return Err(stale()),
    };
    match tree.get(&real) {
        None => Err(stale()),
        Some(Node::File {
            bytes,
            mode,
            version,
        }) => {
            let seen = Seen {
                version: *version,
                mode: *mode,
                bytes: bytes.clone(),
            };
            Ok((real, seen))
        }
        Some(_) => Err(FsError::not_regular_file(Verb::Edit, display)),
    }
}

impl MemoryFileSystem {
    /// A provider over `store`.
    pub fn new(store: MemoryStore, config: MemoryConfig) -> Self {
        Self { store, config }
    }

    /// A second provider instance over the same store, with the same configuration. It shares
    /// nothing with this one but the store — and the store's one lock, so the two are exactly
    /// as safe together as one instance alone.
    pub fn share(&self) -> Self {
        Self {
            store: self.store.clone(),
            config: self.config.clone(),
        }
    }

    /// The store this provider works on.
    pub fn store(&self) -> &MemoryStore {
        &self.store
    }

    /// The configuration.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    fn cwd<'a>(&'a self, options: &ResolveOptions<'a>) -> &'a str {
        options.cwd.unwrap_or(&self.config.cwd)
    }

    /// The bytes of the regular file a target leads to now, with the read failures.
    fn regular_file(&self, target: &FsTarget) -> Result<Arc<Vec<u8>>, FsError> {
        let d = &target.display_path;
        let tree = self.store.lock();
        match tree.stat_follow(&components(target.key.as_str())) {
            Err(_) => Err(FsError::symlink_loop(Verb::Read, d)),
            Ok(None) => Err(FsError::not_found(Verb::Read, d)),
            Ok(Some(Node::File { bytes, .. })) => Ok(bytes.clone()),
            Ok(Some(_)) => Err(FsError::not_regular_file(Verb::Read, d)),
        }
    }

    /// Installs a write's content at its landing place, refusing what publication must refuse.
    /// Returns the new version, the operation and `before`.
    fn publish_write(
        &self,
        key: &[String],
        content: Arc<Vec<u8>>,
        guard: Option<&WriteIntent>,
        seen: Option<&Seen>,
        before: Option<String>,
        display: &str,
    ) -> Result<(u64, WriteOperation, Option<String>), FsError> {
        let mut tree = self.store.lock();
        let at = tree.landing(key).map_err(|e| landing_error(e, display))?;
        let current = match tree.get(&at) {
            None => None,
            Some(Node::File {
                version,
                mode,
                bytes,
            }) => Some(Seen {
                version: *version,
                mode: *mode,
                bytes: bytes.clone(),
            }),
            Some(_) => return Err(FsError::not_regular_file(Verb::Write, display)),
        };
        check_guard(guard, current.as_ref().map(|c| c.version), display)?;
        // A replacement is of the file the first look saw, or of whatever file is there now
        // (one that changed or appeared meanwhile: its bits are kept and it is the diff basis —
        // the write is an update of it, as if it came just after whoever made it).
        let (operation, mode, before) = match (seen, current) {
            (Some(seen), Some(now)) => {
                let before = if now.version == seen.version {
                    before
                } else {
                    self.before(&now.bytes, content.len())
                };
                (WriteOperation::Update, now.mode, before)
            }
            (None, Some(now)) => (
                WriteOperation::Update,
                now.mode,
                self.before(&now.bytes, content.len()),
            ),
            (_, None) => (WriteOperation::Create, NEW_FILE_MODE, None),
        };
        tree.make_parents(&at)
            .map_err(|()| FsError::parent_not_directory(Verb::Write, display))?;
        let version = tree.mint();
        let file = Node::File {
            bytes: content,
            mode,
            version,
        };
        tree.put(&at, file)
            .map_err(|()| FsError::parent_not_directory(Verb::Write, display))?;
        Ok((version, operation, before))
    }

    /// The diff basis of replacing `prior` with content of `len` bytes.
    fn before(&self, prior: &[u8], len: usize) -> Option<String> {
        let limit = self.config.diff_basis_max_bytes;
        if len as u64 >= limit {
            return None;
        }
        diff_basis(prior, limit)
    }
}

#[async_trait::async_trait]
impl FileSystem for MemoryFileSystem {
    fn capabilities(&self) -> Capabilities {
        Capabilities::none()
            .with(Capability::Symlinks)
            .with(Capability::Modes)
            .with(Capability::ReadBytes)
            .with(Capability::CancelPoints)
            .with(Capability::SharedStorage)
            .with(Capability::Namespace)
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        signal.check(Verb::Resolve)?;
        let display = display_path(path, self.cwd(&options), Verb::Resolve)?;
        let key = self.store.lock().key_of(&components(&display));
        match key {
            Ok(key) => Ok(FsTarget {
                key: FsTargetKey::new(join(&key)),
                display_path: display,
            }),
            Err(WalkError::Loop) => Err(FsError::symlink_loop(Verb::Resolve, &display)),
            Err(WalkError::NotDir | WalkError::NotFound) => {
                Err(FsError::parent_not_directory(Verb::Resolve, &display))
            }
        }
    }

    fn process_path(&self, target: &FsTarget) -> String {
        target.key.as_str().to_string()
    }

    fn file_url(&self, target: &FsTarget) -> String {
        file_url(target.key.as_str())
    }

    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        is_within(parent.key.as_str(), child.key.as_str())
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        signal.check(Verb::Stat)?;
        let tree = self.store.lock();
        match tree.stat_follow(&components(target.key.as_str())) {
            Ok(node) => Ok(node.map(info_of)),
            Err(_) => Err(FsError::symlink_loop(Verb::Stat, &target.display_path)),
        }
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        signal.check(Verb::Lstat)?;
        let display = display_path(path, self.cwd(&options), Verb::Lstat)?;
        let tree = self.store.lock();
        let node = tree
            .lstat(&components(&display))
            .map_err(|_| FsError::symlink_loop(Verb::Lstat, &display))?;
        Ok(node.map(|n| FsPathInfo {
            version: token(n.version()),
            kind: match n {
                Node::File { .. } => FsPathKind::File,
                Node::Dir { .. } => FsPathKind::Directory,
                Node::Symlink { .. } => FsPathKind::Symlink,
                Node::Other { .. } => FsPathKind::Other,
            },
            size: match n {
                Node::File { bytes, .. } => Some(bytes.len() as u64),
                Node::Symlink { text, .. } => Some(text.len() as u64),
                _ => None,
            },
        }))
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        signal.check(Verb::Read)?;
        let bytes = self.regular_file(target)?;
        decode_for_read(bytes.as_ref().clone())
            .map_err(|e| e.into_error(Verb::Read, &target.display_path))
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        signal.check(Verb::Read)?;
        let bytes = self.regular_file(target)?;
        if bytes[..bytes.len().min(NUL_SAMPLE_BYTES)].contains(&0) {
            return Err(FsError::binary(Verb::Read, &target.display_path));
        }
        let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
        Ok(Box::pin(TextChunks::new(
            bytes,
            start,
            CHUNK,
            target.display_path.clone(),
            signal.clone(),
        )))
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        signal.check(Verb::Read)?;
        let bytes = self.regular_file(target)?;
        let size = bytes.len() as u64;
        if size > max_bytes {
            return Err(FsError::too_large(&target.display_path, size, max_bytes));
        }
        Ok(bytes.as_ref().clone())
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        signal.check(Verb::List)?;
        let d = &target.display_path;
        let key = components(target.key.as_str());
        let tree = self.store.lock();
        let looping = |_| FsError::symlink_loop(Verb::List, d);
        let entries = match tree.stat_follow(&key).map_err(looping)? {
            None => return Err(FsError::not_found(Verb::List, d)),
            Some(Node::Dir { entries, .. }) => entries,
            Some(_) => return Err(FsError::not_a_directory(d)),
        };
        let real = tree.realpath(&key).map_err(looping)?;
        let parent_display = d.trim_end_matches('/');
        let mut out = Vec::with_capacity(entries.len());
        for name in entries.keys() {
            let mut child = real.clone();
            child.push(name.clone());
            let child_key = tree.key_of(&child).unwrap_or_else(|_| child.clone());
            let followed = tree.stat_follow(&child).ok().flatten();
            out.push(FsDirEntry {
                name: name.clone(),
                kind: followed.map_or(FsKind::Other, kind_of),
                target: FsTarget {
                    key: FsTargetKey::new(join(&child_key)),
                    display_path: format!("{parent_display}/{name}"),
                },
                version: followed.map(|n| token(n.version())),
                size: followed.and_then(|n| info_of(n).size),
            });
        }
        Ok(out)
    }

    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        signal.check(Verb::Write)?;
        let d = target.display_path.as_str();
        let key = components(target.key.as_str());
        // First look: what is there, and whether the guard lets the write go on.
        let seen = {
            let tree = self.store.lock();
            let seen = write_subject(&tree, &key, d)?;
            check_guard(expected, seen.as_ref().map(|s| s.version), d)?;
            seen
        };
        let before = seen
            .as_ref()
            .and_then(|s| self.before(&s.bytes, content.len()));
        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, Verb::Write, d))?;
        // Where it would land: a parent that is a file or a dangling link fails here, after the
        // guard, before anything is staged.
        self.store
            .lock()
            .landing(&key)
            .map_err(|e| landing_error(e, d))?;
        // Staged: the content, in a buffer nobody else can see yet.
        let staged = Arc::new(content.as_bytes().to_vec());
        signal.checkpoint(&checkpoint(CancelPoint::Staged, Verb::Write, d))?;
        let (version, operation, before) =
            self.publish_write(&key, staged, expected, seen.as_ref(), before, d)?;
        signal.committed(&checkpoint(CancelPoint::Committed, Verb::Write, d));
        Ok(WriteOutcome {
            operation,
            version: token(version),
            before,
            after: lf_normalize(content).into_owned(),
        })
    }

    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        signal.check(Verb::Edit)?;
        let d = target.display_path.as_str();
        let key = components(target.key.as_str());
        let stale = || FsError::changed_since_read(Verb::Edit, d);
        // First look: the file, the guard (before any matching), then the match itself — on a
        // snapshot of the bytes, outside the lock.
        let (_, seen) = edit_subject(&self.store.lock(), &key, d)?;
        if expected.is_some_and(|v| *v != token(seen.version)) {
            return Err(stale());
        }
        let edited =
            literal_edit(seen.bytes.as_ref().clone(), edit).map_err(|e| e.into_error(d))?;
        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, Verb::Edit, d))?;
        let staged = Arc::new(edited.bytes());
        signal.checkpoint(&checkpoint(CancelPoint::Staged, Verb::Edit, d))?;
        // Publication: the file must be the one that was matched; if it changed meanwhile, a
        // guarded edit is stale and an unguarded one is matched again, now under the lock.
        let (version, edited) = {
            let mut tree = self.store.lock();
            let (real, now) = edit_subject(&tree, &key, d)?;
            let (staged, edited) = if now.version == seen.version {
                (staged, edited)
            } else if expected.is_some() {
                return Err(stale());
            } else {
                let again =
                    literal_edit(now.bytes.as_ref().clone(), edit).map_err(|e| e.into_error(d))?;
                (Arc::new(again.bytes()), again)
            };
            let v = tree.mint();
            match tree.get_mut(&real) {
                Some(Node::File { bytes, version, .. }) => {
                    *bytes = staged;
                    *version = v;
                }
                _ => return Err(stale()),
            }
            (v, edited)
        };
        signal.committed(&checkpoint(CancelPoint::Committed, Verb::Edit, d));
        let (before, after) = edited.into_before_after();
        Ok(EditOutcome {
            version: token(version),
            before,
            after,
        })
    }

    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        signal.check(Verb::Mkdir)?;
        let display = display_path(path, self.cwd(&options), Verb::Mkdir)?;
        let (creates, _) =
            crate::namespace::create_dir(&mut self.store.lock(), &display, request, true)?;
        if creates {
            signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, Verb::Mkdir, &display))?;
        }
        let (created, version) =
            crate::namespace::create_dir(&mut self.store.lock(), &display, request, false)?;
        if created {
            signal.committed(&checkpoint(CancelPoint::Committed, Verb::Mkdir, &display));
        }
        Ok(CreateDirOutcome { created, version })
    }

    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        signal.check(Verb::Remove)?;
        let display = display_path(path, self.cwd(&options), Verb::Remove)?;
        crate::namespace::remove(&mut self.store.lock(), &display, request, true)?;
        signal.checkpoint(&checkpoint(
            CancelPoint::BeforeStage,
            Verb::Remove,
            &display,
        ))?;
        let kind = crate::namespace::remove(&mut self.store.lock(), &display, request, false)?;
        signal.committed(&checkpoint(CancelPoint::Committed, Verb::Remove, &display));
        Ok(RemoveOutcome { kind })
    }

    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        _sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        signal.check(Verb::Rename)?;
        let cwd = self.cwd(&options);
        let from = display_path(from, cwd, Verb::Rename)?;
        let to = display_path(to, cwd, Verb::Rename)?;
        crate::namespace::rename(&mut self.store.lock(), &from, &to, request, true)?;
        signal.checkpoint(&checkpoint(CancelPoint::BeforeStage, Verb::Rename, &from))?;
        let (kind, replaced, version) =
            crate::namespace::rename(&mut self.store.lock(), &from, &to, request, false)?;
        signal.committed(&checkpoint(CancelPoint::Committed, Verb::Rename, &from));
        Ok(RenameOutcome {
            kind,
            replaced,
            version,
        })
    }
}
