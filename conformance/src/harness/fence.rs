//! The per-call sandbox policy of a mutation step on both sides: the policy the provider is
//! given, the model's verdict, and the rules a verdict exercises.

use super::Harness;
use crate::failure::{Failure, FailureKind};
use crate::rules::Rule;
use crate::step::{Step, render_path};
use seam::SandboxPolicy;
use seam_model::{CallFence, FenceCase, FenceVerdict, Key, Resolved};

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
        // Outside the deployment's workspace (`d`): where a deployment that ignored its own
        // default would act differently.
        if step.sandbox.is_none()
            && verdict.case != FenceCase::Unfenced
            && r.key.0.first().map(String::as_str) != Some(crate::factory::DEPLOYMENT_WORKSPACE)
        {
            self.hit(Rule::FenceDefaultDecides);
        }
        match verdict.case {
            FenceCase::DeniedOutside => self.hit(Rule::FenceOutsideDenied),
            FenceCase::DeniedLeaves => self.hit(Rule::FenceLeavesDenied),
            FenceCase::DeniedNoRoot => self.hit(Rule::FenceNoRootDenied),
            FenceCase::Beneath { case_root: false } => self.hit(Rule::FenceBeneathAllowed),
            _ => {}
        }
    }

    /// After a mutation the model says the fence denies failed: whether it changed anything on
    /// disk outside the writable root of its call (anywhere, when there was none). Such a change
    /// is an escape, and is reported as one, naming what changed.
    pub(super) fn escape(&self, root: Option<&Key>, failure: &Failure) -> Option<Failure> {
        let now = self.world.snapshot().ok()?;
        let outside = |path: &str| match root {
            None => true,
            Some(k) if k.0.is_empty() => false,
            Some(k) => {
                let ws = k.0.join("/");
                !(path == ws || path.starts_with(&format!("{ws}/")))
            }
        };
        let mut changed: Vec<&str> = now
            .iter()
            .filter(|(p, e)| self.before.get(*p) != Some(*e))
            .map(|(p, _)| p.as_str())
            .chain(
                self.before
                    .keys()
                    .filter(|p| !now.contains_key(*p))
                    .map(String::as_str),
            )
            .filter(|p| outside(p))
            .collect();
        if changed.is_empty() {
            return None;
        }
        changed.sort_unstable();
        let ws = match root {
            Some(k) => format!("{{root}}/{}", k.0.join("/")),
            None => "none".into(),
        };
        Some(Failure::new(
            FailureKind::Sandbox,
            format!(
                "an escape: a mutation the fence must deny changed {changed:?} outside its writable root ({ws}); {}",
                failure.message
            ),
        ))
    }
}
