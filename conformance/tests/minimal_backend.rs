//! A complete, minimal backend that passes `seam check` — the worked example of
//! `docs/writing-a-backend.md`. It stores files under a directory with nothing but `std::fs`,
//! claims no optional capability (no symlinks, no permission bits, no `read_bytes`, no cancel
//! points), and takes every rule it needs from the `seam` crate: display paths, message texts,
//! the text rules and the literal edit. The test at the bottom runs the whole default suite
//! against it and requires a pass: every core rule reached and agreed.
//!
//! What it leaves out on purpose (and says so): durability (no fsync), reads off the async
//! executor (it blocks the calling task), and bounded-memory streaming (it reads the whole file
//! and hands it out in chunks). `seam-local` is the full-strength version of each.

use seam::paths::{display_path, file_url, is_within};
use seam::{
    Capabilities, EditOutcome, EditRequest, FileSystem, FsDirEntry, FsError, FsInfo, FsKind,
    FsPathInfo, FsPathKind, FsTarget, FsTargetKey, FsVersion, ResolveOptions, SandboxPolicy,
    Signal, TextStream, Verb, WriteIntent, WriteOperation, WriteOutcome,
};
use seam_conformance::{
    CaseOptions, DiskWorld, Factory, SequenceConfig, Subject, SuiteConfig, Verdict, World,
    run_suite,
};
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The backend: a root directory, a counter for temporary names, and one lock that makes a
/// mutation's check and publication one critical section (without it two writers guarded at
/// the same version could both win — the `cas-races` property catches exactly that).
pub struct MiniFs {
    root: String,
    diff_limit: u64,
    next: AtomicU64,
    mutations: Mutex<()>,
}

/// Maps an OS error the way the contract wants: EACCES/EPERM is a permission failure, the rest
/// an I/O failure with the OS's words.
fn os(e: std::io::Error, verb: Verb, display: &str) -> FsError {
    match e.kind() {
        ErrorKind::PermissionDenied => FsError::permission_denied(verb, display),
        _ if e.raw_os_error() == Some(40) => FsError::symlink_loop(verb, display),
        _ => FsError::io(verb, display, &e.to_string()),
    }
}

/// A version token: device, inode, size, and mtime and ctime to the nanosecond.
fn version(m: &std::fs::Metadata) -> FsVersion {
    FsVersion::new(format!(
        "{}:{}:{}:{}.{}:{}.{}",
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    ))
}

fn kind(m: &std::fs::Metadata) -> FsKind {
    if m.is_file() {
        FsKind::File
    } else if m.is_dir() {
        FsKind::Directory
    } else {
        FsKind::Other
    }
}

/// Metadata, with "nothing there" (also a path through a file) as `None`.
fn meta(path: &str, follow: bool) -> std::io::Result<Option<std::fs::Metadata>> {
    let m = if follow {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    match m {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == ErrorKind::NotFound || e.kind() == ErrorKind::NotADirectory => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The key of a display path: the real path, or for a missing path the real path of its
/// nearest existing ancestor plus the rest (so the key is stable across creation).
fn key_of(display: &str) -> Result<String, FsError> {
    let comps: Vec<&str> = display.split('/').filter(|c| !c.is_empty()).collect();
    for i in (0..=comps.len()).rev() {
        let prefix = format!("/{}", comps[..i].join("/"));
        match std::fs::canonicalize(&prefix) {
            Ok(real) => {
                let mut key = real.to_string_lossy().into_owned();
                for c in &comps[i..] {
                    if !key.ends_with('/') {
                        key.push('/');
                    }
                    key.push_str(c);
                }
                return Ok(key);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) if e.kind() == ErrorKind::NotADirectory => {
                return Err(FsError::parent_not_directory(Verb::Resolve, display));
            }
            Err(e) => return Err(os(e, Verb::Resolve, display)),
        }
    }
    Ok(display.to_string())
}

impl MiniFs {
    /// A backend over `root`.
    pub fn new(root: impl Into<String>, diff_limit: u64) -> Self {
        Self {
            root: root.into(),
            diff_limit,
            next: AtomicU64::new(0),
            mutations: Mutex::new(()),
        }
    }

    /// Publishes `bytes` at `key` through a temporary file beside it: a rename, or — when
    /// nothing may be replaced — a hard link, which refuses to replace anything.
    fn publish(
        &self,
        key: &str,
        bytes: &[u8],
        no_replace: bool,
        verb: Verb,
        display: &str,
    ) -> Result<(), FsError> {
        let parent = Path::new(key).parent().unwrap_or(Path::new("/"));
        let temp: PathBuf = parent.join(format!(
            ".mini-{}-{}",
            std::process::id(),
            self.next.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&temp, bytes).map_err(|e| os(e, verb, display))?;
        let published = if no_replace {
            std::fs::hard_link(&temp, key)
        } else {
            std::fs::rename(&temp, key)
        };
        let _ = std::fs::remove_file(&temp);
        match published {
            Ok(()) => Ok(()),
            // Something appeared meanwhile: never replace a directory or create-if-absent's
            // competitor.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => match meta(key, false) {
                Ok(Some(m)) if m.is_file() && verb == Verb::Write => {
                    Err(FsError::exists_not_observed(display))
                }
                _ => Err(FsError::not_regular_file(verb, display)),
            },
            Err(e) => Err(os(e, verb, display)),
        }
    }
}

/// The `before` of an overwrite: the prior text, LF-normalised, when both sides are under the
/// limit and the prior bytes are text.
fn diff_basis(prior: &[u8], content: &str, limit: u64) -> Option<String> {
    if prior.len() as u64 >= limit || content.len() as u64 >= limit || prior.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(seam::text::strip_bom(prior).0).ok()?;
    Some(seam::text::lf_normalize(text).into_owned())
}

#[async_trait::async_trait]
impl FileSystem for MiniFs {
    fn capabilities(&self) -> Capabilities {
        Capabilities::none()
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        signal.check(Verb::Resolve)?;
        let display = display_path(path, options.cwd.unwrap_or(&self.root), Verb::Resolve)?;
        Ok(FsTarget {
            key: FsTargetKey::new(key_of(&display)?),
            display_path: display,
        })
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
        let m =
            meta(target.key.as_str(), true).map_err(|e| os(e, Verb::Stat, &target.display_path))?;
        Ok(m.map(|m| FsInfo {
            version: version(&m),
            kind: kind(&m),
            size: m.is_file().then_some(m.len()),
        }))
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        signal.check(Verb::Lstat)?;
        let display = display_path(path, options.cwd.unwrap_or(&self.root), Verb::Lstat)?;
        let m = meta(&display, false).map_err(|e| os(e, Verb::Lstat, &display))?;
        Ok(m.map(|m| FsPathInfo {
            version: version(&m),
            kind: match kind(&m) {
                FsKind::File => FsPathKind::File,
                FsKind::Directory => FsPathKind::Directory,
                _ if m.file_type().is_symlink() => FsPathKind::Symlink,
                _ => FsPathKind::Other,
            },
            size: (m.is_file() || m.file_type().is_symlink()).then_some(m.len()),
        }))
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        signal.check(Verb::Read)?;
        let d = &target.display_path;
        // Look before opening: opening a FIFO would block.
        match meta(target.key.as_str(), true).map_err(|e| os(e, Verb::Read, d))? {
            None => return Err(FsError::not_found(Verb::Read, d)),
            Some(m) if !m.is_file() => return Err(FsError::not_regular_file(Verb::Read, d)),
            Some(_) => {}
        }
        let bytes = std::fs::read(target.key.as_str()).map_err(|e| os(e, Verb::Read, d))?;
        seam::text::decode_for_read(bytes).map_err(|e| e.into_error(Verb::Read, d))
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        let text = self.read_text(target, signal).await?;
        let mut chunks = Vec::new();
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut cut = rest.len().min(64 * 1024);
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            chunks.push(Ok(rest[..cut].to_string()));
            rest = &rest[cut..];
        }
        Ok(Box::pin(futures_util::stream::iter(chunks)))
    }

    async fn read_bytes(
        &self,
        target: &FsTarget,
        _max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        signal.check(Verb::Read)?;
        Err(FsError::io(
            Verb::Read,
            &target.display_path,
            "read_bytes is not supported by this backend",
        ))
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        signal.check(Verb::List)?;
        let d = &target.display_path;
        match meta(target.key.as_str(), true).map_err(|e| os(e, Verb::List, d))? {
            None => return Err(FsError::not_found(Verb::List, d)),
            Some(m) if !m.is_dir() => return Err(FsError::not_a_directory(d)),
            Some(_) => {}
        }
        // Children are keyed under the directory's real path now.
        let dir_key = key_of(target.key.as_str())?;
        let mut names: Vec<String> = std::fs::read_dir(&dir_key)
            .map_err(|e| os(e, Verb::List, d))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            // A write's temporary file is nobody's entry: a reader listing the directory while
            // a write runs must not see it (`visibility.listing`). The prefix alone decides
            // here — a user's own `.mini-…` would be hidden too; the local provider tells its
            // staging apart by more than its name.
            .filter(|name| !name.starts_with(".mini-"))
            .collect();
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let key = format!("{}/{name}", dir_key.trim_end_matches('/'));
            let display = format!("{}/{name}", d.trim_end_matches('/'));
            let m = meta(&key, true).map_err(|e| os(e, Verb::List, &display))?;
            out.push(FsDirEntry {
                kind: m.as_ref().map_or(FsKind::Other, kind),
                size: m.as_ref().filter(|m| m.is_file()).map(|m| m.len()),
                version: m.as_ref().map(version),
                target: FsTarget {
                    key: FsTargetKey::new(key),
                    display_path: display,
                },
                name,
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
        let _one_at_a_time = self.mutations.lock().unwrap_or_else(|p| p.into_inner());
        let (key, d) = (target.key.as_str(), target.display_path.as_str());
        let existing = match meta(key, false).map_err(|e| os(e, Verb::Write, d))? {
            None => None,
            Some(m) if m.is_file() => Some(m),
            Some(_) => return Err(FsError::not_regular_file(Verb::Write, d)),
        };
        match (expected, &existing) {
            (Some(WriteIntent::CreateIfAbsent), Some(_)) => {
                return Err(FsError::exists_not_observed(d));
            }
            (Some(WriteIntent::ReplaceIfVersion { .. }), None) => {
                return Err(FsError::no_longer_exists(d));
            }
            (Some(WriteIntent::ReplaceIfVersion { version: v }), Some(m)) if &version(m) != v => {
                return Err(FsError::changed_since_read(Verb::Write, d));
            }
            _ => {}
        }
        let before = match &existing {
            Some(_) => std::fs::read(key)
                .ok()
                .and_then(|prior| diff_basis(&prior, content, self.diff_limit)),
            None => None,
        };
        if let Some(parent) = Path::new(key).parent() {
            std::fs::create_dir_all(parent).map_err(|e| match e.kind() {
                ErrorKind::NotADirectory | ErrorKind::AlreadyExists => {
                    FsError::parent_not_directory(Verb::Write, d)
                }
                _ => os(e, Verb::Write, d),
            })?;
        }
        let no_replace =
            existing.is_none() || expected.is_some_and(|e| *e == WriteIntent::CreateIfAbsent);
        self.publish(key, content.as_bytes(), no_replace, Verb::Write, d)?;
        let now = meta(key, true)
            .map_err(|e| os(e, Verb::Write, d))?
            .ok_or_else(|| FsError::io(Verb::Write, d, "the file vanished after publication"))?;
        Ok(WriteOutcome {
            operation: if existing.is_some() {
                WriteOperation::Update
            } else {
                WriteOperation::Create
            },
            version: version(&now),
            before,
            after: seam::text::lf_normalize(content).into_owned(),
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
        let _one_at_a_time = self.mutations.lock().unwrap_or_else(|p| p.into_inner());
        let (key, d) = (target.key.as_str(), target.display_path.as_str());
        let m = match meta(key, false).map_err(|e| os(e, Verb::Edit, d))? {
            None => return Err(FsError::changed_since_read(Verb::Edit, d)),
            Some(m) if !m.is_file() => return Err(FsError::not_regular_file(Verb::Edit, d)),
            Some(m) => m,
        };
        if expected.is_some_and(|v| *v != version(&m)) {
            return Err(FsError::changed_since_read(Verb::Edit, d));
        }
        let bytes = std::fs::read(key).map_err(|e| os(e, Verb::Edit, d))?;
        let edited = seam::edit::literal_edit(bytes, edit).map_err(|e| e.into_error(d))?;
        self.publish(key, &edited.bytes(), false, Verb::Edit, d)?;
        let now = meta(key, true)
            .map_err(|e| os(e, Verb::Edit, d))?
            .ok_or_else(|| FsError::io(Verb::Edit, d, "the file vanished after publication"))?;
        let (before, after) = edited.into_before_after();
        Ok(EditOutcome {
            version: version(&now),
            before,
            after,
        })
    }
}

/// The factory the suite uses: a fresh temporary directory per case, seen through `DiskWorld`.
pub struct MiniFactory;

impl Factory for MiniFactory {
    fn name(&self) -> String {
        "mini".into()
    }

    fn make(&self, _options: &CaseOptions) -> Result<Subject, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let world = DiskWorld::new(dir.path()).map_err(|e| e.to_string())?;
        Ok(Subject {
            fs: Arc::new(MiniFs::new(world.root_display(), 1024)),
            world: Arc::new(world),
            diff_basis_max_bytes: 1024,
            keep_alive: Box::new(dir),
        })
    }
}

#[test]
fn the_minimal_backend_passes_the_default_run() {
    let config = SuiteConfig {
        sequences: SequenceConfig::default(),
        ..SuiteConfig::default()
    };
    let report = run_suite(Arc::new(MiniFactory), &config, &mut |_| {}).expect("the suite ran");
    println!("{}", report.render());
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.render());
    // It offers no process to kill: `crash` says so, like a capability not claimed, and its
    // rules need a backend the gate can kill.
    let text = report.render();
    assert!(
        text.contains("crash                  not claimed: the gate cannot kill this backend"),
        "{text}"
    );
    assert!(text.contains("need a backend the gate can kill"), "{text}");
}
