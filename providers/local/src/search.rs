//! [`seam::Search`] on the disk, in process with ripgrep's own crates: `ignore` walks the tree
//! (links never followed, ignore files honoured, VCS metadata and — unless asked — hidden names
//! skipped), `globset` matches names, `grep-regex` and `grep-searcher` match lines.
//!
//! The walk yields paths; a path is only a name. The directory of each file `grep` reads is
//! opened beneath a held handle of the search root by the confined walk that confines the
//! sandbox's mutations (no link can lead it out), held while the walk stays in it, and the file
//! is opened from it with `O_NOFOLLOW`: a directory swapped for a link after the walk saw it
//! cannot make the search read a file outside the root. The whole search runs on tokio's
//! blocking pool: a large tree is seconds of I/O.

use crate::beneath::Confinement;
use crate::fs::LocalFileSystem;
use crate::offload::offload;
use crate::read::read_flags;
use crate::root::Root;
use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::{DirEntry, WalkBuilder, WalkState};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode};
use seam::search::{
    FoundFile, GlobQuery, GrepFound, GrepMatch, GrepQuery, Search, SearchError, VCS_DIRS,
};
use seam::{FsError, FsTarget, Signal, Verb};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A compiled glob and whether it matches names (no `/`) or relative paths.
struct Pattern {
    matcher: GlobMatcher,
    by_name: bool,
}

impl Pattern {
    fn new(glob: &str) -> Result<Self, SearchError> {
        // `./src/*.rs` means `src/*.rs`: paths are relative to the root.
        let mut glob = glob;
        while let Some(rest) = glob.strip_prefix("./") {
            glob = rest;
        }
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| SearchError::InvalidPattern(e.to_string()))?
            .compile_matcher();
        Ok(Self {
            matcher,
            by_name: !glob.contains('/'),
        })
    }

    fn matches(&self, rel: &str) -> bool {
        if self.by_name {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(rel)
        }
    }
}

fn is_vcs(name: &str) -> bool {
    VCS_DIRS.contains(&name)
}

/// The walk of `dir`: no link followed, ignore files inside the tree honoured (in a git
/// repository or not, none read above it), VCS metadata never entered, hidden names only when
/// asked.
fn walker(dir: &Path, hidden: bool) -> WalkBuilder {
    let mut b = WalkBuilder::new(dir);
    b.follow_links(false)
        .hidden(!hidden)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(false)
        .filter_entry(|e| !(e.depth() > 0 && e.file_name().to_str().is_some_and(is_vcs)));
    b
}

/// The entry's path relative to the walk's root, if it is a regular file (links are skipped).
fn file_rel(root: &Path, entry: &DirEntry) -> Option<String> {
    if !entry.file_type().is_some_and(|t| t.is_file()) {
        return None;
    }
    let rel = entry.path().strip_prefix(root).ok()?;
    rel.to_str().map(str::to_string)
}

/// Whether `key` lies inside version-control metadata (then nothing beneath it is listed).
fn inside_vcs(key: &str) -> bool {
    key.split('/').any(is_vcs)
}

/// Why the root itself cannot be searched, by its real cause (entries inside the tree that
/// cannot be read are skipped instead).
fn root_error(e: &std::io::Error, verb: Verb, display: &str) -> SearchError {
    SearchError::Fs(match e.kind() {
        std::io::ErrorKind::NotFound => FsError::not_found(verb, display),
        std::io::ErrorKind::PermissionDenied => FsError::permission_denied(verb, display),
        _ => FsError::io(verb, display, &e.to_string()),
    })
}

fn check(signal: &Signal) -> Result<(), SearchError> {
    signal.check(Verb::Read).map_err(SearchError::from)
}

/// Whether the search root is a directory. Where a search confirms what it answers: beneath the search root itself, or — for a provider
/// that fences reads — beneath the readable root that holds it, so that not even the search
/// root swapped for a link can lead the answer out. Beneath an outer root, the search root is
/// first reached by a walk that cannot leave it (leaving is an escape, [`crate::is_escape`]).
fn confirming_root(
    key: &str,
    display: &str,
    verb: Verb,
    outer: Option<&Root>,
) -> Result<bool, SearchError> {
    match outer {
        None => {
            let meta = std::fs::symlink_metadata(key).map_err(|e| root_error(&e, verb, display))?;
            Ok(meta.is_dir())
        }
        Some(outer) => match outer.probe(key, true) {
            Ok(Some(p)) => Ok(p.kind == FileType::Directory),
            Ok(None) => Err(FsError::not_found(verb, display).into()),
            Err(e) => Err(crate::errors::os(e, verb, display).into()),
        },
    }
}

fn glob_blocking(
    key: &str,
    display: &str,
    query: &GlobQuery,
    signal: &Signal,
    outer: Option<&Root>,
) -> Result<Vec<FoundFile>, SearchError> {
    let pattern = Pattern::new(&query.pattern)?;
    let root = Path::new(key);
    if !confirming_root(key, display, Verb::List, outer)? {
        return Err(FsError::not_a_directory(display).into());
    }
    let own;
    let within = match outer {
        Some(outer) => outer,
        None => {
            own = Root::confined(key).map_err(|e| root_error(&e.into(), Verb::List, display))?;
            &own
        }
    };
    // The handle above is `O_PATH`, which needs no read permission: a root that cannot be
    // listed must say so, not answer an empty list.
    std::fs::read_dir(root).map_err(|e| root_error(&e, Verb::List, display))?;
    if inside_vcs(key) {
        return Ok(Vec::new());
    }
    // On as many threads as the machine has; put in order afterwards. The walk goes by path
    // name, so a directory swapped for a link while it runs would be walked where the link
    // leads: each thread holds the directory of the files it lists, opened by the confined walk
    // (no link can lead it out), and takes each file's facts from that handle without following
    // a link — a name that is not a regular file beneath the root *there* is not listed.
    let found: Mutex<Vec<FoundFile>> = Mutex::new(Vec::new());
    let cancelled = AtomicBool::new(false);
    let base = key.trim_end_matches('/');
    walker(root, query.hidden).build_parallel().run(|| {
        let (found, cancelled, pattern) = (&found, &cancelled, &pattern);
        let mut held: Option<(String, Option<OwnedFd>)> = None;
        Box::new(move |entry| {
            if signal.is_cancelled() {
                cancelled.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(rel) = file_rel(root, &entry) else {
                return WalkState::Continue;
            };
            if !pattern.matches(&rel) {
                return WalkState::Continue;
            }
            let (dir_key, name) = match rel.rsplit_once('/') {
                Some((d, n)) => (format!("{base}/{d}"), n),
                None => (base.to_string(), rel.as_str()),
            };
            if held.as_ref().is_none_or(|(k, _)| *k != dir_key) {
                let fd = within.open_dir(&dir_key).ok();
                held = Some((dir_key, fd));
            }
            let Some((_, Some(dir))) = &held else {
                return WalkState::Continue;
            };
            let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                return WalkState::Continue;
            };
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                return WalkState::Continue;
            }
            let modified_ns =
                i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec);
            found
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(FoundFile {
                    modified_ns,
                    path: rel,
                });
            WalkState::Continue
        })
    });
    if cancelled.load(Ordering::Relaxed) {
        check(signal)?;
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort_by(|a, b| {
        b.modified_ns
            .cmp(&a.modified_ns)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(found)
}

/// A file read that stops when the signal is cancelled, so a cancelled search does not read a
/// multi-gigabyte file to its end.
struct Cancellable<'a> {
    file: &'a File,
    signal: &'a Signal,
}

impl std::io::Read for Cancellable<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.signal.is_cancelled() {
            return Err(std::io::Error::other("search cancelled"));
        }
        let mut file = self.file;
        file.read(buf)
    }
}

/// What one file's search keeps: its matching lines (each line of a multi-line match) and the
/// context lines around them, in order, up to `limit` matches.
struct Collect<'a> {
    rel: &'a str,
    out: &'a mut GrepFound,
    limit: usize,
    max_line: usize,
    matched: usize,
}

impl Collect<'_> {
    fn push(&mut self, line: u64, bytes: &[u8], context: bool) {
        let text = bytes
            .strip_suffix(b"\n")
            .map(|b| b.strip_suffix(b"\r").unwrap_or(b))
            .unwrap_or(bytes);
        let mut end = text.len().min(self.max_line);
        // Never keep half a character.
        while end > 0 && end < text.len() && (text[end] & 0xC0) == 0x80 {
            end -= 1;
        }
        self.out.matches.push(GrepMatch {
            path: self.rel.to_string(),
            line,
            text: text[..end].to_vec(),
            cut: end < text.len(),
            context,
        });
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        if self.matched >= self.limit {
            self.out.complete = false;
            return Ok(false);
        }
        let first = m.line_number().unwrap_or(0);
        for (i, line) in m.lines().enumerate() {
            self.push(first + i as u64, line, false);
        }
        self.matched += 1;
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        self.push(c.line_number().unwrap_or(0), c.bytes(), true);
        Ok(true)
    }
}

/// Greps one open file (stopping, with what it found so far, if the signal is cancelled: the
/// caller then reports the cancellation); the number of matches it found.
fn grep_file(
    searcher: &mut Searcher,
    (file, signal): (&File, &Signal),
    rel: &str,
    matcher: &RegexMatcher,
    out: &mut GrepFound,
    (limit, max_line): (usize, usize),
) -> usize {
    let mut sink = Collect {
        rel,
        out,
        limit,
        max_line,
        matched: 0,
    };
    let _ = searcher.search_reader(matcher, Cancellable { file, signal }, &mut sink);
    sink.matched
}

/// The file types a query selects, as a matcher; `None` for every file.
fn types_of(query: &GrepQuery) -> Result<Option<ignore::types::Types>, SearchError> {
    if query.types.is_empty() {
        return Ok(None);
    }
    let mut b = ignore::types::TypesBuilder::new();
    b.add_defaults();
    let known: Vec<String> = b
        .definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    for t in &query.types {
        if !known.contains(t) {
            return Err(SearchError::InvalidPattern(format!(
                "unknown file type {t:?} (known: rust, py, js, ts, go, java, c, cpp, md, json, toml, yaml, ... — ripgrep's names)"
            )));
        }
        b.select(t);
    }
    b.build()
        .map(Some)
        .map_err(|e| SearchError::InvalidPattern(e.to_string()))
}

/// Whether a file (by its path relative to the root, or its name) is of a selected type.
fn of_type(types: Option<&ignore::types::Types>, rel: &str) -> bool {
    types.is_none_or(|t| t.matched(rel, false).is_whitelist())
}

fn new_searcher(query: &GrepQuery) -> Searcher {
    SearcherBuilder::new()
        .line_terminator(LineTerminator::crlf())
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        .multi_line(query.multiline)
        .before_context(query.context_before)
        .after_context(query.context_after)
        .build()
}

/// The directory a file is opened from: held open (through the confined walk) for as long as
/// the walk stays in it, so each file costs one `openat` with `O_NOFOLLOW`.
struct HeldDir {
    key: String,
    fd: OwnedFd,
}

fn grep_blocking(
    key: &str,
    display: &str,
    query: &GrepQuery,
    signal: &Signal,
    outer: Option<&Root>,
) -> Result<GrepFound, SearchError> {
    // CRLF-aware, so `$` matches before a `\r\n` as a model expects — line by line: a pattern
    // that may span lines needs a matcher with no line terminator of its own.
    let matcher = RegexMatcherBuilder::new()
        .crlf(!query.multiline)
        .case_insensitive(query.case_insensitive)
        .multi_line(query.multiline)
        .dot_matches_new_line(query.multiline)
        .build(&query.pattern)
        .map_err(|e| SearchError::InvalidPattern(e.to_string()))?;
    let include = query.include.as_deref().map(Pattern::new).transpose()?;
    let types = types_of(query)?;
    let root = Path::new(key);
    let is_dir = confirming_root(key, display, Verb::Read, outer)?;
    let meta = std::fs::symlink_metadata(root).map_err(|e| root_error(&e, Verb::Read, display))?;
    let mut out = GrepFound {
        matches: Vec::new(),
        complete: true,
    };
    if inside_vcs(key) {
        return Ok(out);
    }
    let mut searcher = new_searcher(query);
    if !is_dir && meta.is_file() {
        let parent = root.parent().and_then(Path::to_str).unwrap_or("/");
        let own;
        let within = match outer {
            Some(outer) => outer,
            None => {
                own = Root::confined(parent)
                    .map_err(|_| SearchError::from(FsError::not_found(Verb::Read, display)))?;
                &own
            }
        };
        check(signal)?;
        let fd = within
            .open(key, read_flags(false))
            .map_err(|e| root_error(&e.into(), Verb::Read, display))?;
        let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !of_type(types.as_ref(), name) {
            return Ok(out);
        }
        grep_file(
            &mut searcher,
            (&File::from(fd), signal),
            "",
            &matcher,
            &mut out,
            (query.limit, query.max_line_bytes),
        );
        check(signal)?;
        return Ok(out);
    }
    if !is_dir || !meta.is_dir() {
        return Err(FsError::not_regular_file(Verb::Read, display).into());
    }
    let own;
    let within = match outer {
        Some(outer) => outer,
        None => {
            own = Root::confined(key).map_err(|e| root_error(&e.into(), Verb::Read, display))?;
            &own
        }
    };
    // As for glob: an unreadable root is a refusal, not "no matches".
    std::fs::read_dir(root).map_err(|e| root_error(&e, Verb::Read, display))?;
    let base = key.trim_end_matches('/');
    // Files are searched on as many threads as the machine has, each holding the directory it
    // is in; the answer is put in order (path, then line) afterwards.
    let per_file: Mutex<Vec<(String, Vec<GrepMatch>)>> = Mutex::new(Vec::new());
    let total = AtomicUsize::new(0);
    let cancelled = AtomicBool::new(false);
    walker(root, query.hidden).build_parallel().run(|| {
        let mut searcher = new_searcher(query);
        let mut held: Option<HeldDir> = None;
        let (matcher, include, types) = (&matcher, &include, &types);
        let (per_file, total, cancelled) = (&per_file, &total, &cancelled);
        Box::new(move |entry| {
            if signal.is_cancelled() {
                cancelled.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            if total.load(Ordering::Relaxed) > query.limit {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(rel) = file_rel(root, &entry) else {
                return WalkState::Continue;
            };
            if include.as_ref().is_some_and(|p| !p.matches(&rel)) || !of_type(types.as_ref(), &rel)
            {
                return WalkState::Continue;
            }
            let (dir_key, name) = match rel.rsplit_once('/') {
                Some((d, n)) => (format!("{base}/{d}"), n),
                None => (base.to_string(), rel.as_str()),
            };
            if held.as_ref().is_none_or(|h| h.key != dir_key) {
                held = within
                    .open_dir(&dir_key)
                    .ok()
                    .map(|fd| HeldDir { key: dir_key, fd });
            }
            let Some(dir) = &held else {
                return WalkState::Continue;
            };
            let Ok(fd) = rustix::fs::openat(&dir.fd, name, read_flags(false), Mode::empty()) else {
                return WalkState::Continue;
            };
            let mut found = GrepFound {
                matches: Vec::new(),
                complete: true,
            };
            let matched = grep_file(
                &mut searcher,
                (&File::from(fd), signal),
                &rel,
                matcher,
                &mut found,
                (query.limit.saturating_add(1), query.max_line_bytes),
            );
            if matched > 0 {
                total.fetch_add(matched, Ordering::Relaxed);
                per_file
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((rel, found.matches));
            }
            WalkState::Continue
        })
    });
    // A search cancelled mid-file stops reading it; either way the answer is the cancellation.
    if cancelled.load(Ordering::Relaxed) || signal.is_cancelled() {
        check(signal)?;
    }
    let mut per_file = per_file.into_inner().unwrap_or_else(|p| p.into_inner());
    per_file.sort_by(|a, b| a.0.cmp(&b.0));
    // The limit counts matches; context lines come with the matches they surround.
    let mut kept = 0;
    'files: for (_, matches) in per_file {
        for m in matches {
            if !m.context {
                if kept >= query.limit {
                    out.complete = false;
                    break 'files;
                }
                kept += 1;
            }
            out.matches.push(m);
        }
    }
    Ok(out)
}

#[async_trait::async_trait]
impl Search for LocalFileSystem {
    async fn glob(
        &self,
        root: &FsTarget,
        query: &GlobQuery,
        signal: &Signal,
    ) -> Result<Vec<FoundFile>, SearchError> {
        check(signal)?;
        let (key, display) = (root.key.as_str().to_string(), root.display_path.clone());
        let (query, signal) = (query.clone(), signal.clone());
        offload(Verb::List, &root.display_path, move || {
            Ok(glob_blocking(&key, &display, &query, &signal, None))
        })
        .await?
    }

    async fn grep(
        &self,
        root: &FsTarget,
        query: &GrepQuery,
        signal: &Signal,
    ) -> Result<GrepFound, SearchError> {
        check(signal)?;
        let (key, display) = (root.key.as_str().to_string(), root.display_path.clone());
        let (query, signal) = (query.clone(), signal.clone());
        offload(Verb::Read, &root.display_path, move || {
            Ok(grep_blocking(&key, &display, &query, &signal, None))
        })
        .await?
    }
}

impl LocalFileSystem {
    /// [`Search::glob`] confined beneath `within`: the search root is reached by a walk that
    /// cannot leave it, and every file answered is confirmed beneath it (a root or a directory
    /// swapped for a link to outside shows nothing of the outside). Leaving is an error for
    /// which [`crate::is_escape`] is true.
    pub async fn glob_beneath(
        &self,
        within: &Arc<Confinement>,
        root: &FsTarget,
        query: &GlobQuery,
        signal: &Signal,
    ) -> Result<Vec<FoundFile>, SearchError> {
        check(signal)?;
        let (key, display) = (root.key.as_str().to_string(), root.display_path.clone());
        let (query, signal, within) = (query.clone(), signal.clone(), within.clone());
        offload(Verb::List, &root.display_path, move || {
            Ok(glob_blocking(
                &key,
                &display,
                &query,
                &signal,
                Some(within.root()),
            ))
        })
        .await?
    }

    /// [`Search::grep`] confined beneath `within` (see [`LocalFileSystem::glob_beneath`]).
    pub async fn grep_beneath(
        &self,
        within: &Arc<Confinement>,
        root: &FsTarget,
        query: &GrepQuery,
        signal: &Signal,
    ) -> Result<GrepFound, SearchError> {
        check(signal)?;
        let (key, display) = (root.key.as_str().to_string(), root.display_path.clone());
        let (query, signal, within) = (query.clone(), signal.clone(), within.clone());
        offload(Verb::Read, &root.display_path, move || {
            Ok(grep_blocking(
                &key,
                &display,
                &query,
                &signal,
                Some(within.root()),
            ))
        })
        .await?
    }
}
