//! `process_path`, `file_url` and `contains`, against the real path of each target in the world
//! and the model's containment by identity.

use super::{Harness, StepRecord};
use crate::failure::{Check, FailureKind, fail};
use crate::rules::Rule;

impl Harness {
    pub(super) async fn facts_step(
        &mut self,
        path: &str,
        other: &str,
        rec: &mut StepRecord,
    ) -> Check {
        let Some((t, r)) = self.resolve_both(path, rec).await? else {
            return Ok(());
        };
        let Some((to, ro)) = self.resolve_both(other, rec).await? else {
            return Ok(());
        };
        let expected_pp = if r.key.0.is_empty() {
            self.process_root.clone()
        } else {
            format!("{}/{}", self.process_root, Harness::rel(&r.key))
        };
        let pp = self.fs.process_path(&t);
        rec.expected = format!("process_path {expected_pp:?}");
        rec.actual = format!("process_path {pp:?}");
        self.stats.check();
        if pp != expected_pp {
            return Err(fail(
                FailureKind::PathFacts,
                format!(
                    "process_path of {:?} is {pp:?}, the real path is {expected_pp:?}",
                    r.display
                ),
            ));
        }
        self.hit(Rule::FactsProcessPath);
        let url = self.fs.file_url(&t);
        self.stats.check();
        match seam::paths::file_url_path(&url) {
            Some(p) if p == pp => {
                self.hit(Rule::FactsFileUrl);
                if r.key
                    .0
                    .last()
                    .is_some_and(|n| n.contains(['?', '#', '%', ' ']))
                {
                    self.hit(Rule::FactsFileUrlEscapes);
                }
            }
            _ => {
                return Err(fail(
                    FailureKind::PathFacts,
                    format!(
                        "file_url of {:?} is {url:?}, not a file:// URL of {pp:?}",
                        r.display
                    ),
                ));
            }
        }
        for ((a, ra), (b, rb)) in [((&t, &r), (&to, &ro)), ((&to, &ro), (&t, &r))] {
            let want = self.model.contains(ra, rb);
            let got = self.fs.contains(a, b);
            self.stats.check();
            if want != got {
                return Err(fail(
                    FailureKind::PathFacts,
                    format!(
                        "contains({:?}, {:?}) is {got}, must be {want}",
                        ra.display, rb.display
                    ),
                ));
            }
            let (ka, kb) = (Harness::rel(&ra.key), Harness::rel(&rb.key));
            if want && ka != kb {
                self.hit(Rule::FactsContains);
                if ra.display != self.model.key_display(&ra.key)
                    || rb.display != self.model.key_display(&rb.key)
                {
                    self.hit(Rule::FactsContainsAlias);
                }
            }
            if !want && !ka.is_empty() && kb.starts_with(&ka) {
                self.hit(Rule::FactsContainsPrefix);
            }
        }
        rec.actual = format!("{} ; file_url {url:?}", rec.actual);
        Ok(())
    }
}
