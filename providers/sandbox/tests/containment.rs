//! Containment, proven on disk: a workspace with links and `..` spellings that lead out, canary
//! files outside every writable root whose bytes, kind and mode are read back after every call,
//! and a race that swaps a directory on the path for a link to outside while writes and edits
//! run. Any change outside is an escape. Only the workspace is writable here (no temp roots):
//! the test directories themselves live under `/tmp`.

use seam::{
    EditRequest, FileSystem, FsErrorCode, FsTarget, ResolveOptions, SandboxMode, SandboxPolicy,
    Signal, WriteIntent,
};
use seam_local::{Durability, LocalConfig};
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A workspace and an outside directory side by side, with canaries outside.
struct Layout {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    out: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("real path");
        let (ws, out) = (base.join("ws"), base.join("out"));
        std::fs::create_dir_all(ws.join("inside")).expect("mkdir ws");
        std::fs::create_dir_all(out.join("sub")).expect("mkdir out");
        std::fs::write(out.join("canary"), b"outside\n").expect("canary");
        std::fs::write(out.join("sub/canary"), b"deeper\n").expect("canary");
        std::fs::write(ws.join("inside/file"), b"inside\n").expect("file");
        let o = out.to_string_lossy().into_owned();
        // Every way out: absolute, relative, a chain, dangling, to `/`, and a directory link.
        symlink(&o, ws.join("abs-dir")).expect("link");
        symlink("../out", ws.join("rel-dir")).expect("link");
        symlink("rel-dir", ws.join("chain")).expect("link");
        symlink(out.join("canary"), ws.join("abs-file")).expect("link");
        symlink("../out/canary", ws.join("rel-file")).expect("link");
        symlink(out.join("missing"), ws.join("dangling-out")).expect("link");
        symlink("/", ws.join("to-root")).expect("link");
        symlink("inside", ws.join("in-link")).expect("link");
        symlink(ws.join("inside"), ws.join("in-abs-link")).expect("link");
        Self { _dir: dir, ws, out }
    }

    fn ws(&self) -> String {
        self.ws.to_string_lossy().into_owned()
    }

    /// Everything outside, with bytes, kind, mode and inode: the canary's state.
    fn outside(&self) -> BTreeMap<String, String> {
        fn walk(p: &Path, base: &Path, out: &mut BTreeMap<String, String>) {
            let Ok(entries) = std::fs::read_dir(p) else {
                return;
            };
            for e in entries.flatten() {
                let path = e.path();
                let meta = std::fs::symlink_metadata(&path).expect("metadata");
                let rel = path.strip_prefix(base).expect("under base");
                let bytes = if meta.is_file() {
                    std::fs::read(&path).expect("read")
                } else {
                    Vec::new()
                };
                out.insert(
                    rel.to_string_lossy().into_owned(),
                    format!(
                        "{:?} {:o} ino {} {:?}",
                        meta.file_type(),
                        meta.permissions().mode(),
                        meta.ino(),
                        bytes
                    ),
                );
                if meta.is_dir() {
                    walk(&path, base, out);
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.out, &self.out, &mut out);
        out
    }
}

fn sandbox(ws: &str, mode: SandboxMode) -> SandboxFileSystem {
    let local = LocalConfig::new(ws).with_durability(Durability::None);
    SandboxFileSystem::new(
        SandboxConfig::new(ws, mode)
            .with_local(local)
            .with_temp_roots(Vec::new()),
    )
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn target(fs: &SandboxFileSystem, path: &str) -> FsTarget {
    fs.resolve(path, ResolveOptions::default(), &Signal::none())
        .await
        .expect("resolves")
}

fn edit(old: &str, new: &str) -> EditRequest {
    EditRequest {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

/// Paths that lead out of the workspace, each written and edited under workspace-write: every
/// call is FS_SANDBOX_DENIED, and nothing outside changes.
#[test]
fn every_way_out_is_denied_and_nothing_outside_changes() {
    let rt = rt();
    let l = Layout::new();
    let fs = sandbox(&l.ws(), SandboxMode::WorkspaceWrite);
    let before = l.outside();
    let out = l.out.to_string_lossy().into_owned();
    let ways = [
        format!("{out}/canary"),
        format!("{out}/new"),
        "../out/canary".to_string(),
        "inside/../../out/new".to_string(),
        "abs-dir/canary".to_string(),
        "abs-dir/new".to_string(),
        "abs-dir/newdir/new".to_string(),
        "rel-dir/canary".to_string(),
        "rel-dir/sub/new".to_string(),
        "chain/canary".to_string(),
        "chain/new".to_string(),
        "abs-file".to_string(),
        "rel-file".to_string(),
        "to-root/tmp/seam-sandbox-escape".to_string(),
    ];
    let mut denied = 0;
    for way in &ways {
        rt.block_on(async {
            let t = target(&fs, way).await;
            let w = fs
                .write_text(&t, "pwned\n", None, None, &Signal::none())
                .await;
            let e = w.expect_err(way);
            assert_eq!(e.code(), FsErrorCode::SandboxDenied, "{way}: {e:?}");
            assert_eq!(
                e.message(),
                format!(
                    "cannot write \"{}\": file access denied under workspace-write mode",
                    t.display_path
                )
            );
            let e = fs
                .edit_text(&t, &edit("outside", "pwned"), None, None, &Signal::none())
                .await
                .expect_err(way);
            assert_eq!(e.code(), FsErrorCode::SandboxDenied, "{way}: {e:?}");
            denied += 2;
        });
        assert_eq!(l.outside(), before, "{way} changed something outside");
    }
    assert!(!Path::new("/tmp/seam-sandbox-escape").exists());
    assert_eq!(denied, 2 * ways.len());
    // A dangling link that points out is never written through: refused, nothing created.
    rt.block_on(async {
        let t = target(&fs, "dangling-out").await;
        let e = fs
            .write_text(&t, "pwned\n", None, None, &Signal::none())
            .await
            .expect_err("dangling");
        assert!(
            matches!(
                e.code(),
                FsErrorCode::SandboxDenied | FsErrorCode::NotRegularFile
            ),
            "{e:?}"
        );
    });
    assert_eq!(l.outside(), before);
    assert!(!l.out.join("missing").exists());
}

/// What stays inside works: plain paths, `..` that stays in, links from one place inside to
/// another (relative and absolute), new parents.
#[test]
fn what_stays_inside_lands() {
    let rt = rt();
    let l = Layout::new();
    let fs = sandbox(&l.ws(), SandboxMode::WorkspaceWrite);
    let before = l.outside();
    rt.block_on(async {
        for (path, real) in [
            ("new", "new"),
            ("inside/../top", "top"),
            ("in-link/via-rel", "inside/via-rel"),
            ("in-abs-link/via-abs", "inside/via-abs"),
            ("deep/er/file", "deep/er/file"),
        ] {
            let t = target(&fs, path).await;
            fs.write_text(&t, "ok\n", None, None, &Signal::none())
                .await
                .unwrap_or_else(|e| panic!("{path}: {e:?}"));
            assert_eq!(std::fs::read(l.ws.join(real)).expect(real), b"ok\n");
        }
        let t = target(&fs, "inside/file").await;
        let out = fs
            .edit_text(&t, &edit("inside", "edited"), None, None, &Signal::none())
            .await
            .expect("edit inside");
        assert_eq!(out.after, "edited\n");
        assert_eq!(
            std::fs::read(l.ws.join("inside/file")).expect("read"),
            b"edited\n"
        );
        // The workspace root itself passes the fence and fails only on its kind.
        let t = target(&fs, &l.ws()).await;
        let e = fs
            .write_text(&t, "x", None, None, &Signal::none())
            .await
            .expect_err("a directory");
        assert_eq!(e.code(), FsErrorCode::NotRegularFile);
    });
    assert_eq!(l.outside(), before);
}

/// A target resolved while the path stayed inside, used after a directory on it became a link
/// to outside — absolute, relative, relative through a directory inside, a chain, absolute
/// through the workspace and `..`: the mutation is refused on the object it would open, not on
/// the string.
#[test]
fn a_directory_swapped_for_a_link_after_resolution_is_not_followed_out() {
    let rt = rt();
    let l = Layout::new();
    let fs = sandbox(&l.ws(), SandboxMode::WorkspaceWrite);
    std::fs::write(l.out.join("canary2"), b"outside\n").expect("write");
    let out = l.out.to_string_lossy().into_owned();
    let ws = l.ws();
    let texts = [
        out.clone(),
        "../out".to_string(),
        "inside/../../out".to_string(),
        "rel-dir".to_string(),
        format!("{ws}/../out"),
    ];
    for text in texts {
        std::fs::create_dir(l.ws.join("d")).expect("mkdir");
        std::fs::write(l.ws.join("d/canary2"), b"inside\n").expect("write");
        let before = l.outside();
        rt.block_on(async {
            let t = target(&fs, "d/canary2").await;
            let n = target(&fs, "d/new").await;
            std::fs::remove_dir_all(l.ws.join("d")).expect("remove");
            symlink(&text, l.ws.join("d")).expect("swap in a link");
            for (t, what) in [(&t, "existing"), (&n, "new")] {
                let e = fs
                    .write_text(&t.clone(), "pwned\n", None, None, &Signal::none())
                    .await
                    .expect_err(what);
                assert_eq!(
                    e.code(),
                    FsErrorCode::SandboxDenied,
                    "{text}: {what}: {e:?}"
                );
            }
            let e = fs
                .edit_text(&t, &edit("outside", "pwned"), None, None, &Signal::none())
                .await
                .expect_err("edit");
            assert_eq!(e.code(), FsErrorCode::SandboxDenied, "{text}: {e:?}");
        });
        assert_eq!(l.outside(), before, "{text}: an escape");
        std::fs::remove_file(l.ws.join("d")).expect("unlink");
    }
}

/// Runs the swap race: while two threads write and edit `d/f` through `fs`, another keeps
/// exchanging `ws/d` (a directory) with `ws/x` (a link to outside), `SWAPS` times. With `check`,
/// a call is made only when the freshly resolved key lies beneath the workspace (the seed's
/// fence: check the real path, then open by name). Returns the swaps made, the mutations that
/// landed and were refused, and whether anything outside changed.
fn swap_race(fs: Arc<dyn FileSystem>, l: &Arc<Layout>, check: bool) -> Race {
    const SWAPS: u64 = 10_000;
    let before = l.outside();
    let ws = l.ws();
    let stop = Arc::new(AtomicBool::new(false));
    let (landed, refused) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let denied = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (l, stop) = (l.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while swaps < SWAPS {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    l.ws.join("d").as_path(),
                    rustix::fs::CWD,
                    l.ws.join("x").as_path(),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("exchange");
                swaps += 1;
            }
            stop.store(true, Ordering::SeqCst);
            swaps
        })
    };
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let (fs, stop, ws) = (fs.clone(), stop.clone(), ws.clone());
            let (landed, refused, denied) = (landed.clone(), refused.clone(), denied.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .expect("runtime");
                rt.block_on(async {
                    while !stop.load(Ordering::SeqCst) {
                        let Ok(t) = fs
                            .resolve("d/f", ResolveOptions::default(), &Signal::none())
                            .await
                        else {
                            continue;
                        };
                        if check && !seam::paths::is_within(&ws, t.key.as_str()) {
                            refused.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        let r = if i == 0 {
                            fs.write_text(&t, "pwned\n", None, None, &Signal::none())
                                .await
                                .map(|_| ())
                        } else {
                            fs.edit_text(&t, &edit("outside", "pwned"), None, None, &Signal::none())
                                .await
                                .map(|_| ())
                        };
                        match r {
                            Ok(()) => landed.fetch_add(1, Ordering::Relaxed),
                            Err(e) if e.code() == FsErrorCode::SandboxDenied => {
                                denied.fetch_add(1, Ordering::Relaxed)
                            }
                            Err(_) => refused.fetch_add(1, Ordering::Relaxed),
                        };
                    }
                });
            })
        })
        .collect();
    let swaps = swapper.join().expect("swapper");
    for w in workers {
        w.join().expect("worker");
    }
    Race {
        swaps,
        landed: landed.load(Ordering::Relaxed),
        denied: denied.load(Ordering::Relaxed),
        refused: refused.load(Ordering::Relaxed),
        escaped: l.outside() != before,
    }
}

/// What a swap race saw: swaps made; mutations that landed, were denied by the fence, failed
/// otherwise (a stale edit, say); whether anything outside changed.
#[derive(Debug)]
struct Race {
    swaps: u64,
    landed: u64,
    denied: u64,
    refused: u64,
    escaped: bool,
}

/// A layout for the race: `ws/d/f` inside, `ws/x` a link to outside (absolute, or `../out`),
/// where a decoy `f` waits.
fn race_layout(relative: bool) -> Arc<Layout> {
    let l = Layout::new();
    std::fs::create_dir(l.ws.join("d")).expect("mkdir");
    std::fs::write(l.ws.join("d/f"), b"outside\n").expect("write");
    if relative {
        symlink("../out", l.ws.join("x")).expect("link");
    } else {
        symlink(&l.out, l.ws.join("x")).expect("link");
    }
    std::fs::write(l.out.join("f"), b"outside\n").expect("decoy");
    Arc::new(l)
}

/// The swap race, 10,000 swaps, against the sandbox under workspace-write: zero bytes outside
/// change. Beside it, the same race against the seed's fence (check the real path, then write by
/// name through the unconfined local provider) does escape — so the race is one that finds what
/// it looks for.
#[test]
fn the_swap_race_never_escapes_the_sandbox_and_does_escape_a_check_then_open_fence() {
    for relative in [false, true] {
        let l = race_layout(relative);
        let fs: Arc<dyn FileSystem> = Arc::new(sandbox(&l.ws(), SandboxMode::WorkspaceWrite));
        let race = swap_race(fs, &l, false);
        eprintln!("sandbox, relative link {relative}: {race:?}");
        assert_eq!(race.swaps, 10_000);
        // The fence was reached and said no (not merely any error), many times.
        assert!(race.denied > 50, "{race:?}");
        assert!(race.landed + race.denied + race.refused > 100, "{race:?}");
        assert!(
            !race.escaped,
            "an escape: something outside changed: {race:?}"
        );
    }

    // A race is a race: on a loaded machine give the broken fence a few rounds to be caught.
    let escaped = (0..5).any(|round| {
        let l = race_layout(false);
        let local = seam_local::LocalFileSystem::new(
            LocalConfig::new(l.ws()).with_durability(Durability::None),
        );
        let race = swap_race(Arc::new(local), &l, true);
        eprintln!("check-then-open, round {round}: {race:?}");
        race.escaped
    });
    assert!(
        escaped,
        "the race never reached outside through a check-then-open fence"
    );
}

/// A hard link whose other name is outside: a write or edit replaces the name inside with a new
/// file; the file outside keeps its bytes.
#[test]
fn a_write_through_a_hard_link_leaves_the_outside_name_alone() {
    let rt = rt();
    let l = Layout::new();
    std::fs::hard_link(l.out.join("canary"), l.ws.join("hard")).expect("hard link");
    let fs = sandbox(&l.ws(), SandboxMode::WorkspaceWrite);
    rt.block_on(async {
        let t = target(&fs, "hard").await;
        fs.write_text(&t, "inside now\n", None, None, &Signal::none())
            .await
            .expect("write");
        let t = target(&fs, "hard").await;
        fs.edit_text(&t, &edit("now", "still"), None, None, &Signal::none())
            .await
            .expect("edit");
    });
    assert_eq!(
        std::fs::read(l.ws.join("hard")).expect("read"),
        b"inside still\n"
    );
    assert_eq!(
        std::fs::read(l.out.join("canary")).expect("read"),
        b"outside\n"
    );
}

/// read-only denies every mutation and changes nothing; reads work; danger-full-access writes
/// anywhere; the per-call policy wins over the default for that call only.
#[test]
fn modes_and_the_per_call_policy() {
    let rt = rt();
    let l = Layout::new();
    let ws = l.ws();
    let ro = sandbox(&ws, SandboxMode::ReadOnly);
    assert_eq!(ro.sandbox_mode(), Some(SandboxMode::ReadOnly));
    assert!(ro.capabilities().sandbox_modes);
    rt.block_on(async {
        let t = target(&ro, "inside/file").await;
        assert_eq!(
            ro.read_text(&t, &Signal::none()).await.expect("reads"),
            "inside\n"
        );
        let n = target(&ro, "new").await;
        for r in [
            ro.write_text(&n, "x", None, None, &Signal::none())
                .await
                .map(|_| ()),
            ro.write_text(
                &t,
                "x",
                Some(&WriteIntent::CreateIfAbsent),
                None,
                &Signal::none(),
            )
            .await
            .map(|_| ()),
            ro.edit_text(&t, &edit("inside", "x"), None, None, &Signal::none())
                .await
                .map(|_| ()),
        ] {
            let e = r.expect_err("read-only");
            assert_eq!(e.code(), FsErrorCode::SandboxDenied);
            assert!(
                e.message()
                    .ends_with("file access denied under read-only mode")
            );
        }
        assert!(!l.ws.join("new").exists());
        assert_eq!(
            std::fs::read(l.ws.join("inside/file")).expect("read"),
            b"inside\n"
        );
        // One call widened to workspace-write lands; the next, without a policy, is denied.
        let widen = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            workspace_root: ws.clone(),
        };
        ro.write_text(&n, "widened\n", None, Some(&widen), &Signal::none())
            .await
            .expect("widened for one call");
        assert_eq!(std::fs::read(l.ws.join("new")).expect("read"), b"widened\n");
        let again = ro
            .write_text(&n, "again\n", None, None, &Signal::none())
            .await
            .expect_err("default again");
        assert_eq!(again.code(), FsErrorCode::SandboxDenied);
        // danger-full-access, by default or per call, writes outside.
        let full = sandbox(&ws, SandboxMode::DangerFullAccess);
        let o = target(&full, &l.out.join("written").to_string_lossy()).await;
        full.write_text(&o, "anywhere\n", None, None, &Signal::none())
            .await
            .expect("unfenced");
        let danger = SandboxPolicy {
            mode: SandboxMode::DangerFullAccess,
            workspace_root: ws.clone(),
        };
        let o2 = target(&ro, &l.out.join("written2").to_string_lossy()).await;
        ro.write_text(&o2, "per call\n", None, Some(&danger), &Signal::none())
            .await
            .expect("per-call danger");
        // A workspace root that does not exist matches nothing.
        let missing = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            workspace_root: format!("{ws}/no-such-root"),
        };
        let e = ro
            .write_text(&n, "x", None, Some(&missing), &Signal::none())
            .await
            .expect_err("missing root");
        assert_eq!(e.code(), FsErrorCode::SandboxDenied);
    });
    assert_eq!(
        std::fs::read(l.out.join("written")).expect("read"),
        b"anywhere\n"
    );
    assert_eq!(
        std::fs::read(l.out.join("written2")).expect("read"),
        b"per call\n"
    );
}

/// A cancelled call is FS_ABORTED before the fence decides anything.
#[test]
fn cancellation_comes_before_the_fence() {
    let rt = rt();
    let l = Layout::new();
    let fs = sandbox(&l.ws(), SandboxMode::ReadOnly);
    rt.block_on(async {
        let t = target(&fs, "new").await;
        let cancelled = Signal::new();
        cancelled.cancel();
        let e = fs
            .write_text(&t, "x", None, None, &cancelled)
            .await
            .expect_err("cancelled");
        assert_eq!(e.code(), FsErrorCode::Aborted);
    });
}

/// A rename both of whose ends are denied names the source, whichever way each leaves: the
/// source's end is decided first (its parent's walk included), as the contract orders it. Here
/// the source's parent is a dangling link inside the workspace that points out (its real path
/// is inside; only the walk leaves) and the destination lies outside by its path. Each way,
/// nothing moves and nothing outside changes.
#[test]
fn a_rename_denied_at_both_ends_names_the_source() {
    let rt = rt();
    let l = Layout::new();
    let fs = sandbox(&l.ws(), SandboxMode::WorkspaceWrite);
    let before = l.outside();
    let (ws, out) = (l.ws(), l.out.to_string_lossy().into_owned());
    let denied =
        |p: &str| format!("cannot write \"{p}\": file access denied under workspace-write mode");
    rt.block_on(async {
        for (from, to, named) in [
            // The source's walk leaves, the destination is outside by its path.
            (
                format!("{ws}/dangling-out/x"),
                format!("{out}/new"),
                format!("{ws}/dangling-out/x"),
            ),
            // Both leave through links.
            (
                format!("{ws}/dangling-out/x"),
                format!("{ws}/abs-dir/new"),
                format!("{ws}/dangling-out/x"),
            ),
            // The source outside by its path, the destination's walk leaves.
            (
                format!("{out}/canary"),
                format!("{ws}/dangling-out/new"),
                format!("{out}/canary"),
            ),
            // Only the destination leaves: it is the one named.
            (
                format!("{ws}/inside/file"),
                format!("{out}/new"),
                format!("{out}/new"),
            ),
        ] {
            let e = fs
                .rename(
                    &from,
                    &to,
                    ResolveOptions::default(),
                    &seam::RenameOptions::default(),
                    None,
                    &Signal::none(),
                )
                .await
                .expect_err(&from);
            assert_eq!(
                e.code(),
                FsErrorCode::SandboxDenied,
                "{from} -> {to}: {e:?}"
            );
            assert_eq!(e.message(), denied(&named), "{from} -> {to}");
        }
    });
    assert_eq!(l.outside(), before);
    assert_eq!(
        std::fs::read(l.ws.join("inside/file")).expect("still there"),
        b"inside\n"
    );
}
