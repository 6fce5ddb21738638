//! Steps that run at the same time ([`Op::Together`]): compare-and-swap races, linearizability
//! batches and readers during writes, as one step type every property shares, so that every
//! concurrent failure is a trace `seam replay` runs again.
//!
//! Every lane starts on one barrier and runs its steps in order; each call is timed from just
//! before it is made to just after it returns. Then the group is checked against the model:
//!
//! * **one lane mutates** (a writer, and readers or stats beside it): the writer's steps are the
//!   model's sequence of states, and every other step must return what some state gives — a
//!   state no earlier than the last write that returned before the step started, no later than
//!   the last write that started before it returned, and never older than what the same lane
//!   saw before. A read that matches no state at all is a torn read. A listing is such a read
//!   of a directory: beside the entries a state gives it may show only the staging the
//!   mutations reported at their checkpoints (where the backend claims to report staging, they
//!   carry a probe that notes it) — anything else is litter a reader stumbled on;
//! * **several lanes mutate** (each one step): some order of all the steps that respects real
//!   time must explain every outcome (code and message, returned text, `before`), a one-to-one
//!   mapping of versions, and the bytes left in the storage. Where every lane is the same
//!   guarded mutation at one version, the outcome is first checked as the race it is: exactly
//!   one winner, every loser coded.
//!
//! The model then stands where the explaining order left it, and the case goes on.

use super::{Harness, StepRecord, show_bytes};
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Lane, Op, Spawn, Step, WriteGuard, render_path};
use futures_util::StreamExt;
use seam::{
    EditRequest, FileSystem, FsError, FsErrorCode, FsKind, FsPathKind, FsTarget, FsVersion,
    RemoveOptions, RenameOptions, ResolveOptions, SandboxPolicy, Signal, WriteIntent,
    WriteOperation,
};
use seam_model::{Guard, Interference, Model, ModelError, Resolved, SnapEntry, Version};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// The most steps a group whose lanes all mutate may have (every order of them is tried).
const MAX_BRUTE: usize = 7;
/// The most times a repeating lane runs its steps.
const MAX_REPEATS: usize = 100_000;
/// The most bytes `read_bytes` in a group reads.
const READ_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// What a call returned, comparable (versions apart).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Wrote {
        operation: WriteOperation,
        before: Option<String>,
        after: String,
    },
    Edited {
        before: String,
        after: String,
    },
    Read(Content),
    Stat(Option<(FsKind, Option<u64>)>),
    /// A listing: each entry's name, kind and size, in the order given.
    Listed(Vec<(String, FsKind, Option<u64>)>),
    Removed(FsPathKind),
    Renamed {
        kind: FsPathKind,
        replaced: bool,
    },
    Failed(FsErrorCode, String),
}

impl Seen {
    /// A listing, from its entries' names, kinds and sizes (the provider's and the model's alike).
    fn listed(entries: impl Iterator<Item = (String, FsKind, Option<u64>)>) -> Self {
        Seen::Listed(entries.collect())
    }

    fn show(&self) -> String {
        match self {
            Seen::Wrote {
                operation, after, ..
            } => format!("{operation:?} {}", show_bytes(after.as_bytes())),
            Seen::Edited { after, .. } => format!("edited {}", show_bytes(after.as_bytes())),
            Seen::Read(c) => c.show(),
            Seen::Stat(s) => format!("{s:?}"),
            Seen::Listed(entries) => format!(
                "the entries {:?}",
                entries.iter().map(|(n, ..)| n.as_str()).collect::<Vec<_>>()
            ),
            Seen::Removed(kind) => format!("removed ({kind:?})"),
            Seen::Renamed { kind, replaced } => format!(
                "renamed ({kind:?}{})",
                if *replaced { ", replacing" } else { "" }
            ),
            Seen::Failed(code, m) => format!("{code} {m:?}"),
        }
    }
}

/// What a read returned, kept small: a reader that loops over a 1 MiB file must not keep every
/// copy it read (the group is judged after it ran). Its length, its digest (the FNV-1a reports
/// print), and its start for reports; two contents are taken as the same when length and
/// digest agree.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Content {
    len: usize,
    hash: u64,
    head: Vec<u8>,
}

impl Content {
    fn of(bytes: &[u8]) -> Self {
        Content {
            len: bytes.len(),
            hash: crate::excerpt::fnv64(bytes),
            head: bytes[..bytes.len().min(57)].to_vec(),
        }
    }

    fn show(&self) -> String {
        if self.len <= self.head.len() {
            show_bytes(&self.head)
        } else {
            format!(
                "{:?}... ({} bytes, digest {:016x})",
                String::from_utf8_lossy(&self.head),
                self.len,
                self.hash
            )
        }
    }
}

/// One step of a group, ready to run: its target, and its guard resolved at the group's start.
#[derive(Clone)]
struct Job {
    op: Op,
    target: FsTarget,
    resolved: Resolved,
    intent: Option<WriteIntent>,
    edit_guard: Option<FsVersion>,
    model_guard: Option<Guard>,
    model_edit_guard: Option<Version>,
    /// A rename's destination, as an absolute display path.
    to: Option<String>,
    /// A rename's replace guard (provider's, model's).
    replace: Option<(FsVersion, Version)>,
    policy: Option<SandboxPolicy>,
}

impl Job {
    fn mutates(&self) -> bool {
        self.op.is_mutation()
    }
}

/// A call made and what came back.
#[derive(Clone, Debug)]
struct Done {
    lane: usize,
    job: usize,
    sent: Instant,
    answered: Instant,
    seen: Seen,
    version: Option<FsVersion>,
}

fn failed(e: &FsError) -> (Seen, Option<FsVersion>) {
    (Seen::Failed(e.code(), e.message().to_string()), None)
}

/// The staging entries a group's mutations reported at their checkpoints, by name.
type Reported = Arc<Mutex<BTreeSet<String>>>;

/// A signal that notes the names of the staging entries shown at every checkpoint and never
/// cancels: a listing in the group may show those (the contract lets a backend show the staging
/// it reports), and nothing else beside the directory's entries.
fn recording(reported: &Reported) -> Signal {
    let reported = reported.clone();
    Signal::with_probe(move |cp| {
        let mut names = reported.lock().unwrap_or_else(|p| p.into_inner());
        for path in cp.staging {
            names.insert(path.rsplit('/').next().unwrap_or(path).to_string());
        }
        false
    })
}

async fn perform(fs: &dyn FileSystem, job: &Job, signal: &Signal) -> (Seen, Option<FsVersion>) {
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

fn model_failed(e: &ModelError) -> (Seen, Option<Version>) {
    (Seen::Failed(e.code, e.message.clone()), None)
}

/// What the model says `job` returns from `model`'s state (mutating it for a mutation).
fn predict(model: &mut Model, job: &Job) -> (Seen, Option<Version>) {
    let r = &job.resolved;
    match &job.op {
        Op::Write { content, .. } => {
            match model
                .write_target(r, content, job.model_guard, &Interference::None)
                .outcome
            {
                Ok(w) => (
                    Seen::Wrote {
                        operation: w.operation,
                        before: w.before,
                        after: w.after,
                    },
                    Some(w.version),
                ),
                Err(e) => model_failed(&e),
            }
        }
        Op::Edit {
            old,
            new,
            replace_all,
            ..
        } => match model.edit_target(
            r,
            old,
            new,
            *replace_all,
            job.model_edit_guard,
            &Interference::None,
        ) {
            Ok((v, before, after)) => (Seen::Edited { before, after }, Some(v)),
            Err(e) => model_failed(&e),
        },
        Op::Remove { directory, .. } => {
            match model.remove(&r.display, job.model_edit_guard, *directory) {
                Ok(kind) => (Seen::Removed(kind), None),
                Err(e) => model_failed(&e),
            }
        }
        Op::Rename { .. } => match model.rename(
            &r.display,
            job.to.as_deref().unwrap_or_default(),
            job.model_edit_guard,
            job.replace.as_ref().map(|(_, m)| *m),
        ) {
            Ok(o) => (
                Seen::Renamed {
                    kind: o.kind,
                    replaced: o.replaced,
                },
                Some(o.version),
            ),
            Err(e) => model_failed(&e),
        },
        _ => predict_read(model, job),
    }
}

/// What the model says a read or a stat returns from `model`'s state (it changes nothing, so
/// it needs no copy of the model).
fn predict_read(model: &Model, job: &Job) -> (Seen, Option<Version>) {
    let r = &job.resolved;
    match &job.op {
        Op::ReadText { .. } | Op::StreamText { .. } => match model.read_text_target(r) {
            Ok(t) => (Seen::Read(Content::of(t.as_bytes())), None),
            Err(e) => model_failed(&e),
        },
        Op::ReadBytes { max, .. } => match model.read_bytes_target(r, (*max).min(READ_BYTES_MAX)) {
            Ok(b) => (Seen::Read(Content::of(&b)), None),
            Err(e) => model_failed(&e),
        },
        Op::Stat { .. } => match model.stat_target(r) {
            Ok(info) => {
                let v = info.as_ref().map(|i| i.version);
                (Seen::Stat(info.map(|i| (i.kind, i.size))), v)
            }
            Err(e) => model_failed(&e),
        },
        Op::ListDir { .. } => match model.list_dir_target(r) {
            Ok(entries) => (
                Seen::listed(entries.into_iter().map(|e| (e.name, e.kind, e.size))),
                None,
            ),
            Err(e) => model_failed(&e),
        },
        // Refused before the group runs (`check_shape`); a mutation goes through `predict`.
        _ => (
            Seen::Failed(FsErrorCode::IoError, "not a step a group reads with".into()),
            None,
        ),
    }
}

/// What the model says a call returns, with the version it carries.
type Predicted = (Seen, Option<Version>);

/// A one-to-one mapping between model versions and provider versions.
#[derive(Clone, Default)]
struct Versions {
    forward: HashMap<Version, FsVersion>,
    backward: HashMap<FsVersion, Version>,
}

impl Versions {
    fn pair(&mut self, model: Option<Version>, seen: Option<&FsVersion>) -> Result<(), String> {
        let (m, s) = match (model, seen) {
            (Some(m), Some(s)) => (m, s),
            (None, None) => return Ok(()),
            (m, s) => {
                return Err(format!(
                    "version presence differs: model {m:?}, provider {:?}",
                    s.map(FsVersion::as_str)
                ));
            }
        };
        if let Some(v) = self.forward.get(&m)
            && v != s
        {
            return Err(format!(
                "one state has two versions ({} and {})",
                v.as_str(),
                s.as_str()
            ));
        }
        if let Some(other) = self.backward.get(s)
            && *other != m
        {
            return Err(format!(
                "version {} stands for two different states",
                s.as_str()
            ));
        }
        self.forward.insert(m, s.clone());
        self.backward.insert(s.clone(), m);
        Ok(())
    }
}

/// Every order of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn go(rest: &mut Vec<usize>, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if rest.is_empty() {
            out.push(prefix.clone());
            return;
        }
        for i in 0..rest.len() {
            let x = rest.remove(i);
            prefix.push(x);
            go(rest, prefix, out);
            prefix.pop();
            rest.insert(i, x);
        }
    }
    let mut out = Vec::new();
    go(&mut (0..n).collect(), &mut Vec::new(), &mut out);
    out
}

fn setup(message: impl Into<String>) -> Failure {
    fail(FailureKind::Setup, message)
}

/// What a group's calls were, by when they were sent and answered: reads sent while a mutation
/// of another lane was in flight, and those the backend answered within it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Overlap {
    /// Reads and stats made beside a mutating lane.
    pub reads: u64,
    /// Of those, sent while one of its mutations was in flight.
    pub sent_during: u64,
    /// Of those, sent after the mutation was sent and answered before it was (clearing its
    /// ends by a tenth of it, at least 2 ms: the times are taken by the threads around the
    /// calls, so a read queued just ahead of the write may carry times just inside it).
    pub served_during: u64,
}

fn overlap(done: &[Done], jobs: &[Vec<Job>]) -> Overlap {
    let writes: Vec<(Instant, Instant)> = done
        .iter()
        .filter(|d| jobs[d.lane][d.job].mutates())
        .map(|d| (d.sent, d.answered))
        .collect();
    let mut o = Overlap::default();
    for d in done.iter().filter(|d| !jobs[d.lane][d.job].mutates()) {
        o.reads += 1;
        if writes.iter().any(|&(ws, we)| d.sent > ws && d.sent < we) {
            o.sent_during += 1;
        }
        let within = |&(ws, we): &(Instant, Instant)| {
            let margin = ((we - ws) / 10).max(Duration::from_millis(2));
            d.sent > ws + margin && d.answered + margin < we
        };
        if writes.iter().any(within) {
            o.served_during += 1;
        }
    }
    o
}

/// Whether a listing was answered within a mutation of another lane (sent after it, answered
/// before it).
fn listed_during(done: &[Done], jobs: &[Vec<Job>]) -> bool {
    done.iter()
        .filter(|d| matches!(jobs[d.lane][d.job].op, Op::ListDir { .. }))
        .any(|l| {
            done.iter().any(|w| {
                w.lane != l.lane
                    && jobs[w.lane][w.job].mutates()
                    && l.sent > w.sent
                    && l.answered < w.answered
            })
        })
}

impl Harness {
    /// Runs a group and checks it (see the module docs).
    pub(super) async fn together_step(
        &mut self,
        lanes: &[Lane],
        on: Spawn,
        rec: &mut StepRecord,
    ) -> Check {
        check_shape(lanes)?;
        // Every path resolved, every guard taken, before anything runs.
        let root = self.root.clone();
        let mut jobs: Vec<Vec<Job>> = Vec::new();
        for lane in lanes {
            let mut lane_jobs = Vec::new();
            for step in &lane.steps {
                let path = render_path(step.op.path().unwrap_or_default(), &root);
                let Some((target, resolved)) = self.resolve_both(&path, rec).await? else {
                    return Err(setup(format!(
                        "a step of a group must name a path that resolves: {path:?} does not"
                    )));
                };
                lane_jobs.push(self.job(step, target, resolved)?);
            }
            jobs.push(lane_jobs);
        }
        let fss: Vec<Arc<dyn FileSystem>> = lanes
            .iter()
            .map(|l| self.instance(l.instance))
            .collect::<Result<_, _>>()?;

        rec.expected = "an order of the model that explains every lane".into();
        // Where the backend reports its staging, the mutations carry a probe that notes it.
        let reported: Option<Reported> = self.caps.staging_probe.then(Reported::default);
        let mut done = run_lanes(lanes, &jobs, &fss, on, reported.as_ref())?;
        let staging = reported
            .map(|r| r.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default();
        for d in &mut done {
            if let Seen::Listed(entries) = &mut d.seen {
                entries.retain(|(name, ..)| !staging.contains(name));
            }
        }
        for d in &done {
            self.stats.op(jobs[d.lane][d.job].op.kind());
            if jobs[d.lane][d.job].mutates() {
                self.stats.op_committed(!matches!(d.seen, Seen::Failed(..)));
            }
        }
        self.epoch += 1;
        let o = overlap(&done, &jobs);
        let listed_during = listed_during(&done, &jobs);
        self.stats.group_reads += o.reads;
        self.stats.group_reads_sent_during += o.sent_during;
        self.stats.group_reads_served_during += o.served_during;
        // What came back, briefly: every call of the lanes that ran once, and how many calls
        // the repeating ones made (their reads are checked below, one by one).
        let once: Vec<String> = done
            .iter()
            .filter(|d| !lanes[d.lane].repeat)
            .map(|d| format!("lane {} #{}: {}", d.lane, d.job, d.seen.show()))
            .collect();
        let repeated = done.iter().filter(|d| lanes[d.lane].repeat).count();
        rec.actual = format!(
            "{}{}",
            crate::excerpt::excerpt(&once.join("; ")),
            if repeated > 0 {
                format!("; {repeated} calls by the repeating lanes")
            } else {
                String::new()
            }
        );

        let writers = jobs.iter().filter(|l| l.iter().any(Job::mutates)).count();
        let explained = if writers <= 1 {
            let instances: Vec<u8> = lanes.iter().map(|l| l.instance).collect();
            self.one_writer(&jobs, &done, &instances)?
        } else {
            self.race(&jobs, &done)?;
            let now = self.entries_now(&jobs).await;
            self.some_order(&jobs, &done, &now)?
        };
        rec.expected = format!("explained by {explained}");
        if lanes.len() > 1
            && jobs
                .iter()
                .flatten()
                .any(|j| matches!(j.op, Op::Remove { .. } | Op::Rename { .. }))
        {
            self.hit(Rule::LinearizableNamespace);
        }
        if listed_during {
            self.hit(Rule::VisibilityListing);
        }
        if lanes.len() > 1 && writers > 0 {
            self.hit(Rule::Linearizable);
            if lanes.iter().any(|l| l.instance != lanes[0].instance) {
                self.hit(Rule::LinearizableAcrossInstances);
            }
        }
        Ok(())
    }

    /// A step of a group, its target resolved, its guard taken from what was seen before.
    fn job(&self, step: &Step, target: FsTarget, resolved: Resolved) -> Result<Job, Failure> {
        let policy = if step.op.is_mutation() {
            let (p, f) = self.fence_of(step, &resolved);
            if f.denial.is_some() {
                return Err(setup(
                    "a mutation in a group must not be one the fence denies (give it a policy that lets it through)",
                ));
            }
            p
        } else {
            None
        };
        let mut job = Job {
            op: step.op.clone(),
            target,
            resolved: resolved.clone(),
            intent: None,
            edit_guard: None,
            model_guard: None,
            model_edit_guard: None,
            to: None,
            replace: None,
            policy,
        };
        match &step.op {
            Op::Write { guard, .. } => match guard {
                WriteGuard::None => {}
                WriteGuard::CreateIfAbsent => {
                    job.intent = Some(WriteIntent::CreateIfAbsent);
                    job.model_guard = Some(Guard::CreateIfAbsent);
                }
                WriteGuard::ReplaceIfVersion(v) => {
                    let (m, token) = self.recent(*v, Some(&resolved));
                    job.intent = Some(WriteIntent::ReplaceIfVersion { version: token });
                    job.model_guard = Some(Guard::ReplaceIfVersion(m));
                }
            },
            Op::Edit { guard: Some(v), .. } | Op::Remove { guard: Some(v), .. } => {
                let (m, token) = self.recent(*v, Some(&resolved));
                job.edit_guard = Some(token);
                job.model_edit_guard = Some(m);
            }
            Op::Rename {
                to, guard, replace, ..
            } => {
                if let Some(v) = guard {
                    let (m, token) = self.recent(*v, Some(&resolved));
                    job.edit_guard = Some(token);
                    job.model_edit_guard = Some(m);
                }
                let to = render_path(to, &self.root);
                let to = if to.starts_with('/') {
                    to
                } else {
                    format!("{}/{to}", self.root)
                };
                if let Some(v) = replace {
                    let dest = self.model.resolve(&to).map_err(|e| {
                        setup(format!(
                            "a rename's destination must resolve: {}",
                            e.message
                        ))
                    })?;
                    let (m, token) = self.recent(*v, Some(&dest));
                    job.replace = Some((token, m));
                }
                job.to = Some(to);
            }
            _ => {}
        }
        Ok(job)
    }

    /// One lane mutates: its steps are the model's states, every other step must see one.
    /// `instances` names each lane's instance (a failure says which one read what).
    fn one_writer(
        &mut self,
        jobs: &[Vec<Job>],
        done: &[Done],
        instances: &[u8],
    ) -> Result<String, Failure> {
        let writer = jobs.iter().position(|l| l.iter().any(Job::mutates));
        let mut states = vec![self.model.clone()];
        let mut versions = Versions::default();
        // The writer's calls in order, and the window each state was current in.
        let mut writes: Vec<&Done> = match writer {
            Some(w) => done.iter().filter(|d| d.lane == w).collect(),
            None => Vec::new(),
        };
        writes.sort_by_key(|d| d.job);
        for d in &writes {
            let job = &jobs[d.lane][d.job];
            let mut next = states.last().cloned().unwrap_or_else(|| self.model.clone());
            let (want, v) = predict(&mut next, job);
            self.stats.check();
            if !self.same_seen(&want, &d.seen) {
                return Err(fail(
                    FailureKind::Outcome,
                    format!(
                        "lane {} step {} ({}) returned {}, the model says {}",
                        d.lane,
                        d.job,
                        job.op.kind(),
                        d.seen.show(),
                        want.show()
                    ),
                ));
            }
            versions
                .pair(v, d.version.as_ref())
                .map_err(|w| fail(FailureKind::VersionLaw, w))?;
            states.push(next);
        }
        // Every other call: the earliest state it may see and the latest, by real time.
        let mut last_seen: HashMap<usize, usize> = HashMap::new();
        let mut predicted: HashMap<(usize, usize), Vec<Predicted>> = HashMap::new();
        let mut others: Vec<&Done> = done.iter().filter(|d| Some(d.lane) != writer).collect();
        others.sort_by_key(|d| (d.lane, d.sent));
        for d in others {
            let job = &jobs[d.lane][d.job];
            let lo_time = writes.iter().filter(|w| w.answered < d.sent).count();
            let hi_time = writes.iter().filter(|w| w.sent < d.answered).count();
            let lo = lo_time.max(last_seen.get(&d.lane).copied().unwrap_or(0));
            let mut matching = Vec::new();
            // What each state gives this lane's step, worked out once (a reader repeats it).
            let wants = predicted
                .entry((d.lane, d.job))
                .or_insert_with(|| states.iter().map(|m| predict_read(m, job)).collect());
            for (i, (want, v)) in wants.iter().enumerate() {
                let (want, v) = (want, *v);
                if self.same_seen(want, &d.seen)
                    && versions.clone().pair(v, d.version.as_ref()).is_ok()
                {
                    matching.push((i, v));
                }
            }
            self.stats.check();
            let Some(&(i, v)) = matching.iter().find(|(i, _)| *i >= lo && *i <= hi_time) else {
                let on = match instances.get(d.lane) {
                    Some(&i) if instances.iter().any(|&o| o != i) => {
                        format!(" (on instance {i})")
                    }
                    _ => String::new(),
                };
                let what = format!(
                    "a {} in lane {}{on} returned {}",
                    job.op.kind(),
                    d.lane,
                    d.seen.show()
                );
                let listing = matches!(job.op, Op::ListDir { .. });
                return Err(match matching.first() {
                    None if listing => fail(
                        FailureKind::Litter,
                        format!(
                            "{what}: no state the directory had while the writes went on ({} states) shows that{}",
                            states.len(),
                            if self.caps.staging_probe {
                                " beside the staging entries the mutations reported"
                            } else {
                                " (the backend reports no staging, so a listing shows nothing but the directory's entries)"
                            }
                        ),
                    ),
                    None => fail(
                        FailureKind::TornRead,
                        format!(
                            "{what}: no state the file ever had while the writes went on ({} states) gives that",
                            states.len()
                        ),
                    ),
                    Some((i, _)) => fail(
                        FailureKind::Linearizability,
                        format!(
                            "{what}: the state after {i} write(s), but it was sent after {lo} had returned (or read a newer state before in its lane) and answered before write {} started",
                            hi_time + 1
                        ),
                    ),
                });
            };
            versions
                .pair(v, d.version.as_ref())
                .map_err(|w| fail(FailureKind::VersionLaw, w))?;
            last_seen.insert(d.lane, i);
        }
        let end = states.pop().unwrap_or_else(|| self.model.clone());
        self.settle(end, jobs, &writes, &versions)?;
        Ok(format!("the writer's {} step(s) in order", writes.len()))
    }

    /// Several lanes mutate, each one step, all the same guarded mutation of one file at one
    /// version: exactly one winner, every loser coded.
    fn race(&mut self, jobs: &[Vec<Job>], done: &[Done]) -> Check {
        let singles: Vec<&Job> = jobs.iter().filter_map(|l| l.first()).collect();
        let Some(first) = singles.first() else {
            return Ok(());
        };
        let same_guard = guard_of(first).is_some()
            && singles.iter().all(|j| {
                j.mutates()
                    && j.resolved.key == first.resolved.key
                    && guard_of(j) == guard_of(first)
            });
        if !same_guard {
            return Ok(());
        }
        // One of them alone would win from here: then exactly one may.
        let mut m = self.model.clone();
        if matches!(predict(&mut m, first).0, Seen::Failed(..)) {
            return Ok(());
        }
        self.stats.check();
        let winners = done
            .iter()
            .filter(|d| !matches!(d.seen, Seen::Failed(..)))
            .count();
        let shown: Vec<String> = done.iter().map(|d| d.seen.show()).collect();
        if winners != 1 {
            return Err(fail(
                FailureKind::Race,
                format!(
                    "{winners} winners (must be exactly one) of {} racers guarded alike: [{}]",
                    done.len(),
                    shown.join(", ")
                ),
            ));
        }
        let loser = if first.intent == Some(WriteIntent::CreateIfAbsent) {
            FsErrorCode::NotObserved
        } else {
            FsErrorCode::StaleVersion
        };
        for d in done {
            self.stats.check();
            if let Seen::Failed(code, _) = &d.seen
                && *code != loser
            {
                return Err(fail(
                    FailureKind::Race,
                    format!("a loser got {code}, must be {loser}"),
                ));
            }
        }
        Ok(())
    }

    /// What `lstat` shows now at every path the group named (targets and rename destinations):
    /// the version an explaining order leaves at each must be the one the storage has. Without
    /// this, an order that explains every answer and every byte could still pair the tokens
    /// the calls returned with the wrong changes — two renames ordered before an edit that in
    /// fact came first — and the next look at the file would call a correct backend's token
    /// reused.
    async fn entries_now(&self, jobs: &[Vec<Job>]) -> Vec<(String, FsVersion)> {
        let mut paths: Vec<String> = Vec::new();
        for j in jobs.iter().flatten() {
            for p in [Some(&j.target.display_path), j.to.as_ref()]
                .into_iter()
                .flatten()
            {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
        }
        let mut out = Vec::new();
        for p in paths {
            if let Ok(Some(info)) = self
                .fs
                .lstat(&p, ResolveOptions::default(), &Signal::none())
                .await
                && info.kind != FsPathKind::Directory
            {
                out.push((p, info.version));
            }
        }
        out
    }

    /// Several lanes mutate: some order of all their steps that respects real time explains
    /// every outcome, the versions one to one (also with what was seen before the group and
    /// with what the storage shows now), and the storage now.
    fn some_order(
        &mut self,
        jobs: &[Vec<Job>],
        done: &[Done],
        now: &[(String, FsVersion)],
    ) -> Result<String, Failure> {
        let snapshot = self
            .world
            .snapshot()
            .map_err(|e| setup(format!("cannot read the world back: {e}")))?;
        let modes = self.caps.modes;
        let strip = |m: &BTreeMap<String, SnapEntry>| -> BTreeMap<String, SnapEntry> {
            m.iter()
                .map(|(k, v)| {
                    let v = if modes { v.clone() } else { v.without_mode() };
                    (k.clone(), v)
                })
                .collect()
        };
        let disk = strip(&snapshot);
        let mut nearest: Option<(usize, String)> = None;
        for order in permutations(done.len()) {
            let respects = order.iter().enumerate().all(|(pos, &i)| {
                order[pos + 1..]
                    .iter()
                    .all(|&j| done[j].answered >= done[i].sent)
            });
            if !respects {
                continue;
            }
            let mut model = self.model.clone();
            let mut versions = Versions::default();
            let mut why = None;
            for (depth, &i) in order.iter().enumerate() {
                let d = &done[i];
                let job = &jobs[d.lane][d.job];
                let (want, v) = predict(&mut model, job);
                if !self.same_seen(&want, &d.seen) {
                    why = Some((
                        depth,
                        format!(
                            "order {order:?}: lane {} ({}) returned {}, this order predicts {}",
                            d.lane,
                            job.op.kind(),
                            d.seen.show(),
                            want.show()
                        ),
                    ));
                    break;
                }
                if let Err(w) = versions.pair(v, d.version.as_ref()) {
                    why = Some((depth, format!("order {order:?}: lane {}: {w}", d.lane)));
                    break;
                }
            }
            if why.is_none() {
                for (path, token) in now {
                    let Ok(Some(m)) = model.lstat(path) else {
                        continue;
                    };
                    if m.kind == FsPathKind::Directory {
                        continue;
                    }
                    if let Err(w) = versions.pair(Some(m.version), Some(token)) {
                        why = Some((
                            order.len(),
                            format!("order {order:?}: what it leaves at {path:?} now: {w}"),
                        ));
                        break;
                    }
                }
            }
            if why.is_none() {
                let mut laws = self.laws.clone();
                for (m, token) in &versions.forward {
                    if let Err(w) = laws.observe(m, token.as_str()) {
                        why = Some((order.len(), format!("order {order:?}: {w}")));
                        break;
                    }
                }
            }
            if why.is_none() && strip(&model.snapshot()) != disk {
                let (holds, leaves) = crate::excerpt::differ(
                    &show_tree(&disk),
                    &show_tree(&strip(&model.snapshot())),
                );
                why = Some((
                    order.len(),
                    format!(
                        "order {order:?}: the storage holds {holds}, this order leaves {leaves}"
                    ),
                ));
            }
            match why {
                None => {
                    self.stats.checks(done.len() as u64 + 1);
                    let writes: Vec<&Done> = order
                        .iter()
                        .map(|&i| &done[i])
                        .filter(|d| jobs[d.lane][d.job].mutates())
                        .collect();
                    self.settle(model, jobs, &writes, &versions)?;
                    return Ok(format!("the order {order:?}"));
                }
                Some((depth, w)) => {
                    if nearest.as_ref().is_none_or(|(d, _)| depth > *d) {
                        nearest = Some((depth, w));
                    }
                }
            }
        }
        let observed: Vec<String> = done
            .iter()
            .map(|d| format!("lane {}: {}", d.lane, d.seen.show()))
            .collect();
        Err(fail(
            FailureKind::Linearizability,
            format!(
                "no sequential order explains what happened; observed [{}]; closest {}",
                observed.join(", "),
                nearest.map_or_else(String::new, |(_, w)| w)
            ),
        ))
    }

    /// The model stands where the explaining order left it; every version seen is observed
    /// (the version laws across the whole case), the last one of each file noted for guards.
    fn settle(
        &mut self,
        model: Model,
        jobs: &[Vec<Job>],
        writes: &[&Done],
        versions: &Versions,
    ) -> Check {
        self.model = model;
        for (m, token) in &versions.forward {
            self.observe(m, token, None)?;
        }
        for d in writes {
            if let Some(token) = &d.version {
                let job = &jobs[d.lane][d.job];
                if let Some(m) = versions.backward.get(token) {
                    self.note_latest(&job.resolved, m, token);
                    self.history.push((*m, token.clone()));
                }
            }
        }
        Ok(())
    }

    fn same_seen(&self, want: &Seen, got: &Seen) -> bool {
        match (want, got) {
            (Seen::Failed(a, am), Seen::Failed(b, bm)) => {
                a == b && (self.config.messages != super::MessageCheck::Exact || am == bm)
            }
            (a, b) => a == b,
        }
    }
}

/// What a guarded mutation is guarded by: nothing there, or a version.
#[derive(Clone, Debug, PartialEq, Eq)]
enum At {
    Absent,
    Version(FsVersion),
}

/// A mutation's guard, for telling racers at one version apart from others.
fn guard_of(j: &Job) -> Option<At> {
    match (&j.intent, &j.edit_guard) {
        (Some(WriteIntent::CreateIfAbsent), _) => Some(At::Absent),
        (Some(WriteIntent::ReplaceIfVersion { version }), _) | (None, Some(version)) => {
            Some(At::Version(version.clone()))
        }
        _ => None,
    }
}

/// Refuses a group the checks cannot judge, before anything runs.
fn check_shape(lanes: &[Lane]) -> Check {
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
fn run_lanes(
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

/// A tree as people read it: each entry with its kind, a file's size and an excerpt of its bytes,
/// modes in octal (`{"a": file 5 bytes "hello" mode 0600, "d": dir mode 0755}`).
fn show_tree(tree: &BTreeMap<String, SnapEntry>) -> String {
    let mode = |m: &Option<u32>| m.map_or_else(String::new, |m| format!(" mode {m:04o}"));
    let entries: Vec<String> = tree
        .iter()
        .map(|(path, e)| {
            let what = match e {
                SnapEntry::File { bytes, mode: m } => format!(
                    "file {} bytes {:?}{}",
                    bytes.len(),
                    crate::excerpt::excerpt(&String::from_utf8_lossy(bytes)),
                    mode(m)
                ),
                SnapEntry::Dir { mode: m } => format!("dir{}", mode(m)),
                SnapEntry::Symlink { target } => format!("link -> {target:?}"),
                SnapEntry::Other => "other".to_string(),
            };
            format!("{path:?}: {what}")
        })
        .collect();
    format!("{{{}}}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_every_order_once() {
        let p = permutations(4);
        assert_eq!(p.len(), 24);
        let mut sorted = p.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 24);
        assert_eq!(permutations(2), vec![vec![0, 1], vec![1, 0]]);
    }

    #[test]
    fn a_version_standing_for_two_states_is_refused() {
        let mut v = Versions::default();
        let t = FsVersion::new("t");
        let one = Version::Object { n: 1 };
        assert!(v.pair(Some(one), Some(&t)).is_ok());
        assert!(v.pair(Some(one), Some(&t)).is_ok());
        assert!(v.pair(Some(Version::Object { n: 2 }), Some(&t)).is_err());
        assert!(v.pair(Some(one), Some(&FsVersion::new("u"))).is_err());
        assert!(v.pair(None, Some(&t)).is_err());
    }

    /// Only a read the backend answered within a write counts as served during it; one that
    /// queued behind it, one answered before it was sent, and one just inside either end (the
    /// threads' times may carry it there) do not.
    #[test]
    fn a_read_counts_as_served_during_a_write_only_if_answered_well_within_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let write = Step::plain(Op::Write {
            path: "a".into(),
            content: "x".into(),
            guard: WriteGuard::None,
        });
        let read = Step::plain(Op::ReadText { path: "a".into() });
        let job = |s: &Step| Job {
            op: s.op.clone(),
            target: FsTarget {
                key: seam::FsTargetKey::new("/r/a"),
                display_path: "/r/a".into(),
            },
            resolved: Resolved {
                display: "/r/a".into(),
                key: seam_model::Key(vec!["a".into()]),
            },
            intent: None,
            edit_guard: None,
            model_guard: None,
            model_edit_guard: None,
            to: None,
            replace: None,
            policy: None,
        };
        let jobs = vec![vec![job(&write)], vec![job(&read)]];
        let call = |lane: usize, sent: u64, answered: u64| Done {
            lane,
            job: 0,
            sent: at(sent),
            answered: at(answered),
            seen: Seen::Stat(None),
            version: None,
        };
        let done = vec![
            call(0, 100, 200),
            call(1, 120, 180), // served within
            call(1, 150, 250), // queued behind
            call(1, 50, 150),  // sent before: the write may not have started
            call(1, 210, 220), // after
            call(1, 105, 180), // sent just inside
            call(1, 120, 195), // answered just inside
        ];
        let o = overlap(&done, &jobs);
        assert_eq!((o.reads, o.sent_during, o.served_during), (6, 4, 1));
    }

    #[test]
    fn a_group_the_checks_cannot_judge_is_refused_before_it_runs() {
        let write = |p: &str| {
            Step::plain(Op::Write {
                path: p.into(),
                content: "x".into(),
                guard: WriteGuard::None,
            })
        };
        let read = Step::plain(Op::ReadText { path: "a".into() });
        assert!(check_shape(&[]).is_err());
        // Two writers, one of them with two steps: too many orders to judge.
        assert!(
            check_shape(&[
                Lane::of(vec![write("a"), write("a")]),
                Lane::of(vec![write("b")])
            ])
            .is_err()
        );
        // A repeating writer.
        let mut repeating = Lane::of(vec![write("a")]);
        repeating.repeat = true;
        assert!(check_shape(&[repeating, Lane::of(vec![read.clone()])]).is_err());
        // Only repeating lanes would never end.
        let mut reader = Lane::of(vec![read.clone()]);
        reader.repeat = true;
        assert!(check_shape(&[reader.clone()]).is_err());
        // A step that names its own instance, reuses a target or interferes: the lane says.
        for bad in [
            read.clone().on(1),
            read.clone().reusing(),
            {
                let mut s = read.clone();
                s.interfere = crate::step::Interfere::CancelledBeforeStart;
                s
            },
            Step::plain(Op::Lstat { path: "a".into() }),
        ] {
            assert!(check_shape(&[Lane::of(vec![write("a")]), Lane::of(vec![bad])]).is_err());
        }
        // Eight racers: more orders than are tried.
        let racers: Vec<Lane> = (0..8).map(|_| Lane::of(vec![write("a")])).collect();
        assert!(check_shape(&racers).is_err());
        assert!(check_shape(&racers[..MAX_BRUTE]).is_ok());
        // A writer with readers beside it; racers of one step each.
        assert!(check_shape(&[Lane::of(vec![write("a"), write("a")]), reader]).is_ok());
        assert!(check_shape(&[Lane::of(vec![write("a")]), Lane::of(vec![write("a")])]).is_ok());
    }
}
