//! The registry: records in one file, changed only by compare-and-swap through the contract.
//!
//! Every change reads the file and its version, changes the records in memory and writes the
//! file back guarded by that version (or create-if-absent). A writer that lost the race reads
//! again and re-applies its change to what won, so two processes registering at once lose
//! nothing, with no lock file to orphan. The provider's publication makes the file old or new
//! after a crash, never torn, and on the local provider it is durable when the call returns
//! (the same staging, rename and fsyncs as `seam_local::atomic`). Going through the contract
//! keeps this crate on the contract alone, and lets a registry live in any world a provider
//! serves.

use crate::clock::{Clock, SystemClock};
use crate::error::{WorkspaceError, WorkspaceErrorCode};
use crate::record::{RegistryFile, Workspace, fresh_id};
use crate::session::Session;
use seam::{
    FileSystem, FsErrorCode, FsKind, FsTarget, FsVersion, ResolveOptions, Signal, WriteIntent,
};
use std::collections::HashSet;
use std::sync::Arc;

/// How many read-change-write rounds a change may lose before [`WorkspaceErrorCode::Contended`].
pub const DEFAULT_MAX_ATTEMPTS: usize = 64;

/// The durable set of workspaces.
#[derive(Clone)]
pub struct Registry {
    fs: Arc<dyn FileSystem>,
    file: String,
    clock: Arc<dyn Clock>,
    max_attempts: usize,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("file", &self.file)
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

/// What [`Registry::add`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Added {
    /// The record, new or existing.
    pub workspace: Workspace,
    /// Whether the record was created (`false`: the root was already registered).
    pub created: bool,
    /// Whether an existing record got the new title.
    pub renamed: bool,
}

/// A registry file as read: its records and the version they were read at.
struct Loaded {
    target: FsTarget,
    version: Option<FsVersion>,
    file: RegistryFile,
}

impl Registry {
    /// A registry kept in `file` (an absolute path in `fs`'s world; created, with its parent
    /// directories, on the first change). Nothing is read until a method is called.
    pub fn new(fs: Arc<dyn FileSystem>, file: impl Into<String>) -> Self {
        Self {
            fs,
            file: file.into(),
            clock: Arc::new(SystemClock),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }

    /// The same registry with another clock (tests fix the time).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The same registry giving up after `attempts` lost rounds (at least 1).
    pub fn with_max_attempts(mut self, attempts: usize) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The registry file's path.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The filesystem the registry and its roots live in.
    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.fs
    }

    /// Every record, oldest first. A missing file is an empty registry.
    ///
    /// # Errors
    ///
    /// `WS_REGISTRY_CORRUPT`, `WS_REGISTRY_FORMAT`, `WS_STORE`, `WS_CONTENDED`.
    pub async fn list(&self, signal: &Signal) -> Result<Vec<Workspace>, WorkspaceError> {
        Ok(self.load(signal).await?.file.workspaces)
    }

    /// The record with this id, or else the one whose root is this path: any spelling of it
    /// while the directory exists, the recorded spelling once it is gone.
    ///
    /// # Errors
    ///
    /// `WS_NOT_FOUND` when neither matches; those of [`Registry::list`].
    pub async fn lookup(
        &self,
        id_or_path: &str,
        signal: &Signal,
    ) -> Result<Workspace, WorkspaceError> {
        let records = self.list(signal).await?;
        // An id, or a root spelled exactly as recorded (also when the directory is gone).
        if let Some(w) = records
            .iter()
            .find(|w| w.id == id_or_path || w.root == id_or_path)
        {
            return Ok(w.clone());
        }
        if id_or_path.starts_with('/')
            && let Ok((_, root)) = self.canonical_dir(id_or_path, signal).await
            && let Some(w) = records.iter().find(|w| w.root == root)
        {
            return Ok(w.clone());
        }
        Err(WorkspaceError::new(
            WorkspaceErrorCode::NotFound,
            format!(
                "no workspace {id_or_path:?} in {} (neither an id nor a registered root)",
                self.file
            ),
        ))
    }

    /// Registers `root` (absolute; links and `..` are resolved to the real directory), or
    /// returns the record that already has it. A `title` renames an existing record; without
    /// one, a new record is titled after the root's last component.
    ///
    /// # Errors
    ///
    /// `WS_INVALID_ROOT` (relative, missing, not a directory, unresolvable), and those of
    /// [`Registry::list`].
    pub async fn add(
        &self,
        root: &str,
        title: Option<&str>,
        signal: &Signal,
    ) -> Result<Added, WorkspaceError> {
        let (_, root) = self.canonical_dir(root, signal).await?;
        let now = self.clock.now_ms();
        self.change(signal, |file| {
            if let Some(w) = file.workspaces.iter_mut().find(|w| w.root == root) {
                let renamed = title.is_some_and(|t| t != w.title);
                if let (true, Some(t)) = (renamed, title) {
                    t.clone_into(&mut w.title);
                    w.updated_at_ms = now;
                }
                return Ok((
                    Added {
                        workspace: w.clone(),
                        created: false,
                        renamed,
                    },
                    renamed,
                ));
            }
            let taken: HashSet<&str> = file.workspaces.iter().map(|w| w.id.as_str()).collect();
            let id = fresh_id(&root, now, &taken);
            let title = title.map_or_else(|| default_title(&root), str::to_string);
            let workspace = Workspace {
                id,
                root: root.clone(),
                title,
                created_at_ms: now,
                updated_at_ms: now,
            };
            file.workspaces.push(workspace.clone());
            Ok((
                Added {
                    workspace,
                    created: true,
                    renamed: false,
                },
                true,
            ))
        })
        .await
    }

    /// Removes the record with this id (or this root) and returns it. The directory itself is
    /// not touched.
    ///
    /// # Errors
    ///
    /// `WS_NOT_FOUND`, and those of [`Registry::list`].
    pub async fn remove(
        &self,
        id_or_path: &str,
        signal: &Signal,
    ) -> Result<Workspace, WorkspaceError> {
        let found = self.lookup(id_or_path, signal).await?;
        let id = found.id;
        let file_name = self.file.clone();
        self.change(signal, |file| {
            let Some(at) = file.workspaces.iter().position(|w| w.id == id) else {
                return Err(WorkspaceError::new(
                    WorkspaceErrorCode::NotFound,
                    format!("no workspace {id:?} in {file_name} (removed by someone else)"),
                ));
            };
            Ok((file.workspaces.remove(at), true))
        })
        .await
    }

    /// A session whose cwd is `cwd`: the cwd must be a directory inside a registered workspace,
    /// judged on its real path (a link into a workspace is a member; a link out is not). The
    /// innermost workspace that contains it is the session's.
    ///
    /// # Errors
    ///
    /// `WS_NOT_MEMBER` (no workspace contains it; also a cwd that is relative, missing or not a
    /// directory), and those of [`Registry::list`].
    pub async fn session(&self, cwd: &str, signal: &Signal) -> Result<Session, WorkspaceError> {
        let (cwd_target, cwd_real) = self.canonical_dir(cwd, signal).await.map_err(|e| {
            WorkspaceError::new(
                WorkspaceErrorCode::NotMember,
                format!("session cwd {cwd:?} is in no workspace: {}", e.message()),
            )
        })?;
        let mut best: Option<Workspace> = None;
        for w in self.list(signal).await? {
            // A root that no longer leads to the directory on record (gone, or a link swapped
            // in its place) admits nobody: its new target was never registered.
            let Ok(root) = self.intact_root(&w, signal).await else {
                continue;
            };
            let deeper = best.as_ref().is_none_or(|b| w.root.len() > b.root.len());
            if deeper && self.fs.contains(&root, &cwd_target) {
                best = Some(w);
            }
        }
        match best {
            Some(workspace) => Ok(Session::new(cwd_real, workspace)),
            None => Err(WorkspaceError::new(
                WorkspaceErrorCode::NotMember,
                format!(
                    "session cwd {cwd:?} (really {cwd_real}) is in no workspace registered in {}",
                    self.file
                ),
            )),
        }
    }

    /// A session at the root of `workspace` (what a server opened on one workspace uses).
    ///
    /// # Errors
    ///
    /// `WS_INVALID_ROOT` when the root is no longer the directory on record: gone, not a
    /// directory, or leading elsewhere (a link put in its place). The record stays; remove it
    /// or restore the directory.
    pub async fn enter(
        &self,
        workspace: &Workspace,
        signal: &Signal,
    ) -> Result<Session, WorkspaceError> {
        self.intact_root(workspace, signal).await?;
        Ok(Session::new(workspace.root.clone(), workspace.clone()))
    }

    /// The target of a record's root, if it is still the directory on record.
    async fn intact_root(
        &self,
        w: &Workspace,
        signal: &Signal,
    ) -> Result<FsTarget, WorkspaceError> {
        let stale = |why: String| {
            WorkspaceError::new(
                WorkspaceErrorCode::InvalidRoot,
                format!(
                    "workspace {} ({}) is {why}; remove the record or restore the directory",
                    w.id, w.root
                ),
            )
        };
        match self.canonical_dir(&w.root, signal).await {
            Ok((target, real)) if real == w.root => Ok(target),
            Ok((_, real)) => Err(stale(format!(
                "no longer the directory registered: its root now leads to {real}"
            ))),
            Err(e) => Err(stale(format!(
                "no longer a directory ({})",
                e.message()
                    .strip_prefix(&format!("workspace root {:?}: ", w.root))
                    .unwrap_or(e.message())
            ))),
        }
    }

    /// The target and canonical path of an existing directory.
    async fn canonical_dir(
        &self,
        path: &str,
        signal: &Signal,
    ) -> Result<(FsTarget, String), WorkspaceError> {
        let invalid = |why: String| {
            WorkspaceError::new(
                WorkspaceErrorCode::InvalidRoot,
                format!("workspace root {path:?}: {why}"),
            )
        };
        if !path.starts_with('/') {
            return Err(invalid("not an absolute path".into()));
        }
        let target = self
            .fs
            .resolve(path, ResolveOptions::default(), signal)
            .await
            .map_err(|e| invalid(e.message().to_string()))?;
        match self.fs.stat(&target, signal).await {
            Ok(Some(info)) if info.kind == FsKind::Directory => {}
            Ok(Some(_)) => return Err(invalid("not a directory".into())),
            Ok(None) => return Err(invalid("no such directory".into())),
            Err(e) => return Err(invalid(e.message().to_string())),
        }
        let real = self.fs.process_path(&target);
        Ok((target, real))
    }

    /// Reads the file and the version it was read at; a file that changes during the read is
    /// read again.
    async fn load(&self, signal: &Signal) -> Result<Loaded, WorkspaceError> {
        let target = self
            .fs
            .resolve(&self.file, ResolveOptions::default(), signal)
            .await
            .map_err(|e| WorkspaceError::store(&format!("find the registry {}", self.file), e))?;
        let store = |e| WorkspaceError::store(&format!("read the registry {}", self.file), e);
        for _ in 0..self.max_attempts {
            let Some(before) = self.fs.stat(&target, signal).await.map_err(store)? else {
                return Ok(Loaded {
                    target,
                    version: None,
                    file: RegistryFile::empty(),
                });
            };
            if before.kind != FsKind::File {
                return Err(WorkspaceError::new(
                    WorkspaceErrorCode::RegistryCorrupt,
                    format!(
                        "the workspace registry {} is not a regular file; nothing was changed",
                        self.file
                    ),
                ));
            }
            let text = match self.fs.read_text(&target, signal).await {
                Ok(text) => text,
                // Removed between the stat and the read: look again.
                Err(e) if e.code() == FsErrorCode::NotFound => continue,
                Err(e) if e.code() == FsErrorCode::NotText => {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorCode::RegistryCorrupt,
                        format!(
                            "the workspace registry {} is not readable: {}; nothing was changed (repair the file or move it away)",
                            self.file,
                            e.message()
                        ),
                    ));
                }
                Err(e) => return Err(store(e)),
            };
            let after = self.fs.stat(&target, signal).await.map_err(store)?;
            if after.as_ref().map(|i| &i.version) != Some(&before.version) {
                continue;
            }
            let file = RegistryFile::parse(&self.file, &text)?;
            return Ok(Loaded {
                target,
                version: Some(before.version),
                file,
            });
        }
        Err(self.contended())
    }

    /// Applies `change` to the current records and publishes the result if it changed
    /// anything, guarded by the version it read; a lost race re-reads and re-applies.
    async fn change<T>(
        &self,
        signal: &Signal,
        mut change: impl FnMut(&mut RegistryFile) -> Result<(T, bool), WorkspaceError>,
    ) -> Result<T, WorkspaceError> {
        for _ in 0..self.max_attempts {
            let Loaded {
                target,
                version,
                mut file,
            } = self.load(signal).await?;
            let (out, changed) = change(&mut file)?;
            if !changed {
                return Ok(out);
            }
            let intent = match version {
                Some(version) => WriteIntent::ReplaceIfVersion { version },
                None => WriteIntent::CreateIfAbsent,
            };
            match self
                .fs
                .write_text(&target, &file.render(), Some(&intent), None, signal)
                .await
            {
                Ok(_) => return Ok(out),
                Err(e)
                    if matches!(
                        e.code(),
                        FsErrorCode::StaleVersion | FsErrorCode::NotObserved
                    ) => {}
                Err(e) => {
                    return Err(WorkspaceError::store(
                        &format!("save the registry {}", self.file),
                        e,
                    ));
                }
            }
        }
        Err(self.contended())
    }

    fn contended(&self) -> WorkspaceError {
        WorkspaceError::new(
            WorkspaceErrorCode::Contended,
            format!(
                "the workspace registry {} changed under every one of {} attempts; nothing of this change was saved",
                self.file, self.max_attempts
            ),
        )
    }
}

/// The last component of a canonical root (`/` for the filesystem root).
fn default_title(root: &str) -> String {
    root.rsplit('/')
        .find(|c| !c.is_empty())
        .unwrap_or("/")
        .to_string()
}
