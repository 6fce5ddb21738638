//! Every capability claim, exercised in both directions. A claimed feature must be there (the
//! sequences then check how it behaves); an unclaimed one must not be offered half-way: an
//! unclaimed `read_bytes` fails with a code and returns no content, an unclaimed cancel point is
//! never shown to a probe, unclaimed staging paths are never reported, an unclaimed
//! `create_dir` fails and makes nothing (a claimed one makes the directory and `remove` takes
//! it away), and `sandbox_mode()` is
//! set exactly when sandbox modes are claimed. The world's word on permission bits is held to
//! its snapshots: a storage that keeps them reads back the mode the world gave a file, one that
//! says it keeps none (an object store) reports none and cannot claim `modes`. A backend that
//! claims nothing it has, or has what it does not claim, fails here — with the claim named.

use super::{Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{CancelPoint, EditRequest, ResolveOptions, Signal};
use seam_model::WorldEffect;
use std::sync::{Arc, Mutex};

/// `claims`.
pub struct Claims;

/// What a probe was shown.
type Shown = Arc<Mutex<Vec<(CancelPoint, Vec<String>)>>>;

impl Property for Claims {
    fn name(&self) -> &'static str {
        "claims"
    }

    fn summary(&self) -> &'static str {
        "each capability claim holds both ways: claimed features work, unclaimed ones are not offered"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rt = cx.runtime()?;
        let subject = cx
            .factory
            .make(&cx.options())
            .map_err(|e| fail(FailureKind::Setup, e))?;
        let (fs, world) = (subject.fs.clone(), subject.world.clone());
        let root = world.root_display();
        world
            .apply(&WorldEffect::CreateFile {
                path: "old".into(),
                bytes: b"one\n".to_vec().into(),
                mode: 0o644,
            })
            .map_err(|e| {
                fail(
                    FailureKind::Setup,
                    format!("the world cannot create a file: {e}"),
                )
            })?;
        let opts = ResolveOptions { cwd: Some(&root) };
        let none = Signal::none();
        let caps = fs.capabilities();
        let stats = &mut out.stats;

        // sandbox_mode() answers exactly when sandbox modes are claimed.
        stats.check();
        let mode = fs.sandbox_mode();
        if caps.sandbox_modes != mode.is_some() {
            return Err(fail(
                FailureKind::Claim,
                format!(
                    "sandbox_modes is {}claimed but sandbox_mode() is {mode:?}",
                    if caps.sandbox_modes { "" } else { "not " }
                ),
            ));
        }
        stats.rule(Rule::ClaimSandboxMode);

        modes_as_declared(world.as_ref(), caps.modes, stats)?;

        // read_bytes works when claimed, returns no content when not.
        let old = rt.block_on(fs.resolve("old", opts, &none)).map_err(|e| {
            fail(
                FailureKind::Outcome,
                format!("resolve \"old\": {}", e.message()),
            )
        })?;
        let got = rt.block_on(fs.read_bytes(&old, 1 << 20, &none));
        stats.check();
        match (caps.read_bytes, got) {
            (true, Ok(bytes)) if bytes == b"one\n" => {}
            (true, other) => {
                return Err(fail(
                    FailureKind::Claim,
                    format!("read_bytes is claimed but read_bytes(\"old\") gave {other:?}"),
                ));
            }
            (false, Ok(bytes)) => {
                return Err(fail(
                    FailureKind::Claim,
                    format!(
                        "read_bytes is not claimed but returned {} bytes of content",
                        bytes.len()
                    ),
                ));
            }
            (false, Err(_)) => {}
        }
        stats.rule(Rule::ClaimReadBytes);

        // The namespace operations work when claimed, and change nothing when not: a directory
        // made, then taken away.
        let policy = super::let_through(fs.as_ref(), &root);
        let made = rt.block_on(fs.create_dir(
            "made",
            opts,
            seam::CreateDirOptions::default(),
            policy.as_ref(),
            &none,
        ));
        let there = world
            .snapshot()
            .map(|s| s.contains_key("made"))
            .unwrap_or(false);
        stats.check();
        match (caps.namespace, &made, there) {
            (true, Ok(o), true) if o.created => {
                let removed = rt.block_on(fs.remove(
                    "made",
                    opts,
                    &seam::RemoveOptions {
                        if_version: None,
                        directory: true,
                    },
                    policy.as_ref(),
                    &none,
                ));
                let gone = world
                    .snapshot()
                    .map(|s| !s.contains_key("made"))
                    .unwrap_or(false);
                if removed.is_err() || !gone {
                    return Err(fail(
                        FailureKind::Claim,
                        format!(
                            "namespace is claimed but remove(\"made\") gave {removed:?} (gone: {gone})"
                        ),
                    ));
                }
            }
            (true, other, there) => {
                return Err(fail(
                    FailureKind::Claim,
                    format!(
                        "namespace is claimed but create_dir(\"made\") gave {other:?} (a directory there: {there})"
                    ),
                ));
            }
            (false, _, true) | (false, Ok(_), _) => {
                return Err(fail(
                    FailureKind::Claim,
                    format!(
                        "namespace is not claimed but create_dir(\"made\") gave {made:?} (a directory there: {there})"
                    ),
                ));
            }
            (false, Err(_), false) => {}
        }
        stats.rule(Rule::ClaimNamespace);

        // Checkpoints: shown in order when claimed, never when not; staging paths likewise.
        let through = super::let_through(fs.as_ref(), &root);
        for (path, edit) in [("new", false), ("old", true)] {
            let shown: Shown = Arc::default();
            let record = shown.clone();
            let w = world.clone();
            let existing = Arc::new(Mutex::new(Vec::new()));
            let exists = existing.clone();
            let signal = Signal::with_probe(move |cp| {
                for p in cp.staging {
                    let there = matches!(w.entry_mode(p), Ok(Some(_)));
                    exists
                        .lock()
                        .unwrap_or_else(|x| x.into_inner())
                        .push((p.clone(), there));
                }
                record
                    .lock()
                    .unwrap_or_else(|x| x.into_inner())
                    .push((cp.point, cp.staging.to_vec()));
                false
            });
            let result = rt.block_on(async {
                let t = fs.resolve(path, opts, &none).await?;
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
            result.map_err(|e| {
                fail(
                    FailureKind::Outcome,
                    format!(
                        "a plain {} of {path:?} failed: {} {:?}",
                        if edit { "edit" } else { "write" },
                        e.code(),
                        e.message()
                    ),
                )
            })?;
            let shown = shown.lock().unwrap_or_else(|x| x.into_inner()).clone();
            let points: Vec<CancelPoint> = shown.iter().map(|(p, _)| *p).collect();
            stats.check();
            let want = [
                CancelPoint::BeforeStage,
                CancelPoint::Staged,
                CancelPoint::Committed,
            ];
            match (caps.cancel_points, points.as_slice()) {
                (true, p) if p == want => {}
                (true, p) => {
                    return Err(fail(
                        FailureKind::Claim,
                        format!(
                            "cancel_points is claimed but a {} showed checkpoints {p:?} (must be {want:?})",
                            if edit { "edit" } else { "write" }
                        ),
                    ));
                }
                (false, []) => {}
                (false, p) => {
                    return Err(fail(
                        FailureKind::Claim,
                        format!("cancel_points is not claimed but checkpoints {p:?} were shown"),
                    ));
                }
            }
            stats.rule(Rule::ClaimCancelPoints);
            if !caps.cancel_points {
                // Staging is reported at checkpoints: without them it cannot be.
                stats.check();
                if caps.staging_probe {
                    return Err(fail(
                        FailureKind::Claim,
                        "staging_probe is claimed without cancel_points (staging is reported at checkpoints)",
                    ));
                }
                stats.rule(Rule::ClaimStagingProbe);
            } else {
                stats.check();
                let staged: Vec<String> = shown
                    .iter()
                    .filter(|(p, _)| *p == CancelPoint::Staged)
                    .flat_map(|(_, s)| s.clone())
                    .collect();
                if caps.staging_probe && staged.is_empty() {
                    return Err(fail(
                        FailureKind::Claim,
                        "staging_probe is claimed but the staged checkpoint reported no staging entries",
                    ));
                }
                if !caps.staging_probe && shown.iter().any(|(_, s)| !s.is_empty()) {
                    return Err(fail(
                        FailureKind::Claim,
                        "staging_probe is not claimed but checkpoints reported staging paths",
                    ));
                }
                let existing = existing.lock().unwrap_or_else(|x| x.into_inner()).clone();
                if let Some((p, _)) = existing.iter().find(|(_, there)| !there) {
                    return Err(fail(
                        FailureKind::Claim,
                        format!("the staging entry {p:?} reported at a checkpoint does not exist"),
                    ));
                }
                stats.rule(Rule::ClaimStagingProbe);
            }
        }
        drop(subject);
        Ok(())
    }
}

/// The world's word on permission bits, held to its snapshot: a backend that claims `modes` reads
/// back the mode its world gave a file (0640, which no default produces); a world that says it
/// keeps none reports none for any entry, and its backend does not claim `modes`. A world that
/// says nothing and whose backend does not claim `modes` is not asked (what protocol 1 allowed
/// before the declaration existed: modes are then simply not compared).
fn modes_as_declared(
    world: &dyn crate::World,
    modes_claimed: bool,
    stats: &mut crate::stats::Stats,
) -> Result<(), Failure> {
    let keeps = world.keeps_modes();
    stats.check();
    if !keeps && modes_claimed {
        return Err(fail(
            FailureKind::Claim,
            "modes is claimed, but the world says the storage keeps no permission bits (\"modes\": false)",
        ));
    }
    let probe = keeps && modes_claimed;
    if probe {
        world
            .apply(&WorldEffect::CreateFile {
                path: "mode-640".into(),
                bytes: b"bits\n".to_vec().into(),
                mode: 0o640,
            })
            .map_err(|e| {
                fail(
                    FailureKind::Setup,
                    format!("the world cannot create a file of mode 640: {e}"),
                )
            })?;
    }
    let snapshot = world.snapshot().map_err(|e| {
        fail(
            FailureKind::Setup,
            format!("cannot read the world back: {e}"),
        )
    })?;
    if probe {
        let mode = match snapshot.get("mode-640") {
            Some(seam_model::SnapEntry::File { mode, .. }) => *mode,
            other => {
                return Err(fail(
                    FailureKind::Setup,
                    format!("the world made \"mode-640\" and reads back {other:?}"),
                ));
            }
        };
        if mode != Some(0o640) {
            return Err(fail(
                FailureKind::Claim,
                format!(
                    "modes is claimed, but the world gave \"mode-640\" mode 640 and reads back {}: a storage that keeps no permission bits says so (\"modes\": false in the `world` of the world/case answer, World::keeps_modes in Rust) and does not claim modes",
                    mode.map_or_else(|| "no mode".to_string(), |m| format!("mode {m:o}"))
                ),
            ));
        }
        world
            .apply(&WorldEffect::Remove {
                path: "mode-640".into(),
            })
            .map_err(|e| {
                fail(
                    FailureKind::Setup,
                    format!("the world cannot remove a file: {e}"),
                )
            })?;
    } else if !keeps
        && let Some((path, mode)) = snapshot.iter().find_map(|(p, e)| match e {
            seam_model::SnapEntry::File { mode: Some(m), .. }
            | seam_model::SnapEntry::Dir { mode: Some(m) } => Some((p, *m)),
            _ => None,
        })
    {
        return Err(fail(
            FailureKind::Claim,
            format!(
                "the world says the storage keeps no permission bits (\"modes\": false), yet reports mode {mode:o} for {path:?}"
            ),
        ));
    }
    stats.rule(Rule::ClaimModes);
    Ok(())
}
