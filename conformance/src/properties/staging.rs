//! Staging: while a mutation's staged content exists it is private (0700 directory, 0600 file,
//! seen from outside at the staged checkpoint), and a staging name that already exists is never
//! clobbered.

use super::Context;
use crate::factory::Subject;
use crate::report::PropertyResult;
use crate::world::World;
use seam::{CancelPoint, EditRequest, FileSystem, ResolveOptions, Signal};
use seam_model::{SnapEntry, WorldEffect};
use std::sync::{Arc, Mutex};

const PRIVATE: &str = "staging-private";
const PRIVATE_SUMMARY: &str = "staged content sits in a 0700 directory as a 0600 file while it exists; final modes are 0600 for new files and kept for old ones";
const CLOBBER: &str = "staging-not-clobbered";
const CLOBBER_SUMMARY: &str = "a pre-existing entry at the staging name is left untouched and the write still lands or fails coded";

/// Staging paths seen at the staged point, relative to the root.
type Seen = Arc<Mutex<Vec<Vec<String>>>>;

fn recording_signal(root: &str) -> (Signal, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let prefix = format!("{root}/");
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged {
            let rel = cp
                .staging
                .iter()
                .map(|p| p.strip_prefix(&prefix).unwrap_or(p).to_string())
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

/// `staging-private`.
pub fn private(cx: &Context<'_>) -> PropertyResult {
    if !(cx.caps.staging_probe && cx.caps.permissions && cx.caps.cancel_points) {
        return PropertyResult::not_claimed(
            PRIVATE,
            PRIVATE_SUMMARY,
            "needs staging probes and permissions",
        );
    }
    let started = std::time::Instant::now();
    let result = (|| -> Result<u64, String> {
        let subject: Subject = cx.factory.make(&cx.options())?;
        let fs = subject.fs.clone();
        let world = subject.world.clone();
        let root = world.root_display();
        world
            .apply(&WorldEffect::CreateFile {
                path: "old".into(),
                bytes: b"one\n".to_vec(),
                mode: 0o644,
            })
            .map_err(|e| e.to_string())?;
        let mut inspected = 0;
        let opts = ResolveOptions { cwd: Some(&root) };
        for (path, edit) in [
            ("old", true),
            ("old", false),
            ("new", false),
            ("deep/er/new", false),
        ] {
            let (signal, (problems, count)) = modes_signal(world.clone());
            let r = cx.rt.block_on(async {
                let t = fs.resolve(path, opts, &Signal::none()).await?;
                if edit {
                    let e = EditRequest {
                        old_string: "one".into(),
                        new_string: "two".into(),
                        replace_all: false,
                    };
                    fs.edit_text(&t, &e, None, None, &signal).await.map(|_| ())
                } else {
                    fs.write_text(&t, "content\n", None, None, &signal)
                        .await
                        .map(|_| ())
                }
            });
            r.map_err(|e| format!("{path}: {} {}", e.code(), e.message()))?;
            if let Some(p) = problems.lock().unwrap_or_else(|x| x.into_inner()).first() {
                return Err(p.clone());
            }
            inspected += *count.lock().unwrap_or_else(|x| x.into_inner());
        }
        if file_mode(world.as_ref(), "old") != Some(0o644) {
            return Err(format!(
                "the replaced file's mode 644 was not kept: {:?}",
                file_mode(world.as_ref(), "old")
            ));
        }
        for new in ["new", "deep/er/new"] {
            if file_mode(world.as_ref(), new) != Some(0o600) {
                return Err(format!(
                    "new file {new:?} is not 0600: {:?}",
                    file_mode(world.as_ref(), new)
                ));
            }
        }
        let names: Vec<String> = world
            .snapshot()
            .map_err(|e| e.to_string())?
            .into_keys()
            .collect();
        if names != ["deep", "deep/er", "deep/er/new", "new", "old"] {
            return Err(format!(
                "unexpected entries after the writes (litter?): {names:?}"
            ));
        }
        drop(subject);
        Ok(inspected)
    })();
    let mut r = match result {
        Ok(n) => PropertyResult::passed(PRIVATE, PRIVATE_SUMMARY, n + 3),
        Err(e) => PropertyResult::failed(PRIVATE, PRIVATE_SUMMARY, 0, e),
    };
    r.seconds = started.elapsed().as_secs_f64();
    r
}

fn staged_paths(
    cx: &Context<'_>,
    subject: &Subject,
) -> Result<(Vec<String>, Result<(), String>), String> {
    let root = subject.world.root_display();
    let (signal, seen) = recording_signal(&root);
    let fs: Arc<dyn FileSystem> = subject.fs.clone();
    let opts = ResolveOptions { cwd: Some(&root) };
    let outcome = cx.rt.block_on(async {
        let t = fs.resolve("a", opts, &Signal::none()).await?;
        fs.write_text(&t, "mine\n", None, None, &signal)
            .await
            .map(|_| ())
    });
    let paths = seen
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .first()
        .cloned()
        .unwrap_or_default();
    Ok((
        paths,
        outcome.map_err(|e| format!("{} {}", e.code(), e.message())),
    ))
}

/// `staging-not-clobbered`.
pub fn not_clobbered(cx: &Context<'_>) -> PropertyResult {
    if !(cx.caps.staging_probe && cx.caps.cancel_points) {
        return PropertyResult::not_claimed(CLOBBER, CLOBBER_SUMMARY, "needs staging probes");
    }
    let started = std::time::Instant::now();
    let result = (|| -> Result<Option<u64>, String> {
        let first = cx.factory.make(&cx.options())?;
        let (p1, r1) = staged_paths(cx, &first)?;
        r1?;
        drop(first);
        let again = cx.factory.make(&cx.options())?;
        let (p2, _) = staged_paths(cx, &again)?;
        drop(again);
        if p1.is_empty() {
            return Err("the write reported no staging entries".into());
        }
        if p1 != p2 {
            return Ok(None);
        }
        let subject = cx.factory.make(&cx.options())?;
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
                bytes: b"PRECIOUS".to_vec(),
                mode: 0o644,
            })
            .map_err(|e| e.to_string())?;
        let (p3, outcome) = staged_paths(cx, &subject)?;
        let snap = subject.world.snapshot().map_err(|e| e.to_string())?;
        match snap.get(&planted) {
            Some(SnapEntry::File { bytes, .. }) if bytes == b"PRECIOUS" => {}
            other => return Err(format!("the decoy at {planted:?} was clobbered: {other:?}")),
        }
        if p3.first() == Some(decoy) {
            return Err(format!("the write staged into the pre-existing {decoy:?}"));
        }
        let mut expected: Vec<&str> = vec![planted.as_str()];
        if decoy_is_dir {
            expected.push(decoy.as_str());
        }
        match &outcome {
            Ok(()) => {
                expected.push("a");
                match snap.get("a") {
                    Some(SnapEntry::File { bytes, .. }) if bytes == b"mine\n" => {}
                    other => {
                        return Err(format!("the write reported success but \"a\" is {other:?}"));
                    }
                }
            }
            Err(e) if e.starts_with("FS_") => {}
            Err(e) => return Err(format!("an uncoded failure: {e}")),
        }
        expected.sort();
        let names: Vec<&str> = snap.keys().map(String::as_str).collect();
        if names != expected {
            return Err(format!(
                "unexpected entries (litter?): {names:?}, expected {expected:?}"
            ));
        }
        Ok(Some(4))
    })();
    let mut r = match result {
        Ok(Some(n)) => PropertyResult::passed(CLOBBER, CLOBBER_SUMMARY, n),
        Ok(None) => PropertyResult::not_claimed(
            CLOBBER,
            CLOBBER_SUMMARY,
            "staging names are not reproducible from the case seed",
        ),
        Err(e) => PropertyResult::failed(CLOBBER, CLOBBER_SUMMARY, 0, e),
    };
    r.seconds = started.elapsed().as_secs_f64();
    r
}
