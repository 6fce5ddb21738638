//! The read fence, proven on what comes back: a workspace with every way out a published escape
//! used (`..`, absolute and relative links to files and directories, chains, a dangling link
//! out, a link to `/`, a sibling whose name extends the workspace's), files outside holding a
//! secret, and every read of the contract — `stat`, `lstat`, `read_text`, `stream_text`,
//! `read_bytes`, `list_dir`, `glob`, `grep` — through each. A way out is `FS_SANDBOX_DENIED` and
//! no byte of the secret comes back; a way that stays in reads as the local provider does; a
//! directory swapped for a link to outside while 2,000 reads run never shows the secret. Without
//! `confine_reads` (the seed's sandbox) the same reads go through, which is what the fence
//! changes.

use futures_util::StreamExt;
use seam::search::{GlobQuery, GrepQuery};
use seam::{Capability, FileSystem, FsErrorCode, FsTarget, ResolveOptions, SandboxMode, Signal};
use seam_local::LocalConfig;
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const SECRET: &str = "the secret outside";

struct Layout {
    _dir: tempfile::TempDir,
    ws: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("real path");
        let (ws, out, sibling) = (base.join("ws"), base.join("out"), base.join("ws2"));
        std::fs::create_dir_all(ws.join("inside/deep")).expect("mkdir");
        std::fs::create_dir_all(&out).expect("mkdir");
        std::fs::create_dir_all(&sibling).expect("mkdir");
        std::fs::write(out.join("secret"), SECRET).expect("secret");
        std::fs::write(sibling.join("secret"), SECRET).expect("secret");
        std::fs::write(ws.join("inside/deep/file"), "inside\n").expect("file");
        let o = out.to_string_lossy().into_owned();
        symlink(&o, ws.join("abs-dir")).expect("link");
        symlink("../out", ws.join("rel-dir")).expect("link");
        symlink("rel-dir", ws.join("chain")).expect("link");
        symlink(out.join("secret"), ws.join("abs-file")).expect("link");
        symlink("../out/secret", ws.join("rel-file")).expect("link");
        symlink(out.join("missing"), ws.join("dangling-out")).expect("link");
        symlink("/", ws.join("to-root")).expect("link");
        symlink("inside/deep", ws.join("in-link")).expect("link");
        Self { _dir: dir, ws }
    }

    fn fs(&self, mode: SandboxMode, confined: bool) -> SandboxFileSystem {
        let ws = self.ws.to_string_lossy().into_owned();
        SandboxFileSystem::new(
            SandboxConfig::new(ws.clone(), mode)
                .with_local(LocalConfig::new(ws))
                .with_temp_roots(Vec::new())
                .with_confined_reads(confined),
        )
    }
}

/// Every read of `path` through `fs`: (operation, `Ok(what came back)` or `Err(code)`).
async fn every_read(
    fs: &SandboxFileSystem,
    path: &str,
) -> Vec<(&'static str, Result<String, FsErrorCode>)> {
    let none = Signal::none();
    let mut out = Vec::new();
    let t: FsTarget = match fs.resolve(path, ResolveOptions::default(), &none).await {
        Ok(t) => t,
        Err(e) => return vec![("resolve", Err(e.code()))],
    };
    out.push((
        "stat",
        fs.stat(&t, &none)
            .await
            .map(|i| format!("{i:?}"))
            .map_err(|e| e.code()),
    ));
    out.push((
        "lstat",
        fs.lstat(path, ResolveOptions::default(), &none)
            .await
            .map(|i| format!("{:?}", i.map(|i| i.kind)))
            .map_err(|e| e.code()),
    ));
    out.push((
        "read_text",
        fs.read_text(&t, &none).await.map_err(|e| e.code()),
    ));
    out.push((
        "read_bytes",
        fs.read_bytes(&t, 1 << 20, &none)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| e.code()),
    ));
    out.push((
        "stream_text",
        match fs.stream_text(&t, &none).await {
            Ok(mut s) => {
                let mut all = String::new();
                while let Some(c) = s.next().await {
                    all.push_str(&c.unwrap_or_default());
                }
                Ok(all)
            }
            Err(e) => Err(e.code()),
        },
    ));
    out.push((
        "list_dir",
        fs.list_dir(&t, &none)
            .await
            .map(|es| format!("{es:?}"))
            .map_err(|e| e.code()),
    ));
    let search = fs.search().expect("the sandbox searches");
    out.push((
        "glob",
        search
            .glob(
                &t,
                &GlobQuery {
                    pattern: "*".into(),
                    hidden: true,
                },
                &none,
            )
            .await
            .map(|f| format!("{f:?}"))
            .map_err(|e| match e {
                seam::search::SearchError::Fs(e) => e.code(),
                _ => FsErrorCode::IoError,
            }),
    ));
    out.push((
        "grep",
        search
            .grep(
                &t,
                &GrepQuery {
                    hidden: true,
                    ..GrepQuery::new("secret")
                },
                &none,
            )
            .await
            .map(|f| {
                f.matches
                    .iter()
                    .map(|m| String::from_utf8_lossy(&m.text).into_owned())
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .map_err(|e| match e {
                seam::search::SearchError::Fs(e) => e.code(),
                _ => FsErrorCode::IoError,
            }),
    ));
    out
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn every_way_out_is_denied_for_every_read_and_nothing_outside_comes_back() {
    let l = Layout::new();
    let ws = l.ws.to_string_lossy().into_owned();
    let out = l.ws.with_file_name("out").to_string_lossy().into_owned();
    let sibling = l.ws.with_file_name("ws2").to_string_lossy().into_owned();
    let ways_out = [
        "abs-dir/secret".to_string(),
        "rel-dir/secret".into(),
        "chain/secret".into(),
        "abs-file".into(),
        "rel-file".into(),
        "../out/secret".into(),
        "inside/../../out/secret".into(),
        format!("{out}/secret"),
        format!("{sibling}/secret"),
        "to-root/etc/hostname".into(),
        "abs-dir".into(),
        "rel-dir".into(),
        "..".into(),
        "/".into(),
    ];
    rt().block_on(async {
        for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite] {
            let fs = l.fs(mode, true);
            assert!(fs.capabilities().has(Capability::ReadFence));
            for path in &ways_out {
                for (op, got) in every_read(&fs, path).await {
                    // `lstat` of a link inside the workspace names the link itself: that is in.
                    if op == "lstat" && !path.contains('/') && path != ".." {
                        assert!(got.is_ok(), "{mode:?} lstat {path}: {got:?}");
                        continue;
                    }
                    match &got {
                        Err(code) => assert_eq!(
                            *code,
                            FsErrorCode::SandboxDenied,
                            "{mode:?} {op} {path}: {got:?}"
                        ),
                        Ok(v) => panic!("{mode:?} {op} {path} read outside: {v}"),
                    }
                }
            }
            // A listing of the workspace names its links; those that lead out are nothing there.
            let t = fs
                .resolve(&ws, ResolveOptions::default(), &Signal::none())
                .await
                .expect("resolve");
            let entries = fs.list_dir(&t, &Signal::none()).await.expect("listed");
            for e in &entries {
                let leads_out = [
                    "abs-dir", "rel-dir", "chain", "abs-file", "rel-file", "to-root",
                ]
                .contains(&e.name.as_str());
                if leads_out {
                    assert_eq!(
                        (e.kind, e.version.is_none(), e.size),
                        (seam::FsKind::Other, true, None),
                        "{}",
                        e.name
                    );
                    assert!(
                        e.target.key.as_str().starts_with(&ws),
                        "{}: keyed by its own path, not where it leads: {}",
                        e.name,
                        e.target.key.as_str()
                    );
                }
            }
            let text = format!("{entries:?}");
            assert!(
                !text.contains(&out),
                "the listing names the outside: {text}"
            );
            // The ways that stay in read as they would anywhere.
            for path in ["inside/deep/file", "in-link/file", "inside/../in-link/file"] {
                for (op, got) in every_read(&fs, path).await {
                    match op {
                        "read_text" | "read_bytes" | "stream_text" => {
                            assert_eq!(got, Ok("inside\n".to_string()), "{op} {path}");
                        }
                        "list_dir" | "glob" => {
                            assert_eq!(got, Err(FsErrorCode::NotDirectory), "{op} {path}");
                        }
                        _ => assert!(got.is_ok(), "{op} {path}: {got:?}"),
                    }
                }
            }
        }
        // danger-full-access reads anywhere, and a sandbox that does not confine reads (the
        // seed's) reads through every way out: what the fence changes.
        assert!(
            !l.fs(SandboxMode::DangerFullAccess, true)
                .capabilities()
                .has(Capability::ReadFence),
            "a deployment that confines nothing does not claim the fence"
        );
        for fs in [
            l.fs(SandboxMode::DangerFullAccess, true),
            l.fs(SandboxMode::WorkspaceWrite, false),
        ] {
            for path in ["abs-file", "rel-dir/secret", "../out/secret"] {
                let read: Vec<_> = every_read(&fs, path)
                    .await
                    .into_iter()
                    .filter(|(op, _)| *op == "read_text")
                    .collect();
                assert_eq!(read, vec![("read_text", Ok(SECRET.to_string()))], "{path}");
            }
        }
        assert!(
            !l.fs(SandboxMode::WorkspaceWrite, false)
                .capabilities()
                .has(Capability::ReadFence)
        );
    });
}

#[test]
fn a_directory_swapped_for_a_link_out_while_reads_run_never_shows_the_outside() {
    let l = Layout::new();
    let d = l.ws.join("d");
    std::fs::create_dir(&d).expect("mkdir");
    std::fs::write(d.join("secret"), "in d\n").expect("file");
    let out = l.ws.with_file_name("out");
    let fs = Arc::new(l.fs(SandboxMode::WorkspaceWrite, true));
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (d, out, stop) = (d.clone(), out.clone(), stop.clone());
        let parked = d.with_file_name("d.real");
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // d → a link to outside, and back.
                if std::fs::rename(&d, &parked).is_ok() {
                    let _ = symlink(&out, &d);
                    let _ = std::fs::remove_file(&d);
                    let _ = std::fs::rename(&parked, &d);
                    swaps += 1;
                    // The directory is real for a moment between swaps: on a loaded machine a
                    // swapper that never pauses leaves no read a chance to land inside.
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            }
            swaps
        })
    };
    let path = d.join("secret").to_string_lossy().into_owned();
    let (mut inside, mut denied) = (0, 0);
    rt().block_on(async {
        let none = Signal::none();
        let early = fs
            .resolve(&path, ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        // At least 2,000 reads, and on until some landed inside and some were denied (a busy
        // machine can starve either side for a while), within a bound.
        let mut i = 0u32;
        while i < 2000 || ((inside == 0 || denied == 0) && i < 200_000) {
            i += 1;
            let t = if i.is_multiple_of(2) {
                early.clone()
            } else {
                match fs.resolve(&path, ResolveOptions::default(), &none).await {
                    Ok(t) => t,
                    Err(_) => continue,
                }
            };
            // What came back, as the content read or the size a stat reports.
            let got = match i % 3 {
                0 => fs.read_text(&t, &none).await,
                1 => fs
                    .read_bytes(&t, 1 << 20, &none)
                    .await
                    .map(|b| String::from_utf8_lossy(&b).into_owned()),
                _ => fs
                    .stat(&t, &none)
                    .await
                    .map(|i| format!("size {:?}", i.and_then(|i| i.size))),
            };
            match got {
                Ok(text) => {
                    assert!(
                        text == "in d\n" || text == "size Some(5)" || text == "size None",
                        "read {i} showed something else than the file inside: {text}"
                    );
                    inside += 1;
                }
                Err(e) => {
                    assert!(
                        matches!(e.code(), FsErrorCode::SandboxDenied | FsErrorCode::NotFound),
                        "{e}"
                    );
                    denied += 1;
                }
            }
        }
    });
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().expect("swapper");
    assert!(swaps > 0, "no swap happened");
    assert!(inside > 0 && denied > 0, "inside {inside}, denied {denied}");
}
