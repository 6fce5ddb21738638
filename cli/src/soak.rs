//! `seam check --seeds N` and `--for DURATION`: many fresh seeds in one command.
//!
//! A fixed seed is one sample of the contract; a user's CI draws a fresh one on every run, so a
//! departure that only some seeds generate reaches the user first. A soak draws fresh seeds
//! until its count or its time is spent, prints one line per run (and the whole report of a run
//! that failed), and ends with every run that was not a pass and the command that repeats it.

use seam_conformance::{Report, Status, Verdict};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many seeds a run samples: one (the usual check), or many (a soak).
#[derive(Clone, Copy, Debug)]
pub enum Seeds {
    /// One seed: given (`--seed`) or fresh.
    One {
        /// The seed.
        seed: u64,
        /// Whether it was given.
        given: bool,
    },
    /// This many fresh seeds (`--seeds N`).
    Count(u64),
    /// Fresh seeds until this much time is spent (`--for DURATION`); a seed under way finishes.
    For(Duration),
}

/// A fresh seed: the clock, the process and a counter mixed, so two seeds drawn in one process
/// never repeat.
pub fn fresh_seed() -> u64 {
    static DRAWN: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = DRAWN.fetch_add(1, Ordering::Relaxed);
    let mixed = (nanos ^ (u64::from(std::process::id()) << 32) ^ n.rotate_left(48))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    mixed >> 16
}

/// Parses a duration as `--for` takes it: a whole number of seconds, or a number followed by
/// `s`, `m` or `h` (`900`, `90s`, `15m`, `2h`, `1.5h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" | "sec" | "secs" => 1.0,
        "m" | "min" | "mins" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        _ => {
            return Err(format!(
                "--for {text:?}: the unit must be s, m or h (for example 900s, 15m, 2h)"
            ));
        }
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("--for {text:?}: not a duration (for example 900s, 15m, 2h)"))?;
    let secs = value * scale;
    if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
        return Err(format!("--for {text:?}: must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, (s % 3600) / 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// One run that was not a pass.
struct NotPass {
    seed: u64,
    provider: String,
    what: String,
    command: String,
}

/// A soak in progress.
pub struct Soak {
    plan: Seeds,
    started: Instant,
    seeds: u64,
    runs: u64,
    passed: u64,
    failed: u64,
    incomplete: u64,
    not_passing: Vec<NotPass>,
}

impl Soak {
    /// Starts a soak over `providers`, saying what it will do.
    pub fn new(plan: Seeds, providers: &[String]) -> Self {
        let how = match plan {
            Seeds::Count(n) => format!("{n} fresh seed(s)"),
            Seeds::For(d) => format!("fresh seeds for {}", clock(d)),
            Seeds::One { seed, .. } => format!("seed {seed}"),
        };
        println!(
            "soak: {how} over {} provider(s): {}",
            providers.len(),
            providers.join(", ")
        );
        println!("(one line per run; the whole report of every run that fails)");
        Soak {
            plan,
            started: Instant::now(),
            seeds: 0,
            runs: 0,
            passed: 0,
            failed: 0,
            incomplete: 0,
            not_passing: Vec::new(),
        }
    }

    /// The next seed to run, or `None` when the count or the time is spent.
    pub fn next_seed(&mut self) -> Option<u64> {
        let more = match self.plan {
            Seeds::Count(n) => self.seeds < n,
            Seeds::For(d) => self.seeds == 0 || self.started.elapsed() < d,
            Seeds::One { .. } => self.seeds == 0,
        };
        if !more {
            return None;
        }
        self.seeds += 1;
        Some(fresh_seed())
    }

    /// Records one seed's reports (and the providers that could not start at all).
    pub fn record(
        &mut self,
        seed: u64,
        reports: &[Report],
        not_started: &[(String, String)],
        reproduce: impl Fn(&str) -> String,
    ) {
        for r in reports {
            self.runs += 1;
            let (word, what) = match &r.verdict {
                Verdict::Pass => {
                    self.passed += 1;
                    ("pass", String::new())
                }
                Verdict::Fail => {
                    self.failed += 1;
                    let first = r
                        .properties
                        .iter()
                        .find(|p| p.status == Status::Failed)
                        .map(|p| {
                            let kind = p
                                .failure_kind
                                .map(|k| format!(" [{}]", k.name()))
                                .unwrap_or_default();
                            let msg = p.failure.clone().unwrap_or_default();
                            let msg: String = msg.chars().take(200).collect();
                            format!("{}{kind}: {msg}", p.name)
                        })
                        .unwrap_or_default();
                    ("FAIL", first)
                }
                Verdict::Incomplete(reasons) => {
                    self.incomplete += 1;
                    let first: String = reasons
                        .first()
                        .map(|r| r.chars().take(160).collect())
                        .unwrap_or_default();
                    let more = match reasons.len() {
                        0 | 1 => String::new(),
                        n => format!(" (and {} more reason(s))", n - 1),
                    };
                    ("INCOMPLETE", format!("{first}{more}"))
                }
            };
            println!(
                "seed {seed:<16} {:<28} {word:<10} {:>8}{}",
                r.provider,
                clock(Duration::from_secs_f64(r.seconds)),
                if what.is_empty() {
                    String::new()
                } else {
                    format!("  {what}")
                }
            );
            if r.verdict != Verdict::Pass {
                self.not_passing.push(NotPass {
                    seed,
                    provider: r.provider.clone(),
                    what: format!("{word}: {what}"),
                    command: reproduce(&r.provider),
                });
            }
        }
        for (provider, why) in not_started {
            self.runs += 1;
            self.failed += 1;
            println!("seed {seed:<16} {provider:<28} {:<10} {why}", "NOT STARTED");
            self.not_passing.push(NotPass {
                seed,
                provider: provider.clone(),
                what: format!("could not start: {why}"),
                command: reproduce(provider),
            });
        }
    }

    /// Prints the summary.
    pub fn finish(&self) {
        println!();
        println!(
            "soak: {} seed(s), {} run(s) in {}: {} pass, {} FAIL, {} incomplete",
            self.seeds,
            self.runs,
            clock(self.started.elapsed()),
            self.passed,
            self.failed,
            self.incomplete
        );
        if self.not_passing.is_empty() {
            println!("soak: every run passed");
            return;
        }
        println!("soak: runs that were not a pass, and the command that repeats each:");
        for n in &self.not_passing {
            println!("  seed {} {}: {}", n.seed, n.provider, n.what);
            println!("    {}", n.command);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units_and_refuse_nonsense() {
        assert_eq!(parse_duration("900"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        for bad in ["", "m", "15x", "-3s", "0", "abc", "1e12h"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fresh_seeds_drawn_in_a_row_differ() {
        let seeds: std::collections::BTreeSet<u64> = (0..1000).map(|_| fresh_seed()).collect();
        assert_eq!(seeds.len(), 1000);
    }
}
