//! Reports: what each property checked and how it ended, which rules of the contract the run
//! reached, what it skipped and why, and the verdict — readable on a terminal, as JSON, and as
//! JUnit XML for CI. A run is a *pass* only when nothing failed **and** the core contract was
//! exercised: every core property ran, every rule that applies to the backend was reached, and
//! every configuration the factory declared ran. Anything less is *incomplete*, never a pass.

use crate::failure::FailureKind;
use crate::rules::Rule;
use crate::stats::Stats;
use crate::timing::Slowness;
use crate::trace::Trace;
use seam::{Capabilities, FsErrorCode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    /// The property did not run (left out by a filter, or unable to run here), with the reason.
    NotRun(String),
    /// The property ran and found that what it checks cannot happen through this backend (a
    /// fact about the backend, with the reason): not a pass of it, and not a gap in the run.
    DoesNotApply(String),
}

/// One property's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyResult {
    /// Stable name (`sequences`, `staging-private`, ...).
    pub name: String,
    /// What it checks, in a sentence.
    pub summary: String,
    /// Whether a pass needs it.
    pub core: bool,
    /// How it ended.
    pub status: Status,
    /// How many individual checks ran.
    pub checks: u64,
    /// What failed, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Why it failed, as a type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
    /// A replayable counterexample, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
    /// The length of the counterexample before shrinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk_from: Option<usize>,
    /// Seconds spent.
    pub seconds: f64,
    /// Calls that took longer than the slow threshold and returned: a warning, not a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow: Option<Slowness>,
    /// What the property observed, where its count of checks alone does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Something a run did not exercise, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// What was not exercised.
    pub what: String,
    /// Why.
    pub reason: String,
}

/// How one rule of the contract fared in the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Steps exercised it (and agreed).
    Reached,
    /// It applies to this backend and no step exercised it.
    Unreached,
    /// It needs a capability the backend does not claim.
    NotApplicable,
}

/// One rule's line in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleLine {
    /// The rule's id.
    pub id: String,
    /// What it says.
    pub text: String,
    /// The capability it needs, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
    /// Steps that exercised it.
    pub steps: u64,
    /// How it fared.
    pub coverage: Coverage,
}

/// The verdict of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", content = "reasons", rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing failed and the core contract was exercised.
    Pass,
    /// A check failed.
    Fail,
    /// Nothing failed, but the run did not exercise what a pass needs (the reasons).
    Incomplete(Vec<String>),
}

/// The whole run against one provider.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The provider.
    pub provider: String,
    /// What it claims.
    pub capabilities: Capabilities,
    /// The run's seed (`--seed` reproduces the run).
    pub seed: u64,
    /// Generated sequences run.
    pub cases: u64,
    /// Of those, at full durability.
    pub full_durability_cases: u64,
    /// The longest sequence generated.
    pub max_steps: usize,
    /// Generated cases per factory configuration.
    pub configurations: BTreeMap<String, u64>,
    /// Each property.
    pub properties: Vec<PropertyResult>,
    /// What the run did not exercise, and why.
    pub skipped: Vec<Skipped>,
    /// Every rule of the contract and how the run fared on it.
    pub rules: Vec<RuleLine>,
    /// Counts over everything that ran.
    pub stats: Stats,
    /// The verdict.
    pub verdict: Verdict,
    /// Wall time of the run.
    pub seconds: f64,
}

/// What decides whether a rule applies to a run.
pub(crate) struct RuleContext<'a> {
    /// The backend's claims.
    pub caps: &'a Capabilities,
    /// Whether the run had an agent surface.
    pub agent: bool,
    /// Whether contents around the backend's diff-basis limit were generated.
    pub diff_limit_generated: bool,
    /// Rules a property found not to apply to this backend, with the reason.
    pub found_not_applying: &'a BTreeMap<Rule, String>,
}

/// The rule lines of a run.
pub(crate) fn rule_lines(stats: &Stats, a: &RuleContext<'_>) -> Vec<RuleLine> {
    Rule::ALL
        .iter()
        .map(|&r| {
            let steps = stats.rule_count(r);
            let found = a.found_not_applying.get(&r);
            let applies = r.needs().is_none_or(|c| a.caps.has(c))
                && r.also_needs().is_none_or(|c| a.caps.has(c))
                && (a.agent || !r.is_agent())
                && (a.diff_limit_generated || !r.needs_small_diff_limit())
                && found.is_none();
            RuleLine {
                id: r.id().to_string(),
                text: r.text().to_string(),
                needs: if let Some(why) = found {
                    Some(why.clone())
                } else if r.is_agent() {
                    Some("an agent surface".to_string())
                } else if r.needs_small_diff_limit() {
                    Some("a diff-basis limit of at most 1 MiB".to_string())
                } else {
                    match (r.needs(), r.also_needs()) {
                        (Some(c), Some(d)) => Some(format!("{} and {}", c.name(), d.name())),
                        (c, _) => c.map(|c| c.name().to_string()),
                    }
                },
                steps,
                coverage: if !applies {
                    Coverage::NotApplicable
                } else if steps > 0 {
                    Coverage::Reached
                } else {
                    Coverage::Unreached
                },
            }
        })
        .collect()
}

impl Report {
    /// Whether the run is a pass (nothing failed and the core contract was exercised).
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// Whether a property failed.
    pub fn failed(&self) -> bool {
        self.verdict == Verdict::Fail
    }

    /// The rules that applied and were never reached.
    pub fn unreached(&self) -> Vec<&RuleLine> {
        self.rules
            .iter()
            .filter(|r| r.coverage == Coverage::Unreached)
            .collect()
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
        let configs: Vec<String> = self
            .configurations
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let breadth = if self.cases == 0 {
            // Only targeted properties (or `policy`, with cases of its own) ran.
            "sequences not run".to_string()
        } else {
            format!(
                "{} sequences (up to {} steps, {} at full durability; configurations: {})",
                self.cases,
                self.max_steps,
                self.full_durability_cases,
                if configs.is_empty() {
                    "-".to_string()
                } else {
                    configs.join(", ")
                }
            )
        };
        let _ = writeln!(
            s,
            "seam check — provider {} — seed {} — {breadth} — {:.1}s",
            self.provider, self.seed, self.seconds
        );
        let claimed: Vec<&str> = self
            .capabilities
            .claimed()
            .iter()
            .map(|c| c.name())
            .collect();
        let _ = writeln!(
            s,
            "claims: {}",
            if claimed.is_empty() {
                "none (core contract only)".to_string()
            } else {
                claimed.join(", ")
            }
        );
        let _ = writeln!(s);
        let width = self
            .properties
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(8);
        for p in &self.properties {
            let line = match &p.status {
                Status::Passed => format!("{:<10} {:>7} checks  {}", "passed", p.checks, p.summary),
                Status::Failed => format!(
                    "{:<10} {:>7} checks  [{}] {}",
                    "FAILED",
                    p.checks,
                    p.failure_kind.map_or("?", FailureKind::name),
                    p.summary
                ),
                Status::NotClaimed(why) => format!("not claimed: {why}"),
                Status::NotRun(why) => format!("NOT RUN: {why}"),
                Status::DoesNotApply(why) => format!("does not apply: {why}"),
            };
            let _ = writeln!(s, "  {:<width$}  {line}", p.name, width = width);
            if let Some(d) = &p.detail {
                let _ = writeln!(s, "  {:<width$}    {d}", "", width = width);
            }
        }
        let slow: Vec<&PropertyResult> = self
            .properties
            .iter()
            .filter(|p| p.slow.is_some())
            .collect();
        if !slow.is_empty() {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "slow calls (warnings, not failures: a loaded machine or a slow backend):"
            );
            for p in slow {
                if let Some(w) = &p.slow {
                    let _ = writeln!(s, "  {}: {}", p.name, w.line());
                }
            }
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(s);
            let _ = writeln!(s, "not generated for this backend:");
            for k in &self.skipped {
                let _ = writeln!(s, "  - {}: {}", k.what, k.reason);
            }
        }
        let reached = self
            .rules
            .iter()
            .filter(|r| r.coverage == Coverage::Reached)
            .count();
        let applicable = self
            .rules
            .iter()
            .filter(|r| r.coverage != Coverage::NotApplicable)
            .count();
        let mut not_applying: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &self.rules {
            if r.coverage == Coverage::NotApplicable {
                *not_applying
                    .entry(r.needs.as_deref().unwrap_or("?"))
                    .or_default() += 1;
            }
        }
        let needs: Vec<String> = not_applying
            .iter()
            .map(|(need, n)| format!("{n} need {need}"))
            .collect();
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "rules: {reached} of {applicable} that apply were reached ({} of {} do not apply{}{})",
            self.rules.len() - applicable,
            self.rules.len(),
            if needs.is_empty() { "" } else { ": " },
            needs.join(", ")
        );
        for r in self.unreached() {
            let _ = writeln!(s, "  UNREACHED {} — {}", r.id, r.text);
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "steps executed: {} ({} checks; {} world changes applied, {} not applicable; {} mutations committed; {} fresh-stat checks; {} staging inspections; {} world read-backs)",
            self.stats.steps,
            self.stats.checks,
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
                "FAILED {} [{}]: {}",
                p.name,
                p.failure_kind.map_or("?", FailureKind::name),
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
        match &self.verdict {
            Verdict::Pass => {
                let _ = writeln!(s, "RESULT: pass");
            }
            Verdict::Fail => {
                let _ = writeln!(s, "RESULT: FAIL");
            }
            Verdict::Incomplete(reasons) => {
                let _ = writeln!(s, "RESULT: INCOMPLETE (not a pass)");
                for r in reasons {
                    let _ = writeln!(s, "  - {r}");
                }
            }
        }
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

    fn junit_cases(&self) -> Vec<JunitCase> {
        let mut cases: Vec<JunitCase> = self
            .properties
            .iter()
            .map(|p| {
                let status = match &p.status {
                    Status::Passed => JunitStatus::Pass,
                    Status::NotClaimed(why) => JunitStatus::Skipped(format!("not claimed: {why}")),
                    Status::NotRun(why) => JunitStatus::Skipped(format!("not run: {why}")),
                    Status::DoesNotApply(why) => {
                        JunitStatus::Skipped(format!("does not apply: {why}"))
                    }
                    Status::Failed => JunitStatus::Failure(
                        format!(
                            "[{}] {}",
                            p.failure_kind.map_or("?", FailureKind::name),
                            p.failure.as_deref().unwrap_or("")
                        ),
                        p.trace.as_ref().map(Trace::to_json).unwrap_or_default(),
                    ),
                };
                JunitCase {
                    name: p.name.clone(),
                    seconds: p.seconds,
                    status,
                    out: {
                        let lines: Vec<String> = p
                            .detail
                            .iter()
                            .cloned()
                            .chain(p.slow.as_ref().map(|w| format!("slow: {}", w.line())))
                            .collect();
                        (!lines.is_empty()).then(|| lines.join("\n"))
                    },
                }
            })
            .collect();
        for k in &self.skipped {
            cases.push(JunitCase {
                name: format!("generated: {}", k.what),
                seconds: 0.0,
                status: JunitStatus::Skipped(k.reason.clone()),
                out: None,
            });
        }
        let coverage = match &self.verdict {
            Verdict::Incomplete(reasons) => {
                JunitStatus::Failure(format!("incomplete: {}", reasons.join("; ")), String::new())
            }
            _ => JunitStatus::Pass,
        };
        // The rules that were not reached, each with why: a CI page shows them with the case.
        let rules: Vec<String> = self
            .rules
            .iter()
            .filter_map(|r| match r.coverage {
                Coverage::Reached => None,
                Coverage::Unreached => Some(format!("UNREACHED {} — {}", r.id, r.text)),
                Coverage::NotApplicable => Some(format!(
                    "does not apply: {} (needs {})",
                    r.id,
                    r.needs.as_deref().unwrap_or("?")
                )),
            })
            .collect();
        cases.push(JunitCase {
            name: "coverage".into(),
            seconds: 0.0,
            status: coverage,
            out: (!rules.is_empty()).then(|| rules.join("\n")),
        });
        cases
    }

    fn junit_suite(&self, s: &mut String) {
        let cases = self.junit_cases();
        let failures = cases
            .iter()
            .filter(|c| matches!(c.status, JunitStatus::Failure(..)))
            .count();
        let skipped = cases
            .iter()
            .filter(|c| matches!(c.status, JunitStatus::Skipped(_)))
            .count();
        let _ = writeln!(
            s,
            "  <testsuite name=\"seam-conformance.{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">",
            xml(&self.provider),
            cases.len(),
            self.seconds
        );
        let _ = writeln!(
            s,
            "    <properties><property name=\"seed\" value=\"{}\"/></properties>",
            self.seed
        );
        for case in &cases {
            let _ = write!(
                s,
                "    <testcase name=\"{}\" classname=\"seam.{}\" time=\"{:.3}\"",
                xml(&case.name),
                xml(&self.provider),
                case.seconds,
            );
            let out = case
                .out
                .as_ref()
                .map(|o| format!("\n      <system-out>{}</system-out>", xml(o)))
                .unwrap_or_default();
            match &case.status {
                JunitStatus::Pass if out.is_empty() => {
                    let _ = writeln!(s, "/>");
                }
                JunitStatus::Pass => {
                    let _ = writeln!(s, ">{out}\n    </testcase>");
                }
                JunitStatus::Skipped(why) => {
                    let _ = writeln!(
                        s,
                        ">\n      <skipped message=\"{}\"/>{out}\n    </testcase>",
                        xml(why)
                    );
                }
                JunitStatus::Failure(message, body) => {
                    let _ = writeln!(
                        s,
                        ">\n      <failure message=\"{}\">{}</failure>{out}\n    </testcase>",
                        xml(message),
                        xml(body)
                    );
                }
            }
        }
        let _ = writeln!(s, "  </testsuite>");
    }
}

struct JunitCase {
    name: String,
    seconds: f64,
    status: JunitStatus,
    /// What the case printed (slow-call warnings).
    out: Option<String>,
}

enum JunitStatus {
    Pass,
    Skipped(String),
    Failure(String, String),
}

/// JUnit XML for several reports: one test suite per provider, one test case per property, one
/// per kind of step not generated (skipped, with the reason), and a `coverage` case that fails
/// when the run was incomplete.
pub fn junit_document(reports: &[Report]) -> String {
    let mut body = String::new();
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    for r in reports {
        let cases = r.junit_cases();
        tests += cases.len();
        failures += cases
            .iter()
            .filter(|c| matches!(c.status, JunitStatus::Failure(..)))
            .count();
        skipped += cases
            .iter()
            .filter(|c| matches!(c.status, JunitStatus::Skipped(_)))
            .count();
        r.junit_suite(&mut body);
    }
    let time: f64 = reports.iter().map(|r| r.seconds).sum();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"seam-conformance\" tests=\"{tests}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{time:.3}\">"
    );
    s.push_str(&body);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{GenConfig, skipped_steps};

    /// A backend whose diff-basis limit is too large to write around in a test: the three rules
    /// do not apply, the report says why, and a small limit makes them apply again.
    #[test]
    fn a_large_diff_basis_limit_is_a_stated_gap_not_an_unreachable_rule() {
        let caps = Capabilities::none();
        let stats = Stats::default();
        for (limit, applies) in [(10 * 1024 * 1024, false), (1024, true)] {
            let lines = rule_lines(
                &stats,
                &RuleContext {
                    caps: &caps,
                    agent: false,
                    diff_limit_generated: crate::generate::diff_limit_generated(limit),
                    found_not_applying: &BTreeMap::new(),
                },
            );
            let diff: Vec<&RuleLine> = lines
                .iter()
                .filter(|l| l.id.starts_with("write.diff-basis-"))
                .collect();
            assert_eq!(diff.len(), 3);
            for l in diff {
                assert_eq!(l.coverage == Coverage::NotApplicable, !applies, "{}", l.id);
            }
            let skipped = skipped_steps(&GenConfig {
                caps,
                fifos: true,
                restore_mtime: true,
                modes: true,
                diff_limit: limit,
                policies: crate::generate::Policies::None,
            });
            assert_eq!(
                skipped
                    .iter()
                    .any(|(what, why)| what.contains("diff-basis limit")
                        && why.contains(&limit.to_string())),
                !applies,
                "{skipped:?}"
            );
        }
    }
}
