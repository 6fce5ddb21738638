//! The watched factory and world: every subject a factory makes comes watched, and every
//! out-of-band world call is timed and given up like a backend call.

use super::fs::Watched;
use super::{Monitor, named_sync};
use crate::factory::{CaseOptions, Factory, Subject};
use crate::timing::CallKind;
use crate::world::{EntryMode, World};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A world change in a few words (its bytes by their length: a 1 MiB content is no name).
pub(super) fn describe_effect(effect: &WorldEffect) -> String {
    match effect {
        WorldEffect::CreateFile { path, bytes, mode } => {
            format!(
                "create_file {path:?} ({} bytes, mode {mode:o})",
                bytes.len()
            )
        }
        WorldEffect::RewriteFile { path, bytes, .. } => {
            format!("rewrite_file {path:?} ({} bytes)", bytes.len())
        }
        WorldEffect::CreateDir { path } => format!("create_dir {path:?}"),
        WorldEffect::Symlink { path, target } => format!("symlink {path:?} -> {target:?}"),
        WorldEffect::Remove { path } => format!("remove {path:?}"),
        WorldEffect::Chmod { path, mode } => format!("chmod {mode:o} {path:?}"),
        WorldEffect::Mkfifo { path } => format!("mkfifo {path:?}"),
    }
}

/// A world whose every call is recorded.
pub(crate) struct WatchedWorld {
    inner: Arc<dyn World>,
    monitor: Arc<Monitor>,
}

impl WatchedWorld {
    pub(super) fn sync<T>(&self, what: String, op: &'static str, f: impl FnOnce() -> T) -> T {
        let guard = self.monitor.enter(what.clone(), CallKind::Op(op));
        let v = named_sync(&what, f);
        guard.returned();
        v
    }
}

impl World for WatchedWorld {
    fn root_display(&self) -> String {
        self.sync("world root_display".into(), "world root_display", || {
            self.inner.root_display()
        })
    }

    fn process_root(&self) -> String {
        self.sync("world process_root".into(), "world process_root", || {
            self.inner.process_root()
        })
    }

    fn apply(&self, effect: &WorldEffect) -> std::io::Result<()> {
        self.sync(
            format!("world apply {}", describe_effect(effect)),
            "world apply",
            || self.inner.apply(effect),
        )
    }

    fn snapshot(&self) -> std::io::Result<BTreeMap<String, SnapEntry>> {
        self.sync("world snapshot".into(), "world snapshot", || {
            self.inner.snapshot()
        })
    }

    fn entry_mode(&self, path: &str) -> std::io::Result<Option<EntryMode>> {
        self.sync(
            format!("world entry_mode {path:?}"),
            "world entry_mode",
            || self.inner.entry_mode(path),
        )
    }

    fn supports_fifos(&self) -> bool {
        self.sync(
            "world supports_fifos".into(),
            "world supports_fifos",
            || self.inner.supports_fifos(),
        )
    }

    fn restores_mtime(&self) -> bool {
        self.sync(
            "world restores_mtime".into(),
            "world restores_mtime",
            || self.inner.restores_mtime(),
        )
    }

    fn keeps_modes(&self) -> bool {
        self.sync("world keeps_modes".into(), "world keeps_modes", || {
            self.inner.keeps_modes()
        })
    }

    fn open_to_others(&self) -> std::io::Result<()> {
        self.sync(
            "world open_to_others".into(),
            "world open_to_others",
            || self.inner.open_to_others(),
        )
    }
}

/// A factory whose subjects are watched by one monitor.
pub(crate) struct WatchedFactory {
    pub inner: Arc<dyn Factory>,
    pub monitor: Arc<Monitor>,
}

impl Factory for WatchedFactory {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn permissions_checkable(&self) -> Result<(), String> {
        self.inner.permissions_checkable()
    }

    fn streams_through_a_window(&self) -> bool {
        self.inner.streams_through_a_window()
    }

    fn configurations(&self) -> Vec<String> {
        self.inner.configurations()
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let subject = {
            let guard = self.monitor.enter("factory make".into(), CallKind::Start);
            let made = named_sync("factory make", || self.inner.make(options));
            guard.returned();
            made?
        };
        Ok(Subject {
            fs: Arc::new(Watched {
                inner: subject.fs,
                monitor: self.monitor.clone(),
            }),
            world: Arc::new(WatchedWorld {
                inner: subject.world,
                monitor: self.monitor.clone(),
            }),
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
            keep_alive: subject.keep_alive,
        })
    }

    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let opened = {
            let guard = self.monitor.enter("factory reopen".into(), CallKind::Start);
            let opened = named_sync("factory reopen", || self.inner.reopen(options, subject));
            guard.returned();
            opened?
        };
        Some(opened.map(|fs| {
            Arc::new(Watched {
                inner: fs,
                monitor: self.monitor.clone(),
            }) as Arc<dyn seam::FileSystem>
        }))
    }

    fn killable(
        &self,
        options: &CaseOptions,
    ) -> Result<crate::factory::Killable, crate::factory::NotKillable> {
        let made = {
            let guard = self
                .monitor
                .enter("factory killable".into(), CallKind::Start);
            let made = named_sync("factory killable", || self.inner.killable(options));
            guard.returned();
            made?
        };
        Ok(crate::factory::Killable {
            subject: self.watched(made.subject),
            kill: made.kill,
        })
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        let recovered = {
            let guard = self
                .monitor
                .enter("factory recover".into(), CallKind::Start);
            let recovered = named_sync("factory recover", || self.inner.recover(options, killed));
            guard.returned();
            recovered?
        };
        Ok(self.watched(recovered))
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, crate::factory::NotPlaced> {
        let made = {
            let guard = self
                .monitor
                .enter("factory in_directory".into(), CallKind::Start);
            let made = named_sync("factory in_directory", || {
                self.inner.in_directory(options, dir)
            });
            guard.returned();
            made?
        };
        Ok(self.watched(made))
    }
}

impl WatchedFactory {
    /// `subject` with its provider and world watched by this factory's monitor.
    pub(super) fn watched(&self, subject: Subject) -> Subject {
        Subject {
            fs: Arc::new(Watched {
                inner: subject.fs,
                monitor: self.monitor.clone(),
            }),
            world: Arc::new(WatchedWorld {
                inner: subject.world,
                monitor: self.monitor.clone(),
            }),
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
            keep_alive: subject.keep_alive,
        }
    }
}
