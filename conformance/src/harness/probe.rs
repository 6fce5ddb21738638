//! The probe a mutation's signal carries: it plays the competitor at `before_stage` (a file, a
//! directory or a dangling link that appears between the guard check and publication), cancels
//! where the step asks, inspects staging at `staged`, and checks that an unclaimed capability is
//! not offered (no checkpoint without `cancel_points`, no staging paths without `staging_probe`).
//!
//! Where a step asks for it ([`Interfere::ReadersAtCheckpoints`]), readers read the target while
//! the mutation is paused at each checkpoint — the overlap of a reader and a writer made, not
//! hoped for — and what they see is checked against the file before and after the mutation.
//! They list the target's directory too: a listing taken mid-mutation shows the directory's
//! entries before it (after it, at `committed`) and nothing else but the staging entries the
//! backend reported at that checkpoint — a staging file a reader stumbles on without the backend
//! saying so is litter, whatever it is called.
//!
//! The competitor is placed through the backend's world on a helper thread with a bounded wait:
//! a provider that holds a lock its world needs across `checkpoint` would otherwise deadlock the
//! suite. After the wait the step fails with a diagnosis instead (see `seam::signal`).

use super::Harness;
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::step::Interfere;
use crate::world::World;
use futures_util::StreamExt;
use seam::{CancelPoint, FileSystem, FsError, FsErrorCode, FsTarget, Signal};
use seam_model::WorldEffect;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// What a probe saw inside a mutation.
#[derive(Default)]
pub(super) struct ProbeLog {
    problems: Vec<Failure>,
    staged_seen: bool,
    points: Vec<CancelPoint>,
    /// Reads answered while the mutation was paused at a checkpoint (and checked there).
    served: u64,
    /// Of those, listings of the target's directory.
    listed: u64,
    /// Reads not answered while the mutation was paused: checked when they are answered.
    late: Vec<LateReads>,
}

/// What a reader must see: the file's text (or the code reading it fails with) and its bytes,
/// and the names in its directory (in byte order; `None`: not listed).
#[derive(Clone, Debug)]
pub(super) struct Expect {
    pub text: Result<String, FsErrorCode>,
    pub bytes: Result<Vec<u8>, FsErrorCode>,
    pub names: Option<Result<Vec<String>, FsErrorCode>>,
}

/// The readers a mutation's probe runs at its checkpoints (see [`Interfere::ReadersAtCheckpoints`]).
pub(super) struct Readers {
    /// The instance they read through, and its number in reports.
    pub fs: Arc<dyn FileSystem>,
    pub instance: u8,
    pub target: FsTarget,
    /// The file before the mutation, and after it (as the model predicts).
    pub old: Expect,
    pub new: Expect,
    /// Whether `read_bytes` is claimed.
    pub bytes: bool,
    /// How long a paused mutation waits for its readers.
    pub wait: Duration,
    /// How many more times a checkpoint on this instance waits for reads that go unanswered:
    /// once it is spent, the backend does not serve a read while a mutation is paused, and later
    /// checkpoints do not wait again.
    pub patience: Arc<AtomicU8>,
    /// Told how long the mutation was held up waiting for the readers.
    pub pause_log: Option<super::PauseLog>,
}

/// Reads sent at a checkpoint and not answered while the mutation was paused there.
pub(super) struct LateReads {
    instance: u8,
    point: CancelPoint,
    pending: usize,
    answers: mpsc::Receiver<(ReadHow, Result<Vec<u8>, FsError>)>,
    old: Expect,
    new: Expect,
    /// The staging entries the backend reported at that checkpoint.
    staging: Vec<String>,
}

/// How a reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ReadHow {
    Text,
    Stream,
    Bytes,
    /// `list_dir` of the file's directory (its names, one per line).
    List,
}

impl ReadHow {
    fn name(self) -> &'static str {
        match self {
            ReadHow::Text => "read_text",
            ReadHow::Stream => "stream_text",
            ReadHow::Bytes => "read_bytes",
            ReadHow::List => "list_dir",
        }
    }
}

/// The largest file a checkpoint reader reads with `read_bytes`.
pub(super) const READ_BYTES_CAP: u64 = 64 * 1024 * 1024;

/// One read, as bytes (a text read's text as its UTF-8).
async fn read_as(fs: &dyn FileSystem, target: &FsTarget, how: ReadHow) -> Result<Vec<u8>, FsError> {
    let none = Signal::none();
    match how {
        ReadHow::Text => fs.read_text(target, &none).await.map(String::into_bytes),
        ReadHow::Bytes => fs.read_bytes(target, READ_BYTES_CAP, &none).await,
        ReadHow::Stream => {
            let mut stream = fs.stream_text(target, &none).await?;
            let mut text = String::new();
            while let Some(chunk) = stream.next().await {
                text.push_str(&chunk?);
            }
            Ok(text.into_bytes())
        }
        ReadHow::List => {
            let parent = match target.display_path.rsplit_once('/') {
                Some(("", _)) | None => "/",
                Some((parent, _)) => parent,
            };
            let dir = fs
                .resolve(parent, seam::ResolveOptions::default(), &none)
                .await?;
            let mut names: Vec<String> = fs
                .list_dir(&dir, &none)
                .await?
                .into_iter()
                .map(|e| e.name)
                .collect();
            names.sort_unstable();
            Ok(names.join("\n").into_bytes())
        }
    }
}

/// The last component of a reported staging path.
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether a read's answer is what `e` says the file holds (a listing: the directory's names,
/// leaving out the `staging` entries the backend reported).
fn matches(e: &Expect, how: ReadHow, got: &Result<Vec<u8>, FsError>, staging: &[String]) -> bool {
    if how == ReadHow::List {
        let Some(want) = &e.names else {
            return true;
        };
        return match (want, got) {
            (Ok(want), Ok(got)) => {
                let staged: Vec<&str> = staging.iter().map(|p| base_name(p)).collect();
                let seen: Vec<&str> = std::str::from_utf8(got)
                    .unwrap_or_default()
                    .split('\n')
                    .filter(|n| !n.is_empty() && !staged.contains(n))
                    .collect();
                seen == want.iter().map(String::as_str).collect::<Vec<_>>()
            }
            (Err(code), Err(e)) => *code == e.code(),
            _ => false,
        };
    }
    let want = match how {
        ReadHow::Bytes => e.bytes.as_ref().map(|b| b.as_slice()),
        ReadHow::Text | ReadHow::Stream | ReadHow::List => e.text.as_ref().map(|t| t.as_bytes()),
    };
    match (want, got) {
        (Ok(w), Ok(g)) => w == g.as_slice(),
        (Err(code), Err(e)) => *code == e.code(),
        _ => false,
    }
}

fn show_read(how: ReadHow, got: &Result<Vec<u8>, FsError>) -> String {
    match got {
        Ok(b) if how == ReadHow::List => format!(
            "the entries {:?}",
            String::from_utf8_lossy(b).split('\n').collect::<Vec<_>>()
        ),
        Ok(b) => super::show_bytes(b),
        Err(e) => format!("{} {:?}", e.code(), e.message()),
    }
}

fn show_expect(e: &Expect, how: ReadHow) -> String {
    match how {
        ReadHow::List => match &e.names {
            Some(Ok(names)) => format!("the entries {names:?}"),
            Some(Err(c)) => c.to_string(),
            None => "not listed".into(),
        },
        ReadHow::Bytes => match &e.bytes {
            Ok(b) => super::show_bytes(b),
            Err(c) => c.to_string(),
        },
        ReadHow::Text | ReadHow::Stream => match &e.text {
            Ok(t) => super::show_bytes(t.as_bytes()),
            Err(c) => c.to_string(),
        },
    }
}

impl Readers {
    /// Sends the reads at `point` (where the backend reported `staging`) and waits for them
    /// while the mutation is paused.
    fn at(&self, point: CancelPoint, staging: &[String], log: &mut ProbeLog) {
        let mut hows = vec![ReadHow::Text, ReadHow::Stream];
        if self.bytes {
            hows.push(ReadHow::Bytes);
        }
        if self.old.names.is_some() {
            hows.push(ReadHow::List);
        }
        let started = std::time::Instant::now();
        let (tx, rx) = mpsc::channel();
        let (fs, target, list) = (self.fs.clone(), self.target.clone(), hows.clone());
        std::thread::spawn(move || {
            let Ok(rt) = crate::sequences::runtime() else {
                return;
            };
            for how in list {
                let got = rt.block_on(read_as(fs.as_ref(), &target, how));
                if tx.send((how, got)).is_err() {
                    return;
                }
            }
        });
        let expect = if point == CancelPoint::Committed {
            &self.new
        } else {
            &self.old
        };
        let mut pending = hows.len();
        if self.patience.load(Ordering::Relaxed) > 0 {
            let deadline = std::time::Instant::now() + self.wait;
            while pending > 0 {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let Ok((how, got)) = rx.recv_timeout(left) else {
                    let _ = self
                        .patience
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
                    break;
                };
                pending -= 1;
                if matches(expect, how, &got, staging) {
                    log.served += 1;
                    if how == ReadHow::List {
                        log.listed += 1;
                    }
                } else {
                    let kind = if how == ReadHow::List {
                        FailureKind::Litter
                    } else {
                        FailureKind::TornRead
                    };
                    log.problems.push(fail(
                        kind,
                        format!(
                            "while the mutation was paused at {point:?}, a {} on instance {} returned {}; the {} {} is {}",
                            how.name(),
                            self.instance,
                            show_read(how, &got),
                            if how == ReadHow::List {
                                "directory (leaving out the staging entries the backend reported)"
                            } else {
                                "file"
                            },
                            if point == CancelPoint::Committed {
                                "after it"
                            } else {
                                "before it"
                            },
                            show_expect(expect, how)
                        ),
                    ));
                }
            }
        }
        if let Some(log_pause) = &self.pause_log {
            log_pause(started, std::time::Instant::now());
        }
        if pending > 0 {
            log.late.push(LateReads {
                instance: self.instance,
                point,
                pending,
                answers: rx,
                old: self.old.clone(),
                new: self.new.clone(),
                staging: staging.to_vec(),
            });
        }
    }
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
        readers: Option<Readers>,
    ) -> (Signal, Arc<Mutex<ProbeLog>>) {
        let log: Arc<Mutex<ProbeLog>> = Arc::default();
        let cancel_at = match interfere {
            Interfere::CancelAt(p) => Some(*p),
            _ => None,
        };
        // Where the competitor acts: where the step says for a change of the file, else where
        // something appears (before staging).
        let competitor_at = match interfere {
            Interfere::ChangeAt(p, _) => *p,
            _ => CancelPoint::BeforeStage,
        };
        let world = self.world.clone();
        let caps = self.caps;
        let check_modes = caps.staging_probe && caps.modes;
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
            if let Some(r) = &readers {
                r.at(cp.point, cp.staging, &mut log);
            }
            if cp.point == competitor_at {
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
            match cp.point {
                CancelPoint::BeforeStage => {}
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
        let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
        if log.staged_seen {
            self.stats.staging_observed += 1;
        }
        if log.served > 0 {
            self.stats.paused_reads_served += log.served;
            self.stats.checks(log.served);
            self.hit(crate::rules::Rule::VisibilityWhole);
        }
        if log.listed > 0 {
            self.hit(crate::rules::Rule::VisibilityListing);
        }
        // Reads the backend answered only after the mutation went on: the old file or the new
        // one, whole (waited for as long as a paused mutation waits for its readers).
        let wait = self.config.checkpoint_wait;
        for late in std::mem::take(&mut log.late) {
            self.stats.paused_reads_unserved += late.pending as u64;
            for _ in 0..late.pending {
                let Ok((how, got)) = late.answers.recv_timeout(wait) else {
                    break;
                };
                self.stats.check();
                if !matches(&late.old, how, &got, &late.staging)
                    && !matches(&late.new, how, &got, &late.staging)
                {
                    log.problems.push(fail(
                        if how == ReadHow::List {
                            FailureKind::Litter
                        } else {
                            FailureKind::TornRead
                        },
                        format!(
                            "a {} on instance {} sent while the mutation was paused at {:?} returned {}: neither what was there before the mutation ({}) nor after it ({})",
                            how.name(),
                            late.instance,
                            late.point,
                            show_read(how, &got),
                            show_expect(&late.old, how),
                            show_expect(&late.new, how)
                        ),
                    ));
                }
            }
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
