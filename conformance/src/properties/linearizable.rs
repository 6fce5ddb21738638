//! `linearizable`: operations that really run at the same time must still be explained by *some*
//! sequential order of the model.
//!
//! Sequential sequences cannot see a lost update: an edit that read the file before another
//! writer published and then wrote its stale copy back, a guard checked in one critical section
//! and published in another, a `before` computed from a file that was replaced meanwhile. Here a
//! batch of two to four writes, edits, reads and stats on one or two files starts on a barrier,
//! on threads (or as tasks of a multi-threaded runtime), through one provider instance or — for a
//! backend that claims [`seam::Capability::SharedStorage`] — alternately through two instances
//! over one storage. Then every order of the batch is played on the model: the batch passes when
//! one order gives every observed outcome (code and message, or the returned text), a version
//! mapping that stays one-to-one, and the bytes now on disk. A failing batch is shrunk by
//! dropping operations while it still fails, and is reported with its seed and its operations.

use super::{Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::harness::MessageCheck;
use crate::rules::Rule;
use crate::stats::Stats;
use seam::{
    EditRequest, FileSystem, FsError, FsErrorCode, FsKind, FsTarget, FsVersion, ResolveOptions,
    SandboxPolicy, Signal, WriteIntent, WriteOperation,
};
use seam_model::{
    Guard, Interference, Model, ModelConfig, ModelError, Resolved, SnapEntry, Version, WorldOp,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Barrier};

/// `linearizable`.
pub struct Linearizable;

/// Batches per run through one instance (and as many again across two, when claimed).
pub const BATCHES: u64 = 64;
/// How often a candidate batch is re-run while shrinking (a race may not recur every time).
const SHRINK_TRIES: usize = 12;
/// The files a batch works on (the first one exists when the batch starts).
const FILES: [&str; 2] = ["a", "b"];
/// The first file's starting content: two words edits can aim at.
const BASE: &str = "alpha\nbeta\n";

impl Property for Linearizable {
    fn name(&self) -> &'static str {
        "linearizable"
    }

    fn summary(&self) -> &'static str {
        "batches of 2-4 writes, edits, reads and stats run at the same time are explained by some sequential order of the model"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let shared = cx.caps.shared_storage;
        let mut rng = SplitMix(cx.config.sequences.seed ^ 0x11ea_71ab);
        let modes: &[bool] = if shared { &[false, true] } else { &[false] };
        for &across in modes {
            for n in 0..BATCHES {
                let batch = Batch::generate(&mut rng, n, across);
                match run_batch(cx, &batch, &mut out.stats) {
                    Ok(()) => {
                        out.stats.rule(if across {
                            Rule::LinearizableAcrossInstances
                        } else {
                            Rule::Linearizable
                        });
                    }
                    Err(f) if f.kind == FailureKind::Linearizability => {
                        let (small, failure) = shrink(cx, batch, f);
                        return Err(Failure::new(
                            failure.kind,
                            format!(
                                "batch {n} ({}), seed {}: {}\n  operations: {}",
                                if across {
                                    "across two instances"
                                } else {
                                    "one instance"
                                },
                                cx.config.sequences.seed,
                                failure.message,
                                small.describe()
                            ),
                        ));
                    }
                    Err(f) => {
                        return Err(Failure::new(f.kind, format!("batch {n}: {}", f.message)));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The batch generator's randomness: SplitMix64, so a seed names the same batches on every
/// platform and version of the suite's dependencies.
struct SplitMix(u64);

impl SplitMix {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 32) as u32
    }
}

/// A write's guard, in terms of the batch's starting state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BatchGuard {
    None,
    CreateIfAbsent,
    /// The version the file had when the batch started.
    AtStart,
}

#[derive(Clone, Debug)]
enum Op {
    Write {
        file: usize,
        content: String,
        guard: BatchGuard,
    },
    Edit {
        file: usize,
        old: String,
        new: String,
        guarded: bool,
    },
    Read {
        file: usize,
    },
    Stat {
        file: usize,
    },
}

impl Op {
    fn describe(&self) -> String {
        match self {
            Op::Write {
                file,
                content,
                guard,
            } => format!("write {} {content:?} guard {guard:?}", FILES[*file]),
            Op::Edit {
                file,
                old,
                new,
                guarded,
            } => format!(
                "edit {} {old:?} -> {new:?}{}",
                FILES[*file],
                if *guarded { " at start version" } else { "" }
            ),
            Op::Read { file } => format!("read {}", FILES[*file]),
            Op::Stat { file } => format!("stat {}", FILES[*file]),
        }
    }
}

/// One batch: the operations, and how they run.
#[derive(Clone, Debug)]
struct Batch {
    ops: Vec<Op>,
    /// Alternate the operations between two instances over one storage.
    across: bool,
    /// Run them as tasks of a multi-threaded runtime instead of on threads of their own.
    tasks: bool,
}

impl Batch {
    fn generate(rng: &mut SplitMix, n: u64, across: bool) -> Batch {
        let len = 2 + (rng.next_u32() % 3) as usize;
        let ops = (0..len)
            .map(|i| {
                let file = usize::from(rng.next_u32().is_multiple_of(4));
                match rng.next_u32() % 10 {
                    0..=3 => Op::Write {
                        file,
                        content: format!("w{i}\nalpha\n"),
                        guard: match rng.next_u32() % 3 {
                            0 => BatchGuard::None,
                            1 => BatchGuard::CreateIfAbsent,
                            _ => BatchGuard::AtStart,
                        },
                    },
                    4..=7 => {
                        let old = if rng.next_u32().is_multiple_of(2) {
                            "alpha"
                        } else {
                            "beta"
                        };
                        Op::Edit {
                            file,
                            old: old.into(),
                            new: format!("e{i}"),
                            guarded: rng.next_u32().is_multiple_of(2),
                        }
                    }
                    8 => Op::Read { file },
                    _ => Op::Stat { file },
                }
            })
            .collect();
        Batch {
            ops,
            across,
            tasks: n % 2 == 1,
        }
    }

    fn describe(&self) -> String {
        let ops: Vec<String> = self.ops.iter().map(Op::describe).collect();
        format!(
            "[{}] on {}",
            ops.join("; "),
            if self.tasks { "tasks" } else { "threads" }
        )
    }
}

/// What an operation returned, in comparable form (versions apart).
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
    Read(String),
    Stat(Option<(FsKind, Option<u64>)>),
    Failed(FsErrorCode, String),
}

/// An observed outcome with the version it carried (mutations and stats).
type Observed = (Seen, Option<FsVersion>);
/// When a call started and when it returned.
type Span = (std::time::Instant, std::time::Instant);
/// A predicted outcome with the model version it carries.
type Predicted = (Seen, Option<Version>);

fn failed(e: &FsError) -> Observed {
    (Seen::Failed(e.code(), e.message().to_string()), None)
}

fn model_failed(e: &ModelError) -> Predicted {
    (Seen::Failed(e.code, e.message.clone()), None)
}

fn setup(e: impl std::fmt::Display) -> Failure {
    fail(FailureKind::Setup, e.to_string())
}

/// Runs one batch on a fresh subject and checks it.
fn run_batch(cx: &Context, batch: &Batch, stats: &mut Stats) -> Result<(), Failure> {
    let options = cx.options();
    let subject = cx.factory.make(&options).map_err(setup)?;
    let root = subject.world.root_display();
    let mut fss: Vec<Arc<dyn FileSystem>> = vec![subject.fs.clone()];
    if batch.across {
        match cx.factory.reopen(&options, &subject) {
            Some(Ok(second)) => fss.push(second),
            Some(Err(e)) => return Err(setup(format!("cannot open a second instance: {e}"))),
            None => {
                return Err(fail(
                    FailureKind::Claim,
                    "the backend claims shared_storage but its factory gives no second instance (Factory::reopen)",
                ));
            }
        }
    }
    let mut model = Model::new(ModelConfig {
        diff_basis_max_bytes: subject.diff_basis_max_bytes,
        ..ModelConfig::new(root.clone())
    });
    let effect = model
        .world(&WorldOp::Write {
            path: FILES[0].into(),
            bytes: BASE.as_bytes().to_vec(),
            mode: 0o644,
        })
        .ok_or_else(|| setup("the model refused the starting file"))?;
    subject.world.apply(&effect).map_err(setup)?;

    let rt = cx.runtime()?;
    let opts = ResolveOptions { cwd: Some(&root) };
    let mut targets = Vec::new();
    let mut resolved = Vec::new();
    let mut start = Vec::new();
    for name in FILES {
        let t = rt
            .block_on(subject.fs.resolve(name, opts, &Signal::none()))
            .map_err(|e| {
                fail(
                    FailureKind::Outcome,
                    format!("resolve {name}: {}", e.message()),
                )
            })?;
        let r = model
            .resolve(name)
            .map_err(|e| setup(format!("model resolve {name}: {}", e.message)))?;
        let seen = rt
            .block_on(subject.fs.stat(&t, &Signal::none()))
            .map_err(|e| {
                fail(
                    FailureKind::Outcome,
                    format!("stat {name}: {}", e.message()),
                )
            })?
            .map(|i| i.version);
        let predicted = model
            .stat_target(&r)
            .map_err(|e| setup(e.message))?
            .map(|i| i.version);
        targets.push(t);
        resolved.push(r);
        start.push((seen, predicted));
    }
    let through = super::let_through(subject.fs.as_ref(), &root);

    // Every instance reads every file first, so one that caches what it read is warm when the
    // batch changes the files through another.
    for (i, fs) in fss.iter().enumerate() {
        for (j, t) in targets.iter().enumerate() {
            let want = if start[j].1.is_some() {
                Some(BASE)
            } else {
                None
            };
            let got = rt.block_on(fs.read_text(t, &Signal::none()));
            match (&got, want) {
                (Ok(text), Some(want)) if text == want => {}
                (Err(e), None) if e.code() == FsErrorCode::NotFound => {}
                _ => {
                    return Err(fail(
                        FailureKind::Outcome,
                        format!(
                            "before the batch, instance {} read {} as {:?}; it holds {:?}",
                            i + 1,
                            FILES[j],
                            got.map_err(|e| e.code()),
                            want
                        ),
                    ));
                }
            }
            stats.checks(1);
        }
    }

    let timed = execute(batch, &fss, &targets, &start, through.as_ref())?;
    let spans: Vec<Span> = timed.iter().map(|(_, span)| *span).collect();
    let observed: Vec<Observed> = timed.into_iter().map(|(o, _)| o).collect();
    let snapshot = subject.world.snapshot().map_err(setup)?;
    let mut finals = Vec::new();
    for t in &targets {
        let v = rt
            .block_on(subject.fs.stat(t, &Signal::none()))
            .map_err(|e| fail(FailureKind::Outcome, format!("final stat: {}", e.message())))?
            .map(|i| i.version);
        finals.push(v);
    }
    // Settled: every instance now reads and stats what the storage holds (one that serves a
    // stale copy shows here; no order of the batch explains a read of a state it replaced).
    for (i, fs) in fss.iter().enumerate().skip(1) {
        for (j, t) in targets.iter().enumerate() {
            let want = match snapshot.get(FILES[j]) {
                Some(SnapEntry::File { bytes, .. }) => Some(String::from_utf8_lossy(bytes)),
                _ => None,
            };
            let got = rt.block_on(fs.read_text(t, &Signal::none()));
            let read_ok = match (&got, &want) {
                (Ok(text), Some(want)) => text == want,
                (Err(e), None) => e.code() == FsErrorCode::NotFound,
                _ => false,
            };
            let version = rt
                .block_on(fs.stat(t, &Signal::none()))
                .map(|i| i.map(|i| i.version));
            let stat_ok = version.as_ref().is_ok_and(|v| *v == finals[j]);
            if !read_ok || !stat_ok {
                return Err(fail(
                    FailureKind::Linearizability,
                    format!(
                        "after the batch (all of it returned), instance {} read {} as {:?} at {:?}, but it holds {:?} at {:?}: a stale view no order explains",
                        i + 1,
                        FILES[j],
                        got.map_err(|e| e.code()),
                        version.map_err(|e| e.code()),
                        want,
                        finals[j]
                    ),
                ));
            }
            stats.checks(2);
        }
    }
    drop(fss);
    drop(subject);

    let check = Check {
        model: &model,
        resolved: &resolved,
        start: &start,
        observed: &observed,
        finals: &finals,
        snapshot: &snapshot,
        modes: cx.caps.permissions,
        messages: cx.config.sequences.messages == MessageCheck::Exact,
    };
    let mut nearest: Option<(usize, String)> = None;
    // Only orders that respect real time: an operation that returned before another started
    // comes first (what makes this linearizability, not mere serializability).
    let respects = |order: &[usize]| {
        order
            .iter()
            .enumerate()
            .all(|(pos, &i)| order[pos + 1..].iter().all(|&j| spans[j].1 >= spans[i].0))
    };
    for order in permutations(batch.ops.len()) {
        if !respects(&order) {
            continue;
        }
        match check.explains(batch, &order) {
            Ok(()) => {
                // What was checked: every outcome, every version, every final stat, the bytes.
                stats.checks(2 * batch.ops.len() as u64 + FILES.len() as u64 + 1);
                return Ok(());
            }
            Err((depth, why)) => {
                if nearest.as_ref().is_none_or(|(d, _)| depth > *d) {
                    nearest = Some((depth, format!("order {order:?}: {why}")));
                }
            }
        }
    }
    let observed_text: Vec<String> = observed
        .iter()
        .map(|(s, _)| crate::excerpt::excerpt(&format!("{s:?}")))
        .collect();
    Err(fail(
        FailureKind::Linearizability,
        format!(
            "no sequential order explains what happened; observed [{}]; closest {}",
            observed_text.join(", "),
            nearest.map_or_else(String::new, |(_, w)| w)
        ),
    ))
}

/// Runs the operations at the same time and collects what each returned.
fn execute(
    batch: &Batch,
    fss: &[Arc<dyn FileSystem>],
    targets: &[FsTarget],
    start: &[(Option<FsVersion>, Option<Version>)],
    through: Option<&SandboxPolicy>,
) -> Result<Vec<(Observed, Span)>, Failure> {
    let jobs: Vec<_> = batch
        .ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let fs = fss[i % fss.len()].clone();
            let file = match op {
                Op::Write { file, .. }
                | Op::Edit { file, .. }
                | Op::Read { file }
                | Op::Stat { file } => *file,
            };
            (
                fs,
                op.clone(),
                targets[file].clone(),
                start[file].0.clone(),
                through.cloned(),
            )
        })
        .collect();
    if batch.tasks {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(jobs.len())
            .enable_all()
            .build()
            .map_err(setup)?;
        let barrier = Arc::new(tokio::sync::Barrier::new(jobs.len()));
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|(fs, op, t, v, p)| {
                let barrier = barrier.clone();
                rt.spawn(async move {
                    barrier.wait().await;
                    let start = std::time::Instant::now();
                    let seen = perform(fs.as_ref(), &op, &t, v.as_ref(), p.as_ref()).await;
                    (seen, (start, std::time::Instant::now()))
                })
            })
            .collect();
        rt.block_on(async {
            let mut out = Vec::new();
            for h in handles {
                out.push(
                    h.await
                        .map_err(|e| fail(FailureKind::Panic, e.to_string()))?,
                );
            }
            Ok(out)
        })
    } else {
        let barrier = Arc::new(Barrier::new(jobs.len()));
        std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .into_iter()
                .map(|(fs, op, t, v, p)| {
                    let barrier = barrier.clone();
                    s.spawn(move || -> Result<(Observed, Span), Failure> {
                        let rt = crate::sequences::runtime().map_err(setup)?;
                        barrier.wait();
                        let start = std::time::Instant::now();
                        let seen =
                            rt.block_on(perform(fs.as_ref(), &op, &t, v.as_ref(), p.as_ref()));
                        Ok((seen, (start, std::time::Instant::now())))
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
        })
    }
}

async fn perform(
    fs: &dyn FileSystem,
    op: &Op,
    target: &FsTarget,
    start: Option<&FsVersion>,
    through: Option<&SandboxPolicy>,
) -> Observed {
    let none = Signal::none();
    let never = FsVersion::new(crate::harness::NEVER_ISSUED);
    match op {
        Op::Write { content, guard, .. } => {
            let intent = match guard {
                BatchGuard::None => None,
                BatchGuard::CreateIfAbsent => Some(WriteIntent::CreateIfAbsent),
                BatchGuard::AtStart => Some(WriteIntent::ReplaceIfVersion {
                    version: start.cloned().unwrap_or(never),
                }),
            };
            match fs
                .write_text(target, content, intent.as_ref(), through, &none)
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
            old, new, guarded, ..
        } => {
            let request = EditRequest {
                old_string: old.clone(),
                new_string: new.clone(),
                replace_all: false,
            };
            let guard = guarded.then(|| start.cloned().unwrap_or(never));
            match fs
                .edit_text(target, &request, guard.as_ref(), through, &none)
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
        Op::Read { .. } => match fs.read_text(target, &none).await {
            Ok(text) => (Seen::Read(text), None),
            Err(e) => failed(&e),
        },
        Op::Stat { .. } => match fs.stat(target, &none).await {
            Ok(info) => {
                let version = info.as_ref().map(|i| i.version.clone());
                (Seen::Stat(info.map(|i| (i.kind, i.size))), version)
            }
            Err(e) => failed(&e),
        },
    }
}

/// Everything one order is checked against.
struct Check<'a> {
    model: &'a Model,
    resolved: &'a [Resolved],
    start: &'a [(Option<FsVersion>, Option<Version>)],
    observed: &'a [Observed],
    finals: &'a [Option<FsVersion>],
    snapshot: &'a BTreeMap<String, SnapEntry>,
    modes: bool,
    messages: bool,
}

/// A one-to-one mapping between model versions and provider versions.
#[derive(Default)]
struct Versions {
    forward: HashMap<Version, FsVersion>,
    backward: HashMap<FsVersion, Version>,
}

impl Versions {
    fn pair(&mut self, model: Version, seen: &FsVersion) -> Result<(), String> {
        if let Some(v) = self.forward.get(&model)
            && v != seen
        {
            return Err(format!(
                "one state has two versions ({} and {})",
                v.as_str(),
                seen.as_str()
            ));
        }
        if let Some(m) = self.backward.get(seen)
            && *m != model
        {
            return Err(format!(
                "version {} stands for two different states",
                seen.as_str()
            ));
        }
        self.forward.insert(model, seen.clone());
        self.backward.insert(seen.clone(), model);
        Ok(())
    }

    fn pair_opt(&mut self, model: Option<Version>, seen: Option<&FsVersion>) -> Result<(), String> {
        match (model, seen) {
            (Some(m), Some(s)) => self.pair(m, s),
            (None, None) => Ok(()),
            (m, s) => Err(format!(
                "version presence differs: model {m:?}, provider {s:?}"
            )),
        }
    }
}

impl Check<'_> {
    /// `Ok` when playing the batch in `order` on the model explains everything; otherwise how
    /// far it got and why it stopped.
    fn explains(&self, batch: &Batch, order: &[usize]) -> Result<(), (usize, String)> {
        let mut model = self.model.clone();
        let mut versions = Versions::default();
        for (seen, predicted) in self.start {
            versions
                .pair_opt(*predicted, seen.as_ref())
                .map_err(|w| (0, format!("starting versions: {w}")))?;
        }
        for (depth, &i) in order.iter().enumerate() {
            let predicted = self.predict(&mut model, &batch.ops[i]);
            let (seen, version) = &self.observed[i];
            if !self.same(&predicted.0, seen) {
                return Err((
                    depth,
                    format!(
                        "operation {i} ({}) returned {seen:?}, this order predicts {:?}",
                        batch.ops[i].describe(),
                        predicted.0
                    ),
                ));
            }
            versions
                .pair_opt(predicted.1, version.as_ref())
                .map_err(|w| (depth, format!("operation {i}: {w}")))?;
        }
        let depth = order.len();
        for (r, seen) in self.resolved.iter().zip(self.finals) {
            let now = model
                .stat_target(r)
                .map_err(|e| (depth, e.message))?
                .map(|i| i.version);
            versions
                .pair_opt(now, seen.as_ref())
                .map_err(|w| (depth, format!("final stat of {}: {w}", r.display)))?;
        }
        let want = model.snapshot();
        let strip = |m: &BTreeMap<String, SnapEntry>| -> BTreeMap<String, SnapEntry> {
            m.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        if self.modes {
                            v.clone()
                        } else {
                            v.without_mode()
                        },
                    )
                })
                .collect()
        };
        if strip(&want) != strip(self.snapshot) {
            let (holds, leaves) = crate::excerpt::differ(
                &format!("{:?}", strip(self.snapshot)),
                &format!("{:?}", strip(&want)),
            );
            return Err((
                depth + 1,
                format!("the storage holds {holds}, this order leaves {leaves}"),
            ));
        }
        Ok(())
    }

    fn same(&self, predicted: &Seen, seen: &Seen) -> bool {
        match (predicted, seen) {
            (Seen::Failed(a, am), Seen::Failed(b, bm)) => a == b && (!self.messages || am == bm),
            (a, b) => a == b,
        }
    }

    fn predict(&self, model: &mut Model, op: &Op) -> Predicted {
        let start_version = |file: usize| self.start[file].1;
        match op {
            Op::Write {
                file,
                content,
                guard,
            } => {
                let guard = match guard {
                    BatchGuard::None => None,
                    BatchGuard::CreateIfAbsent => Some(Guard::CreateIfAbsent),
                    BatchGuard::AtStart => match start_version(*file) {
                        Some(v) => Some(Guard::ReplaceIfVersion(v)),
                        // A version never issued: the model's own guard for "no version seen".
                        None => Some(Guard::ReplaceIfVersion(Version::Object { n: u64::MAX })),
                    },
                };
                match model
                    .write_target(&self.resolved[*file], content, guard, &Interference::None)
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
                file,
                old,
                new,
                guarded,
            } => {
                let guard = guarded
                    .then(|| start_version(*file).unwrap_or(Version::Object { n: u64::MAX }));
                match model.edit_target(
                    &self.resolved[*file],
                    old,
                    new,
                    false,
                    guard,
                    &Interference::None,
                ) {
                    Ok((v, before, after)) => (Seen::Edited { before, after }, Some(v)),
                    Err(e) => model_failed(&e),
                }
            }
            Op::Read { file } => match model.read_text_target(&self.resolved[*file]) {
                Ok(t) => (Seen::Read(t), None),
                Err(e) => model_failed(&e),
            },
            Op::Stat { file } => match model.stat_target(&self.resolved[*file]) {
                Ok(info) => {
                    let v = info.as_ref().map(|i| i.version);
                    (Seen::Stat(info.map(|i| (i.kind, i.size))), v)
                }
                Err(e) => model_failed(&e),
            },
        }
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

/// Drops operations from a failing batch while some re-run still fails.
fn shrink(cx: &Context, mut batch: Batch, mut failure: Failure) -> (Batch, Failure) {
    let original = batch.ops.len();
    'outer: while batch.ops.len() > 2 {
        for skip in 0..batch.ops.len() {
            let mut smaller = batch.clone();
            smaller.ops.remove(skip);
            for _ in 0..SHRINK_TRIES {
                let mut scratch = Stats::default();
                if let Err(f) = run_batch(cx, &smaller, &mut scratch)
                    && f.kind == FailureKind::Linearizability
                {
                    batch = smaller;
                    failure = f;
                    continue 'outer;
                }
            }
        }
        break;
    }
    if batch.ops.len() < original {
        failure.message = format!(
            "{} (shrunk from {original} to {} operations)",
            failure.message,
            batch.ops.len()
        );
    }
    (batch, failure)
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
        assert!(v.pair(Version::Object { n: 1 }, &t).is_ok());
        assert!(v.pair(Version::Object { n: 1 }, &t).is_ok());
        assert!(v.pair(Version::Object { n: 2 }, &t).is_err());
        assert!(
            v.pair(Version::Object { n: 1 }, &FsVersion::new("u"))
                .is_err()
        );
    }
}
