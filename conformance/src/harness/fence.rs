//! The per-call sandbox policy of a mutation step on both sides: the policy the provider is
//! given, the model's verdict, and the rules a verdict exercises.

use super::Harness;
use crate::rules::Rule;
use crate::step::{Step, render_path};
use seam::SandboxPolicy;
use seam_model::{CallFence, FenceCase, FenceVerdict, Resolved};

impl Harness {
    /// The policy a step's mutation carries, as the provider is given it.
    pub(super) fn policy_of(&self, step: &Step) -> Option<SandboxPolicy> {
        step.sandbox.as_ref().map(|s| SandboxPolicy {
            mode: s.mode,
            workspace_root: render_path(&s.workspace, &self.root),
        })
    }

    /// The policy a step's mutation carries, for the provider, and the model's verdict on it.
    pub(super) fn fence_of(
        &self,
        step: &Step,
        r: &Resolved,
    ) -> (Option<SandboxPolicy>, FenceVerdict) {
        let policy = self.policy_of(step);
        let call = policy.as_ref().map(|p| CallFence {
            mode: p.mode,
            workspace: p.workspace_root.clone(),
        });
        (policy, self.model.fence(r, call.as_ref()))
    }

    /// The rules a fence verdict exercises (counted when the step agrees with the model).
    pub(super) fn classify_fence(&mut self, r: &Resolved, step: &Step, verdict: &FenceVerdict) {
        if step.sandbox.is_some() && verdict.case != FenceCase::Unfenced {
            let default = self.model.fence(r, None);
            if default.case.denied() != verdict.case.denied() {
                self.hit(Rule::FenceCallOverrides);
            }
        }
        match verdict.case {
            FenceCase::DeniedOutside => self.hit(Rule::FenceOutsideDenied),
            FenceCase::DeniedLeaves => self.hit(Rule::FenceLeavesDenied),
            FenceCase::DeniedNoRoot => self.hit(Rule::FenceNoRootDenied),
            FenceCase::Beneath { case_root: false } => self.hit(Rule::FenceBeneathAllowed),
            _ => {}
        }
    }
}
