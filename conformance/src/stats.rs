//! Counts of what a run exercised, so a report can show that a check was reached, not only that
//! it did not fail. Every counter counts something that ran.

use crate::rules::Rule;
use seam::FsErrorCode;
use std::collections::BTreeMap;

/// What ran.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Steps executed (provider operations and world changes).
    pub steps: u64,
    /// Individual checks made (a comparison, a law, a read-back): the number a property reports.
    pub checks: u64,
    /// Provider operations by name.
    pub ops: BTreeMap<String, u64>,
    /// Error codes produced (and expected) by name.
    pub codes: BTreeMap<String, u64>,
    /// World changes applied.
    pub world_applied: u64,
    /// World changes not applicable in the state reached (skipped on both sides).
    pub world_skipped: u64,
    /// Mutations that succeeded.
    pub mutations_committed: u64,
    /// Fresh stats compared with a mutation's returned version.
    pub fresh_stats: u64,
    /// Mutations whose staging was inspected at the staged point.
    pub staging_observed: u64,
    /// Full comparisons of the world with the model.
    pub world_checks: u64,
    /// Reads answered while a mutation was paused at a checkpoint.
    #[serde(default)]
    pub paused_reads_served: u64,
    /// Reads sent while a mutation was paused at a checkpoint and answered only after it went
    /// on (a backend that serves one call at a time).
    #[serde(default)]
    pub paused_reads_unserved: u64,
    /// Reads and stats run beside a mutating lane of a group of steps run together.
    #[serde(default)]
    pub group_reads: u64,
    /// Of those, sent while a mutation of another lane was in flight.
    #[serde(default)]
    pub group_reads_sent_during: u64,
    /// Of those, answered within the mutation they were sent during: served while it was.
    #[serde(default)]
    pub group_reads_served_during: u64,
    /// Outcomes per operation: `ok` or the error code.
    pub outcomes: BTreeMap<String, BTreeMap<String, u64>>,
    /// Steps that exercised each rule, by rule id.
    pub rules: BTreeMap<String, u64>,
}

impl Stats {
    /// Counts one provider operation.
    pub fn op(&mut self, kind: &str) {
        *self.ops.entry(kind.to_string()).or_default() += 1;
    }

    /// Counts one error code.
    pub fn code(&mut self, code: FsErrorCode) {
        *self.codes.entry(code.as_str().to_string()).or_default() += 1;
    }

    /// Counts a check that ran.
    pub fn check(&mut self) {
        self.checks += 1;
    }

    /// Counts `n` checks that ran.
    pub fn checks(&mut self, n: u64) {
        self.checks += n;
    }

    /// Counts a step that exercised `rule`.
    pub fn rule(&mut self, rule: Rule) {
        *self.rules.entry(rule.id().to_string()).or_default() += 1;
    }

    /// How many steps exercised `rule`.
    pub fn rule_count(&self, rule: Rule) -> u64 {
        self.rules.get(rule.id()).copied().unwrap_or(0)
    }

    /// Counts a world change.
    pub fn world(&mut self, applied: bool) {
        if applied {
            self.world_applied += 1;
        } else {
            self.world_skipped += 1;
        }
    }

    /// Counts a mutation's success.
    pub fn op_committed(&mut self, ok: bool) {
        if ok {
            self.mutations_committed += 1;
        }
    }

    /// Adds another run's counts.
    pub fn merge(&mut self, other: &Stats) {
        self.steps += other.steps;
        self.checks += other.checks;
        let add = |mine: &mut BTreeMap<String, u64>, theirs: &BTreeMap<String, u64>| {
            for (k, v) in theirs {
                *mine.entry(k.clone()).or_default() += v;
            }
        };
        add(&mut self.ops, &other.ops);
        add(&mut self.codes, &other.codes);
        add(&mut self.rules, &other.rules);
        self.world_applied += other.world_applied;
        self.world_skipped += other.world_skipped;
        self.mutations_committed += other.mutations_committed;
        self.fresh_stats += other.fresh_stats;
        self.staging_observed += other.staging_observed;
        self.world_checks += other.world_checks;
        self.paused_reads_served += other.paused_reads_served;
        self.paused_reads_unserved += other.paused_reads_unserved;
        self.group_reads += other.group_reads;
        self.group_reads_sent_during += other.group_reads_sent_during;
        self.group_reads_served_during += other.group_reads_served_during;
        for (op, m) in &other.outcomes {
            let mine = self.outcomes.entry(op.clone()).or_default();
            add(mine, m);
        }
    }

    /// Counts the outcome of one operation.
    pub fn outcome(&mut self, op: &str, code: Option<FsErrorCode>) {
        let key = code.map_or("ok", FsErrorCode::as_str);
        *self
            .outcomes
            .entry(op.to_string())
            .or_default()
            .entry(key.to_string())
            .or_default() += 1;
    }
}
