//! Compare-and-swap under real concurrency: many threads mutate one file at the same version, or
//! create one file with create-if-absent, at the same moment. Exactly one may win; every loser
//! gets the guard's code; the file holds the winner's bytes and nothing else is left behind.

use super::Context;
use crate::report::PropertyResult;
use seam::{EditRequest, FileSystem, FsErrorCode, ResolveOptions, Signal, WriteIntent};
use seam_model::{SnapEntry, WorldEffect};
use std::sync::{Arc, Barrier};

const NAME: &str = "cas-races";
const SUMMARY: &str = "concurrent guarded writes/edits at one version and concurrent create-if-absent have exactly one winner";

/// Threads per round.
const RACERS: usize = 6;
/// Rounds.
const ROUNDS: usize = 12;

fn round(cx: &Context<'_>, create: bool) -> Result<(), String> {
    let subject = cx.factory.make(&cx.options())?;
    let root = subject.world.root_display();
    let fs: Arc<dyn FileSystem> = subject.fs.clone();
    if !create {
        subject
            .world
            .apply(&WorldEffect::CreateFile {
                path: "a".into(),
                bytes: b"base\n".to_vec(),
                mode: 0o644,
            })
            .map_err(|e| e.to_string())?;
    }
    let opts = ResolveOptions { cwd: Some(&root) };
    let target = cx
        .rt
        .block_on(fs.resolve("a", opts, &Signal::none()))
        .map_err(|e| e.to_string())?;
    let version = if create {
        None
    } else {
        cx.rt
            .block_on(fs.stat(&target, &Signal::none()))
            .map_err(|e| e.to_string())?
            .map(|i| i.version)
    };
    let barrier = Arc::new(Barrier::new(RACERS));
    let results: Vec<Result<String, FsErrorCode>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..RACERS)
            .map(|i| {
                let fs = fs.clone();
                let target = target.clone();
                let version = version.clone();
                let barrier = barrier.clone();
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .map_err(|_| FsErrorCode::IoError)?;
                    let content = format!("racer {i}\n");
                    barrier.wait();
                    rt.block_on(async {
                        match (&version, i % 2) {
                            (None, _) => fs
                                .write_text(
                                    &target,
                                    &content,
                                    Some(&WriteIntent::CreateIfAbsent),
                                    None,
                                    &Signal::none(),
                                )
                                .await
                                .map(|_| content.clone()),
                            (Some(v), 0) => fs
                                .write_text(
                                    &target,
                                    &content,
                                    Some(&WriteIntent::ReplaceIfVersion { version: v.clone() }),
                                    None,
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
                                fs.edit_text(&target, &e, Some(v), None, &Signal::none())
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
            .map(|h| h.join().unwrap_or(Err(FsErrorCode::IoError)))
            .collect()
    });
    let loser_code = if create {
        FsErrorCode::NotObserved
    } else {
        FsErrorCode::StaleVersion
    };
    let winners: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    if winners.len() != 1 {
        return Err(format!(
            "{} winners (must be exactly one): {results:?}",
            winners.len()
        ));
    }
    if let Some(bad) = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .find(|c| **c != loser_code)
    {
        return Err(format!("a loser got {bad}, must be {loser_code}"));
    }
    let snap = subject.world.snapshot().map_err(|e| e.to_string())?;
    let names: Vec<&String> = snap.keys().collect();
    if names != ["a"] {
        return Err(format!("entries after the race: {names:?}"));
    }
    match snap.get("a") {
        Some(SnapEntry::File { bytes, .. }) if bytes == winners[0].as_bytes() => Ok(()),
        other => Err(format!(
            "the file holds {other:?}, the winner wrote {:?}",
            winners[0]
        )),
    }
}

/// Runs the property.
pub fn run(cx: &Context<'_>) -> PropertyResult {
    let started = std::time::Instant::now();
    let mut checks = 0;
    for r in 0..ROUNDS {
        if let Err(e) = round(cx, r % 2 == 0) {
            let mut p = PropertyResult::failed(NAME, SUMMARY, checks, format!("round {r}: {e}"));
            p.seconds = started.elapsed().as_secs_f64();
            return p;
        }
        checks += RACERS as u64;
    }
    let mut p = PropertyResult::passed(NAME, SUMMARY, checks);
    p.seconds = started.elapsed().as_secs_f64();
    p
}
