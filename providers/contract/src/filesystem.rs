//! The trait every backend implements.
//!
//! It is object-safe (`Arc<dyn FileSystem>`) because providers are chosen at run time, and async
//! because remote backends need it. Every method takes a [`Signal`]; mutations also take the
//! per-call [`SandboxPolicy`], which only a fencing backend reads.

use crate::{
    Capabilities, CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest, FsDirEntry,
    FsError, FsInfo, FsPathInfo, FsTarget, FsVersion, RemoveOptions, RemoveOutcome, RenameOptions,
    RenameOutcome, SandboxMode, SandboxPolicy, Signal, Verb, WriteIntent, WriteOutcome,
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
/// # Rules every method follows
///
/// * **Coded failures.** Every failure is an [`FsError`] with one of the
///   [`crate::FsErrorCode`]s, built with the constructors of [`FsError`] (their texts are the
///   contract; see the `messages` constructors such as [`FsError::not_found`]). Nothing escapes
///   as a raw OS error: EACCES/EPERM are `FS_PERMISSION_DENIED`, a symlink loop is
///   `FS_IO_ERROR` ([`FsError::symlink_loop`]), anything else the storage says is `FS_IO_ERROR`.
/// * **Cancellation.** Every method first checks its signal ([`Signal::check`]); a call made
///   with a cancelled signal fails `FS_ABORTED` (`<verb> aborted`) and changes nothing. A
///   mutation cancelled before its commit point leaves no trace at all (no staging, no parent
///   directory it made); one that committed reports success. See [`crate::signal`].
/// * **Paths.** A caller's spelling becomes a display path by [`crate::paths::display_path`]:
///   blank → `FS_NOT_FOUND`, a NUL byte or a component over 255 bytes → `FS_NOT_FOUND` naming
///   the raw path, otherwise `..` collapsed textually, links not followed.
/// * **Targets.** A [`FsTarget`] stays usable after the world changes: it names the location
///   its key identified at resolution, and later calls see whatever is there *now* (a replaced
///   file is the new file, a removed one is absent; reads and listings follow a link that
///   appeared there). A mutation never follows a link that appeared at its key after
///   resolution: a write refuses any link there (`FS_NOT_REGULAR_FILE`); an edit refuses a live
///   one (`FS_NOT_REGULAR_FILE`), treats a dangling one as nothing (`FS_STALE_VERSION`) and a
///   looping one as a loop. Messages name `target.display_path`.
/// * **Versions.** A file's [`FsVersion`] changes on every change of its content, mode or
///   identity, by any writer, and is never reused for a different state; a directory's changes
///   when its set of entries changes, and stays the same when nothing touched it. The version a
///   mutation returns equals what a fresh [`FileSystem::stat`] returns.
/// * **Text.** Reads refuse a NUL in the first 8192 bytes and anything that is not strict UTF-8
///   (`FS_NOT_TEXT`), and never return a leading BOM ([`crate::text`]).
///
/// `seam-conformance` checks all of this against a reference model, and reports which rules a
/// run exercised.
#[async_trait::async_trait]
pub trait FileSystem: Send + Sync {
    /// What this backend claims beyond the core contract (see [`crate::Capability`]). Constant
    /// for the life of the provider.
    fn capabilities(&self) -> Capabilities;

    /// The default sandbox mode of a fencing backend; `None` for a backend that does not fence
    /// (and so does not claim [`crate::Capability::SandboxModes`]).
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        None
    }

    /// In-process search beneath a target (the `glob` and `grep` tools), for a backend that
    /// owns its tree; `None` (the default) for one that does not offer it. The rules are in
    /// [`crate::search`]: the walk never leaves its root, one ignore policy, files only.
    fn search(&self) -> Option<&dyn crate::Search> {
        None
    }

    /// Resolves a caller's spelling to a target.
    ///
    /// The display path is lexical ([`crate::paths::display_path`]). The key is the backend's
    /// identity of the object the path leads to after following every link: two spellings of
    /// one object share one key, and the key of a missing path is stable across its creation
    /// (the local provider uses the real path of the nearest existing ancestor plus the missing
    /// suffix).
    ///
    /// # Errors
    ///
    /// * `FS_NOT_FOUND` — blank path, NUL byte, over-long component
    ///   ([`FsError::blank_path`], [`FsError::nul_in_path`], [`FsError::name_too_long`]), or a
    ///   parent segment that is a regular file ([`FsError::parent_not_directory`]);
    /// * `FS_IO_ERROR` — a symlink loop ([`FsError::symlink_loop`]) or a storage failure;
    /// * `FS_PERMISSION_DENIED` — a directory on the way cannot be searched;
    /// * `FS_ABORTED` — the signal was cancelled (`resolve aborted`).
    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError>;

    /// The canonical absolute path of the target that a subprocess in the same world can open
    /// (the local provider: the real path). Infallible: it is a fact about the target.
    fn process_path(&self, target: &FsTarget) -> String;

    /// The `file://` URL of [`FileSystem::process_path`], percent-encoded where RFC 3986
    /// requires it ([`crate::paths::file_url`] is the canonical encoding).
    fn file_url(&self, target: &FsTarget) -> String;

    /// Whether `child` is `parent` or lies beneath it, by identity and by whole components
    /// (`/a` does not contain `/ab`; a link's alias is contained where its target is). Never
    /// parses keys in the caller; never touches the storage's contents.
    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool;

    /// Metadata of the object the target leads to, following links; `Ok(None)` when nothing is
    /// there (also a dangling link, and a path through a regular file).
    ///
    /// `size` is the byte size of a regular file and `None` for every other kind.
    ///
    /// # Errors
    ///
    /// `FS_IO_ERROR` (a symlink loop, a storage failure), `FS_PERMISSION_DENIED`, `FS_ABORTED`.
    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError>;

    /// Metadata of the path itself, not following its final link; `Ok(None)` when absent.
    ///
    /// The only shape that can say [`crate::FsPathKind::Symlink`]; a link's `size` is the
    /// length of its text, and its version is the link's own.
    ///
    /// # Errors
    ///
    /// The path failures of [`FileSystem::resolve`] (with the verb `lstat`), `FS_IO_ERROR`,
    /// `FS_PERMISSION_DENIED`, `FS_ABORTED` (`lstat aborted`).
    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError>;

    /// The whole text of a regular UTF-8 file, without a leading BOM.
    ///
    /// # Errors
    ///
    /// * `FS_NOT_FOUND` — nothing there, also a dangling link ([`FsError::not_found`] with
    ///   `read`);
    /// * `FS_NOT_REGULAR_FILE` — a directory, FIFO, socket or device (never blocks on a FIFO);
    /// * `FS_NOT_TEXT` — a NUL in the first 8192 bytes ([`FsError::binary`]) or invalid UTF-8
    ///   ([`FsError::invalid_utf8`]);
    /// * `FS_PERMISSION_DENIED`, `FS_IO_ERROR`, `FS_ABORTED` (`read aborted`).
    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError>;

    /// The same text as [`FileSystem::read_text`], in chunks and bounded memory.
    ///
    /// The concatenated chunks equal `read_text` exactly; a multi-byte character is never split
    /// between chunks and never mistaken for invalid UTF-8 because a chunk ended inside it. The
    /// failures of `read_text` come either from this call or as an item of the stream (a NUL or
    /// invalid byte found late); after an error item the stream ends. A provider must not block
    /// an async executor thread while producing a chunk.
    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError>;

    /// Raw bytes, at most `max_bytes` (inclusive: a file of exactly `max_bytes` is returned).
    ///
    /// Offered only by a backend that claims [`crate::Capability::ReadBytes`]; one that does
    /// not fails with a code and returns no content.
    ///
    /// # Errors
    ///
    /// `FS_TOO_LARGE` for a larger file ([`FsError::too_large`]), also when it grew past the cap
    /// while it was read ([`FsError::grew_past_cap`]) — never a truncated result; the failures of
    /// `read_text` except `FS_NOT_TEXT`.
    async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError>;

    /// The direct children of a directory, in byte order of their names. Never reads content.
    ///
    /// Each child's kind follows links; a dangling or looping link is
    /// [`crate::FsKind::Other`] with no version and no size; directories have no size.
    ///
    /// A listing taken while a mutation in the directory is in flight shows its entries before
    /// the mutation or after it, and beside them nothing but the staging entries the backend
    /// reports at that mutation's checkpoints ([`crate::Capability::StagingProbe`]): a backend
    /// that stages beside the target and does not report it must not show it. What a killed
    /// writer left (its staging, until the next writer sweeps it) is never shown either.
    ///
    /// # Errors
    ///
    /// `FS_NOT_FOUND` (nothing there), `FS_NOT_DIRECTORY` ([`FsError::not_a_directory`]),
    /// `FS_PERMISSION_DENIED` (the directory or a child cannot be examined), `FS_IO_ERROR` (a
    /// loop, a storage failure), `FS_ABORTED` (`list aborted`).
    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError>;

    /// Atomically creates or replaces a file with `content`, under an optional guard.
    ///
    /// The guard matrix:
    ///
    /// | guard | nothing there | a regular file | anything else |
    /// | --- | --- | --- | --- |
    /// | `None` | create | replace | `FS_NOT_REGULAR_FILE` |
    /// | `CreateIfAbsent` | create | `FS_NOT_OBSERVED` | `FS_NOT_REGULAR_FILE` |
    /// | `ReplaceIfVersion(v)` | `FS_STALE_VERSION` | replace if at `v`, else `FS_STALE_VERSION` | `FS_NOT_REGULAR_FILE` |
    ///
    /// "Anything else" includes a dangling link: a write never creates through a link and never
    /// replaces one (a live link is written through: the content lands at its target). Publication
    /// itself refuses to replace what appeared after the check when the guard (or the absence of
    /// a file) says nothing may be replaced: a competing file makes a create-if-absent fail
    /// `FS_NOT_OBSERVED`, a competing directory or link fails any write `FS_NOT_REGULAR_FILE`.
    /// An unguarded write that finds a file where its check saw none replaces it as an update
    /// of that file — its bits kept, its text the `before` — as if it came just after whoever
    /// made it (another process, another instance): the outcome stays one that a sequential
    /// order explains.
    /// Missing parent directories are created (a parent that is a file or a dangling link is
    /// `FS_NOT_FOUND`). New files get mode 0600 and a replaced file keeps its permission bits.
    /// Readers see the old or the new content, never a mix, and nothing is left beside the file.
    ///
    /// The outcome's `before` is the prior text, LF-normalised, or `None` for a create, a prior
    /// file that was not text, or when either side is at or over the backend's diff-basis limit;
    /// `after` is `content` LF-normalised (the bytes on disk are exactly `content`).
    ///
    /// # Errors
    ///
    /// Those of the matrix, the parent and permission failures above, `FS_SANDBOX_DENIED` from a
    /// fencing backend ([`FsError::sandbox_denied`], nothing changed), `FS_IO_ERROR`,
    /// `FS_ABORTED` (`write aborted`, nothing changed).
    async fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError>;

    /// Atomically applies a literal edit, under an optional version guard.
    ///
    /// The version check, the match and the publication are one critical section: the guard is
    /// checked before matching, and nothing can change the file between them. Matching is on the
    /// LF-normalised text (old and new strings are LF-normalised first); only the matched bytes
    /// change on disk; inserted line breaks take the file's dominant style; a BOM stays; the
    /// replacement is literal (`$&` stays `$&`). [`crate::edit::literal_edit`] implements these
    /// rules. The permission bits are kept.
    ///
    /// # Errors
    ///
    /// * `FS_STALE_VERSION` — nothing there (even unguarded, so an edit never creates), or not at
    ///   `expected` ([`FsError::changed_since_read`]);
    /// * `FS_NOT_REGULAR_FILE` — a directory or other non-regular object;
    /// * `FS_NOT_TEXT` — a NUL anywhere or invalid UTF-8, file untouched;
    /// * `FS_EDIT_NOT_FOUND` — empty or absent old string; `FS_AMBIGUOUS_EDIT` — several matches
    ///   without `replace_all` (the message names the count);
    /// * `FS_SANDBOX_DENIED`, `FS_PERMISSION_DENIED`, `FS_IO_ERROR`, `FS_ABORTED`
    ///   (`edit aborted`, nothing changed).
    async fn edit_text(
        &self,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError>;

    /// Makes a directory at `path` (the namespace operations: [`crate::Capability::Namespace`]).
    ///
    /// The path names an entry: links on the way to its parent are followed, a link at the
    /// path itself is not. What is there decides:
    ///
    /// | at the path | outcome |
    /// | --- | --- |
    /// | nothing | a new directory (`created: true`) |
    /// | a directory | `created: false` with `exist_ok`, else `FS_NOT_OBSERVED` ([`FsError::directory_exists`]) |
    /// | a file, a link (live or dangling), anything else | `FS_NOT_DIRECTORY` ([`FsError::not_directory_in_the_way`]) |
    ///
    /// A missing parent is made with `parents` (as `mkdir -p`, each on the way), and is
    /// `FS_NOT_FOUND` ([`FsError::parent_missing`]) without it; a parent that is a file is
    /// `FS_NOT_FOUND` ([`FsError::parent_not_directory`]). The new directory's permission bits
    /// are the backend's default. Its parent's version changes (its set of entries did); the
    /// returned version equals what a fresh `lstat` returns.
    ///
    /// A backend that does not claim the namespace operations keeps this default, which fails
    /// `FS_IO_ERROR` ([`FsError::not_supported`]) and changes nothing.
    ///
    /// With [`crate::Capability::CancelPoints`], the three namespace operations show two
    /// checkpoints: `before_stage` once everything is checked and before anything changes (a
    /// cancel there fails `FS_ABORTED` — `mkdir aborted`, `remove aborted`, `rename aborted` —
    /// and changes nothing, not even a parent `create_dir` would have made), and `committed`
    /// once the change is made (a cancel there is too late: the call reports success). A
    /// `create_dir` that finds the directory there with `exist_ok` changes nothing and shows
    /// neither.
    ///
    /// # Errors
    ///
    /// Those above, the path failures of [`FileSystem::resolve`] (verb `mkdir`), a loop on the
    /// way (`FS_IO_ERROR`), `FS_SANDBOX_DENIED` from a fencing backend (the fence is decided on
    /// the path's parent, by its real path), `FS_PERMISSION_DENIED`, `FS_IO_ERROR`,
    /// `FS_ABORTED` (`mkdir aborted`, nothing made).
    async fn create_dir(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: CreateDirOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        let _ = (request, sandbox);
        unsupported(path, options, Verb::Mkdir, signal)
    }

    /// Removes the entry at `path`: a file, a link (never what it points to), another
    /// non-directory, or — with `directory` — an empty directory. Never recursive.
    ///
    /// Links on the way to the parent are followed; a link at the path is the entry. With
    /// `if_version` the entry is removed only if it is still at that version (its `lstat`
    /// version): the check and the removal are one critical section, like a guarded write's,
    /// so a remove can never take away a change made after the caller looked. A stale guard is
    /// `FS_STALE_VERSION` and removes nothing. The parent's version changes.
    ///
    /// Checked in this order: nothing there (also a path through a file or a missing parent) is
    /// `FS_NOT_FOUND` ([`FsError::not_found`], verb `remove`) — or, with `if_version`,
    /// `FS_STALE_VERSION` (the caller saw something there; like a version-guarded write of a
    /// file that is gone); the guard
    /// ([`FsError::changed_since_read`]); a directory without `directory` is
    /// `FS_NOT_REGULAR_FILE` ([`FsError::is_a_directory`]); a directory with entries is
    /// `FS_IO_ERROR` ([`FsError::directory_not_empty`]).
    ///
    /// Every one of these checks, emptiness included, comes before the `before_stage`
    /// checkpoint: a remove of a directory with entries fails `directory not empty` even when
    /// it is cancelled there. A backend on a disk looks into the directory before that
    /// checkpoint (`rmdir` alone would find out only at the removal); an entry made after the
    /// look is still refused by the removal itself, with the same error, which a sequential
    /// order explains as well.
    ///
    /// # Errors
    ///
    /// Those above, the path failures of [`FileSystem::resolve`] (verb `remove`), a loop on the
    /// way, `FS_SANDBOX_DENIED` (decided on the parent's real path: removing a link inside the
    /// workspace that points outside is allowed, it touches only the link),
    /// `FS_PERMISSION_DENIED`, `FS_IO_ERROR` (also [`FsError::not_supported`] from a backend
    /// without the claim), `FS_ABORTED` (`remove aborted`, nothing removed).
    async fn remove(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        request: &RemoveOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        let _ = (request, sandbox);
        unsupported(path, options, Verb::Remove, signal)
    }

    /// Atomically moves the entry at `from` to `to`, within this backend.
    ///
    /// Both paths name entries (links on the way followed, a final link is the entry: a link
    /// is moved as a link, with its text unchanged). A directory moves with everything in it.
    /// Readers see the entry at the source or at the destination, never both and never
    /// neither; a crash leaves one of the two. Nothing is ever copied.
    ///
    /// Checked in this order, each failure changing nothing:
    ///
    /// 1. the source entry: absent (also through a file or a missing directory) is
    ///    `FS_NOT_FOUND` ([`FsError::not_found`], verb `rename`, naming `from`) — with
    ///    `if_version`, `FS_STALE_VERSION` ([`FsError::changed_since_read`]); `if_version`
    ///    not its `lstat` version is `FS_STALE_VERSION` ([`FsError::changed_since_read`],
    ///    naming `from`);
    /// 2. the destination's parent: missing is `FS_NOT_FOUND` ([`FsError::parent_missing`]),
    ///    a file is `FS_NOT_FOUND` ([`FsError::parent_not_directory`]), both naming `to`
    ///    (no parent is ever made);
    /// 3. a destination that is the source or lies beneath it is `FS_IO_ERROR`
    ///    ([`FsError::rename_into_itself`]);
    /// 4. the destination entry: without `replace`, anything there is `FS_NOT_OBSERVED`
    ///    ([`FsError::destination_exists`]) — publication itself must not replace what
    ///    appears after the check (`renameat2(RENAME_NOREPLACE)` on a disk); with `replace`,
    ///    a directory there, or a directory as the source, is `FS_NOT_REGULAR_FILE`
    ///    ([`FsError::is_a_directory`], naming that end), and a destination that is absent or
    ///    not at that version is `FS_STALE_VERSION` (naming `to`).
    ///
    /// Versions: both parents' versions change (their entries did); the moved entry gets a
    /// version never issued before (a moved directory's may stay the same), returned in the
    /// outcome and equal to a fresh `lstat` of `to`; what was inside a moved directory keeps
    /// its versions. Both ends are fenced by a fencing backend (each on its parent's real path),
    /// the source's end first and whole — its path, then its walk: a source whose parent is
    /// inside by its real path but reached through a link that leads out is denied as the
    /// source. When both ends are denied, the denial names `from`.
    ///
    /// # Errors
    ///
    /// Those above, the path failures of [`FileSystem::resolve`] for either path (verb
    /// `rename`), a loop on the way, `FS_SANDBOX_DENIED`, `FS_PERMISSION_DENIED`, `FS_IO_ERROR`
    /// ([`FsError::not_supported`] from a backend without the claim), `FS_ABORTED`
    /// (`rename aborted`, nothing moved).
    async fn rename(
        &self,
        from: &str,
        to: &str,
        options: ResolveOptions<'_>,
        request: &RenameOptions,
        sandbox: Option<&SandboxPolicy>,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        let _ = (to, request, sandbox);
        unsupported(from, options, Verb::Rename, signal)
    }
}

/// The answer of a backend without the namespace operations: a cancelled call says so, a bad
/// path is refused as any path is, anything else is [`FsError::not_supported`].
fn unsupported<T>(
    path: &str,
    options: ResolveOptions<'_>,
    verb: Verb,
    signal: &Signal,
) -> Result<T, FsError> {
    signal.check(verb)?;
    let display = crate::paths::display_path(path, options.cwd.unwrap_or("/"), verb)?;
    Err(FsError::not_supported(verb, &display))
}
