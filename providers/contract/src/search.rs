//! Search beneath a directory: the walk and the matching behind the `glob` and `grep` tools.
//!
//! A model asks "which files match `src/**/*.rs`" and "where does `fn main` occur" far more often
//! than it reads a file it already knows. Both questions are a walk of a tree, and a walk is
//! where an agent's file sandbox has leaked before: a walker that follows a link out lists (and a
//! searcher reads) files the workspace was never meant to expose. So search is part of the
//! contract, done by the backend that owns the tree, in process, under the same rules as its
//! reads — not a `rg` subprocess with its own idea of the filesystem.
//!
//! The rules every [`Search`] keeps, for `glob` and `grep` alike:
//!
//! * **Nothing outside the root is listed or read.** The walk never follows a link — not to a
//!   directory, not to a file — so no link, however it is spelled, widens a search. A walker
//!   goes by path name, so a directory swapped for a link *while* it runs could be walked where
//!   the link leads; a backend therefore confirms what it answers: `glob` lists a file only if
//!   its directory is still beneath the root by a walk that cannot leave it, and `grep` opens
//!   every file it reads through such a walk (`O_NOFOLLOW` at the end). (The local provider
//!   reads ignore files by path: a `.gitignore` that is a link is honoured — it can only hide
//!   files, never show or read one.) The root itself is the caller's target: the path a tool is
//!   given is resolved like any other, links in it followed.
//! * **One ignore policy.** Ignore files inside the root (`.gitignore`, `.ignore`) are
//!   honoured, inside a git repository or not; ignore files above the root are not read (so a
//!   narrower root no longer sees a repository-level `.gitignore`). Version-control metadata
//!   ([`VCS_DIRS`]) is never listed or searched, even when the root is inside it. Hidden files and
//!   directories (a name starting with `.`) are included only on request; a file given as the
//!   root of a `grep` is searched as given.
//! * **Files only**, named by their path relative to the root, `/`-separated.
//! * **Patterns**: a glob without `/` matches a file's name at any depth (`*.rs`); one with `/`
//!   matches the whole relative path (`src/**/*.rs`; `**/` also matches nothing, so `**/*.rs`
//!   matches `lib.rs` at the top). A grep pattern is a regular expression (Rust `regex` syntax,
//!   matched per line); a pattern that starts with `-` is a pattern. An invalid pattern is
//!   [`SearchError::InvalidPattern`], never a crash.
//! * **Order**: `glob` newest first (modification time, then path); `grep` by path, then line —
//!   the same answer every time for the same tree (past [`GrepQuery::limit`], which files'
//!   matches were kept may vary: the search stops early).
//! * **Lines and binary files**: `grep` matches line by line, `$` before a `\r\n` too; it stops
//!   reading a file at its first NUL byte, as ripgrep does (a NUL near the start means no
//!   matches; matches before a late one are kept).

use crate::{FsError, FsTarget, Signal};

/// Directories of version-control metadata, never listed or searched.
pub const VCS_DIRS: &[&str] = &[".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// What `glob` looks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobQuery {
    /// The glob (see the module docs for how `/` changes what it matches).
    pub pattern: String,
    /// Include hidden files and directories.
    pub hidden: bool,
}

/// A file `glob` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundFile {
    /// Its path relative to the root, `/`-separated.
    pub path: String,
    /// Its modification time, nanoseconds since the Unix epoch (for the order).
    pub modified_ns: i128,
}

/// What `grep` looks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepQuery {
    /// The regular expression.
    pub pattern: String,
    /// Only files matching this glob (same rules as [`GlobQuery::pattern`]).
    pub include: Option<String>,
    /// Include hidden files and directories.
    pub hidden: bool,
    /// Stop after this many matches (the answer then says it is incomplete).
    pub limit: usize,
    /// Keep at most this many bytes of each matching line (cut before a UTF-8 continuation
    /// byte), so a tree of minified one-line files cannot fill memory.
    pub max_line_bytes: usize,
    /// Match letters regardless of case.
    pub case_insensitive: bool,
    /// The pattern may match across lines (`.` then matches a newline too); each line of a
    /// match is answered as a matching line.
    pub multiline: bool,
    /// Lines of context answered before each match (marked [`GrepMatch::context`]).
    pub context_before: usize,
    /// Lines of context answered after each match.
    pub context_after: usize,
    /// Only files of these types, by ripgrep's names (`rust`, `py`, `js`, `ts`, `go`,
    /// `md`, ...; `rg --type-list`); empty: every file. An unknown name is
    /// [`SearchError::InvalidPattern`].
    pub types: Vec<String>,
}

impl GrepQuery {
    /// A search for `pattern`: every file, hidden ones skipped, no context, case-sensitive,
    /// line by line, at most 100,000 matches of at most 2,000 bytes each.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self {
            pattern: pattern.into(),
            include: None,
            hidden: false,
            limit: 100_000,
            max_line_bytes: 2_000,
            case_insensitive: false,
            multiline: false,
            context_before: 0,
            context_after: 0,
            types: Vec::new(),
        }
    }
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepMatch {
    /// The file's path relative to the root (empty when the root is the file itself).
    pub path: String,
    /// The 1-based line number.
    pub line: u64,
    /// The line's bytes, without its terminator (`\n` or `\r\n`), at most
    /// [`GrepQuery::max_line_bytes`] of them.
    pub text: Vec<u8>,
    /// Whether the line was longer and `text` is its beginning.
    pub cut: bool,
    /// A line of context around a match ([`GrepQuery::context_before`] and
    /// [`GrepQuery::context_after`]), not a match itself.
    pub context: bool,
}

/// What `grep` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrepFound {
    /// The matches, in order.
    pub matches: Vec<GrepMatch>,
    /// False when [`GrepQuery::limit`] stopped the search.
    pub complete: bool,
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The glob or regular expression is not valid; the text says why.
    #[error("{0}")]
    InvalidPattern(String),
    /// The root could not be searched (missing, not a directory for `glob`, cancelled...).
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// In-process search beneath a target, for a backend that owns its tree (offered through
/// [`crate::FileSystem::search`]).
///
/// # Errors
///
/// Both methods fail with [`SearchError::InvalidPattern`] for a pattern that does not compile,
/// and with [`SearchError::Fs`] when the root is missing (`FS_NOT_FOUND`), of the wrong kind
/// (`glob` needs a directory: `FS_NOT_DIRECTORY`), or the signal was cancelled (`FS_ABORTED`).
/// A file or directory inside the tree that cannot be read is skipped, not an error.
#[async_trait::async_trait]
pub trait Search: Send + Sync {
    /// The files beneath the directory `root` that match `query`, newest first.
    async fn glob(
        &self,
        root: &FsTarget,
        query: &GlobQuery,
        signal: &Signal,
    ) -> Result<Vec<FoundFile>, SearchError>;

    /// The lines matching `query` in the file `root`, or in the files beneath the directory
    /// `root`, by path and line.
    async fn grep(
        &self,
        root: &FsTarget,
        query: &GrepQuery,
        signal: &Signal,
    ) -> Result<GrepFound, SearchError>;
}
