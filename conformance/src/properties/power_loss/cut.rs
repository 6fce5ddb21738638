//! One cut: the tree laid out under the power-cut layer, the plan's calls run by the backend
//! until the power goes, what survived written out, and a fresh backend over it asked what it
//! shows.

use super::judge::{history, judge, listed, perform};
use super::plan::{
    Call, CutAt, Modes, Node, Plan, Tree, apply, apply_modes, initial, initial_modes, join,
    parent_of,
};
use super::{Context, CutLog, Run, Seen, Stop, setup};
use crate::factory::{CaseOptions, NotPlaced};
use crate::failure::{FailureKind, fail};
use crate::rules::Rule;
use seam_model::SnapEntry;
use std::collections::BTreeSet;
use std::path::Path;

/// Writes `tree` into `dir` (an existing empty directory), each file with its bits.
pub(super) fn lay_out(tree: &Tree, modes: &Modes, dir: &Path) -> std::io::Result<()> {
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
pub(super) fn one_cut(
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
    let policy = super::super::let_through(subject.fs.as_ref(), &root);
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
        let rpolicy = super::super::let_through(rec.fs.as_ref(), &rroot);
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
