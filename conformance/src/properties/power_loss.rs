//! `power-loss`: the power cut under the backend, then its storage opened again by a fresh
//! instance — the failure a process kill cannot show. What a backend never synced survives a
//! kill in the page cache; a power cut loses it. A backend that publishes by rename without
//! syncing the file first, or answers before it syncs the directory, passes `crash` and loses
//! the file (or leaves it empty) at the next power cut.
//!
//! For a backend whose storage the factory can put in a directory the gate chooses
//! ([`crate::Factory::in_directory`]), on a machine with FUSE: [`CUTS`] cuts, each on a fresh
//! directory mounted through [`seam_powercut`] — a layer that passes every operation through and
//! keeps what a power cut would leave: file data as of the file's last `fsync`, directory
//! entries as of the directory's last `fsync` (the rules are in `seam_powercut::image`). Each
//! cut starts from three files and a directory, runs one to six writes, edits, removals,
//! renames and new directories drawn from the seed (the namespace ones when the backend claims
//! them), and cuts the power at a point drawn from the seed: a number of file-system operations
//! into one of the calls, or after the last one answered. The layer then refuses everything,
//! the backend is dropped, what survived is written into a plain directory, and a fresh
//! backend over it must show:
//!
//! * every call that answered before the cut, whole (`power-loss.answered`);
//! * for the call the cut interrupted, what it touched as before it or as after it — never
//!   torn, never empty (`power-loss.old-or-new`). A rename between two directories needs two
//!   directory syncs, and nothing orders a power cut between them: the file may then be at
//!   both ends, never at neither;
//! * a listing, before anyone writes, that shows nothing a cut publication left
//!   (`power-loss.listed-hidden`);
//! * once the next writer has written in a directory, nothing left there
//!   (`power-loss.swept`).
//!
//! The rules need the [`seam::Capability::Durable`] claim. A backend that does not make it
//! still runs every cut, and is told what it lost — as what it does not promise, reported as
//! not claimed, never as a pass. A failure is shrunk: calls are taken out one at a time while
//! the cut, placed as far into the interrupted call as before, still finds the same departure.

use super::{Context, NotChecked, Property, Run};
use crate::factory::{CaseOptions, NotPlaced};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{
    CreateDirOptions, EditRequest, FileSystem, FsKind, RemoveOptions, RenameOptions,
    ResolveOptions, SandboxPolicy, Signal,
};
use seam_model::SnapEntry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `power-loss`.
pub struct PowerLoss;

/// Cuts per run.
pub const CUTS: u64 = 120;

/// The sizes contents are drawn from.
const SIZES: [usize; 4] = [24, 700, 9_000, 150_000];

/// What the model holds at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Dir,
}

/// Paths (relative to the case, `/`-separated) to what is there.
type Tree = BTreeMap<String, Node>;

/// One call of a cut.
#[derive(Clone, Debug)]
enum Call {
    Write {
        path: String,
        text: String,
    },
    Edit {
        path: String,
        old: String,
        new: String,
    },
    Remove {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    Mkdir {
        path: String,
    },
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Call::Write { path, text } => write!(f, "write {path:?} ({} bytes)", text.len()),
            Call::Edit { path, old, new } => write!(f, "edit {path:?} ({old:?} -> {new:?})"),
            Call::Remove { path } => write!(f, "remove {path:?}"),
            Call::Rename { from, to } => write!(f, "rename {from:?} -> {to:?}"),
            Call::Mkdir { path } => write!(f, "create_dir {path:?}"),
        }
    }
}

/// Where the power goes: `within` layer operations into call `call` — or, `by_syncs`, right
/// after the `within`-th sync of that call (the only points where what survives changes) —
/// or, when `call` is the number of calls, after the last one answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CutAt {
    call: usize,
    within: u64,
    by_syncs: bool,
}

/// One cut's plan: the calls and where the power goes.
#[derive(Clone, Debug)]
struct Plan {
    calls: Vec<Call>,
    cut: CutAt,
}

impl Plan {
    fn describe(&self) -> String {
        let calls: Vec<String> = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {c}", i + 1))
            .collect();
        let cut = if self.cut.call >= self.calls.len() {
            "the power cut after every call answered".to_string()
        } else if self.cut.by_syncs {
            format!(
                "the power cut right after sync {} of call {}",
                self.cut.within,
                self.cut.call + 1
            )
        } else {
            format!(
                "the power cut {} file-system operations into call {}",
                self.cut.within,
                self.cut.call + 1
            )
        };
        format!("calls [{}], {cut}", calls.join("; "))
    }
}

/// A small deterministic generator (splitmix64): the cuts are the seed's.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len() as u64) as usize)
        }
    }
}

/// A text of about `size` bytes whose first line is a marker an edit can replace.
fn text(tag: &str, size: usize) -> String {
    let mut t = format!("MARKER {tag}\n");
    let line = format!("{tag} ........................................................\n");
    while t.len() < size {
        t.push_str(&line);
    }
    t
}

/// What every cut starts from (durable before the mount).
fn initial() -> Tree {
    let mut t = Tree::new();
    t.insert("a".into(), Node::File(text("a0", 700).into_bytes()));
    t.insert("b".into(), Node::File(text("b0", 24).into_bytes()));
    t.insert("d".into(), Node::Dir);
    t.insert("d/c".into(), Node::File(text("c0", 9_000).into_bytes()));
    t
}

/// Permission bits by path, of the files the model holds.
type Modes = BTreeMap<String, u32>;

/// The bits the starting files have (distinct, so a file that comes back with a new file's
/// 0600 has lost them).
fn initial_modes() -> Modes {
    [("a", 0o640), ("b", 0o644), ("d/c", 0o660)]
        .into_iter()
        .map(|(p, m)| (p.to_string(), m))
        .collect()
}

/// `modes` after `call` on `tree` (the tree before it): a new file is 0600, a rewritten or
/// edited one keeps its bits, a renamed one takes them along.
fn apply_modes(modes: &Modes, tree: &Tree, call: &Call) -> Modes {
    let mut m = modes.clone();
    match call {
        Call::Write { path, .. } => {
            if !matches!(tree.get(path), Some(Node::File(_))) {
                m.insert(path.clone(), 0o600);
            }
        }
        Call::Remove { path } => {
            m.remove(path);
        }
        Call::Rename { from, to } => {
            if let Some(bits) = m.remove(from) {
                m.insert(to.clone(), bits);
            }
        }
        Call::Edit { .. } | Call::Mkdir { .. } => {}
    }
    m
}

fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `tree` after `call`.
fn apply(tree: &Tree, call: &Call) -> Tree {
    let mut t = tree.clone();
    match call {
        Call::Write { path, text } => {
            // The parents a write makes.
            let mut parent = parent_of(path);
            while !parent.is_empty() && !t.contains_key(parent) {
                t.insert(parent.to_string(), Node::Dir);
                parent = parent_of(parent);
            }
            t.insert(path.clone(), Node::File(text.as_bytes().to_vec()));
        }
        Call::Edit { path, old, new } => {
            if let Some(Node::File(bytes)) = t.get(path) {
                let s = String::from_utf8_lossy(bytes).replacen(old.as_str(), new, 1);
                t.insert(path.clone(), Node::File(s.into_bytes()));
            }
        }
        Call::Remove { path } => {
            t.remove(path);
        }
        Call::Rename { from, to } => {
            if let Some(n) = t.remove(from) {
                t.insert(to.clone(), n);
            }
        }
        Call::Mkdir { path } => {
            t.insert(path.clone(), Node::Dir);
        }
    }
    t
}

/// Draws a cut's calls (each valid where the previous ones leave the model) and its point.
fn draw_plan(draw: &mut Draw, namespace: bool, per_call: (u64, u64), serial: &mut u64) -> Plan {
    let mut tree = initial();
    let n = 1 + draw.below(6) as usize;
    let mut calls = Vec::with_capacity(n);
    for _ in 0..n {
        let files: Vec<String> = tree
            .iter()
            .filter(|(_, n)| matches!(n, Node::File(_)))
            .map(|(p, _)| p.clone())
            .collect();
        let mut dirs: Vec<String> = vec![String::new()];
        dirs.extend(
            tree.iter()
                .filter(|(_, n)| matches!(n, Node::Dir))
                .map(|(p, _)| p.clone()),
        );
        *serial += 1;
        let tag = format!("v{serial}");
        let fresh = |draw: &mut Draw, dirs: &[String], stem: &str| {
            let dir = draw.pick(dirs).cloned().unwrap_or_default();
            join(&dir, &format!("{stem}{serial}"))
        };
        let roll = draw.below(if namespace { 10 } else { 6 });
        let call = match (roll, draw.pick(&files).cloned()) {
            (0..=2, Some(path)) => Call::Write {
                path,
                text: text(&tag, SIZES[draw.below(4) as usize]),
            },
            (3, _) | (0..=2, None) => Call::Write {
                // Now and then into a directory that does not exist yet: the write makes it,
                // and must sync the directory that gained it too.
                path: if draw.below(4) == 0 {
                    join(&fresh(draw, &dirs, "p"), &format!("n{serial}"))
                } else {
                    fresh(draw, &dirs, "n")
                },
                text: text(&tag, SIZES[draw.below(4) as usize]),
            },
            (4 | 5, Some(path)) => {
                let old = match tree.get(&path) {
                    Some(Node::File(b)) => String::from_utf8_lossy(b)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    _ => String::new(),
                };
                Call::Edit {
                    path,
                    old,
                    new: format!("MARKER {tag} edited"),
                }
            }
            (6, Some(path)) => Call::Remove { path },
            (7 | 8, Some(from)) => Call::Rename {
                to: fresh(draw, &dirs, "r"),
                from,
            },
            _ => Call::Mkdir {
                path: join("", &format!("e{serial}")),
            },
        };
        tree = apply(&tree, &call);
        calls.push(call);
    }
    let call = draw.below(n as u64 + 1) as usize;
    let by_syncs = draw.below(2) == 0;
    let within = if by_syncs {
        1 + draw.below(per_call.1.max(1))
    } else {
        draw.below(per_call.0.max(1))
    };
    Plan {
        calls,
        cut: CutAt {
            call,
            within,
            by_syncs,
        },
    }
}

/// How a cut went wrong: a departure of the backend (a finding, or a failure when it claims
/// durability), or something that stops the property.
enum Stop {
    /// The backend departed.
    Departed(Failure),
    Halt(Failure),
    Placement(NotPlaced),
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Self {
        Stop::Halt(f)
    }
}

/// What every cut tells the run, whether or not the backend departed.
#[derive(Default)]
struct CutLog {
    /// Whether the backend over the mount claims durability (once it is known).
    claimed: Option<bool>,
    /// What the layer served and saw synced.
    counted: seam_powercut::Counted,
    /// The cut interrupted a call.
    mid: bool,
    /// The plan as the cut landed (the calls that ran, the cut where it went).
    landed: Option<Plan>,
}

/// What a cut that found nothing wrong saw.
struct Seen {
    /// The cut interrupted a call.
    mid: bool,
    /// Calls that answered before the cut.
    answered: usize,
    /// Entries a cut publication left that the next writer swept.
    swept: usize,
    /// The most layer operations, and syncs, one uninterrupted call took.
    per_call: (u64, u64),
    /// Whether the backend over the mount claims durability.
    durable: bool,
}

impl Property for PowerLoss {
    fn name(&self) -> &'static str {
        "power-loss"
    }

    fn summary(&self) -> &'static str {
        "after a power cut (a FUSE layer that keeps only what was fsynced), every call that answered is there whole, the interrupted one left things as before or after it, and what a cut publication left is hidden and swept"
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rules = vec![
            Rule::PowerLossAnswered,
            Rule::PowerLossOldOrNew,
            Rule::PowerLossListedHidden,
            Rule::PowerLossSwept,
        ];
        if let Err(why) = seam_powercut::available() {
            out.not_checked = Some(NotChecked::NotHere {
                reason: format!(
                    "the power-loss layer is a FUSE mount, and none can be made here: {why}"
                ),
                need: "a machine where the gate can mount FUSE (/dev/fuse, root)".into(),
                rules,
            });
            return Ok(());
        }
        let rt = cx.runtime()?;
        let options = cx.options();
        // The claim of the deployment the cuts run on (fully durable), not of the run's first
        // subject (generated cases ask for less).
        let mut durable = None::<bool>;
        let mut draw = Draw(cx.config.sequences.seed ^ 0x0BAD_C0DE_5EED);
        let mut per_call = (24u64, 4u64);
        let mut serial = 0u64;
        let (mut mid, mut swept) = (0u64, 0u64);
        let mut layer = seam_powercut::Counted::default();
        let mut findings: Vec<String> = Vec::new();
        for cut in 0..CUTS {
            let plan = draw_plan(&mut draw, cx.caps.namespace, per_call, &mut serial);
            let mut log = CutLog::default();
            let result = one_cut(cx, &rt, &options, &plan, out, &mut log);
            layer.ops += log.counted.ops;
            layer.file_syncs += log.counted.file_syncs;
            layer.dir_syncs += log.counted.dir_syncs;
            mid += u64::from(log.mid);
            let claimed = log.claimed;
            match result {
                Ok(seen) => {
                    durable = Some(seen.durable);
                    swept += seen.swept as u64;
                    per_call = (
                        per_call.0.max(seen.per_call.0),
                        per_call.1.max(seen.per_call.1),
                    );
                    out.stats.check();
                    if seen.answered > 0 {
                        out.stats.rule(Rule::PowerLossAnswered);
                    }
                    if seen.mid {
                        out.stats.rule(Rule::PowerLossOldOrNew);
                    }
                }
                Err(Stop::Departed(failure)) => {
                    durable = claimed;
                    out.stats.check();
                    if claimed == Some(true) {
                        let landed = log.landed.clone().unwrap_or(plan);
                        let (shrunk, from) = shrink(cx, &rt, &options, landed, &failure, out);
                        out.shrunk_from = Some(from);
                        return Err(fail(
                            failure.kind,
                            format!("cut {} of {CUTS}: {}", cut + 1, shrunk.message),
                        ));
                    }
                    findings.push(format!("cut {}: {}", cut + 1, failure.message));
                }
                Err(Stop::Placement(why)) => return not_placed(why, rules, out),
                Err(Stop::Halt(failure)) => return Err(failure),
            }
        }
        out.detail = Some(format!(
            "{CUTS} cuts, {mid} in the middle of a call; the layer served {} operations and saw {} file and {} directory syncs; {swept} entries a cut publication left were hidden and swept",
            layer.ops, layer.file_syncs, layer.dir_syncs
        ));
        if durable != Some(true) {
            let shown: Vec<&str> = findings.iter().take(3).map(String::as_str).collect();
            let lost = if findings.is_empty() {
                "nothing was lost".to_string()
            } else {
                format!(
                    "{} of {CUTS} cuts lost or tore what had been written: {}{}",
                    findings.len(),
                    shown.join(" | "),
                    if findings.len() > shown.len() {
                        " | …"
                    } else {
                        ""
                    }
                )
            };
            out.not_checked = Some(NotChecked::NotOffered {
                reason: format!(
                    "the backend does not claim durable, so a power cut may lose what it answered; over {CUTS} cuts {lost}"
                ),
                need: "the durable claim".into(),
                rules,
            });
        } else if mid == 0 {
            out.not_checked = Some(NotChecked::NotRun(format!(
                "none of {CUTS} cuts landed inside a call: nothing was checked of an interrupted one"
            )));
        }
        Ok(())
    }
}

/// The property's answer when the factory cannot put the storage in a directory.
fn not_placed(why: NotPlaced, rules: Vec<Rule>, out: &mut Run) -> Result<(), Failure> {
    match why {
        NotPlaced::Volatile(why) => {
            out.not_checked = Some(NotChecked::DoesNotApply {
                reason: format!("the storage is not kept in a directory: {why}"),
                rules,
            });
            Ok(())
        }
        NotPlaced::Cannot(why) => {
            out.not_checked = Some(NotChecked::NotOffered {
                reason: format!("the gate cannot put this backend's storage in a directory of its own: {why}"),
                need: "a backend whose storage the gate can place (Factory::in_directory; world/case with root)".into(),
                rules,
            });
            Ok(())
        }
        NotPlaced::Failed(why) => Err(fail(FailureKind::Setup, why)),
    }
}

/// What kind of departure a failure message says (the shrink keeps a smaller plan only if it
/// shows the same kind).
fn departure(message: &str) -> &'static str {
    const KINDS: [(&str, &str); 8] = [
        ("but mode", "mode"),
        ("is torn", "torn"),
        ("lost", "lost"),
        ("is back", "lost"),
        ("appeared", "appeared"),
        ("still there once the next writer", "unswept"),
        ("no fresh backend could open", "unopenable"),
        ("listing", "listing"),
    ];
    KINDS
        .iter()
        .find(|(said, _)| message.contains(said))
        .map(|(_, kind)| *kind)
        .unwrap_or("other")
}

/// Shrinks a failing plan: first drops the calls after the interrupted one (they never ran),
/// then takes calls out one at a time — again from the start after every success, until none
/// can go — keeping a removal only when the cut, placed as far into the interrupted call as
/// before, still shows the same kind of departure. Returns the failure of the smallest plan
/// and the plan's length before.
fn shrink(
    cx: &Context,
    rt: &tokio::runtime::Runtime,
    options: &CaseOptions,
    plan: Plan,
    failure: &Failure,
    out: &mut Run,
) -> (Failure, usize) {
    let from = plan.calls.len();
    let kind = departure(&failure.message);
    let mut best = (plan, failure.clone());
    let mut scratch = Run::default();
    let attempt = |candidate: &Plan, scratch: &mut Run| -> Option<Failure> {
        if !valid(&candidate.calls) {
            return None;
        }
        match one_cut(cx, rt, options, candidate, scratch, &mut CutLog::default()) {
            Err(Stop::Departed(f)) if f.kind == failure.kind && departure(&f.message) == kind => {
                Some(f)
            }
            _ => None,
        }
    };
    if best.0.cut.call + 1 < best.0.calls.len() {
        let mut candidate = best.0.clone();
        candidate.calls.truncate(candidate.cut.call + 1);
        if let Some(f) = attempt(&candidate, &mut scratch) {
            best = (candidate, f);
        }
    }
    // A departure on a call that answered shows without the interrupted one: the calls before
    // it, the power cut after they all answered.
    if best.0.cut.call > 0 && best.0.cut.call < best.0.calls.len() {
        let mut candidate = best.0.clone();
        candidate.calls.truncate(candidate.cut.call);
        candidate.cut = CutAt {
            call: candidate.calls.len(),
            within: 0,
            by_syncs: false,
        };
        if let Some(f) = attempt(&candidate, &mut scratch) {
            best = (candidate, f);
        }
    }
    let mut i = 0;
    while i < best.0.calls.len() && best.0.calls.len() > 1 {
        if i == best.0.cut.call {
            i += 1;
            continue;
        }
        let mut candidate = best.0.clone();
        candidate.calls.remove(i);
        if i < candidate.cut.call {
            candidate.cut.call -= 1;
        }
        match attempt(&candidate, &mut scratch) {
            Some(f) => {
                best = (candidate, f);
                i = 0;
            }
            None => i += 1,
        }
    }
    out.stats.checks(scratch.stats.checks);
    let to = best.0.calls.len();
    let said = if to < from {
        format!("shrunk from {from} calls to {to}")
    } else if from == 1 {
        "one call: nothing to shrink".to_string()
    } else {
        format!("none of its {from} calls could be taken out")
    };
    let message = format!("{} ({said})", best.1.message);
    (fail(best.1.kind, message), from)
}

/// Whether every call of `calls` is one the model allows where the ones before leave it.
fn valid(calls: &[Call]) -> bool {
    let mut tree = initial();
    for call in calls {
        let ok = match call {
            Call::Write { path, .. } => {
                // The nearest ancestor that exists must be a directory (the rest are made).
                let mut parent = parent_of(path);
                while !parent.is_empty() && !tree.contains_key(parent) {
                    parent = parent_of(parent);
                }
                parent.is_empty() || tree.get(parent) == Some(&Node::Dir)
            }
            Call::Edit { path, old, .. } => match tree.get(path) {
                Some(Node::File(b)) => {
                    String::from_utf8_lossy(b).matches(old.as_str()).count() == 1
                }
                _ => false,
            },
            Call::Remove { path } => matches!(tree.get(path), Some(Node::File(_))),
            Call::Rename { from, to } => {
                matches!(tree.get(from), Some(Node::File(_)))
                    && !tree.contains_key(to)
                    && (parent_of(to).is_empty()
                        || tree.get(parent_of(to)).is_some_and(|n| *n == Node::Dir))
            }
            Call::Mkdir { path } => !tree.contains_key(path),
        };
        if !ok {
            return false;
        }
        tree = apply(&tree, call);
    }
    true
}

fn setup(m: impl Into<String>) -> Stop {
    Stop::Halt(fail(FailureKind::Setup, m))
}

/// Writes `tree` into `dir` (an existing empty directory), each file with its bits.
fn lay_out(tree: &Tree, modes: &Modes, dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for (path, node) in tree {
        let at = dir.join(path);
        match node {
            Node::Dir => std::fs::create_dir(&at)?,
            Node::File(bytes) => {
                std::fs::write(&at, bytes)?;
                let bits = modes.get(path).copied().unwrap_or(0o600);
                std::fs::set_permissions(&at, std::fs::Permissions::from_mode(bits))?;
            }
        }
    }
    Ok(())
}

/// Runs one cut and judges what survived.
fn one_cut(
    cx: &Context,
    rt: &tokio::runtime::Runtime,
    options: &CaseOptions,
    plan: &Plan,
    out: &mut Run,
    log: &mut CutLog,
) -> Result<Seen, Stop> {
    let dirs = crate::scratch::make(cx.config.scratch.as_ref(), "power-loss-")
        .map_err(|e| setup(format!("a temporary directory: {e}")))?;
    let base = std::fs::canonicalize(dirs.path())
        .map_err(|e| setup(format!("the temporary directory: {e}")))?;
    let (backing, mnt, survived) = (
        base.join("backing"),
        base.join("mnt"),
        base.join("survived"),
    );
    for d in [&backing, &mnt, &survived] {
        std::fs::create_dir(d).map_err(|e| setup(format!("{}: {e}", d.display())))?;
    }
    let start = initial();
    let mut modes = initial_modes();
    lay_out(&start, &modes, &backing)
        .map_err(|e| setup(format!("laying out the cut's files: {e}")))?;
    let mounted = seam_powercut::mount(&backing, &mnt).map_err(|e| setup(e.to_string()))?;
    let subject = cx
        .factory
        .in_directory(options, &mnt)
        .map_err(Stop::Placement)?;
    let root = subject.world.root_display();
    let policy = super::let_through(subject.fs.as_ref(), &root);
    let mut tree = start;
    let mut landed = plan.clone();
    let mut before_flight: Option<(usize, Tree)> = None;
    let mut modes_before = modes.clone();
    let mut per_call = (0u64, 0u64);
    let mut answered = 0usize;
    for (i, call) in plan.calls.iter().enumerate() {
        if i == plan.cut.call {
            if plan.cut.by_syncs {
                mounted.cut_after_syncs(plan.cut.within);
            } else {
                mounted.cut_after(plan.cut.within);
            }
        }
        let before = mounted.counted();
        let result = rt.block_on(perform(subject.fs.as_ref(), &root, call, policy.as_ref()));
        match result {
            Ok(()) => {
                modes = apply_modes(&modes, &tree, call);
                tree = apply(&tree, call);
                answered += 1;
                if !mounted.is_cut() {
                    let now = mounted.counted();
                    let syncs = |c: &seam_powercut::Counted| c.file_syncs + c.dir_syncs;
                    per_call.0 = per_call.0.max(now.ops - before.ops);
                    per_call.1 = per_call.1.max(syncs(&now) - syncs(&before));
                }
            }
            Err(e) if mounted.is_cut() => {
                before_flight = Some((i, tree.clone()));
                modes_before = modes.clone();
                // Where the power really went: a cut placed in an earlier call that never came
                // to it lands here; the plan is said, and shrunk, as it landed.
                let now = mounted.counted();
                let syncs = |c: &seam_powercut::Counted| c.file_syncs + c.dir_syncs;
                landed.cut = CutAt {
                    call: i,
                    within: if plan.cut.by_syncs {
                        syncs(&now) - syncs(&before)
                    } else {
                        now.ops - before.ops
                    },
                    by_syncs: plan.cut.by_syncs,
                };
                landed.calls.truncate(i + 1);
                let _ = e;
                break;
            }
            Err(e) => {
                return Err(Stop::Halt(fail(
                    FailureKind::Outcome,
                    format!(
                        "{}: call {} ({call}) failed before the power was cut: {} {}",
                        plan.describe(),
                        i + 1,
                        e.code(),
                        e.message()
                    ),
                )));
            }
        }
    }
    if before_flight.is_none() {
        // Every call answered: wherever the cut was placed, it came after them.
        landed.cut = CutAt {
            call: landed.calls.len(),
            within: 0,
            by_syncs: false,
        };
    }
    log.landed = Some(landed.clone());
    let image = mounted.cut();
    let counted = mounted.counted();
    log.counted = counted;
    let durable = subject.fs.capabilities().durable;
    let keeps_modes = subject.fs.capabilities().modes;
    log.claimed = Some(durable);
    log.mid = before_flight.is_some();
    drop(subject);
    mounted
        .unmount()
        .map_err(|e| setup(format!("after the cut: {e}")))?;
    image
        .materialize(seam_powercut::ROOT, &survived)
        .map_err(|e| setup(format!("writing what survived the cut: {e}")))?;
    let rec = cx
        .factory
        .in_directory(options, &survived)
        .map_err(|e| match e {
            NotPlaced::Failed(why) | NotPlaced::Cannot(why) | NotPlaced::Volatile(why) => {
                Stop::Departed(fail(
                    FailureKind::PowerLoss,
                    format!(
                        "{}: no fresh backend could open what survived the cut: {why}",
                        landed.describe()
                    ),
                ))
            }
        })?;
    let what = landed.describe();
    // The bits each candidate expects (the interrupted call's, before or after it).
    let modes_after_flight = match &before_flight {
        Some((i, before)) => apply_modes(&modes_before, before, &plan.calls[*i]),
        None => modes.clone(),
    };
    let candidates: Vec<(&str, Tree)> = match &before_flight {
        None => vec![("after every answered call", tree.clone())],
        Some((i, before)) => {
            let call = &landed.calls[*i];
            let after = apply(before, call);
            let mut c = vec![
                ("as before the interrupted call", before.clone()),
                ("as after the interrupted call", after.clone()),
            ];
            if let Call::Rename { from, to } = call
                && parent_of(from) != parent_of(to)
                && let Some(n) = before.get(from)
            {
                let mut both = after;
                both.insert(from.clone(), n.clone());
                c.push(("at both ends of a rename between two directories", both));
            }
            c
        }
    };
    let rroot = rec.world.root_display();
    let visible = listed(rt, rec.fs.as_ref(), &rroot, &what)?;
    let snap = rec
        .world
        .snapshot()
        .map_err(|e| setup(format!("reading what survived: {e}")))?;
    let mut seen_tree = Tree::new();
    for path in &visible {
        match snap.get(path) {
            Some(SnapEntry::File { bytes, .. }) => {
                seen_tree.insert(path.clone(), Node::File(bytes.to_vec()));
            }
            Some(SnapEntry::Dir { .. }) => {
                seen_tree.insert(path.clone(), Node::Dir);
            }
            other => {
                return Err(Stop::Departed(fail(
                    FailureKind::PowerLoss,
                    format!("{what}: after the cut {path:?} is listed but holds {other:?}"),
                )));
            }
        }
    }
    if keeps_modes && let Some((label, _)) = candidates.iter().find(|(_, t)| *t == seen_tree) {
        // The content is one the calls allow: the bits must be that state's too.
        let want = if before_flight.is_some() && label.contains("before") {
            &modes_before
        } else if before_flight.is_some() {
            &modes_after_flight
        } else {
            &modes
        };
        for (path, node) in &seen_tree {
            let (
                Node::File(_),
                Some(SnapEntry::File {
                    mode: Some(got), ..
                }),
            ) = (node, snap.get(path))
            else {
                continue;
            };
            let both_ends = label.contains("both ends");
            let allowed = match want.get(path) {
                Some(w) => *w == got & 0o7777,
                None => both_ends,
            } || (both_ends && modes_before.get(path) == Some(&(got & 0o7777)));
            if !allowed {
                return Err(Stop::Departed(fail(
                    FailureKind::PowerLoss,
                    format!(
                        "{what}: after the cut, {path:?} holds the content {label} but mode {:o}, not {:o}: its bits were not synced with it",
                        got & 0o7777,
                        want.get(path).copied().unwrap_or(0)
                    ),
                )));
            }
        }
    }
    if !candidates.iter().any(|(_, t)| *t == seen_tree) {
        let history = history(&landed, &before_flight);
        return Err(Stop::Departed(fail(
            FailureKind::PowerLoss,
            format!(
                "{what}: after the cut, a fresh backend sees {}",
                judge(&candidates, &seen_tree, &history, before_flight.is_some())
            ),
        )));
    }
    // What a cut publication left: on the storage, not listed, gone after the next write.
    // (the top of each: what is inside a left-over directory goes with it).
    let litter: Vec<String> = snap
        .keys()
        .filter(|p| !visible.contains(*p))
        .filter(|p| parent_of(p).is_empty() || visible.contains(parent_of(p)))
        .cloned()
        .collect();
    if !litter.is_empty() {
        out.stats.rule(Rule::PowerLossListedHidden);
        let parents: BTreeSet<&str> = litter.iter().map(|p| parent_of(p)).collect();
        let rpolicy = super::let_through(rec.fs.as_ref(), &rroot);
        for parent in &parents {
            let probe = join(parent, "next-writer");
            rt.block_on(perform(
                rec.fs.as_ref(),
                &rroot,
                &Call::Write {
                    path: probe.clone(),
                    text: "the next writer\n".into(),
                },
                rpolicy.as_ref(),
            ))
            .map_err(|e| {
                Stop::Departed(fail(
                    FailureKind::PowerLoss,
                    format!(
                        "{what}: after the cut, the next writer could not write {probe:?}: {} {}",
                        e.code(),
                        e.message()
                    ),
                ))
            })?;
        }
        let after = rec
            .world
            .snapshot()
            .map_err(|e| setup(format!("reading the storage after the next write: {e}")))?;
        out.stats.check();
        let left: Vec<&String> = litter.iter().filter(|p| after.contains_key(*p)).collect();
        if !left.is_empty() {
            return Err(Stop::Departed(fail(
                FailureKind::PowerLoss,
                format!(
                    "{what}: after the cut, what a cut publication left is still there once the next writer wrote beside it: {left:?}"
                ),
            )));
        }
        out.stats.rule(Rule::PowerLossSwept);
    }
    Ok(Seen {
        mid: before_flight.is_some(),
        answered,
        swept: litter.len(),
        per_call,
        durable,
    })
}

/// Every state a path went through, oldest first, to tell a lost change from a torn file.
fn history(plan: &Plan, flight: &Option<(usize, Tree)>) -> Vec<Tree> {
    let mut t = initial();
    let mut states = vec![t.clone()];
    let last = flight
        .as_ref()
        .map(|(i, _)| *i + 1)
        .unwrap_or(plan.calls.len());
    for call in plan.calls.iter().take(last) {
        t = apply(&t, call);
        states.push(t.clone());
    }
    states
}

/// Says how `seen` departs from the closest of `candidates`: what was lost (an older state's
/// content, or nothing), what is torn (content no state had), what appeared.
fn judge(candidates: &[(&str, Tree)], seen: &Tree, history: &[Tree], mid: bool) -> String {
    let distance = |t: &Tree| {
        let keys: BTreeSet<&String> = t.keys().chain(seen.keys()).collect();
        keys.into_iter()
            .filter(|k| t.get(*k) != seen.get(*k))
            .count()
    };
    let Some((label, want)) = candidates.iter().min_by_key(|(_, t)| distance(t)) else {
        return "nothing to compare with".into();
    };
    let keys: BTreeSet<&String> = want.keys().chain(seen.keys()).collect();
    let mut said = Vec::new();
    for k in keys {
        let (w, s) = (want.get(k), seen.get(k));
        if w == s {
            continue;
        }
        let earlier = history.iter().rev().skip(1).any(|h| h.get(k) == s);
        // Content no state of any path ever had: torn, whatever was expected there.
        let torn = match s {
            Some(Node::File(b)) => !history
                .iter()
                .any(|h| h.values().any(|n| matches!(n, Node::File(x) if x == b))),
            _ => false,
        };
        let line = match (w, s) {
            (_, Some(Node::File(b))) if torn => format!(
                "{k:?} is torn: it holds {} bytes that no call wrote{}{}",
                b.len(),
                if b.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({})",
                        crate::excerpt::excerpt(&String::from_utf8_lossy(b))
                    )
                },
                match w {
                    Some(Node::File(w)) => format!(", not the {} bytes expected", w.len()),
                    _ => String::new(),
                }
            ),
            (Some(_), None) if earlier || !mid => {
                format!("{k:?} lost: an answered change made it, and it is gone")
            }
            (Some(_), None) => format!("{k:?} is missing"),
            (None, Some(_)) if earlier => format!(
                "{k:?} is back: an answered change removed or moved it, and it is there again (lost)"
            ),
            (None, Some(n)) => format!("{k:?} appeared, which no call made: {}", shown(n)),
            (Some(Node::File(_)), Some(Node::File(b))) if earlier => format!(
                "{k:?} lost its answered change: it holds an earlier content ({} bytes)",
                b.len()
            ),
            (w, s) => format!(
                "{k:?} is {} where {} was expected",
                shown_opt(s),
                shown_opt(w)
            ),
        };
        said.push(line);
    }
    format!("{}, not the storage {label}", said.join("; "))
}

fn shown(n: &Node) -> String {
    match n {
        Node::Dir => "a directory".into(),
        Node::File(b) => format!("a file of {} bytes", b.len()),
    }
}

fn shown_opt(n: Option<&Node>) -> String {
    n.map(shown).unwrap_or_else(|| "nothing".into())
}

/// Every path a listing through the backend shows, from the case's root down.
fn listed(
    rt: &tokio::runtime::Runtime,
    fs: &dyn FileSystem,
    root: &str,
    what: &str,
) -> Result<BTreeSet<String>, Stop> {
    let none = Signal::none();
    let mut seen = BTreeSet::new();
    let mut todo = vec![String::new()];
    while let Some(dir) = todo.pop() {
        let at = if dir.is_empty() {
            ".".to_string()
        } else {
            dir.clone()
        };
        let target = rt
            .block_on(fs.resolve(&at, ResolveOptions { cwd: Some(root) }, &none))
            .map_err(|e| setup(format!("resolve {at:?} after the cut: {}", e.message())))?;
        let entries = rt.block_on(fs.list_dir(&target, &none)).map_err(|e| {
            Stop::Departed(fail(
                FailureKind::PowerLoss,
                format!(
                    "{what}: listing {at:?} after the cut failed: {} {}",
                    e.code(),
                    e.message()
                ),
            ))
        })?;
        for e in entries {
            let path = join(&dir, &e.name);
            if e.kind == FsKind::Directory {
                todo.push(path.clone());
            }
            seen.insert(path);
        }
    }
    Ok(seen)
}

/// Runs one call through the backend.
async fn perform(
    fs: &dyn FileSystem,
    root: &str,
    call: &Call,
    policy: Option<&SandboxPolicy>,
) -> Result<(), seam::FsError> {
    let none = Signal::none();
    let opts = ResolveOptions { cwd: Some(root) };
    match call {
        Call::Write { path, text } => {
            let t = fs.resolve(path, opts, &none).await?;
            fs.write_text(&t, text, None, policy, &none).await.map(drop)
        }
        Call::Edit { path, old, new } => {
            let t = fs.resolve(path, opts, &none).await?;
            let edit = EditRequest {
                old_string: old.clone(),
                new_string: new.clone(),
                replace_all: false,
            };
            fs.edit_text(&t, &edit, None, policy, &none).await.map(drop)
        }
        Call::Remove { path } => fs
            .remove(path, opts, &RemoveOptions::default(), policy, &none)
            .await
            .map(drop),
        Call::Rename { from, to } => fs
            .rename(from, to, opts, &RenameOptions::default(), policy, &none)
            .await
            .map(drop),
        Call::Mkdir { path } => fs
            .create_dir(path, opts, CreateDirOptions::default(), policy, &none)
            .await
            .map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_plans_are_valid_every_kind_is_drawn_and_a_seed_draws_the_same() {
        let (mut s1, mut s2) = (0, 0);
        let (mut a, mut b) = (Draw(7), Draw(7));
        let mut kinds = BTreeSet::new();
        for _ in 0..500 {
            let p = draw_plan(&mut a, true, (30, 4), &mut s1);
            assert!(valid(&p.calls), "{}", p.describe());
            assert!(p.cut.call <= p.calls.len());
            let q = draw_plan(&mut b, true, (30, 4), &mut s2);
            assert_eq!(p.describe(), q.describe());
            for c in &p.calls {
                kinds.insert(
                    c.to_string()
                        .split(' ')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        }
        assert_eq!(kinds.len(), 5, "{kinds:?}");
    }

    #[test]
    fn the_judge_tells_a_lost_change_from_a_torn_file() {
        let plan = Plan {
            calls: vec![Call::Write {
                path: "a".into(),
                text: "new\n".into(),
            }],
            cut: CutAt {
                call: 1,
                within: 0,
                by_syncs: false,
            },
        };
        let start = initial();
        let after = apply(&start, &plan.calls[0]);
        let candidates = vec![("after every answered call", after.clone())];
        let h = history(&plan, &None);
        let lost = judge(&candidates, &start, &h, false);
        assert!(lost.contains("\"a\" lost its answered change"), "{lost}");
        let mut torn = after.clone();
        torn.insert("a".into(), Node::File(Vec::new()));
        let said = judge(&candidates, &torn, &h, false);
        assert!(said.contains("\"a\" is torn"), "{said}");
    }
}
