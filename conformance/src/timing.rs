//! Slow is not hung. A verdict is a fact about the backend, so the clock must never decide one
//! by accident: on a busy CI machine a durable 1 MiB write can take seconds, and an adapter
//! process can take half a second to start. The suite therefore keeps two thresholds apart:
//!
//! * a call that takes longer than [`Timing::slow_after`] and returns is **slow**: it is counted
//!   and the slowest few are shown in the report with the load average when they finished — a
//!   warning, never a failure;
//! * a call that has not returned within its **hang limit** is a hang, and fails its property
//!   naming the call. The limit is generous ([`Timing::hang_after`], 30 s by default) and grows
//!   with what the run measured: it is never less than [`Timing::hang_scale`] times the slowest
//!   call of the same operation that returned so far, so a backend that is slow everywhere is
//!   given the time it showed it needs. Making a subject (starting an adapter process, a
//!   server's `world/case`) has its own budget, [`Timing::start_after`].
//!
//! A hang message names the knob that changes the limit and says whether the machine was loaded
//! when the call was given up.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// How long calls may take. `seam check` sets it from `--slow-call`, `--call-timeout` and
/// `--start-timeout`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// A call that takes longer than this (and returns) is reported as slow: a warning, not a
    /// failure. Default 1 s.
    pub slow_after: Duration,
    /// The least time a provider or world call may take before it is a hang. Default 30 s.
    pub hang_after: Duration,
    /// An operation's hang limit is at least this many times the slowest call of the same
    /// operation that returned so far in the run. Default 10.
    pub hang_scale: u32,
    /// How long making a subject (or a second instance) may take before it is a hang: starting
    /// an adapter process, connecting, a server's `world/case`. Default 60 s.
    pub start_after: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            slow_after: Duration::from_secs(1),
            hang_after: Duration::from_secs(30),
            hang_scale: 10,
            start_after: Duration::from_secs(60),
        }
    }
}

/// A [`Timing`] that cannot work.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TimingError {
    /// A threshold is zero.
    #[error("{0} must be more than zero")]
    Zero(&'static str),
    /// A call would be a hang before it could be slow.
    #[error("the slow threshold ({slow:.1}s) must be below the hang limit ({hang:.1}s)")]
    SlowNotBelowHang {
        /// The slow threshold, seconds.
        slow: f64,
        /// The hang limit, seconds.
        hang: f64,
    },
}

impl Timing {
    /// Refuses thresholds that cannot work.
    pub fn validate(&self) -> Result<(), TimingError> {
        if self.slow_after.is_zero() {
            return Err(TimingError::Zero("the slow threshold"));
        }
        if self.hang_after.is_zero() {
            return Err(TimingError::Zero("the hang limit"));
        }
        if self.start_after.is_zero() {
            return Err(TimingError::Zero("the start budget"));
        }
        if self.hang_scale == 0 {
            return Err(TimingError::Zero("the hang scale"));
        }
        if self.slow_after >= self.hang_after {
            return Err(TimingError::SlowNotBelowHang {
                slow: self.slow_after.as_secs_f64(),
                hang: self.hang_after.as_secs_f64(),
            });
        }
        Ok(())
    }
}

/// The machine's load when something happened: the one-minute load average and the number of
/// CPUs this process may use. Read from `/proc/loadavg`; `None` where there is none.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// The one-minute load average.
    pub average: f64,
    /// CPUs available to this process.
    pub cpus: u32,
}

impl Load {
    /// The load now, where the platform tells it.
    pub fn now() -> Option<Load> {
        let text = std::fs::read_to_string("/proc/loadavg").ok()?;
        let average = text.split_whitespace().next()?.parse::<f64>().ok()?;
        let cpus = std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
            .unwrap_or(1);
        Some(Load { average, cpus })
    }

    /// Whether more was runnable than there are CPUs.
    pub fn loaded(&self) -> bool {
        self.average > f64::from(self.cpus)
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "load average {:.1} on {} CPU{}{}",
            self.average,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            if self.loaded() {
                ": the machine was loaded"
            } else {
                ""
            }
        )
    }
}

/// What kind of thing a watched call is, for its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CallKind {
    /// Making a subject or a second instance: [`Timing::start_after`].
    Start,
    /// A provider or world operation, by name (`stat`, `world snapshot`): [`Timing::hang_after`],
    /// scaled by the slowest call of the same name.
    Op(&'static str),
}

impl CallKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            CallKind::Start => "factory make",
            CallKind::Op(op) => op,
        }
    }
}

/// A call that was given up: it had not returned within its limit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hang {
    /// The call, with its arguments (`stat "/…/a"`).
    pub what: String,
    /// The limit it was given.
    pub limit: Duration,
    /// Whether the limit was the start budget (making a subject).
    pub start: bool,
    /// The load when it was given up.
    pub load: Option<Load>,
    /// Whether the limit was lowered because a hang was being shrunk (a candidate only needs
    /// to show it still hangs; the trace reported is confirmed at the full limit).
    pub lowered: bool,
}

impl Hang {
    /// The sentence a report gives.
    pub fn message(&self) -> String {
        let knob = if self.start {
            "the start budget: --start-timeout, Timing::start_after"
        } else if self.lowered {
            "a limit lowered while shrinking a hang; the trace reported is confirmed at the full limit"
        } else {
            "the hang limit: --call-timeout, Timing::hang_after, or ten times the slowest call of the same operation"
        };
        let load = self
            .load
            .map_or_else(|| "load unknown".to_string(), |l| l.to_string());
        format!(
            "`{}` did not return within {:.1}s ({knob}; {load})",
            self.what,
            self.limit.as_secs_f64()
        )
    }
}

/// One slow call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlowCall {
    /// The call, with its arguments.
    pub what: String,
    /// How long it took.
    pub seconds: f64,
    /// The load when it returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
}

/// The slow calls of one property: how many, and the slowest few. A warning, never a failure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Slowness {
    /// The threshold, seconds.
    pub slow_after: f64,
    /// Calls over it.
    pub count: u64,
    /// The slowest of them, slowest first (at most [`Slowness::KEPT`]).
    pub slowest: Vec<SlowCall>,
}

impl Slowness {
    /// How many slow calls a report names.
    pub const KEPT: usize = 3;

    pub(crate) fn record(&mut self, call: SlowCall) {
        self.count += 1;
        let at = self
            .slowest
            .iter()
            .position(|c| c.seconds < call.seconds)
            .unwrap_or(self.slowest.len());
        if at < Self::KEPT {
            self.slowest.insert(at, call);
            self.slowest.truncate(Self::KEPT);
        }
    }

    /// The warning line.
    pub fn line(&self) -> String {
        let slowest: Vec<String> = self
            .slowest
            .iter()
            .map(|c| {
                format!(
                    "`{}` {:.2}s{}",
                    c.what,
                    c.seconds,
                    c.load.map(|l| format!(" ({l})")).unwrap_or_default()
                )
            })
            .collect();
        format!(
            "{} call{} took over {:.1}s and returned (slow, not failures); slowest: {}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            self.slow_after,
            slowest.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_that_cannot_work_are_refused() {
        assert!(Timing::default().validate().is_ok());
        let t = Timing {
            slow_after: Duration::from_secs(30),
            ..Timing::default()
        };
        assert!(matches!(
            t.validate(),
            Err(TimingError::SlowNotBelowHang { .. })
        ));
        let t = Timing {
            hang_scale: 0,
            ..Timing::default()
        };
        assert_eq!(t.validate(), Err(TimingError::Zero("the hang scale")));
    }

    #[test]
    fn only_the_slowest_few_are_kept_slowest_first() {
        let mut s = Slowness {
            slow_after: 1.0,
            ..Slowness::default()
        };
        for (i, secs) in [1.5, 4.0, 2.0, 9.0, 1.1].into_iter().enumerate() {
            s.record(SlowCall {
                what: format!("call {i}"),
                seconds: secs,
                load: None,
            });
        }
        assert_eq!(s.count, 5);
        let kept: Vec<f64> = s.slowest.iter().map(|c| c.seconds).collect();
        assert_eq!(kept, vec![9.0, 4.0, 2.0]);
        assert!(
            s.line().starts_with("5 calls took over 1.0s"),
            "{}",
            s.line()
        );
    }

    #[test]
    fn a_hang_names_its_knob_and_the_load() {
        let h = Hang {
            what: "stat \"/r/a\"".into(),
            limit: Duration::from_secs(30),
            start: false,
            load: Some(Load {
                average: 7.25,
                cpus: 2,
            }),
            lowered: false,
        };
        let m = h.message();
        assert!(m.contains("--call-timeout"), "{m}");
        assert!(
            m.contains("load average 7.2 on 2 CPUs: the machine was loaded"),
            "{m}"
        );
        let start = Hang { start: true, ..h };
        assert!(start.message().contains("--start-timeout"));
    }
}
