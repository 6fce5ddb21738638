//! The sandbox provider's test world: [`SandboxFactory`] deploys the sandbox in one mode over
//! a case directory of the local test world, its default workspace the suite's `d` in it
//! ([`seam_conformance::DEPLOYMENT_WORKSPACE`]) and no other writable root, so that the rest
//! of the case is the deployment's outside.
//!
//! It depends on the suite and on the provider; the provider never depends on it
//! (ARCHITECTURE.md, rule 5).

use seam::SandboxMode;
use seam_conformance::{
    CaseOptions, Factory, Killable, NotKillable, NotPlaced, SUITE_DIFF_LIMIT, Subject, World,
};
use seam_local::LocalConfig;
use seam_local_testkit::{
    LocalFactory, case_root, killable_shipped, local_config, placed, second_seed,
};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::sync::Arc;

/// The sandbox configuration of `mode` on a case root (its reads confined when the case asks).
pub fn sandbox_config(
    mode: SandboxMode,
    root: &str,
    local: LocalConfig,
    options: &CaseOptions,
) -> SandboxConfig {
    let workspace = format!("{root}/{}", seam_conformance::DEPLOYMENT_WORKSPACE);
    SandboxConfig::new(workspace, mode)
        .with_local(local)
        .with_temp_roots(Vec::new())
        .with_confined_reads(options.confine_reads)
}

/// The sandbox provider in one mode, its default workspace the suite's `d` in the case's
/// directory ([`seam_conformance::DEPLOYMENT_WORKSPACE`]; relative paths still resolve against
/// the case's directory) and no other writable root, so that the rest of the case is the
/// deployment's outside.
#[derive(Clone, Copy, Debug)]
pub struct SandboxFactory(pub SandboxMode);

impl Factory for SandboxFactory {
    fn name(&self) -> String {
        format!("sandbox:{}", self.0.as_str())
    }

    /// Read in the suite's own process: no window of chunks in flight, no credit to keep.
    fn streams_through_a_window(&self) -> bool {
        false
    }

    /// The sandbox in `seam serve` on stdio, in a child process the suite may kill.
    fn killable(&self, options: &CaseOptions) -> Result<Killable, NotKillable> {
        killable_shipped(&self.name(), options)
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        seam_local_testkit::recover_shipped(options, killed)
    }

    fn configurations(&self) -> Vec<String> {
        LocalFactory.configurations()
    }

    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        let (world, local) = placed(dir, options)?;
        let config = sandbox_config(self.0, &world.root_display(), local, options);
        Ok(Subject {
            fs: Arc::new(SandboxFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(()),
        })
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let (dir, world, local) = case_root(options)?;
        let config = sandbox_config(self.0, &world.root_display(), local, options);
        Ok(Subject {
            fs: Arc::new(SandboxFileSystem::new(config)),
            world: Arc::new(world),
            diff_basis_max_bytes: SUITE_DIFF_LIMIT,
            keep_alive: Box::new(dir),
        })
    }

    /// A second sandboxed provider on the same directory, deployed the same way.
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let root = subject.world.root_display();
        Some(
            local_config(&root, options, second_seed(options)).map(|local| {
                Arc::new(SandboxFileSystem::new(sandbox_config(
                    self.0, &root, local, options,
                ))) as Arc<dyn seam::FileSystem>
            }),
        )
    }
}
