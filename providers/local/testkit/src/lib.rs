//! The local provider's test world: [`LocalFactory`] makes each case a fresh directory in the
//! run directory (`seam_conformance::case_dirs`), handed to the provider through a link, in the
//! provider's two staging configurations; the suite's `DiskWorld` changes and reads it behind
//! the provider's back. For the `crash` property the provider runs in `seam serve` on stdio, in
//! a child process the suite may kill ([`set_host_binary`] names the binary). The sandbox's
//! test world builds on the helpers here.
//!
//! It depends on the suite and on the provider; the provider never depends on it
//! (ARCHITECTURE.md, rule 5).

use seam_conformance::case_dirs::CaseDir;
use seam_conformance::{
    CaseDurability, CaseOptions, DiskWorld, Factory, Killable, NotKillable, NotPlaced,
    SUITE_DIFF_LIMIT, Subject, World,
};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use std::sync::Arc;

/// The `seam` binary the shipped providers run in when the suite kills them (the `crash`
/// property): set by the binary itself at start, or by a test that drives the suite in its
/// own process (`env!("CARGO_BIN_EXE_seam")`).
static HOST: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Names the `seam` binary a shipped provider runs in when the suite kills it. The first call
/// wins.
pub fn set_host_binary(exe: impl Into<std::path::PathBuf>) {
    let _ = HOST.set(exe.into());
}

/// A killable subject of a shipped disk provider (`local`, `sandbox:MODE`): `seam serve` on
/// stdio in a child process, started from the binary [`set_host_binary`] named.
pub fn killable_shipped(provider: &str, options: &CaseOptions) -> Result<Killable, NotKillable> {
    let Some(exe) = HOST.get() else {
        return Err(NotKillable::Cannot(
            "no seam binary to run the provider in a process of its own (seam_local_testkit::set_host_binary)".into(),
        ));
    };
    let (command, base) = seam_remote_testkit::serve_stdio_command(exe, provider)?;
    let mut killable = seam_remote_testkit::killable_at(
        command,
        base,
        Some(LocalFactory.configurations()),
        options,
    )?;
    killable.subject =
        seam_remote_testkit::on_this_disk(killable.subject).map_err(NotKillable::Failed)?;
    Ok(killable)
}

/// A fresh `seam serve` over the case a killed one (made by [`killable_shipped`]) was working
/// in, its world read and written from this process like the killed one's.
pub fn recover_shipped(options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
    seam_remote_testkit::on_this_disk(seam_remote_testkit::recover_at(options, killed)?)
}

/// The local provider on a fresh temporary directory per case, in two configurations: staging
/// in an `O_TMPFILE` inode (`tmpfile`, the default) and in a private directory (`directory`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFactory;

impl LocalFactory {
    /// The staging a configuration of the local provider names (`tmpfile`, `directory`).
    pub fn staging(configuration: &str) -> Result<Staging, String> {
        match configuration {
            "tmpfile" => Ok(Staging::Auto),
            "directory" => Ok(Staging::Directory),
            other => Err(format!(
                "unknown configuration {other:?} of the local provider (tmpfile, directory)"
            )),
        }
    }
}

impl Factory for LocalFactory {
    fn name(&self) -> String {
        "local".into()
    }

    /// Read in the suite's own process: no window of chunks in flight, no credit to keep.
    fn streams_through_a_window(&self) -> bool {
        false
    }

    /// The local provider in `seam serve` on stdio, in a child process the suite may kill.
    fn killable(&self, options: &CaseOptions) -> Result<Killable, NotKillable> {
        killable_shipped("local", options)
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        recover_shipped(options, killed)
    }

    fn configurations(&self) -> Vec<String> {
        vec!["tmpfile".into(), "directory".into()]
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        let (world, config) = placed(dir, options)?;
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(()),
        })
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let (dir, world, config) = case_root(options)?;
        Ok(Subject {
            fs: Arc::new(LocalFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }

    /// A second `LocalFileSystem` on the same directory: what a second agent process opens.
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let root = subject.world.root_display();
        Some(
            local_config(&root, options, second_seed(options))
                .map(|c| Arc::new(LocalFileSystem::new(c)) as Arc<dyn seam::FileSystem>),
        )
    }
}

/// A temporary directory for one case (fresh, or emptied after an earlier case:
/// [`CaseDir::aliased`]), its world, and the local configuration the case asks for.
///
/// The provider is given the case's root through a link, as a user on macOS gives `/tmp/w`
/// (really `/private/tmp/w`): the root is `…/seam-check-…/tmp/case-…/root`, where `tmp` is the
/// run directory's link to its `private` beside it ([`CaseDir::through_link`]). Every path the
/// case asks about is then spelled differently from the real path it leads to, though the root
/// itself is a directory, so messages and display paths must name the path as the caller wrote
/// it, not the key (the real path) — in every case, not only through the case's own links
/// (`DiskWorld::through_link`). The case directory is `0711`, like the run directory, so that
/// an unprivileged child opened to the root can pass; the root is a directory in it, so that
/// `..` from the root is still the case's own.
///
/// [`CaseDir::through_link`]: CaseDir::through_link
/// [`CaseDir::aliased`]: CaseDir::aliased
pub fn case_root(options: &CaseOptions) -> Result<(CaseDir, DiskWorld, LocalConfig), String> {
    let dir = CaseDir::aliased("case-")
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let alias = dir
        .through_link(&dir.root())
        .ok_or("the case directory is not in the run directory")?;
    let alias = alias
        .to_str()
        .ok_or("the case directory is not valid UTF-8")?;
    let world = DiskWorld::through_link(&dir.root(), alias).map_err(|e| e.to_string())?;
    let config = local_config(&world.root_display(), options, options.seed)?;
    Ok((dir, world, config))
}

/// The world over a directory the suite chose, and the local configuration a case asks for on
/// it.
pub fn placed(
    dir: &std::path::Path,
    options: &CaseOptions,
) -> Result<(DiskWorld, LocalConfig), NotPlaced> {
    let world = DiskWorld::new(dir)
        .map_err(|e| NotPlaced::Failed(format!("the directory {}: {e}", dir.display())))?;
    let config =
        local_config(&world.root_display(), options, options.seed).map_err(NotPlaced::Failed)?;
    Ok((world, config))
}

/// The local configuration a case asks for, on `root`, its staging names drawn from `seed`.
pub fn local_config(root: &str, options: &CaseOptions, seed: u64) -> Result<LocalConfig, String> {
    Ok(LocalConfig::new(root)
        .with_durability(match options.durability {
            CaseDurability::Full => Durability::Full,
            CaseDurability::Relaxed => Durability::None,
        })
        .with_diff_basis_max_bytes(SUITE_DIFF_LIMIT)
        .with_seeded_nonces(seed)
        .with_staging(LocalFactory::staging(&options.configuration)?))
}

/// The seed of a second instance's staging names: another process draws other names.
pub fn second_seed(options: &CaseOptions) -> u64 {
    options.seed ^ 0x5EC0_17D0
}
