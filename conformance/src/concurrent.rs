//! Independent cases a few at a time, reported in their order.
//!
//! A generated or short case runs on a fresh subject in a place of its own, so cases do not
//! see each other: running several at once changes nothing a case checks. What it changes is
//! the wall time of a backend whose calls wait — on a socket (`remote`), on a pipe to another
//! language (`exec:`), on the disk — where a case at a time leaves both the gate and the
//! backend idle most of the time. The verdict stays a fact about the backend: the results come
//! back in the cases' fixed order, up to and including the first that failed, every case before
//! it having run and none after it counted, so the failure reported (and the trace shrunk from
//! it) is the one a case-at-a-time run would have met first.

use crate::StepRecord;
use crate::failure::Failure;
use crate::stats::Stats;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// How many cases run at once (public as [`crate::CASES_AT_ONCE`], for a bench that runs
/// cases as the suite does).
pub const AT_ONCE: usize = 4;

/// What one case gave: its records and counts, or why it could not run at all.
pub(crate) type CaseResult = Result<(Vec<StepRecord>, Stats), Failure>;

/// Whether a case failed: a step departed, or it could not be set up.
pub(crate) fn failed(result: &CaseResult) -> bool {
    match result {
        Ok((records, _)) => records.last().is_some_and(|r| r.failure.is_some()),
        Err(_) => true,
    }
}

/// Runs `run(i)` for every `i` below `n`, [`AT_ONCE`] at a time, and returns the results in
/// order up to and including the first that failed (all of them when none did). Once a case
/// has failed, no case after it is started. `finished` is told of each result as it comes in,
/// on the calling thread (for progress).
pub(crate) fn in_order(
    n: usize,
    run: &(dyn Fn(usize) -> CaseResult + Sync),
    finished: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let slots: Vec<Mutex<Option<CaseResult>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let first_failed = AtomicUsize::new(usize::MAX);
    let (tx, rx) = mpsc::channel::<usize>();
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE.min(n) {
            let tx = tx.clone();
            let (slots, next, first_failed) = (&slots, &next, &first_failed);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= n || i > first_failed.load(Ordering::SeqCst) {
                        return;
                    }
                    let result = run(i);
                    if failed(&result) {
                        first_failed.fetch_min(i, Ordering::SeqCst);
                    }
                    *lock(&slots[i]) = Some(result);
                    if tx.send(i).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Every worker's sender gone: every case started has finished.
        for i in rx {
            if let Some(result) = lock(&slots[i]).as_ref() {
                finished(result);
            }
        }
    });
    let mut ordered = Vec::with_capacity(n);
    for slot in slots {
        let Some(result) = slot.into_inner().unwrap_or_else(|p| p.into_inner()) else {
            break;
        };
        let stop = failed(&result);
        ordered.push(result);
        if stop {
            break;
        }
    }
    ordered
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::FailureKind;
    use std::sync::atomic::AtomicUsize;

    fn passing() -> CaseResult {
        Ok((Vec::new(), Stats::default()))
    }

    #[test]
    fn all_passing_come_back_in_order() {
        let ran = AtomicUsize::new(0);
        let mut seen = 0;
        let out = in_order(
            50,
            &|i| {
                ran.fetch_add(1, Ordering::SeqCst);
                let stats = Stats {
                    steps: i as u64,
                    ..Stats::default()
                };
                Ok((Vec::new(), stats))
            },
            &mut |_| seen += 1,
        );
        assert_eq!(ran.load(Ordering::SeqCst), 50);
        assert_eq!(seen, 50);
        let steps: Vec<u64> = out
            .iter()
            .map(|r| r.as_ref().map_or(0, |o| o.1.steps))
            .collect();
        assert_eq!(steps, (0..50).collect::<Vec<u64>>());
    }

    /// Cases do run [`AT_ONCE`] at a time, and never more. Each case waits (until 30 s after
    /// the start) for as many to be running as may; once that many were, the cases look for one
    /// more for 5 s. Run one at a time, the most seen running at once would be 1; run by more
    /// workers than [`AT_ONCE`], the extra one starts with the others and is seen.
    #[test]
    fn cases_run_at_once_up_to_the_limit_and_no_more() {
        use std::sync::Condvar;
        use std::time::{Duration, Instant};
        struct Running {
            now: usize,
            most: usize,
            look_until: Option<Instant>,
        }
        let running = Mutex::new(Running {
            now: 0,
            most: 0,
            look_until: None,
        });
        let changed = Condvar::new();
        let until = Instant::now() + Duration::from_secs(30);
        let out = in_order(
            3 * AT_ONCE,
            &|_| {
                let mut state = lock(&running);
                state.now += 1;
                state.most = state.most.max(state.now);
                changed.notify_all();
                loop {
                    let now = Instant::now();
                    if state.most < AT_ONCE {
                        if now >= until {
                            break;
                        }
                    } else {
                        let end = *state.look_until.get_or_insert(now + Duration::from_secs(5));
                        if state.most > AT_ONCE || now >= end {
                            break;
                        }
                    }
                    state = changed
                        .wait_timeout(state, Duration::from_millis(100))
                        .map_or_else(|p| p.into_inner().0, |r| r.0);
                }
                state.now -= 1;
                passing()
            },
            &mut |_| {},
        );
        assert_eq!(out.len(), 3 * AT_ONCE);
        assert_eq!(lock(&running).most, AT_ONCE);
    }

    /// Once a case has failed, no case after it is started: the cases already under way (each
    /// waits until the failure has been reported) finish, and nothing past the first
    /// [`AT_ONCE`] ever starts.
    #[test]
    fn no_case_after_a_failure_is_started() {
        use std::sync::Condvar;
        use std::time::{Duration, Instant};
        let started = Mutex::new(Vec::new());
        let reported = (Mutex::new(false), Condvar::new());
        let until = Instant::now() + Duration::from_secs(30);
        let out = in_order(
            40,
            &|i| {
                lock(&started).push(i);
                if i == 0 {
                    return Err(Failure::new(FailureKind::Setup, "zero"));
                }
                let mut seen = lock(&reported.0);
                while !*seen && Instant::now() < until {
                    seen = reported
                        .1
                        .wait_timeout(seen, Duration::from_millis(100))
                        .map_or_else(|p| p.into_inner().0, |r| r.0);
                }
                passing()
            },
            &mut |r| {
                if failed(r) {
                    *lock(&reported.0) = true;
                    reported.1.notify_all();
                }
            },
        );
        assert_eq!(out.len(), 1);
        let started = lock(&started).clone();
        assert!(started.contains(&0));
        assert!(
            started.iter().all(|&i| i < AT_ONCE),
            "cases started after the failure: {started:?}"
        );
    }

    /// The first failure in order is the one that ends the results, even when a later case
    /// fails first in time; nothing after it is returned.
    #[test]
    fn the_first_failure_in_order_ends_the_results_whatever_finished_first() {
        let out = in_order(
            40,
            &|i| {
                if i == 7 {
                    // Fails late in time…
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    return Err(Failure::new(FailureKind::Setup, "seven"));
                }
                if i == 9 {
                    // …after a later case failed.
                    return Err(Failure::new(FailureKind::Setup, "nine"));
                }
                passing()
            },
            &mut |_| {},
        );
        assert_eq!(out.len(), 8);
        assert!(out[..7].iter().all(|r| !failed(r)));
        match &out[7] {
            Err(f) => assert_eq!(f.message, "seven"),
            Ok(_) => panic!("case 7 passed"),
        }
    }
}
