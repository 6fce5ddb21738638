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

use super::{Harness, StepRecord};
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::step::{Lane, Op, Spawn, Step, WriteGuard, render_path};
use seam::{
    FileSystem, FsErrorCode, FsPathKind, FsTarget, FsVersion, ResolveOptions, Signal, WriteIntent,
};
use seam_model::{Guard, Model, Resolved, SnapEntry};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod predict;
mod run;
mod seen;
#[cfg(test)]
mod tests;

use predict::{Predicted, Versions, permutations, predict, predict_read};
use run::{Reported, check_shape, run_lanes};
use seen::{Done, Job, Seen};

/// The most steps a group whose lanes all mutate may have (every order of them is tried).
pub(super) const MAX_BRUTE: usize = 7;
/// The most times a repeating lane runs its steps.
pub(super) const MAX_REPEATS: usize = 100_000;
/// The most bytes `read_bytes` in a group reads.
pub(super) const READ_BYTES_MAX: u64 = 64 * 1024 * 1024;

pub(super) fn setup(message: impl Into<String>) -> Failure {
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
