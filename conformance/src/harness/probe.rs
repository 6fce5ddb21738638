//! The probe a mutation's signal carries: it plays the competitor at `before_stage` (a file, a
//! directory or a dangling link that appears between the guard check and publication), cancels
//! where the step asks, inspects staging at `staged`, and checks that an unclaimed capability is
//! not offered (no checkpoint without `cancel_points`, no staging paths without `staging_probe`).
//!
//! The competitor is placed through the backend's world on a helper thread with a bounded wait:
//! a provider that holds a lock its world needs across `checkpoint` would otherwise deadlock the
//! suite. After the wait the step fails with a diagnosis instead (see `seam::signal`).

use super::Harness;
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::step::Interfere;
use crate::world::World;
use seam::{CancelPoint, Signal};
use seam_model::WorldEffect;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// What a probe saw inside a mutation.
#[derive(Default)]
pub(super) struct ProbeLog {
    problems: Vec<Failure>,
    staged_seen: bool,
    points: Vec<CancelPoint>,
}

/// Carries out `effect` through `world` on a helper thread, waiting at most `wait`.
fn apply_bounded(
    world: &Arc<dyn World>,
    effect: WorldEffect,
    wait: Duration,
) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    let world = world.clone();
    std::thread::spawn(move || {
        let _ = tx.send(world.apply(&effect).map_err(|e| e.to_string()));
    });
    match rx.recv_timeout(wait) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the world did not carry out the change within {:.1}s while the provider was paused \
             at the checkpoint — does the provider hold a lock its world needs across \
             Signal::checkpoint? (see seam::signal: release it before the checkpoint)",
            wait.as_secs_f64()
        )),
    }
}

impl Harness {
    /// A signal whose probe plays the competitor, cancels where asked, and checks staging.
    pub(super) fn probe(
        &self,
        interfere: &Interfere,
        competitor: Option<WorldEffect>,
    ) -> (Signal, Arc<Mutex<ProbeLog>>) {
        let log: Arc<Mutex<ProbeLog>> = Arc::default();
        let cancel_at = match interfere {
            Interfere::CancelAt(p) => Some(*p),
            _ => None,
        };
        let world = self.world.clone();
        let caps = self.caps;
        let check_modes = caps.staging_probe && caps.permissions;
        let wait = self.config.checkpoint_wait;
        let l = log.clone();
        let competitor = Mutex::new(competitor);
        let signal = Signal::with_probe(move |cp| {
            let mut log = l.lock().unwrap_or_else(|p| p.into_inner());
            log.points.push(cp.point);
            if !caps.staging_probe && !cp.staging.is_empty() {
                log.problems.push(fail(
                    FailureKind::Claim,
                    format!(
                        "staging paths were reported at {:?} although staging_probe is not claimed",
                        cp.point
                    ),
                ));
            }
            match cp.point {
                CancelPoint::BeforeStage => {
                    let effect = competitor.lock().unwrap_or_else(|p| p.into_inner()).take();
                    if let Some(e) = effect
                        && let Err(err) = apply_bounded(&world, e, wait)
                    {
                        log.problems.push(fail(
                            FailureKind::Checkpoint,
                            format!("the competitor could not be placed: {err}"),
                        ));
                    }
                }
                CancelPoint::Staged => {
                    log.staged_seen = true;
                    if check_modes {
                        for (i, path) in cp.staging.iter().enumerate() {
                            match world.entry_mode(path) {
                                Ok(Some(m)) => {
                                    let want = if m.is_dir { 0o700 } else { 0o600 };
                                    if m.mode != want {
                                        log.problems.push(fail(
                                            FailureKind::Staging,
                                            format!(
                                                "staging {path:?} is mode {:o} while it exists (must be {want:o})",
                                                m.mode
                                            ),
                                        ));
                                    }
                                }
                                Ok(None) => log.problems.push(fail(
                                    FailureKind::Staging,
                                    format!(
                                        "staging entry #{i} {path:?} reported at the staged point does not exist"
                                    ),
                                )),
                                Err(e) => log.problems.push(fail(
                                    FailureKind::Setup,
                                    format!("cannot inspect staging {path:?}: {e}"),
                                )),
                            }
                        }
                    }
                }
                CancelPoint::Committed => {}
            }
            cancel_at == Some(cp.point)
        });
        (signal, log)
    }

    /// The first problem the probe saw, and the claim check on the checkpoints it was shown.
    pub(super) fn probe_problems(&mut self, log: &Arc<Mutex<ProbeLog>>) -> Check {
        let log = log.lock().unwrap_or_else(|p| p.into_inner());
        if log.staged_seen {
            self.stats.staging_observed += 1;
        }
        self.stats.check();
        if !self.caps.cancel_points && !log.points.is_empty() {
            return Err(fail(
                FailureKind::Claim,
                format!(
                    "checkpoints {:?} were shown to the probe although cancel_points is not claimed",
                    log.points
                ),
            ));
        }
        match log.problems.first() {
            Some(p) => Err(p.clone()),
            None => Ok(()),
        }
    }
}
