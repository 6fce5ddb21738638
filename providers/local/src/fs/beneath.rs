//! The provider confined to a part of the disk: every call of the contract with every path
//! operation beneath a confining root ([`crate::Confinement`]: the sandbox's writable roots), and
//! the namespace calls beneath one or on the host ([`crate::namespace::Within`]). The mechanics
//! are in `reads`, `beneath` and `namespace`; here they are the provider's methods.

use super::LocalFileSystem;
use crate::beneath::Confinement;
use crate::namespace::{Within, entry_of};
use crate::offload::{offload, owned_in_steps};
use crate::reads::Seen;
use seam::{
    CreateDirOptions, CreateDirOutcome, EditOutcome, EditRequest, FsDirEntry, FsError, FsInfo,
    FsPathInfo, FsTarget, FsVersion, RemoveOptions, RemoveOutcome, RenameOptions, RenameOutcome,
    Signal, TextStream, Verb, WriteIntent, WriteOutcome,
};
use std::sync::Arc;

impl LocalFileSystem {
    /// [`seam::FileSystem::stat`] beneath `within` (see the module docs).
    pub async fn stat_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Option<FsInfo>, FsError> {
        Seen::Within(within.clone()).stat(target, signal).await
    }

    /// [`seam::FileSystem::lstat`] of the entry `display` names (a lexically normalised absolute
    /// path, as [`seam::paths::display_path`] gives, named in messages) beneath `within`: `key`
    /// is that entry's key, its parent's real path and its name ([`crate::entry_key`]), which a
    /// confined walk can follow from the real root even where `display` reaches the root
    /// through a link.
    pub async fn lstat_beneath(
        &self,
        within: &Arc<Confinement>,
        key: &str,
        display: &str,
        signal: &Signal,
    ) -> Result<Option<FsPathInfo>, FsError> {
        signal.check(Verb::Lstat)?;
        Seen::Within(within.clone())
            .lstat(key, display, signal)
            .await
    }

    /// [`seam::FileSystem::read_text`] beneath `within`.
    pub async fn read_text_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<String, FsError> {
        Seen::Within(within.clone()).read_text(target, signal).await
    }

    /// [`seam::FileSystem::stream_text`] beneath `within` (the file is opened beneath it; the
    /// stream then reads that open file).
    pub async fn stream_text_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<TextStream, FsError> {
        Seen::Within(within.clone())
            .stream_text(target, signal)
            .await
    }

    /// [`seam::FileSystem::read_bytes`] beneath `within`.
    pub async fn read_bytes_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        max_bytes: u64,
        signal: &Signal,
    ) -> Result<Vec<u8>, FsError> {
        Seen::Within(within.clone())
            .read_bytes(target, max_bytes, signal)
            .await
    }

    /// [`seam::FileSystem::list_dir`] beneath `within` (the directory is opened beneath it; its
    /// entries are named, not followed).
    pub async fn list_dir_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        signal: &Signal,
    ) -> Result<Vec<FsDirEntry>, FsError> {
        Seen::Within(within.clone()).list_dir(target, signal).await
    }

    /// [`seam::FileSystem::write_text`], with every path operation beneath `within`. A path
    /// that would leave it fails with an error for which [`crate::is_escape`] is true, and changes
    /// nothing.
    pub async fn write_text_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        content: &str,
        expected: Option<&WriteIntent>,
        signal: &Signal,
    ) -> Result<WriteOutcome, FsError> {
        signal.check(Verb::Write)?;
        let core = self.core().clone();
        let guard = core.locks.lock(target.key.as_str()).await;
        let content = owned_in_steps(content).await;
        let (target, within) = (target.clone(), within.clone());
        let (expected, signal) = (expected.cloned(), signal.clone());
        offload(Verb::Write, &target.display_path.clone(), move || {
            let _guard = guard;
            core.write(within.root(), &target, &content, expected.as_ref(), &signal)
        })
        .await
    }

    /// [`seam::FileSystem::edit_text`], with every path operation beneath `within` (see
    /// [`LocalFileSystem::write_text_beneath`]).
    pub async fn edit_text_beneath(
        &self,
        within: &Arc<Confinement>,
        target: &FsTarget,
        edit: &EditRequest,
        expected: Option<&FsVersion>,
        signal: &Signal,
    ) -> Result<EditOutcome, FsError> {
        signal.check(Verb::Edit)?;
        let core = self.core().clone();
        let guard = core.locks.lock(target.key.as_str()).await;
        let (target, edit, within) = (target.clone(), edit.clone(), within.clone());
        let (expected, signal) = (expected.cloned(), signal.clone());
        offload(Verb::Edit, &target.display_path.clone(), move || {
            let _guard = guard;
            core.edit(within.root(), &target, &edit, expected.as_ref(), &signal)
        })
        .await
    }

    /// [`seam::FileSystem::create_dir`] of a display path, beneath `within`.
    pub async fn create_dir_in(
        &self,
        within: &Within,
        display: &str,
        request: CreateDirOptions,
        signal: &Signal,
    ) -> Result<CreateDirOutcome, FsError> {
        let e = entry_of(display, Verb::Mkdir)?;
        let core = self.core().clone();
        let guard = core.locks.lock(&e.key()).await;
        let (confined, signal) = (within.owned(), signal.clone());
        offload(Verb::Mkdir, display, move || {
            let _guard = guard;
            let root = match &confined {
                Some(c) => c.root(),
                None => &core.root,
            };
            let (created, version) = core.create_dir(root, &e, request, &signal)?;
            Ok(CreateDirOutcome { created, version })
        })
        .await
    }

    /// [`seam::FileSystem::remove`] of a display path, beneath `within`.
    pub async fn remove_in(
        &self,
        within: &Within,
        display: &str,
        request: &RemoveOptions,
        signal: &Signal,
    ) -> Result<RemoveOutcome, FsError> {
        let e = entry_of(display, Verb::Remove)?;
        let core = self.core().clone();
        let guard = core.locks.lock(&e.key()).await;
        let (confined, request, signal) = (within.owned(), request.clone(), signal.clone());
        offload(Verb::Remove, display, move || {
            let _guard = guard;
            let root = match &confined {
                Some(c) => c.root(),
                None => &core.root,
            };
            let kind = core.remove(root, &e, &request, &signal)?;
            Ok(RemoveOutcome { kind })
        })
        .await
    }

    /// [`seam::FileSystem::rename`] of two display paths, beneath `within`.
    pub async fn rename_in(
        &self,
        within: &Within,
        from: &str,
        to: &str,
        request: &RenameOptions,
        signal: &Signal,
    ) -> Result<RenameOutcome, FsError> {
        let source = entry_of(from, Verb::Rename)?;
        // What is wrong with the destination's path (a loop on the way) is said after the
        // source has been looked at, in the contract's order.
        let dest = entry_of(to, Verb::Rename);
        let core = self.core().clone();
        // Both keys, in one order for every caller, so two renames never wait for each other.
        let (a, b) = match &dest {
            Ok(d) => (source.key(), d.key()),
            Err(_) => (source.key(), source.key()),
        };
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let first = core.locks.lock(&low).await;
        let second = if low == high {
            None
        } else {
            Some(core.locks.lock(&high).await)
        };
        let (confined, request, signal) = (within.owned(), request.clone(), signal.clone());
        offload(Verb::Rename, from, move || {
            let _guards = (first, second);
            let root = match &confined {
                Some(c) => c.root(),
                None => &core.root,
            };
            let (kind, replaced, version) = core.rename(root, &source, &dest, &request, &signal)?;
            Ok(RenameOutcome {
                kind,
                replaced,
                version,
            })
        })
        .await
    }
}
