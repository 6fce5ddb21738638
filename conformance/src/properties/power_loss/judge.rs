//! Judging what a fresh backend shows after a cut against the trees the calls could have
//! left: whole, old or new, never torn; and the listings.

use super::plan::{Call, Node, Plan, Tree, apply, initial, join};
use super::{Stop, setup};
use crate::failure::{FailureKind, fail};
use seam::{
    CreateDirOptions, EditRequest, FileSystem, FsKind, RemoveOptions, RenameOptions,
    ResolveOptions, SandboxPolicy, Signal,
};
use std::collections::BTreeSet;

/// Every state a path went through, oldest first, to tell a lost change from a torn file.
pub(super) fn history(plan: &Plan, flight: &Option<(usize, Tree)>) -> Vec<Tree> {
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
pub(super) fn judge(
    candidates: &[(&str, Tree)],
    seen: &Tree,
    history: &[Tree],
    mid: bool,
) -> String {
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

pub(super) fn shown(n: &Node) -> String {
    match n {
        Node::Dir => "a directory".into(),
        Node::File(b) => format!("a file of {} bytes", b.len()),
    }
}

pub(super) fn shown_opt(n: Option<&Node>) -> String {
    n.map(shown).unwrap_or_else(|| "nothing".into())
}

/// Every path a listing through the backend shows, from the case's root down.
pub(super) fn listed(
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
pub(super) async fn perform(
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
