//! Staging: while a mutation's staged content exists it is private (0700 directory, 0600 file,
//! seen from outside at the staged checkpoint), and a staging name that already exists is never
//! clobbered.

use super::{Applicability, Context, NotChecked, Property, Run};
use crate::factory::Subject;
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use crate::world::World;
use seam::Capability;
use seam::{CancelPoint, EditRequest, FileSystem, ResolveOptions, Signal};
use seam_model::{SnapEntry, WorldEffect};
use std::sync::{Arc, Mutex};
use tokio::runtime::Runtime;

/// `staging-private`.
pub struct StagingPrivate;

impl Property for StagingPrivate {
    fn name(&self) -> &'static str {
        "staging-private"
    }

    fn summary(&self) -> &'static str {
        "staged content sits in a 0700 directory as a 0600 file while it exists; final modes are 0600 for new files and kept for old ones"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        Applicability::needs(
            &cx.caps,
            &[
                Capability::StagingProbe,
                Capability::Modes,
                Capability::CancelPoints,
            ],
        )
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        private(cx, out)?;
        out.stats.rule(Rule::StagingPrivate);
        Ok(())
    }
}

/// `staging-not-clobbered`.
pub struct StagingNotClobbered;

impl Property for StagingNotClobbered {
    fn name(&self) -> &'static str {
        "staging-not-clobbered"
    }

    fn summary(&self) -> &'static str {
        "a pre-existing entry at the staging name is left untouched and the write still lands or fails coded"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        Applicability::needs(
            &cx.caps,
            &[Capability::StagingProbe, Capability::CancelPoints],
        )
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        not_clobbered(cx, out)?;
        if out.not_checked.is_none() {
            out.stats.rule(Rule::StagingNotClobbered);
        }
        Ok(())
    }
}

fn setup(e: impl std::fmt::Display) -> Failure {
    fail(FailureKind::Setup, e.to_string())
}

/// Staging paths seen at the staged point, relative to the root.
type Seen = Arc<Mutex<Vec<Vec<String>>>>;

fn recording_signal(root: &str, process_root: &str) -> (Signal, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    // A staging path is any path to the entry in the provider's world: under the root as
    // displayed, or under its real path.
    let prefixes = [format!("{root}/"), format!("{process_root}/")];
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged {
            let rel = cp
                .staging
                .iter()
                .map(|p| {
                    prefixes
                        .iter()
                        .find_map(|prefix| p.strip_prefix(prefix.as_str()))
                        .unwrap_or(p)
                        .to_string()
                })
                .collect();
            record.lock().unwrap_or_else(|p| p.into_inner()).push(rel);
        }
        false
    });
    (signal, seen)
}

/// Problems seen, and how many staging entries were inspected.
type ModeLog = (Arc<Mutex<Vec<String>>>, Arc<Mutex<u64>>);

fn modes_signal(world: Arc<dyn World>) -> (Signal, ModeLog) {
    let problems: Arc<Mutex<Vec<String>>> = Arc::default();
    let inspected: Arc<Mutex<u64>> = Arc::default();
    let (p, i) = (problems.clone(), inspected.clone());
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged {
            if cp.staging.is_empty() {
                p.lock().unwrap_or_else(|x| x.into_inner()).push(format!(
                    "{:?} reported no staging entries at its staged point",
                    cp.display_path
                ));
            }
            for path in cp.staging {
                *i.lock().unwrap_or_else(|x| x.into_inner()) += 1;
                match world.entry_mode(path) {
                    Ok(Some(m)) => {
                        let want = if m.is_dir { 0o700 } else { 0o600 };
                        if m.mode != want {
                            p.lock().unwrap_or_else(|x| x.into_inner()).push(format!(
                                "staging {path:?} is mode {:o}, must be {want:o}",
                                m.mode
                            ));
                        }
                    }
                    Ok(None) => p.lock().unwrap_or_else(|x| x.into_inner()).push(format!(
                        "staging {path:?} does not exist at the staged point"
                    )),
                    Err(e) => p
                        .lock()
                        .unwrap_or_else(|x| x.into_inner())
                        .push(format!("cannot inspect {path:?}: {e}")),
                }
            }
        }
        false
    });
    (signal, (problems, inspected))
}

fn file_mode(world: &dyn World, rel: &str) -> Option<u32> {
    match world.snapshot().ok()?.get(rel) {
        Some(SnapEntry::File { mode, .. }) => *mode,
        _ => None,
    }
}

fn private(cx: &Context, out: &mut Run) -> Result<(), Failure> {
    let rt = cx.runtime()?;
    let subject: Subject = cx.factory.make(&cx.options()).map_err(setup)?;
    let fs = subject.fs.clone();
    let world = subject.world.clone();
    let root = world.root_display();
    world
        .apply(&WorldEffect::CreateFile {
            path: "old".into(),
            bytes: b"one\n".to_vec().into(),
            mode: 0o644,
        })
        .map_err(setup)?;
    let opts = ResolveOptions { cwd: Some(&root) };
    let through = super::let_through(fs.as_ref(), &root);
    for (path, edit) in [
        ("old", true),
        ("old", false),
        ("new", false),
        ("deep/er/new", false),
    ] {
        let (signal, (problems, count)) = modes_signal(world.clone());
        let r = rt.block_on(async {
            let t = fs.resolve(path, opts, &Signal::none()).await?;
            if edit {
                let e = EditRequest {
                    old_string: "one".into(),
                    new_string: "two".into(),
                    replace_all: false,
                };
                fs.edit_text(&t, &e, None, through.as_ref(), &signal)
                    .await
                    .map(|_| ())
            } else {
                fs.write_text(&t, "content\n", None, through.as_ref(), &signal)
                    .await
                    .map(|_| ())
            }
        });
        r.map_err(|e| {
            fail(
                FailureKind::Outcome,
                format!("{path}: {} {}", e.code(), e.message()),
            )
        })?;
        if let Some(p) = problems.lock().unwrap_or_else(|x| x.into_inner()).first() {
            return Err(fail(FailureKind::Staging, p.clone()));
        }
        out.stats
            .checks(*count.lock().unwrap_or_else(|x| x.into_inner()));
    }
    out.stats.check();
    if file_mode(world.as_ref(), "old") != Some(0o644) {
        return Err(fail(
            FailureKind::BytesOnDisk,
            format!(
                "the replaced file's mode 644 was not kept: {:?}",
                file_mode(world.as_ref(), "old")
            ),
        ));
    }
    for new in ["new", "deep/er/new"] {
        out.stats.check();
        if file_mode(world.as_ref(), new) != Some(0o600) {
            return Err(fail(
                FailureKind::BytesOnDisk,
                format!(
                    "new file {new:?} is not 0600: {:?}",
                    file_mode(world.as_ref(), new)
                ),
            ));
        }
    }
    let names: Vec<String> = world.snapshot().map_err(setup)?.into_keys().collect();
    out.stats.check();
    if names != ["deep", "deep/er", "deep/er/new", "new", "old"] {
        return Err(fail(
            FailureKind::Litter,
            format!("unexpected entries after the writes (litter?): {names:?}"),
        ));
    }
    drop(subject);
    Ok(())
}

/// The staging paths the first write of `a` reported, and how the write ended.
fn staged_paths(rt: &Runtime, subject: &Subject) -> (Vec<String>, Result<(), seam::FsError>) {
    let root = subject.world.root_display();
    let (signal, seen) = recording_signal(&root, &subject.world.process_root());
    let fs: Arc<dyn FileSystem> = subject.fs.clone();
    let opts = ResolveOptions { cwd: Some(&root) };
    let through = super::let_through(fs.as_ref(), &root);
    let outcome = rt.block_on(async {
        let t = fs.resolve("a", opts, &Signal::none()).await?;
        fs.write_text(&t, "mine\n", None, through.as_ref(), &signal)
            .await
            .map(|_| ())
    });
    let paths = seen
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .first()
        .cloned()
        .unwrap_or_default();
    (paths, outcome)
}

fn not_clobbered(cx: &Context, out: &mut Run) -> Result<(), Failure> {
    let rt = cx.runtime()?;
    let first = cx.factory.make(&cx.options()).map_err(setup)?;
    let (p1, r1) = staged_paths(&rt, &first);
    r1.map_err(|e| fail(FailureKind::Outcome, format!("a plain write failed: {e:?}")))?;
    drop(first);
    let again = cx.factory.make(&cx.options()).map_err(setup)?;
    let (p2, _) = staged_paths(&rt, &again);
    drop(again);
    out.stats.check();
    if p1.is_empty() {
        return Err(fail(
            FailureKind::Claim,
            "the write reported no staging entries at its staged point",
        ));
    }
    if p1 != p2 {
        out.not_checked = Some(NotChecked::NotRun(
            "staging names are not reproducible from the case seed, so no decoy can be \
             planted (seed them from CaseOptions::seed)"
                .into(),
        ));
        return Ok(());
    }
    let subject = cx.factory.make(&cx.options()).map_err(setup)?;
    let decoy = &p1[0];
    let decoy_is_dir = p1.len() > 1 && p1[1].starts_with(&format!("{decoy}/"));
    let planted = if decoy_is_dir {
        format!("{decoy}/PRECIOUS")
    } else {
        decoy.clone()
    };
    subject
        .world
        .apply(&WorldEffect::CreateFile {
            path: planted.clone(),
            bytes: b"PRECIOUS".to_vec().into(),
            mode: 0o644,
        })
        .map_err(setup)?;
    let (p3, outcome) = staged_paths(&rt, &subject);
    let snap = subject.world.snapshot().map_err(setup)?;
    out.stats.check();
    match snap.get(&planted) {
        Some(SnapEntry::File { bytes, .. }) if bytes[..] == b"PRECIOUS"[..] => {}
        other => {
            return Err(fail(
                FailureKind::Staging,
                format!("the decoy at {planted:?} was clobbered: {other:?}"),
            ));
        }
    }
    out.stats.check();
    if p3.first() == Some(decoy) {
        return Err(fail(
            FailureKind::Staging,
            format!("the write staged into the pre-existing {decoy:?}"),
        ));
    }
    let mut expected: Vec<&str> = vec![planted.as_str()];
    if decoy_is_dir {
        expected.push(decoy.as_str());
    }
    // The write either landed, or failed with a code (every failure has one); either way
    // nothing else may be left.
    if outcome.is_ok() {
        expected.push("a");
        out.stats.check();
        match snap.get("a") {
            Some(SnapEntry::File { bytes, .. }) if bytes[..] == b"mine\n"[..] => {}
            other => {
                return Err(fail(
                    FailureKind::BytesOnDisk,
                    format!("the write reported success but \"a\" is {other:?}"),
                ));
            }
        }
    }
    expected.sort();
    let names: Vec<&str> = snap.keys().map(String::as_str).collect();
    out.stats.check();
    if names != expected {
        return Err(fail(
            FailureKind::Litter,
            format!("unexpected entries (litter?): {names:?}, expected {expected:?}"),
        ));
    }
    Ok(())
}
