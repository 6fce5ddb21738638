//! A factory of broken subjects: any factory's subjects, wrapped in one [`crate::Fault`].

use crate::faulty::Faulty;
use crate::{Fault, Hangs};
use seam_conformance::{CaseOptions, Factory, Subject};
use std::sync::Arc;

/// Makes `inner`'s subjects, broken by `fault`.
pub struct FaultyFactory {
    inner: Arc<dyn Factory>,
    fault: Fault,
    hangs: Arc<Hangs>,
}

impl FaultyFactory {
    /// `inner`, broken by `fault`.
    pub fn new(inner: Arc<dyn Factory>, fault: Fault) -> Self {
        Self {
            inner,
            fault,
            hangs: Arc::default(),
        }
    }

    /// Ends the hangs its subjects planted ([`Fault::HangsInStat`], [`Fault::HangsInStream`]),
    /// those under way and those to come: once the run has its verdict, the threads the suite
    /// gave up on finish their cases, and the cases' directories go with them.
    pub fn release_hangs(&self) {
        self.hangs.release();
    }
}

impl Factory for FaultyFactory {
    fn name(&self) -> String {
        format!("{}+{}", self.inner.name(), self.fault.name())
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
        let subject = self.inner.make(options)?;
        Ok(Subject {
            fs: Arc::new(Faulty::new(
                subject.fs,
                subject.world.clone(),
                self.fault,
                subject.diff_basis_max_bytes,
                self.hangs.clone(),
            )),
            world: subject.world,
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
            keep_alive: subject.keep_alive,
        })
    }

    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        // The subject's own fs is already broken; the second instance is the inner factory's,
        // broken the same way over the same world.
        let opened = self.inner.reopen(options, subject)?;
        Some(opened.map(|fs| {
            Arc::new(Faulty::new(
                fs,
                subject.world.clone(),
                self.fault,
                subject.diff_basis_max_bytes,
                self.hangs.clone(),
            )) as Arc<dyn seam::FileSystem>
        }))
    }
}
