//! `atomic-visibility`: readers that run while a large file is written and edited see the old
//! content or the new one — never an empty file, a prefix, a mix of two versions, or nothing.
//!
//! It runs against every backend, whatever it claims. Without it, a backend that publishes by
//! truncating and rewriting in place passes every sequential check (each step starts after the
//! previous one finished), and only a backend that claims cancel points or a staging probe is
//! ever looked at mid-mutation. Readers use `read_text`, `stream_text` and (when claimed)
//! `read_bytes`; every content a reader returns must be one of the states the writer produced.

use super::{Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{EditRequest, FileSystem, FsTarget, ResolveOptions, Signal};
use seam_model::WorldEffect;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `atomic-visibility`.
pub struct AtomicVisibility;

/// Lines in each state of the file (about 1 MiB).
const LINES: usize = 16 * 1024;
/// Mutations per round.
const MUTATIONS: usize = 8;
/// Rounds (each a fresh subject).
const ROUNDS: usize = 3;
/// Concurrent readers.
const READERS: usize = 3;
/// Attempts at a round in which some read overlaps a mutation.
const TRIES: usize = 3;

impl Property for AtomicVisibility {
    fn name(&self) -> &'static str {
        "atomic-visibility"
    }

    fn summary(&self) -> &'static str {
        "readers running during large writes and edits see the old or the new content, never a partial, empty or mixed file"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        for r in 0..ROUNDS {
            // Every read is checked; only those that overlapped a mutation count, and every
            // round must have some (a round is tried again a few times before that fails).
            let mut during = 0;
            for _ in 0..TRIES {
                during = round(cx, r)?.1;
                if during > 0 {
                    break;
                }
            }
            if during == 0 {
                return Err(fail(
                    FailureKind::Setup,
                    format!(
                        "round {r}: no read overlapped a mutation in {TRIES} tries: nothing was checked"
                    ),
                ));
            }
            out.stats.checks(during);
        }
        out.cases = ROUNDS as u64;
        out.stats.rule(Rule::VisibilityWhole);
        Ok(())
    }
}

/// The `i`-th whole content a round's file takes: every line names the state, so a mix of two
/// states or a prefix of one is never another state.
fn state(i: usize, marker: &str) -> String {
    let mut s = String::with_capacity(LINES * 64);
    for line in 0..LINES {
        s.push_str(&format!(
            "state {i:02} line {line:06} ................................. ok\n"
        ));
    }
    s.push_str(marker);
    s.push('\n');
    s
}

fn setup(e: impl std::fmt::Display) -> Failure {
    fail(FailureKind::Setup, e.to_string())
}

/// One round: returns (reads checked, reads that overlapped a mutation).
fn round(cx: &Context, r: usize) -> Result<(u64, u64), Failure> {
    let subject = cx.factory.make(&cx.options()).map_err(setup)?;
    let root = subject.world.root_display();
    let fs: Arc<dyn FileSystem> = subject.fs.clone();
    let first = state(0, "marker-0");
    subject
        .world
        .apply(&WorldEffect::CreateFile {
            path: "big".into(),
            bytes: first.clone().into_bytes(),
            mode: 0o644,
        })
        .map_err(setup)?;
    let rt = cx.runtime()?;
    let target = rt
        .block_on(fs.resolve("big", ResolveOptions { cwd: Some(&root) }, &Signal::none()))
        .map_err(|e| fail(FailureKind::Outcome, e.message()))?;
    let through = super::let_through(fs.as_ref(), &root);

    // Every state the writer will produce, known before it starts.
    let mut states: Vec<String> = vec![first];
    let mut plan: Vec<Mutation> = Vec::new();
    for m in 1..=MUTATIONS {
        if m % 2 == 1 {
            let next = state(m + r, &format!("marker-{m}"));
            plan.push(Mutation::Write(next.clone()));
            states.push(next);
        } else {
            let prev = states.last().cloned().unwrap_or_default();
            let old = format!("marker-{}", m - 1);
            let new = format!("marker-{m}");
            plan.push(Mutation::Edit(old.clone(), new.clone()));
            states.push(prev.replacen(&old, &new, 1));
        }
    }
    let valid: Arc<HashSet<String>> = Arc::new(states.into_iter().collect());
    let done = Arc::new(AtomicBool::new(false));
    let writing = Arc::new(AtomicBool::new(false));
    let during = Arc::new(AtomicU64::new(0));
    let bytes = cx.caps.read_bytes;

    let result: Result<u64, Failure> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|k| {
                let (fs, target, valid) = (fs.clone(), target.clone(), valid.clone());
                let (done, writing, during) = (done.clone(), writing.clone(), during.clone());
                s.spawn(move || -> Result<u64, Failure> {
                    let rt = crate::sequences::runtime().map_err(setup)?;
                    let mut reads = 0;
                    while !done.load(Ordering::Acquire) {
                        let active = writing.load(Ordering::Acquire);
                        let how = match (k + reads as usize) % 3 {
                            2 if bytes => How::Bytes,
                            1 | 2 => How::Stream,
                            _ => How::Text,
                        };
                        let got = rt.block_on(read(fs.as_ref(), &target, how))?;
                        reads += 1;
                        if active {
                            during.fetch_add(1, Ordering::Relaxed);
                        }
                        if !valid.contains(&got) {
                            return Err(fail(
                                FailureKind::TornRead,
                                format!(
                                    "a {how:?} read during the writes returned {} bytes that are no state the file ever had ({})",
                                    got.len(),
                                    describe(&got)
                                ),
                            ));
                        }
                    }
                    Ok(reads)
                })
            })
            .collect();
        let writer = (|| -> Result<(), Failure> {
            writing.store(true, Ordering::Release);
            for m in &plan {
                let result = match m {
                    Mutation::Write(content) => rt
                        .block_on(fs.write_text(
                            &target,
                            content,
                            None,
                            through.as_ref(),
                            &Signal::none(),
                        ))
                        .map(|_| ()),
                    Mutation::Edit(old, new) => rt
                        .block_on(fs.edit_text(
                            &target,
                            &EditRequest {
                                old_string: old.clone(),
                                new_string: new.clone(),
                                replace_all: false,
                            },
                            None,
                            through.as_ref(),
                            &Signal::none(),
                        ))
                        .map(|_| ()),
                };
                result.map_err(|e| {
                    fail(
                        FailureKind::Outcome,
                        format!("a {} of the big file failed: {}", m.verb(), e.message()),
                    )
                })?;
            }
            writing.store(false, Ordering::Release);
            Ok(())
        })();
        done.store(true, Ordering::Release);
        let mut total = 0;
        let mut first_failure = writer.err();
        for h in readers {
            match h.join() {
                Ok(Ok(n)) => total += n,
                Ok(Err(f)) => {
                    if first_failure.is_none() || f.kind == FailureKind::TornRead {
                        first_failure = Some(f);
                    }
                }
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        match first_failure {
            Some(f) => Err(f),
            None => Ok(total),
        }
    });
    let reads = result.map_err(|f| Failure::new(f.kind, format!("round {r}: {}", f.message)))?;
    Ok((reads, during.load(Ordering::Relaxed)))
}

enum Mutation {
    Write(String),
    Edit(String, String),
}

impl Mutation {
    fn verb(&self) -> &'static str {
        match self {
            Mutation::Write(_) => "write",
            Mutation::Edit(..) => "edit",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum How {
    Text,
    Stream,
    Bytes,
}

async fn read(fs: &dyn FileSystem, target: &FsTarget, how: How) -> Result<String, Failure> {
    let torn = |e: seam::FsError| {
        fail(
            FailureKind::TornRead,
            format!(
                "a {how:?} read during the writes failed: {} {} (a reader must see the old or the new file)",
                e.code(),
                e.message()
            ),
        )
    };
    match how {
        How::Text => fs.read_text(target, &Signal::none()).await.map_err(torn),
        How::Bytes => {
            let b = fs
                .read_bytes(target, 8 * 1024 * 1024, &Signal::none())
                .await
                .map_err(torn)?;
            Ok(String::from_utf8_lossy(&b).into_owned())
        }
        How::Stream => {
            let mut stream = fs
                .stream_text(target, &Signal::none())
                .await
                .map_err(torn)?;
            let mut text = String::new();
            while let Some(chunk) =
                std::future::poll_fn(|cx| futures_core::Stream::poll_next(stream.as_mut(), cx))
                    .await
            {
                text.push_str(&chunk.map_err(torn)?);
            }
            Ok(text)
        }
    }
}

/// What a torn content looks like, briefly: its first and last state markers.
fn describe(got: &str) -> String {
    let first = got.lines().next().unwrap_or("");
    let last = got.lines().last().unwrap_or("");
    if got.is_empty() {
        "empty".into()
    } else {
        format!("starts {first:?}, ends {last:?}")
    }
}
