//! The reads — `stat`, `lstat`, `read_text`, `stream_text`, `read_bytes`, `list_dir` — over a
//! root they are seen from: the host's `/`, as [`seam::FileSystem`] reads, or a
//! [`Confinement`] that no resolution may leave, for a provider that fences reads as the
//! sandbox fences mutations. One implementation for both, so the confined read is the read,
//! with only its walk changed: beneath a confinement every path operation goes one component at
//! a time from held descriptors, so `..`, a link of any kind, or a directory swapped for a link
//! while the read runs cannot take it outside, and leaving is an error for which
//! [`crate::is_escape`] is true (nothing of the outside is opened).

use crate::beneath::Confinement;
use crate::core::Core;
use crate::errors::os;
use crate::offload::offload;
use crate::read::open_regular;
use crate::root::Root;
use seam::{FsDirEntry, FsError, FsInfo, FsPathInfo, FsTarget, Signal, TextStream, Verb};
use std::sync::Arc;

/// Whole-file reads up to this size run inline: one page-cached `read` of 64 KiB costs about
/// 15 µs, less than a hop to the blocking pool and back (`docs/performance.md`).
pub(crate) const INLINE_READ_MAX: u64 = 64 * 1024;

/// Where a read is seen from.
#[derive(Clone)]
pub(crate) enum Seen {
    /// The host's root.
    Host(Arc<Core>),
    /// Beneath a confining root.
    Within(Arc<Confinement>),
}

impl Seen {
    pub(crate) fn root(&self) -> &Root {
        match self {
            Seen::Host(core) => &core.root,
            Seen::Within(c) => c.root(),
        }
    }
}

impl Seen {
    pub(crate) async fn stat(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Option<FsInfo>, FsError> {
        signal.check(Verb::Stat)?;
        let probe = self
            .root()
            .probe_settled(target.key.as_str(), true)
            .map_err(|e| os(e, Verb::Stat, &target.display_path))?;
        signal.check(Verb::Stat)?;
        Ok(probe.map(|p| FsInfo {
            kind: p.fs_kind(),
            size: p.is_file().then_some(p.size),
            version: p.version,
        }))
    }

    /// `lstat` of `display`, already the lexically normalised absolute path.
    pub(crate) async fn lstat(
        &self,
        key: &str,
        display: &str,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        let probe = self
            .root()
            .probe_settled(key, false)
            .map_err(|e| os(e, Verb::Lstat, display))?;
        signal.check(Verb::Lstat)?;
        Ok(probe.map(|p| FsPathInfo {
            kind: p.path_kind(),
            size: p.reported_size(),
            version: p.version,
        }))
    }

    pub(crate) async fn read_text(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<String, FsError> {
        signal.check(Verb::Read)?;
        let display = target.display_path.clone();
        let (file, size) = open_regular(self.root(), target.key.as_str(), &display)?;
        if size <= INLINE_READ_MAX {
            return crate::read::read_text(&file, size, &display, signal);
        }
        let signal = signal.clone();
        offload(Verb::Read, &target.display_path, move || {
            crate::read::read_text(&file, size, &display, &signal)
        })
        .await
    }

    pub(crate) async fn stream_text(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<TextStream, FsError> {
        signal.check(Verb::Read)?;
        let (file, size) = open_regular(self.root(), target.key.as_str(), &target.display_path)?;
        Ok(crate::stream::text_stream(
            file,
            size,
            INLINE_READ_MAX,
            target.display_path.clone(),
            signal.clone(),
        ))
    }

    pub(crate) async fn read_bytes(
        &self,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        signal.check(Verb::Read)?;
        let display = target.display_path.clone();
        let (file, size) = open_regular(self.root(), target.key.as_str(), &display)?;
        if size <= INLINE_READ_MAX || size > max_bytes {
            return crate::read::read_bytes(&file, size, &display, max_bytes, signal);
        }
        let signal = signal.clone();
        offload(Verb::Read, &target.display_path, move || {
            crate::read::read_bytes(&file, size, &display, max_bytes, &signal)
        })
        .await
    }

    pub(crate) async fn list_dir(
        &self,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        signal.check(Verb::List)?;
        let (target, signal, at) = (target.clone(), signal.clone(), self.clone());
        offload(Verb::List, &target.display_path.clone(), move || {
            crate::list::list_dir(at.root(), &target, &signal)
        })
        .await
    }
}
