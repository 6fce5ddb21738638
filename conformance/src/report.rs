//! Reports: what each property checked and how it ended, readable on a terminal, as JSON, and as
//! JUnit XML for CI.

use crate::stats::Stats;
use crate::trace::Trace;
use seam::{Capabilities, FsErrorCode};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// How a property ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Status {
    /// Every check held.
    Passed,
    /// A check failed.
    Failed,
    /// The backend does not claim what this property needs; nothing was checked.
    NotClaimed(String),
}

/// One property's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyResult {
    /// Stable name (`sequences`, `staging-private`, ...).
    pub name: String,
    /// What it checks, in a sentence.
    pub summary: String,
    /// How it ended.
    pub status: Status,
    /// How many individual checks ran.
    pub checks: u64,
    /// What failed, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// A replayable counterexample, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
    /// The length of the counterexample before shrinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<usize>,
    /// Seconds spent.
    pub seconds: f64,
}

impl PropertyResult {
    /// A passed property.
    pub fn passed(name: &str, summary: &str, checks: u64) -> Self {
        Self {
            name: name.into(),
            summary: summary.into(),
            status: Status::Passed,
            checks,
            failure: None,
            trace: None,
            shrunk_from: None,
            seconds: 0.0,
        }
    }

    /// A failed property.
    pub fn failed(name: &str, summary: &str, checks: u64, failure: String) -> Self {
        Self {
            status: Status::Failed,
            failure: Some(failure),
            ..Self::passed(name, summary, checks)
        }
    }

    /// A property the backend does not claim.
    pub fn not_claimed(name: &str, summary: &str, reason: &str) -> Self {
        Self {
            status: Status::NotClaimed(reason.into()),
            ..Self::passed(name, summary, 0)
        }
    }
}

/// The whole run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The provider.
    pub provider: String,
    /// What it claims.
    pub capabilities: Capabilities,
    /// The run's seed.
    pub seed: u64,
    /// Generated sequences run.
    pub cases: u64,
    /// Of those, at full durability.
    pub full_durability_cases: u64,
    /// The longest sequence generated.
    pub max_steps: usize,
    /// Each property.
    pub properties: Vec<PropertyResult>,
    /// Counts over everything that ran.
    pub stats: Stats,
    /// Wall time of the run.
    pub seconds: f64,
}

impl Report {
    /// Whether every property passed or was not claimed.
    pub fn passed(&self) -> bool {
        self.properties.iter().all(|p| p.status != Status::Failed)
    }

    /// The error codes the run never produced (out of all thirteen).
    pub fn codes_not_exercised(&self) -> Vec<FsErrorCode> {
        FsErrorCode::ALL
            .into_iter()
            .filter(|c| !self.stats.codes.contains_key(c.as_str()))
            .collect()
    }

    /// The readable report.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "seam check — provider {} — seed {} — {} sequences (up to {} steps, {} at full durability) — {:.1}s",
            self.provider,
            self.seed,
            self.cases,
            self.max_steps,
            self.full_durability_cases,
            self.seconds
        );
        let _ = writeln!(s);
        let width = self
            .properties
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(8);
        for p in &self.properties {
            let status = match &p.status {
                Status::Passed => "passed".to_string(),
                Status::Failed => "FAILED".to_string(),
                Status::NotClaimed(why) => format!("not claimed ({why})"),
            };
            let _ = writeln!(
                s,
                "  {:<width$}  {:<12} {:>7} checks  {}",
                p.name,
                status,
                p.checks,
                p.summary,
                width = width
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "steps executed: {} ({} world changes applied, {} not applicable; {} mutations committed; {} fresh-stat checks; {} staging inspections; {} world read-backs)",
            self.stats.steps,
            self.stats.world_applied,
            self.stats.world_skipped,
            self.stats.mutations_committed,
            self.stats.fresh_stats,
            self.stats.staging_observed,
            self.stats.world_checks
        );
        let ops: Vec<String> = self
            .stats
            .ops
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(s, "operations: {}", ops.join(", "));
        let codes: Vec<String> = FsErrorCode::ALL
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c.as_str(),
                    self.stats.codes.get(c.as_str()).copied().unwrap_or(0)
                )
            })
            .collect();
        let _ = writeln!(s, "error codes: {}", codes.join(", "));
        for p in self
            .properties
            .iter()
            .filter(|p| p.status == Status::Failed)
        {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "FAILED {}: {}",
                p.name,
                p.failure.as_deref().unwrap_or("")
            );
            if let Some(t) = &p.trace {
                let from = p
                    .shrunk_from
                    .map(|n| format!(" (shrunk from {n})"))
                    .unwrap_or_default();
                let _ = writeln!(s, "  minimal trace, {} steps{from}:", t.steps.len());
                for (i, step) in t.steps.iter().enumerate() {
                    let _ = writeln!(s, "    {i:>2}. {}", crate::step::describe(step));
                }
            }
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{}",
            if self.passed() {
                "RESULT: pass"
            } else {
                "RESULT: FAIL"
            }
        );
        s
    }

    /// JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// JUnit XML for this report alone.
    pub fn to_junit(&self) -> String {
        junit_document(std::slice::from_ref(self))
    }

    fn junit_suite(&self, s: &mut String) {
        let failures = self
            .properties
            .iter()
            .filter(|p| p.status == Status::Failed)
            .count();
        let skipped = self
            .properties
            .iter()
            .filter(|p| matches!(p.status, Status::NotClaimed(_)))
            .count();
        let _ = writeln!(
            s,
            "  <testsuite name=\"seam-conformance.{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">",
            xml(&self.provider),
            self.properties.len(),
            self.seconds
        );
        for p in &self.properties {
            let _ = write!(
                s,
                "    <testcase name=\"{}\" classname=\"seam.{}\" time=\"{:.3}\"",
                xml(&p.name),
                xml(&self.provider),
                p.seconds
            );
            match &p.status {
                Status::Passed => {
                    let _ = writeln!(s, "/>");
                }
                Status::NotClaimed(why) => {
                    let _ = writeln!(
                        s,
                        ">\n      <skipped message=\"not claimed: {}\"/>\n    </testcase>",
                        xml(why)
                    );
                }
                Status::Failed => {
                    let body = p.trace.as_ref().map(Trace::to_json).unwrap_or_default();
                    let _ = writeln!(
                        s,
                        ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>",
                        xml(p.failure.as_deref().unwrap_or("")),
                        xml(&body)
                    );
                }
            }
        }
        let _ = writeln!(s, "  </testsuite>");
    }
}

/// JUnit XML for several reports: one test suite per provider, one test case per property;
/// a property that is not claimed is `skipped`.
pub fn junit_document(reports: &[Report]) -> String {
    let tests: usize = reports.iter().map(|r| r.properties.len()).sum();
    let count = |f: &dyn Fn(&Status) -> bool| -> usize {
        reports
            .iter()
            .flat_map(|r| &r.properties)
            .filter(|p| f(&p.status))
            .count()
    };
    let failures = count(&|s| *s == Status::Failed);
    let skipped = count(&|s| matches!(s, Status::NotClaimed(_)));
    let time: f64 = reports.iter().map(|r| r.seconds).sum();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"seam-conformance\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{time:.3}\">"
    );
    for r in reports {
        r.junit_suite(&mut s);
    }
    let _ = writeln!(s, "</testsuites>");
    s
}

fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                // XML 1.0 cannot carry these even as references.
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
