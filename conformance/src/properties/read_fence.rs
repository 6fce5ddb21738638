//! The read fence under attack, for a backend that can be deployed with its reads confined
//! ([`seam::Capability::ReadFence`], asked for with [`crate::CaseOptions::with_confined_reads`]):
//! part of `containment` (every way out, each read) and of `swap-race` (reads racing a directory
//! swapped for a link to outside).
//!
//! Reads have no per-call policy, so the fence that applies is the deployment's own: its mode
//! (`read-only` or `workspace-write`; a `danger-full-access` deployment confines nothing and does
//! not claim the fence) and its workspace, the case's `d/`
//! ([`crate::factory::DEPLOYMENT_WORKSPACE`]). The layout puts every way out a published escape
//! used inside `d/` — absolute, relative and chained links to a directory outside, links to
//! files outside, a dangling link out, a link to the case's root, a link to a sibling whose name
//! extends the workspace's (`d2/`) — beside files outside that hold a canary text. Every read
//! (`stat`, `lstat`, `read_text`, `stream_text`, `read_bytes`, `list_dir`) through a way out must
//! be `FS_SANDBOX_DENIED` with the contract's text and return nothing; a read that stays in reads
//! what is there; a listing of `d/` shows each link that leads out as nothing there. A target
//! resolved beneath `d/` whose directory is then swapped for a link out is denied too: a fence
//! that checks the key and then opens by name follows the link, and is caught here.

use super::{Context, NotChecked, Run};
use crate::factory::DEPLOYMENT_WORKSPACE as D;
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use futures_util::StreamExt;
use seam::{
    Capability, FileSystem, FsError, FsKind, FsTarget, ResolveOptions, SandboxMode, Signal, Verb,
};
use seam_model::WorldEffect;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What the files outside hold: no answer may carry it.
const OUTSIDE: &str = "outside!\n";
/// What the file inside holds.
const INSIDE: &str = "inside\n";

/// A read the attacks make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    Stat,
    Lstat,
    Text,
    Stream,
    Bytes,
    List,
}

impl Read {
    fn verb(self) -> Verb {
        match self {
            Read::Stat => Verb::Stat,
            Read::Lstat => Verb::Lstat,
            Read::List => Verb::List,
            Read::Text | Read::Stream | Read::Bytes => Verb::Read,
        }
    }
}

/// A subject deployed with its reads confined, if the backend offers one (its deployment mode
/// with it); `None` when it does not claim the read fence.
fn confined(cx: &Context) -> Result<Option<(crate::factory::Subject, SandboxMode)>, Failure> {
    let subject = cx
        .factory
        .make(&cx.options().with_confined_reads())
        .map_err(|e| fail(FailureKind::Setup, e))?;
    let caps = subject.fs.capabilities();
    if !caps.has(Capability::ReadFence) {
        return Ok(None);
    }
    match subject.fs.sandbox_mode() {
        Some(mode @ (SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite)) => {
            Ok(Some((subject, mode)))
        }
        other => Err(fail(
            FailureKind::Claim,
            format!(
                "the backend claims the read fence under a deployment of mode {other:?}: only read-only and workspace-write deployments confine reads"
            ),
        )),
    }
}

fn file(path: &str, text: &str) -> WorldEffect {
    WorldEffect::CreateFile {
        path: path.into(),
        bytes: text.as_bytes().to_vec().into(),
        mode: 0o644,
    }
}

fn link(path: &str, target: &str) -> WorldEffect {
    WorldEffect::Symlink {
        path: path.into(),
        target: target.into(),
    }
}

/// The layout: the workspace `d/` with its ways out, the outside beside it.
fn layout(root: &str) -> Vec<WorldEffect> {
    vec![
        file(&format!("{D}/in/file"), INSIDE),
        file(&format!("{D}/x/f"), INSIDE),
        file("out/canary", OUTSIDE),
        file("out/f", OUTSIDE),
        file(&format!("{D}2/canary"), OUTSIDE),
        link(&format!("{D}/abs"), &format!("{root}/out")),
        link(&format!("{D}/rel"), "../out"),
        link(&format!("{D}/chain"), "rel"),
        link(&format!("{D}/file-abs"), &format!("{root}/out/canary")),
        link(&format!("{D}/file-rel"), "../out/canary"),
        link(&format!("{D}/dang"), &format!("{root}/out/missing")),
        link(&format!("{D}/sib"), &format!("../{D}2")),
        link(&format!("{D}/root"), root),
        link(&format!("{D}/inlink"), "in"),
    ]
}

/// The ways out and the reads tried through each (`{root}` is the case's directory).
fn ways_out() -> Vec<(String, &'static [Read])> {
    use Read::*;
    let all: &'static [Read] = &[Stat, Text, Stream, Bytes];
    vec![
        (
            "{root}/out/canary".into(),
            &[Stat, Lstat, Text, Stream, Bytes],
        ),
        (format!("{D}/../out/canary"), &[Stat, Text]),
        (format!("{D}/in/../../out/canary"), &[Text, Lstat]),
        (format!("{{root}}/{D}2/canary"), all),
        (
            format!("{D}/abs/canary"),
            &[Stat, Lstat, Text, Stream, Bytes],
        ),
        (format!("{D}/rel/canary"), &[Text, Lstat]),
        (format!("{D}/chain/canary"), &[Stat, Text]),
        (format!("{D}/file-abs"), all),
        (format!("{D}/file-rel"), &[Text, Bytes]),
        (format!("{D}/sib/canary"), &[Text, Lstat]),
        (format!("{D}/root/out/canary"), &[Text, Lstat]),
        (format!("{D}/dang"), &[Stat, Text]),
        (format!("{D}/abs"), &[List, Stat]),
        (format!("{D}/rel"), &[List]),
        ("{root}/out".into(), &[List]),
    ]
}

/// Texts of links to outside that `d/x` is swapped for after a target beneath it was resolved.
const SWAPS: &[&str] = &[
    "{root}/out",
    "../out",
    "in/../../out",
    "rel",
    "{root}/d/../out",
];

/// One read: what it returned, as text a person can read and the suite can search, or its
/// error.
async fn read(
    fs: &dyn FileSystem,
    target: &FsTarget,
    path: &str,
    cwd: &str,
    how: Read,
    bytes: bool,
) -> Option<Result<String, FsError>> {
    let none = Signal::none();
    Some(match how {
        Read::Stat => fs.stat(target, &none).await.map(|i| format!("{i:?}")),
        Read::Lstat => fs
            .lstat(path, ResolveOptions { cwd: Some(cwd) }, &none)
            .await
            .map(|i| format!("{i:?}")),
        Read::Text => fs.read_text(target, &none).await,
        Read::Stream => match fs.stream_text(target, &none).await {
            Ok(mut s) => {
                let mut all = String::new();
                while let Some(chunk) = s.next().await {
                    match chunk {
                        Ok(c) => all.push_str(&c),
                        Err(e) => return Some(Err(e)),
                    }
                }
                Ok(all)
            }
            Err(e) => Err(e),
        },
        Read::Bytes if !bytes => return None,
        Read::Bytes => fs
            .read_bytes(target, 1 << 20, &none)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned()),
        Read::List => fs.list_dir(target, &none).await.map(|e| format!("{e:?}")),
    })
}

/// The denial a read of `display` must get.
fn denial(how: Read, display: &str, mode: SandboxMode) -> FsError {
    FsError::read_denied(how.verb(), display, mode)
}

/// `containment`'s read attacks. `Ok(false)` when the backend offers no confined deployment.
pub(super) fn attack(cx: &Context, out: &mut Run) -> Result<bool, Failure> {
    let rt = cx.runtime()?;
    let Some((subject, mode)) = confined(cx)? else {
        return Ok(false);
    };
    let (fs, world) = (subject.fs.clone(), subject.world.clone());
    let bytes = fs.capabilities().read_bytes;
    let root = world.root_display();
    let setup = |e: std::io::Error| fail(FailureKind::Setup, e.to_string());
    for effect in layout(&root) {
        world.apply(&effect).map_err(setup)?;
    }
    let opts = ResolveOptions { cwd: Some(&root) };
    let none = Signal::none();
    let lstat_display = |path: &str| seam::paths::display_path(path, &root, Verb::Lstat);
    // A target resolved beneath the workspace, then its directory swapped for a link out.
    for text in SWAPS {
        let text = text.replace("{root}", &root);
        let file = rt
            .block_on(fs.resolve(&format!("{D}/x/f"), opts, &none))
            .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;
        let dir = rt
            .block_on(fs.resolve(&format!("{D}/x"), opts, &none))
            .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;
        world
            .apply(&WorldEffect::Remove {
                path: format!("{D}/x"),
            })
            .map_err(setup)?;
        world
            .apply(&link(&format!("{D}/x"), &text))
            .map_err(setup)?;
        for (target, how) in [
            (&file, Read::Text),
            (&file, Read::Stat),
            (&file, Read::Bytes),
            (&dir, Read::List),
        ] {
            let Some(got) = rt.block_on(read(fs.as_ref(), target, "", &root, how, bytes)) else {
                continue;
            };
            out.stats.check();
            let want = denial(how, &target.display_path, mode);
            match got {
                Err(e) if e == want => out.stats.rule(Rule::ReadFenceSwappedDenied),
                other => {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!(
                            "a read followed a directory swapped for a link to outside: {how:?} of {:?} (resolved before {D}/x was swapped for a link {text:?}) must be {} {:?}, got {}",
                            target.display_path,
                            want.code(),
                            want.message(),
                            shown(&other)
                        ),
                    ));
                }
            }
        }
        world
            .apply(&WorldEffect::Remove {
                path: format!("{D}/x"),
            })
            .map_err(setup)?;
        world
            .apply(&file_effect(&format!("{D}/x/f")))
            .map_err(setup)?;
    }
    // Every way out, every read.
    for (spelled, hows) in ways_out() {
        let path = spelled.replace("{root}", &root);
        let target = rt.block_on(fs.resolve(&path, opts, &none)).map_err(|e| {
            fail(
                FailureKind::Outcome,
                format!("resolve {path:?}: {}", e.message()),
            )
        })?;
        for how in hows.iter().copied() {
            let Some(got) = rt.block_on(read(fs.as_ref(), &target, &path, &root, how, bytes))
            else {
                continue;
            };
            let display = match how {
                Read::Lstat => lstat_display(&path).map_err(|e| {
                    fail(FailureKind::Outcome, format!("{path:?}: {}", e.message()))
                })?,
                _ => target.display_path.clone(),
            };
            out.stats.check();
            let want = denial(how, &display, mode);
            match got {
                Err(e) if e == want => out.stats.rule(Rule::ReadFenceWayOutDenied),
                other => {
                    return Err(fail(
                        FailureKind::Sandbox,
                        format!(
                            "a read out of the workspace: {how:?} of {spelled:?} must be {} {:?}, got {}",
                            want.code(),
                            want.message(),
                            shown(&other)
                        ),
                    ));
                }
            }
        }
    }
    // The ways that stay in read what is there.
    for (path, how, want) in [
        (format!("{D}/in/file"), Read::Text, INSIDE),
        (format!("{D}/in/file"), Read::Stream, INSIDE),
        (format!("{D}/in/file"), Read::Bytes, INSIDE),
        (format!("{D}/inlink/file"), Read::Text, INSIDE),
        (format!("{D}/in/../inlink/file"), Read::Text, INSIDE),
    ] {
        let target = rt.block_on(fs.resolve(&path, opts, &none)).map_err(|e| {
            fail(
                FailureKind::Outcome,
                format!("resolve {path:?}: {}", e.message()),
            )
        })?;
        let Some(got) = rt.block_on(read(fs.as_ref(), &target, &path, &root, how, bytes)) else {
            continue;
        };
        out.stats.check();
        match got {
            Ok(text) if text == want => out.stats.rule(Rule::ReadFenceInsideReads),
            other => {
                return Err(fail(
                    FailureKind::Sandbox,
                    format!(
                        "a read inside the workspace: {how:?} of {path:?} must read {want:?}, got {}",
                        shown(&other)
                    ),
                ));
            }
        }
    }
    // The lstat of a link inside names the link (it is inside, wherever it leads).
    let got = rt.block_on(fs.lstat(&format!("{D}/abs"), opts, &none));
    out.stats.check();
    if !matches!(&got, Ok(Some(i)) if i.kind == seam::FsPathKind::Symlink) {
        return Err(fail(
            FailureKind::Sandbox,
            format!("lstat of the link {D}/abs (inside) must name a symlink, got {got:?}"),
        ));
    }
    // A listing of the workspace: each link that leads out is nothing there.
    listing(&rt, fs.as_ref(), &root, &world.process_root(), out)?;
    Ok(true)
}

fn file_effect(path: &str) -> WorldEffect {
    file(path, INSIDE)
}

/// What a read returned, for a report: an answer that carries the outside says so first.
fn shown(got: &Result<String, FsError>) -> String {
    match got {
        Ok(text) if text.contains(OUTSIDE.trim_end()) => {
            format!("the outside's content: {}", crate::excerpt::excerpt(text))
        }
        Ok(text) => format!("an answer: {}", crate::excerpt::excerpt(text)),
        Err(e) => format!("{} {:?}", e.code(), e.message()),
    }
}

/// A listing of `d/`: a link that leads out is `other`, without version or size, keyed by its
/// own path (its key opaque, so: its `process_path` is the link's own, under the process root's
/// `d/`); one that stays in is what it leads to.
fn listing(
    rt: &tokio::runtime::Runtime,
    fs: &dyn FileSystem,
    root: &str,
    process_root: &str,
    out: &mut Run,
) -> Result<(), Failure> {
    let none = Signal::none();
    let target = rt
        .block_on(fs.resolve(D, ResolveOptions { cwd: Some(root) }, &none))
        .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;
    let entries = rt.block_on(fs.list_dir(&target, &none)).map_err(|e| {
        fail(
            FailureKind::Sandbox,
            format!(
                "listing the workspace {D}/ failed: {} {:?}",
                e.code(),
                e.message()
            ),
        )
    })?;
    let own = format!("{process_root}/{D}/");
    for e in &entries {
        let leads_out = [
            "abs", "rel", "chain", "file-abs", "file-rel", "sib", "root", "dang",
        ]
        .contains(&e.name.as_str());
        out.stats.check();
        if leads_out
            && (e.kind != FsKind::Other
                || e.version.is_some()
                || e.size.is_some()
                || !fs.process_path(&e.target).starts_with(&own))
        {
            return Err(fail(
                FailureKind::Sandbox,
                format!(
                    "a listing of the workspace shows where the link {D}/{} leads outside: kind {:?}, version {:?}, size {:?}, process path {:?} (a link that leads out is nothing there: other, no version, no size, keyed by its own path)",
                    e.name,
                    e.kind,
                    e.version,
                    e.size,
                    fs.process_path(&e.target)
                ),
            ));
        }
        if e.name == "inlink" && e.kind != FsKind::Directory {
            return Err(fail(
                FailureKind::Sandbox,
                format!(
                    "a listing of the workspace shows the link {D}/inlink (to in/) as {:?}",
                    e.kind
                ),
            ));
        }
    }
    out.stats.rule(Rule::ReadFenceListingHidesOut);
    Ok(())
}

/// Reads racing the swap, per run.
pub const READS: u64 = 1_500;

/// `swap-race`'s read race: reads of `d/x/f` (and listings of `d/x`) while another thread
/// keeps swapping `d/x` for a link to outside and back. `Ok(false)` when the backend offers no
/// confined deployment.
pub(super) fn race(cx: &Context, out: &mut Run) -> Result<bool, Failure> {
    let rt = cx.runtime()?;
    let Some((subject, _mode)) = confined(cx)? else {
        return Ok(false);
    };
    let (fs, world) = (subject.fs.clone(), subject.world.clone());
    let bytes = fs.capabilities().read_bytes;
    let root = world.root_display();
    let setup = |e: std::io::Error| fail(FailureKind::Setup, e.to_string());
    for e in [
        file(&format!("{D}/x/f"), INSIDE),
        file("out/f", OUTSIDE),
        file("out/secret", OUTSIDE),
    ] {
        world.apply(&e).map_err(setup)?;
    }
    let opts = ResolveOptions { cwd: Some(&root) };
    let none = Signal::none();
    let early = rt
        .block_on(fs.resolve(&format!("{D}/x/f"), opts, &none))
        .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;
    let early_dir = rt
        .block_on(fs.resolve(&format!("{D}/x"), opts, &none))
        .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    // Reads answered so far: the swapper keeps each link to outside in place until a read has
    // been answered while it is there, so that reads meet it however a busy machine schedules
    // the two threads (a count, not a clock: under load, links that lived only between two
    // calls of the swapper were met by none of 1,500 reads).
    let answered = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (world, stop, swaps, root) = (world.clone(), stop.clone(), swaps.clone(), root.clone());
        let answered = answered.clone();
        std::thread::spawn(move || -> std::io::Result<()> {
            let dir = format!("{D}/x");
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                match world.apply(&WorldEffect::Remove { path: dir.clone() }) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                let with = if n.is_multiple_of(2) {
                    let text = if n.is_multiple_of(4) {
                        format!("{root}/out")
                    } else {
                        "../out".to_string()
                    };
                    link(&dir, &text)
                } else {
                    file(&format!("{dir}/f"), INSIDE)
                };
                world.apply(&with)?;
                // Counted before it waits: the reads pace themselves on this count.
                swaps.fetch_add(1, Ordering::Relaxed);
                if n.is_multiple_of(2) {
                    let seen = answered.load(Ordering::SeqCst);
                    while answered.load(Ordering::SeqCst) == seen && !stop.load(Ordering::SeqCst) {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                }
                n += 1;
            }
            Ok(())
        })
    };
    let (mut read_inside, mut denied, mut other) = (0u64, 0u64, 0u64);
    let mut leak = None;
    for n in 0..READS {
        // On a loaded CI runner, unpaced, 1,500 reads once met 15 swaps and none of the links.
        super::fence_layout::pace(&swaps, n, &swapper);
        let how = match n % 4 {
            0 => Read::Text,
            1 => Read::Stat,
            2 => Read::Bytes,
            _ => Read::List,
        };
        let target = if how == Read::List {
            early_dir.clone()
        } else if n % 2 == 0 {
            match rt.block_on(fs.resolve(&format!("{D}/x/f"), opts, &none)) {
                Ok(t) => t,
                Err(_) => early.clone(),
            }
        } else {
            early.clone()
        };
        let got = rt.block_on(read(fs.as_ref(), &target, "", &root, how, bytes));
        answered.fetch_add(1, Ordering::SeqCst);
        let Some(got) = got else {
            continue;
        };
        match got {
            Ok(text) => {
                // The outside shows as its content, its size (9 bytes against 7 inside) or
                // its names (`secret` lives only outside).
                let outside = text.contains(OUTSIDE.trim_end())
                    || text.contains("size: Some(9)")
                    || text.contains("\"secret\"");
                if outside {
                    leak = Some(format!(
                        "{how:?} of {:?} returned {}",
                        target.display_path,
                        crate::excerpt::excerpt(&text)
                    ));
                    break;
                }
                read_inside += 1;
            }
            Err(e) if e.code() == seam::FsErrorCode::SandboxDenied => denied += 1,
            Err(_) => other += 1,
        }
    }
    stop.store(true, Ordering::SeqCst);
    match swapper.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(setup(e)),
        Err(_) => return Err(fail(FailureKind::Setup, "the swapping thread panicked")),
    }
    let swapped = swaps.load(Ordering::Relaxed);
    out.stats.check();
    if let Some(leak) = leak {
        return Err(fail(
            FailureKind::Sandbox,
            format!(
                "a read out of the workspace during the swap race: {leak} ({swapped} swaps of {D}/x for a link to outside)"
            ),
        ));
    }
    if denied == 0 {
        if out.not_checked.is_none() {
            out.not_checked = Some(NotChecked::NotRun(format!(
                "no read met {D}/x leading outside in {swapped} swaps ({read_inside} read inside, {other} failed otherwise): the swaps and the reads never overlapped, so the read race checked nothing"
            )));
        }
        return Ok(true);
    }
    out.stats.checks(denied);
    out.stats.rule(Rule::ReadFenceRaceHeld);
    Ok(true)
}
