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
//! the cut, placed as far into the interrupted call as before, still finds the same departure
//! — a later edit of the same file aimed again at what that file then holds, so that a chain
//! of edits shrinks too.

use super::{Context, NotChecked, Property, Run};
use crate::factory::{CaseOptions, NotPlaced};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use cut::one_cut;
use plan::{Call, CutAt, Draw, Node, Plan, apply, draw_plan, initial, parent_of};

mod cut;
mod judge;
mod plan;
#[cfg(test)]
mod tests;

/// `power-loss`.
pub struct PowerLoss;

/// Cuts per run.
pub const CUTS: u64 = 120;

/// The sizes contents are drawn from.
const SIZES: [usize; 4] = [24, 700, 9_000, 150_000];

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
        rebase(&mut candidate.calls);
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

/// After a call was taken out, each later edit whose old text the file no longer holds once
/// is aimed again at what it does hold: its first line, which is what an edit is drawn to
/// replace. A chain of edits of one file (each replacing what the one before wrote) then
/// shrinks call by call, rather than every later edit failing once an earlier one is gone.
fn rebase(calls: &mut [Call]) {
    let mut tree = initial();
    for call in calls.iter_mut() {
        if let Call::Edit { path, old, .. } = call
            && let Some(Node::File(bytes)) = tree.get(path.as_str())
        {
            let text = String::from_utf8_lossy(bytes);
            if text.matches(old.as_str()).count() != 1 {
                *old = text.lines().next().unwrap_or_default().to_string();
            }
        }
        tree = apply(&tree, call);
    }
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
