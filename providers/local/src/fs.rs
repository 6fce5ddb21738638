//! [`LocalFileSystem`]: the contract on the host disk.

use crate::config::{Durability, LocalConfig};
use crate::edit::{EditFailure, EditQuirks, literal_edit};
use crate::errors::{fail, os};
use crate::locks::Locks;
use crate::paths::{contains, display_path, file_url, key_of, split_key};
use crate::publish::{
    StageSpec, Staged, StagingModes, Sweeper, ensure_parent, open_dir, stage, sync_dir,
};
use crate::read::{diff_basis, open_read, open_regular, read_all};
use crate::stream::TextChunks;
use crate::version::{Minter, Probe};
use rustix::fd::OwnedFd;
use rustix::io::Errno;
use seam::{
    CancelPoint, Capabilities, Checkpoint, EditOutcome, EditRequest, FileSystem, FsDirEntry,
    FsError, FsErrorCode, FsInfo, FsPathInfo, FsTarget, FsTargetKey, FsVersion, ResolveOptions,
    SandboxPolicy, Signal, TextStream, Verb, WriteIntent, WriteOperation, WriteOutcome,
};
use std::fs::File;
use std::sync::atomic::AtomicBool;

/// The local-disk provider.
pub struct LocalFileSystem {
    config: LocalConfig,
    quirks: Quirks,
    locks: Locks,
    sweeper: Sweeper,
    tmpfile_ok: AtomicBool,
}

/// Behaviour switches; all off unless the `faults` feature configured a broken variant.
#[derive(Clone, Copy, Debug, Default)]
struct Quirks {
    without_ctime: bool,
    check_then_rename: bool,
    locale_listing: bool,
    replace_dangling_link: bool,
    ignore_version_guard: bool,
    world_readable_staging: bool,
    edit: EditQuirks,
}

impl Quirks {
    #[cfg(feature = "faults")]
    fn from_config(config: &LocalConfig) -> Self {
        use crate::Fault;
        let on = |f: Fault| config.fault == Some(f);
        Quirks {
            without_ctime: on(Fault::VersionWithoutCtime),
            check_then_rename: on(Fault::CheckThenRename),
            locale_listing: on(Fault::LocaleOrderedListing),
            replace_dangling_link: on(Fault::ReplacesDanglingLink),
            ignore_version_guard: on(Fault::IgnoresVersionGuard),
            world_readable_staging: on(Fault::WorldReadableStaging),
            edit: EditQuirks {
                normalise_whole_file: on(Fault::EditNormalisesEndings),
                drop_bom: on(Fault::DropsBomOnEdit),
                sample_nul: on(Fault::EditSamplesNul),
            },
        }
    }

    #[cfg(not(feature = "faults"))]
    fn from_config(_config: &LocalConfig) -> Self {
        Quirks::default()
    }
}

impl std::fmt::Debug for LocalFileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalFileSystem")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What a mutation found at its key before deciding anything.
enum Existing {
    Absent,
    /// A symlink sits at the key (dangling, or a live one swapped in after resolution).
    Link {
        dangling: bool,
    },
    File {
        file: Option<File>,
        probe: Probe,
    },
}

fn checkpoint<'a>(
    point: CancelPoint,
    verb: Verb,
    display: &'a str,
    staging: &'a [String],
) -> Checkpoint<'a> {
    Checkpoint {
        point,
        verb,
        display_path: display,
        staging,
    }
}

impl LocalFileSystem {
    /// A provider with this configuration.
    pub fn new(config: LocalConfig) -> Self {
        Self {
            quirks: Quirks::from_config(&config),
            config,
            locks: Locks::default(),
            sweeper: Sweeper::default(),
            tmpfile_ok: AtomicBool::new(true),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LocalConfig {
        &self.config
    }

    fn minter(&self) -> Minter {
        Minter {
            without_ctime: self.quirks.without_ctime,
        }
    }

    fn cwd<'a>(&'a self, options: &ResolveOptions<'a>) -> &'a str {
        options.cwd.unwrap_or(&self.config.cwd)
    }

    fn existing(&self, key: &str, verb: &str, display: &str) -> Result<Existing, FsError> {
        let minter = self.minter();
        match open_read(rustix::fs::CWD, key, false) {
            Ok(fd) => {
                let probe = minter.probe_fd(&fd).map_err(|e| os(e, verb, display))?;
                if probe.is_file() {
                    Ok(Existing::File {
                        file: Some(File::from(fd)),
                        probe,
                    })
                } else {
                    Err(fail(
                        FsErrorCode::NotRegularFile,
                        verb,
                        display,
                        "not a regular file",
                    ))
                }
            }
            Err(e) if crate::errors::is_absent(e) => Ok(Existing::Absent),
            Err(Errno::LOOP) => match minter.probe_at(rustix::fs::CWD, key, true) {
                Ok(followed) => Ok(Existing::Link {
                    dangling: followed.is_none(),
                }),
                Err(e) => Err(os(e, verb, display)),
            },
            Err(Errno::NXIO) => Err(fail(
                FsErrorCode::NotRegularFile,
                verb,
                display,
                "not a regular file",
            )),
            Err(Errno::ACCESS) => match minter.probe_at(rustix::fs::CWD, key, false) {
                Ok(Some(probe)) if probe.is_file() => Ok(Existing::File { file: None, probe }),
                Ok(Some(_)) => Err(fail(
                    FsErrorCode::NotRegularFile,
                    verb,
                    display,
                    "not a regular file",
                )),
                Ok(None) => Ok(Existing::Absent),
                Err(e) => Err(os(e, verb, display)),
            },
            Err(e) => Err(os(e, verb, display)),
        }
    }

    fn staging_modes(&self) -> StagingModes {
        if self.quirks.world_readable_staging {
            return StagingModes {
                dir: 0o755,
                file: 0o644,
            };
        }
        StagingModes::default()
    }

    fn version_now(&self, key: &str) -> FsVersion {
        match self.minter().probe_at(rustix::fs::CWD, key, true) {
            Ok(Some(p)) => p.version,
            _ => FsVersion::new(format!("missing:{key}")),
        }
    }

    /// The shared tail of every mutation: sweep the directory, stage `parts` beside the target,
    /// offer the staged checkpoint, give the staged file `mode`, publish it with `publish`,
    /// report the commit and sync the directory. Anything staged is removed again on failure
    /// (the `Staged` guard), and nothing after `publish` can fail the mutation.
    #[allow(clippy::too_many_arguments)]
    fn stage_and_publish(
        &self,
        parent: &OwnedFd,
        parent_path: &str,
        parts: &[&[u8]],
        mode: Option<u32>,
        verb: Verb,
        display: &str,
        signal: &Signal,
        publish: impl FnOnce(&mut Staged<'_>) -> Result<(), FsError>,
    ) -> Result<(), FsError> {
        let parent_fd = rustix::fd::AsFd::as_fd(parent);
        self.sweeper.sweep(
            parent_fd,
            parent_path,
            &self.config.clock,
            self.config.sweep_grace,
        );
        let mut staged = stage(parent_fd, parts, &self.spec(verb.as_str(), display))?;
        let paths = staged.paths(parent_path);
        signal.checkpoint(&checkpoint(CancelPoint::Staged, verb, display, &paths))?;
        if let Some(mode) = mode {
            staged
                .chmod(mode)
                .map_err(|e| os(e, verb.as_str(), display))?;
        }
        publish(&mut staged)?;
        signal.committed(&checkpoint(CancelPoint::Committed, verb, display, &[]));
        // Committed: from here on nothing turns the mutation into a failure.
        let _ = sync_dir(parent, self.config.durability);
        Ok(())
    }

    fn spec<'a>(&'a self, verb: &'a str, display: &'a str) -> StageSpec<'a> {
        StageSpec {
            nonce: &self.config.nonce,
            durability: self.config.durability,
            modes: self.staging_modes(),
            staging: self.config.staging,
            tmpfile_ok: &self.tmpfile_ok,
            verb,
            display,
        }
    }
}

fn edit_failure(e: EditFailure, display: &str) -> FsError {
    match e {
        EditFailure::Binary => fail(FsErrorCode::NotText, "edit", display, "binary file"),
        EditFailure::InvalidUtf8 => {
            fail(FsErrorCode::NotText, "edit", display, "invalid UTF-8 text")
        }
        EditFailure::EmptyOld => FsError::new(
            FsErrorCode::EditNotFound,
            "old_string must be a non-empty string",
        ),
        EditFailure::NotFound => FsError::new(
            FsErrorCode::EditNotFound,
            format!("old_string was not found in \"{display}\""),
        ),
        EditFailure::Ambiguous(n) => FsError::new(
            FsErrorCode::AmbiguousEdit,
            format!(
                "old_string matched {n} times in \"{display}\"; provide a more specific old_string or set replace_all to true"
            ),
        ),
    }
}

#[async_trait::async_trait]
impl FileSystem for LocalFileSystem {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            symlinks: true,
            permissions: true,
            read_bytes: true,
            cancel_points: true,
            staging_probe: true,
            sandbox_modes: false,
        }
    }

    async fn resolve(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<FsTarget, FsError> {
        signal.check(Verb::Resolve)?;
        let display = display_path(path, self.cwd(&options), "resolve")?;
        let key = key_of(&display)?;
        signal.check(Verb::Resolve)?;
        Ok(FsTarget {
            key: FsTargetKey::new(key),
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
        contains(parent.key.as_str(), child.key.as_str())
    }

    async fn stat(&self, target: &FsTarget, signal: &Signal) -> Result<Option<FsInfo>, FsError> {
        signal.check(Verb::Stat)?;
        let probe = self
            .minter()
            .probe_at(rustix::fs::CWD, target.key.as_str(), true)
            .map_err(|e| os(e, "stat", &target.display_path))?;
        signal.check(Verb::Stat)?;
        Ok(probe.map(|p| FsInfo {
            kind: p.fs_kind(),
            size: p.is_file().then_some(p.size),
            version: p.version,
        }))
    }

    async fn lstat(
        &self,
        path: &str,
        options: ResolveOptions<'_>,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        signal.check(Verb::Lstat)?;
        let display = display_path(path, self.cwd(&options), "lstat")?;
        let probe = self
            .minter()
            .probe_at(rustix::fs::CWD, display.as_str(), false)
            .map_err(|e| os(e, "lstat", &display))?;
        signal.check(Verb::Lstat)?;
        Ok(probe.map(|p| FsPathInfo {
            kind: p.path_kind(),
            size: p.reported_size(),
            version: p.version,
        }))
    }

    async fn read_text(&self, target: &FsTarget, signal: &Signal) -> Result<String, FsError> {
        signal.check(Verb::Read)?;
        crate::read::read_text(
            rustix::fs::CWD,
            target.key.as_str(),
            &target.display_path,
            signal,
        )
    }

    async fn stream_text(&self, target: &FsTarget, signal: &Signal) -> Result<TextStream, FsError> {
        signal.check(Verb::Read)?;
        let (file, _) = open_regular(rustix::fs::CWD, target.key.as_str(), &target.display_path)?;
        Ok(Box::pin(TextChunks::new(
            file,
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
        crate::read::read_bytes(
            rustix::fs::CWD,
            target.key.as_str(),
            &target.display_path,
            max_bytes,
            signal,
        )
    }

    async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        signal.check(Verb::List)?;
        crate::list::list_dir(self.minter(), target, signal, self.quirks.locale_listing)
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
        let key = target.key.as_str();
        let display = target.display_path.as_str();
        let _guard = self.locks.lock(key).await;

        let not_regular = || {
            fail(
                FsErrorCode::NotRegularFile,
                "write",
                display,
                "not a regular file",
            )
        };
        let mut replace_link = false;
        let existing = match self.existing(key, "write", display)? {
            Existing::Link { dangling } => {
                if !(dangling && expected.is_none() && self.quirks.replace_dangling_link) {
                    return Err(not_regular());
                }
                replace_link = true;
                None
            }
            Existing::Absent => None,
            Existing::File { file, probe } => Some((file, probe)),
        };

        match expected {
            Some(WriteIntent::ReplaceIfVersion { version }) => match &existing {
                None => {
                    return Err(fail(
                        FsErrorCode::StaleVersion,
                        "write",
                        display,
                        "file no longer exists",
                    ));
                }
                Some((_, probe)) if &probe.version != version => {
                    if !self.quirks.ignore_version_guard {
                        return Err(fail(
                            FsErrorCode::StaleVersion,
                            "write",
                            display,
                            "file changed since it was read",
                        ));
                    }
                }
                Some(_) => {}
            },
            Some(WriteIntent::CreateIfAbsent) if existing.is_some() => {
                return Err(FsError::new(
                    FsErrorCode::NotObserved,
                    format!("cannot overwrite existing \"{display}\" without reading it first"),
                ));
            }
            _ => {}
        }

        let limit = self.config.diff_basis_max_bytes;
        let before = match &existing {
            Some((Some(file), probe)) if (content.len() as u64) < limit => {
                diff_basis(file, probe.size, limit)
            }
            _ => None,
        };
        let prior_mode = existing.as_ref().map(|(_, p)| p.mode & 0o7777);
        let existed = existing.is_some();
        drop(existing);

        signal.checkpoint(&checkpoint(
            CancelPoint::BeforeStage,
            Verb::Write,
            display,
            &[],
        ))?;
        let (parent_path, name) = split_key(key);
        let (parent, mut created) = ensure_parent(parent_path, "write", display)?;
        let create_if_absent = matches!(expected, Some(WriteIntent::CreateIfAbsent));
        let no_replace =
            (create_if_absent || !existed) && !replace_link && !self.quirks.check_then_rename;
        self.stage_and_publish(
            &parent,
            parent_path,
            &[content.as_bytes()],
            prior_mode,
            Verb::Write,
            display,
            signal,
            |staged| {
                if !no_replace {
                    return staged.publish_replace(name).map_err(|e| os(e, "write", display));
                }
                match staged.publish_no_replace(name) {
                    Ok(()) => Ok(()),
                    Err(Errno::EXIST) => {
                        // Something appeared since the check: a file may be replaced by an
                        // unguarded write, nothing else ever is.
                        let now = self
                            .minter()
                            .probe_at(&parent, name, false)
                            .map_err(|e| os(e, "write", display))?;
                        match now {
                            Some(p) if p.is_file() && !create_if_absent => staged
                                .publish_replace(name)
                                .map_err(|e| os(e, "write", display)),
                            Some(p) if !p.is_file() => Err(not_regular()),
                            _ => Err(FsError::new(
                                FsErrorCode::NotObserved,
                                format!(
                                    "cannot overwrite existing \"{display}\" without reading it first"
                                ),
                            )),
                        }
                    }
                    Err(e) => Err(os(e, "write", display)),
                }
            },
        )?;
        created.keep();
        if self.config.durability == Durability::Full {
            let _ = created.sync();
        }
        Ok(WriteOutcome {
            operation: if existed {
                WriteOperation::Update
            } else {
                WriteOperation::Create
            },
            version: self.version_now(key),
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
        let key = target.key.as_str();
        let display = target.display_path.as_str();
        let _guard = self.locks.lock(key).await;
        let stale = || {
            fail(
                FsErrorCode::StaleVersion,
                "edit",
                display,
                "file changed since it was read",
            )
        };
        let (file, probe) = match self.existing(key, "edit", display)? {
            Existing::Absent | Existing::Link { dangling: true } => return Err(stale()),
            Existing::Link { dangling: false } => {
                return Err(fail(
                    FsErrorCode::NotRegularFile,
                    "edit",
                    display,
                    "not a regular file",
                ));
            }
            Existing::File { file: None, .. } => {
                return Err(fail(
                    FsErrorCode::PermissionDenied,
                    "edit",
                    display,
                    "permission denied",
                ));
            }
            Existing::File {
                file: Some(f),
                probe,
            } => (f, probe),
        };
        if let Some(v) = expected
            && v != &probe.version
        {
            return Err(stale());
        }
        signal.check(Verb::Edit)?;
        let bytes = read_all(&file, probe.size, display)?;
        drop(file);
        signal.check(Verb::Edit)?;
        let edited = literal_edit(
            bytes,
            &edit.old_string,
            &edit.new_string,
            edit.replace_all,
            self.quirks.edit,
        )
        .map_err(|e| edit_failure(e, display))?;

        signal.checkpoint(&checkpoint(
            CancelPoint::BeforeStage,
            Verb::Edit,
            display,
            &[],
        ))?;
        let (parent_path, name) = split_key(key);
        let parent = open_dir(parent_path).map_err(|e| os(e, "edit", display))?;
        self.stage_and_publish(
            &parent,
            parent_path,
            &edited.parts(),
            Some(probe.mode & 0o7777),
            Verb::Edit,
            display,
            signal,
            |staged| {
                staged
                    .publish_replace(name)
                    .map_err(|e| os(e, "edit", display))
            },
        )?;
        let (before, after) = edited.into_before_after();
        Ok(EditOutcome {
            version: self.version_now(key),
            before,
            after,
        })
    }
}
