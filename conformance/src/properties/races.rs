//! Compare-and-swap under real concurrency: many threads mutate one file at the same version, or
//! create one file with create-if-absent, at the same moment. Exactly one may win; every loser
//! gets the guard's code; the file holds the winner's bytes and nothing else is left behind.
//!
//! For a backend that claims [`seam::Capability::SharedStorage`] the same rounds run again with
//! the racers spread over two provider instances over one storage: two agents rarely share a
//! provider object, they share the files, and a lock that lives only in one instance lets two
//! guarded writers win.

use super::{Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::stats::Stats;
use seam::{EditRequest, FileSystem, FsErrorCode, ResolveOptions, Signal, WriteIntent};
use seam_model::{SnapEntry, WorldEffect};
use std::sync::{Arc, Barrier};

/// `cas-races`.
pub struct CasRaces;

impl Property for CasRaces {
    fn name(&self) -> &'static str {
        "cas-races"
    }

    fn summary(&self) -> &'static str {
        "concurrent guarded writes/edits at one version and concurrent create-if-absent have exactly one winner"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rt = cx.runtime()?;
        for r in 0..ROUNDS {
            round(cx, &rt, r % 2 == 0, false, &mut out.stats)
                .map_err(|f| Failure::new(f.kind, format!("round {r}: {}", f.message)))?;
        }
        out.stats.rule(Rule::RaceOneWinner);
        if cx.caps.shared_storage {
            for r in 0..ROUNDS_ACROSS {
                round(cx, &rt, r % 2 == 0, true, &mut out.stats).map_err(|f| {
                    Failure::new(
                        f.kind,
                        format!("round {r} across two instances: {}", f.message),
                    )
                })?;
            }
            out.stats.rule(Rule::RaceAcrossInstances);
        }
        Ok(())
    }
}

/// Threads per round.
const RACERS: usize = 6;
/// Rounds.
const ROUNDS: usize = 12;
/// Rounds across two instances (a cross-instance lock is slower to get wrong visibly).
pub const ROUNDS_ACROSS: usize = 24;

fn setup(e: impl std::fmt::Display) -> Failure {
    fail(FailureKind::Setup, e.to_string())
}

fn round(
    cx: &Context,
    rt: &tokio::runtime::Runtime,
    create: bool,
    across: bool,
    stats: &mut Stats,
) -> Result<(), Failure> {
    let options = cx.options();
    let subject = cx.factory.make(&options).map_err(setup)?;
    let root = subject.world.root_display();
    let fs: Arc<dyn FileSystem> = subject.fs.clone();
    let second: Arc<dyn FileSystem> = if across {
        match cx.factory.reopen(&options, &subject) {
            Some(Ok(fs)) => fs,
            Some(Err(e)) => return Err(setup(format!("cannot open a second instance: {e}"))),
            None => {
                return Err(fail(
                    FailureKind::Claim,
                    "the backend claims shared_storage but its factory gives no second instance (Factory::reopen)",
                ));
            }
        }
    } else {
        fs.clone()
    };
    if !create {
        subject
            .world
            .apply(&WorldEffect::CreateFile {
                path: "a".into(),
                bytes: b"base\n".to_vec(),
                mode: 0o644,
            })
            .map_err(setup)?;
    }
    let opts = ResolveOptions { cwd: Some(&root) };
    let through = super::let_through(fs.as_ref(), &root);
    let target = rt
        .block_on(fs.resolve("a", opts, &Signal::none()))
        .map_err(|e| fail(FailureKind::Outcome, e.message()))?;
    let version = if create {
        None
    } else {
        rt.block_on(fs.stat(&target, &Signal::none()))
            .map_err(|e| fail(FailureKind::Outcome, e.message()))?
            .map(|i| i.version)
    };
    let barrier = Arc::new(Barrier::new(RACERS));
    let results: Vec<Result<String, FsErrorCode>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|i| {
                let fs = if (i / 2) % 2 == 0 {
                    fs.clone()
                } else {
                    second.clone()
                };
                let target = target.clone();
                let version = version.clone();
                let barrier = barrier.clone();
                let through = through.clone();
                s.spawn(move || {
                    let rt = crate::sequences::runtime().map_err(|_| FsErrorCode::IoError)?;
                    let content = format!("racer {i}\n");
                    barrier.wait();
                    rt.block_on(async {
                        match (&version, i % 2) {
                            (None, _) => fs
                                .write_text(
                                    &target,
                                    &content,
                                    Some(&WriteIntent::CreateIfAbsent),
                                    through.as_ref(),
                                    &Signal::none(),
                                )
                                .await
                                .map(|_| content.clone()),
                            (Some(v), 0) => fs
                                .write_text(
                                    &target,
                                    &content,
                                    Some(&WriteIntent::ReplaceIfVersion { version: v.clone() }),
                                    through.as_ref(),
                                    &Signal::none(),
                                )
                                .await
                                .map(|_| content.clone()),
                            (Some(v), _) => {
                                let e = EditRequest {
                                    old_string: "base".into(),
                                    new_string: format!("racer {i}"),
                                    replace_all: false,
                                };
                                fs.edit_text(
                                    &target,
                                    &e,
                                    Some(v),
                                    through.as_ref(),
                                    &Signal::none(),
                                )
                                .await
                                .map(|_| content.clone())
                            }
                        }
                    })
                    .map_err(|e| e.code())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r,
                Err(p) => std::panic::resume_unwind(p),
            })
            .collect()
    });
    let loser_code = if create {
        FsErrorCode::NotObserved
    } else {
        FsErrorCode::StaleVersion
    };
    let winners: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    stats.check();
    if winners.len() != 1 {
        return Err(fail(
            FailureKind::Race,
            format!(
                "{} winners (must be exactly one): {results:?}",
                winners.len()
            ),
        ));
    }
    for r in &results {
        stats.check();
        if let Err(bad) = r
            && *bad != loser_code
        {
            return Err(fail(
                FailureKind::Race,
                format!("a loser got {bad}, must be {loser_code}"),
            ));
        }
    }
    let snap = subject.world.snapshot().map_err(setup)?;
    let names: Vec<&String> = snap.keys().collect();
    stats.check();
    if names != ["a"] {
        return Err(fail(
            FailureKind::Litter,
            format!("entries after the race: {names:?}"),
        ));
    }
    stats.check();
    match snap.get("a") {
        Some(SnapEntry::File { bytes, .. }) if bytes == winners[0].as_bytes() => Ok(()),
        other => Err(fail(
            FailureKind::Race,
            format!(
                "the file holds {other:?}, the winner wrote {:?}",
                winners[0]
            ),
        )),
    }
}
