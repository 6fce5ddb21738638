//! Running a group: its shape checked before anything runs, every lane started on one barrier,
//! each call timed from just before it is made to just after it returns, and the staging
//! entries the mutations report at their checkpoints noted.

use super::seen::{Content, Done, Job, Seen, failed};
use super::{MAX_BRUTE, MAX_REPEATS, READ_BYTES_MAX, setup};
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::step::{Lane, Op, Spawn};
use futures_util::StreamExt;
use seam::{
    EditRequest, FileSystem, FsErrorCode, FsVersion, RemoveOptions, RenameOptions, ResolveOptions,
    Signal,
};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

/// The staging entries a group's mutations reported at their checkpoints, by name.
pub(super) type Reported = Arc<Mutex<BTreeSet<String>>>;

/// A signal that notes the names of the staging entries shown at every checkpoint and never
/// cancels: a listing in the group may show those (the contract lets a backend show the staging
/// it reports), and nothing else beside the directory's entries.
pub(super) fn recording(reported: &Reported) -> Signal {
    let reported = reported.clone();
    Signal::with_probe(move |cp| {
        let mut names = reported.lock().unwrap_or_else(|p| p.into_inner());
        for path in cp.staging {
            names.insert(path.rsplit('/').next().unwrap_or(path).to_string());
        }
        false
    })
}

pub(super) async fn perform(
    fs: &dyn FileSystem,
    job: &Job,
    signal: &Signal,
) -> (Seen, Option<FsVersion>) {
    let none = signal.clone();
    let t = &job.target;
    match &job.op {
        Op::Write { content, .. } => {
            match fs
                .write_text(t, content, job.intent.as_ref(), job.policy.as_ref(), &none)
                .await
            {
                Ok(o) => (
                    Seen::Wrote {
                        operation: o.operation,
                        before: o.before,
                        after: o.after,
                    },
                    Some(o.version),
                ),
                Err(e) => failed(&e),
            }
        }
        Op::Edit {
            old,
            new,
            replace_all,
            ..
        } => {
            let request = EditRequest {
                old_string: old.clone(),
                new_string: new.clone(),
                replace_all: *replace_all,
            };
            match fs
                .edit_text(
                    t,
                    &request,
                    job.edit_guard.as_ref(),
                    job.policy.as_ref(),
                    &none,
                )
                .await
            {
                Ok(o) => (
                    Seen::Edited {
                        before: o.before,
                        after: o.after,
                    },
                    Some(o.version),
                ),
                Err(e) => failed(&e),
            }
        }
        Op::Remove { directory, .. } => {
            let request = RemoveOptions {
                if_version: job.edit_guard.clone(),
                directory: *directory,
            };
            let opts = ResolveOptions::default();
            match fs
                .remove(&t.display_path, opts, &request, job.policy.as_ref(), &none)
                .await
            {
                Ok(o) => (Seen::Removed(o.kind), None),
                Err(e) => failed(&e),
            }
        }
        Op::Rename { .. } => {
            let request = RenameOptions {
                if_version: job.edit_guard.clone(),
                replace: job.replace.as_ref().map(|(t, _)| t.clone()),
            };
            let to = job.to.clone().unwrap_or_default();
            let opts = ResolveOptions::default();
            match fs
                .rename(
                    &t.display_path,
                    &to,
                    opts,
                    &request,
                    job.policy.as_ref(),
                    &none,
                )
                .await
            {
                Ok(o) => (
                    Seen::Renamed {
                        kind: o.kind,
                        replaced: o.replaced,
                    },
                    Some(o.version),
                ),
                Err(e) => failed(&e),
            }
        }
        Op::ReadText { .. } => match fs.read_text(t, &none).await {
            Ok(text) => (Seen::Read(Content::of(text.as_bytes())), None),
            Err(e) => failed(&e),
        },
        Op::StreamText { .. } => {
            let mut stream = match fs.stream_text(t, &none).await {
                Ok(s) => s,
                Err(e) => return failed(&e),
            };
            let mut text = String::new();
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(c) => text.push_str(&c),
                    Err(e) => return failed(&e),
                }
            }
            (Seen::Read(Content::of(text.as_bytes())), None)
        }
        Op::ReadBytes { max, .. } => {
            match fs.read_bytes(t, (*max).min(READ_BYTES_MAX), &none).await {
                Ok(b) => (Seen::Read(Content::of(&b)), None),
                Err(e) => failed(&e),
            }
        }
        Op::Stat { .. } => match fs.stat(t, &none).await {
            Ok(info) => {
                let version = info.as_ref().map(|i| i.version.clone());
                (Seen::Stat(info.map(|i| (i.kind, i.size))), version)
            }
            Err(e) => failed(&e),
        },
        Op::ListDir { .. } => match fs.list_dir(t, &none).await {
            Ok(entries) => (
                Seen::listed(entries.into_iter().map(|e| (e.name, e.kind, e.size))),
                None,
            ),
            Err(e) => failed(&e),
        },
        // Refused before the group runs (`check_shape`).
        _ => (
            Seen::Failed(FsErrorCode::IoError, "not a step a group runs".into()),
            None,
        ),
    }
}

/// Refuses a group the checks cannot judge, before anything runs.
pub(super) fn check_shape(lanes: &[Lane]) -> Check {
    if lanes.is_empty() || lanes.iter().any(|l| l.steps.is_empty()) {
        return Err(setup("a group needs lanes, and every lane a step"));
    }
    for l in lanes {
        for s in &l.steps {
            let ok = matches!(
                s.op,
                Op::Stat { .. }
                    | Op::ListDir { .. }
                    | Op::ReadText { .. }
                    | Op::StreamText { .. }
                    | Op::ReadBytes { .. }
                    | Op::Write { .. }
                    | Op::Edit { .. }
                    | Op::Remove { .. }
                    | Op::Rename { .. }
            );
            if !ok
                || s.interfere != crate::step::Interfere::None
                || s.instance != 0
                || s.reuse
                || s.cwd.is_some()
            {
                return Err(setup(format!(
                    "a group runs reads, stats, listings, writes, edits, removes and renames, plain (the lane names the instance): not {}",
                    crate::step::describe(s)
                )));
            }
        }
        if l.repeat && l.steps.iter().any(|s| s.op.is_mutation()) {
            return Err(setup("only reads and stats repeat in a group"));
        }
    }
    if lanes.iter().all(|l| l.repeat) {
        return Err(setup("a group needs a lane that does not repeat"));
    }
    let writers = lanes
        .iter()
        .filter(|l| l.steps.iter().any(|s| s.op.is_mutation()))
        .count();
    if writers > 1 {
        let total: usize = lanes.iter().map(|l| l.steps.len()).sum();
        if lanes.iter().any(|l| l.repeat || l.steps.len() != 1) || total > MAX_BRUTE {
            return Err(setup(format!(
                "a group in which several lanes mutate has one step per lane, none repeated, at most {MAX_BRUTE} in all"
            )));
        }
    }
    Ok(())
}

/// Runs the lanes at once and collects every call with its times.
pub(super) fn run_lanes(
    lanes: &[Lane],
    jobs: &[Vec<Job>],
    fss: &[Arc<dyn FileSystem>],
    on: Spawn,
    reported: Option<&Reported>,
) -> Result<Vec<Done>, Failure> {
    let probed = reported.map(recording);
    let finished = Arc::new(AtomicBool::new(false));
    let once: usize = lanes.iter().filter(|l| !l.repeat).count();
    let remaining = Arc::new(std::sync::atomic::AtomicUsize::new(once));
    let lane_work = |k: usize| {
        let (fs, jobs, repeat) = (fss[k].clone(), jobs[k].clone(), lanes[k].repeat);
        let (finished, remaining) = (finished.clone(), remaining.clone());
        let probed = probed.clone();
        async move {
            let none = Signal::none();
            let mut out = Vec::new();
            let mut rounds = 0;
            loop {
                for (i, job) in jobs.iter().enumerate() {
                    let sent = Instant::now();
                    let signal = match &probed {
                        Some(p) if job.mutates() => p,
                        _ => &none,
                    };
                    let (seen, version) = perform(fs.as_ref(), job, signal).await;
                    out.push(Done {
                        lane: k,
                        job: i,
                        sent,
                        answered: Instant::now(),
                        seen,
                        version,
                    });
                }
                rounds += 1;
                if !repeat || finished.load(Ordering::Acquire) || rounds >= MAX_REPEATS {
                    break;
                }
            }
            if !repeat && remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                finished.store(true, Ordering::Release);
            }
            out
        }
    };
    let mut done = Vec::new();
    match on {
        Spawn::Tasks => {
            // On a thread of its own: the harness's step is itself inside a runtime, which
            // cannot start (or drop) another.
            let works: Vec<_> = (0..lanes.len()).map(lane_work).collect();
            let lanes_n = lanes.len();
            let result = std::thread::scope(|s| {
                s.spawn(move || -> Result<Vec<Done>, Failure> {
                    let rt = tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(lanes_n.max(1))
                        .enable_all()
                        .build()
                        .map_err(|e| setup(format!("cannot start a runtime: {e}")))?;
                    let barrier = Arc::new(tokio::sync::Barrier::new(lanes_n));
                    let handles: Vec<_> = works
                        .into_iter()
                        .map(|work| {
                            let barrier = barrier.clone();
                            rt.spawn(async move {
                                barrier.wait().await;
                                work.await
                            })
                        })
                        .collect();
                    let mut done = Vec::new();
                    for h in handles {
                        let lane = rt.block_on(h).map_err(|e| {
                            fail(FailureKind::Panic, format!("a lane panicked: {e}"))
                        })?;
                        done.extend(lane);
                    }
                    Ok(done)
                })
                .join()
            });
            match result {
                Ok(r) => done.extend(r?),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        Spawn::Threads => {
            let barrier = Arc::new(Barrier::new(lanes.len()));
            let results: Vec<Result<Vec<Done>, Failure>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..lanes.len())
                    .map(|k| {
                        let barrier = barrier.clone();
                        let work = lane_work(k);
                        s.spawn(move || -> Result<Vec<Done>, Failure> {
                            let rt = crate::sequences::suite_runtime()?;
                            barrier.wait();
                            Ok(rt.block_on(work))
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
            for r in results {
                done.extend(r?);
            }
        }
    }
    Ok(done)
}
