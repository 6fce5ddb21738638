//! The local provider against the real disk: every assertion reads the disk back.

use futures_util::StreamExt;
use seam::{
    CancelPoint, EditRequest, FileSystem, FsErrorCode, FsKind, FsPathKind, ResolveOptions, Signal,
    WriteIntent, WriteOperation,
};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

struct Fixture {
    _dir: tempfile::TempDir,
    root: String,
    fs: LocalFileSystem,
}

fn fixture() -> Fixture {
    fixture_with(|c| c)
}

fn fixture_with(f: impl FnOnce(LocalConfig) -> LocalConfig) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .to_string_lossy()
        .into_owned();
    let fs = LocalFileSystem::new(f(
        LocalConfig::new(root.clone()).with_durability(Durability::Full)
    ));
    Fixture {
        _dir: dir,
        root,
        fs,
    }
}

impl Fixture {
    fn p(&self, rel: &str) -> String {
        format!("{}/{rel}", self.root)
    }
    fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.p(rel);
        if let Some(parent) = Path::new(&p).parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&p, bytes).expect("write");
    }
    fn get(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.p(rel)).expect("read back")
    }
    fn mode(&self, rel: &str) -> u32 {
        std::fs::metadata(self.p(rel))
            .expect("meta")
            .permissions()
            .mode()
            & 0o7777
    }
    fn names(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.p(rel))
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
    async fn target(&self, path: &str) -> seam::FsTarget {
        self.fs
            .resolve(path, ResolveOptions::default(), &Signal::none())
            .await
            .expect("resolves")
    }
}

fn none() -> Signal {
    Signal::none()
}

#[tokio::test]
async fn new_files_are_0600_and_existing_bits_are_kept() {
    let f = fixture();
    let t = f.target("new.txt").await;
    let out =
        f.fs.write_text(&t, "hi\r\n", None, None, &none())
            .await
            .expect("creates");
    assert_eq!(out.operation, WriteOperation::Create);
    assert_eq!(out.after, "hi\n");
    assert_eq!(f.get("new.txt"), b"hi\r\n");
    assert_eq!(f.mode("new.txt"), 0o600);
    f.put("old.txt", b"x");
    std::fs::set_permissions(f.p("old.txt"), std::fs::Permissions::from_mode(0o640))
        .expect("chmod");
    let t = f.target("old.txt").await;
    let out =
        f.fs.write_text(&t, "y", None, None, &none())
            .await
            .expect("replaces");
    assert_eq!(
        (out.operation, out.before.as_deref()),
        (WriteOperation::Update, Some("x"))
    );
    assert_eq!(f.mode("old.txt"), 0o640);
    assert_eq!(f.names(""), ["new.txt", "old.txt"], "no staging litter");
}

#[tokio::test]
async fn the_returned_version_equals_a_fresh_stat_and_changes_on_restored_mtime_rewrites() {
    let f = fixture();
    f.put("a", b"hello");
    let t = f.target("a").await;
    let v1 =
        f.fs.stat(&t, &none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    let before = std::fs::metadata(f.p("a")).expect("meta");
    std::fs::write(f.p("a"), b"HELLO").expect("rewrite");
    let file = std::fs::File::options()
        .write(true)
        .open(f.p("a"))
        .expect("open");
    file.set_modified(before.modified().expect("mtime"))
        .expect("restore mtime");
    drop(file);
    assert_eq!(
        std::fs::metadata(f.p("a")).expect("meta").mtime_nsec(),
        before.mtime_nsec()
    );
    let v2 =
        f.fs.stat(&t, &none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    assert_ne!(v1, v2, "ctime must expose the rewrite");
    let out =
        f.fs.write_text(
            &t,
            "x",
            Some(&WriteIntent::ReplaceIfVersion {
                version: v2.clone(),
            }),
            None,
            &none(),
        )
        .await
        .expect("guarded write");
    let fresh =
        f.fs.stat(&t, &none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    assert_eq!(out.version, fresh);
    let stale =
        f.fs.write_text(
            &t,
            "z",
            Some(&WriteIntent::ReplaceIfVersion { version: v2 }),
            None,
            &none(),
        )
        .await
        .expect_err("stale");
    assert_eq!(stale.code(), FsErrorCode::StaleVersion);
    assert_eq!(f.get("a"), b"x");
}

#[tokio::test]
async fn a_preexisting_staging_name_is_never_clobbered() {
    let f = fixture_with(|c| c.with_seeded_nonces(7));
    let staging = f.p(&format!(".seam-stage-{:016x}", 7u64));
    std::fs::create_dir(&staging).expect("decoy dir");
    std::fs::write(format!("{staging}/content"), b"PRECIOUS").expect("decoy file");
    let t = f.target("a").await;
    f.fs.write_text(&t, "mine", None, None, &none())
        .await
        .expect("writes with another name");
    assert_eq!(
        std::fs::read(format!("{staging}/content")).expect("decoy"),
        b"PRECIOUS"
    );
    assert_eq!(f.get("a"), b"mine");
    assert_eq!(f.names(""), [".seam-stage-0000000000000007", "a"]);
}

async fn staging_seen_at_the_staged_point(staging: Staging) -> Vec<(String, u32)> {
    let f = fixture_with(|c| c.with_staging(staging));
    f.put("a", b"old");
    std::fs::set_permissions(f.p("a"), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let seen: Arc<Mutex<Vec<(String, u32)>>> = Arc::default();
    let record = seen.clone();
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged {
            for p in cp.staging {
                let mode = std::fs::symlink_metadata(p)
                    .expect("staging exists")
                    .permissions()
                    .mode()
                    & 0o7777;
                record.lock().expect("lock").push((p.clone(), mode));
            }
        }
        false
    });
    let t = f.target("a").await;
    f.fs.write_text(&t, "new", None, None, &signal)
        .await
        .expect("writes");
    assert_eq!(f.mode("a"), 0o644, "the target's bits are kept");
    assert_eq!(f.get("a"), b"new");
    assert_eq!(f.names(""), ["a"], "no staging left");
    let seen = seen.lock().expect("lock").clone();
    for (p, _) in &seen {
        assert!(p.starts_with(&format!("{}/.seam-stage-", f.root)), "{p}");
    }
    seen.into_iter()
        .map(|(p, m)| (p.rsplit('/').next().unwrap_or("").to_string(), m))
        .collect()
}

#[tokio::test]
async fn staging_is_private_while_it_exists() {
    // O_TMPFILE staging: one 0600 name, linked just before the rename.
    let seen = staging_seen_at_the_staged_point(Staging::Auto).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].1, 0o600);
    // Directory staging: a 0700 directory holding a 0600 file.
    let seen = staging_seen_at_the_staged_point(Staging::Directory).await;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        (seen[0].1, seen[1].0.as_str(), seen[1].1),
        (0o700, "content", 0o600)
    );
}

#[tokio::test]
async fn cancellation_before_commit_leaves_no_trace_and_after_commit_is_success() {
    let f = fixture();
    for point in [CancelPoint::BeforeStage, CancelPoint::Staged] {
        let signal = Signal::with_probe(move |cp| cp.point == point);
        let t = f.target("x/y/new").await;
        let e =
            f.fs.write_text(&t, "n", None, None, &signal)
                .await
                .expect_err("aborted");
        assert_eq!(
            (e.code(), e.message()),
            (FsErrorCode::Aborted, "write aborted")
        );
        assert!(f.names("").is_empty(), "{point:?} left {:?}", f.names(""));
    }
    let pre = Signal::new();
    pre.cancel();
    let e =
        f.fs.resolve("a", ResolveOptions::default(), &pre)
            .await
            .expect_err("pre-aborted");
    assert_eq!(e.message(), "resolve aborted");
    let signal = Signal::with_probe(|cp| cp.point == CancelPoint::Committed);
    let t = f.target("x/y/new").await;
    f.fs.write_text(&t, "n", None, None, &signal)
        .await
        .expect("committed write reports success");
    assert!(signal.is_cancelled());
    assert_eq!(f.get("x/y/new"), b"n");
}

#[tokio::test]
async fn a_file_written_under_a_staging_shaped_name_is_the_users_and_survives_the_next_writer() {
    let f = fixture();
    let name = ".seam-stage-0123456789abcdef";
    let t = f.target(name).await;
    f.fs.write_text(&t, "precious\n", None, None, &none())
        .await
        .expect("writes");
    // Published without the staging mark.
    assert!(
        rustix::fs::getxattr(f.p(name).as_str(), "user.seam-staging", &mut [0u8; 8]).is_err(),
        "a published file carries the staging mark"
    );
    // A fresh provider over the same root (a restart): its first write there sweeps.
    let later = LocalFileSystem::new(LocalConfig::new(f.root.clone()));
    let other = later
        .resolve("other", ResolveOptions::default(), &none())
        .await
        .expect("resolve");
    later
        .write_text(&other, "x\n", None, None, &none())
        .await
        .expect("writes");
    assert_eq!(
        std::fs::read(f.p(name)).expect("the user's file stays"),
        b"precious\n"
    );
}

#[tokio::test]
async fn a_killed_writers_staging_is_swept_at_once_but_a_live_one_and_a_strangers_are_not() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    // Staging nobody holds, of the provider's own shapes, as a killed writer leaves it: a
    // 0700 directory with its `content`, and a 0600 file.
    let dead = f.p(".seam-stage-00000000deadbeef");
    std::fs::create_dir(&dead).expect("dead staging");
    std::fs::set_permissions(&dead, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::write(format!("{dead}/content"), b"half").expect("half written");
    let mark = |path: &str| {
        rustix::fs::setxattr(
            path,
            "user.seam-staging",
            b"1",
            rustix::fs::XattrFlags::empty(),
        )
        .expect("mark");
    };
    let dead_file = f.p(".seam-stage-00000000deadf11e");
    std::fs::write(&dead_file, b"half").expect("dead staged file");
    std::fs::set_permissions(&dead_file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    mark(&dead_file);
    // A staged file already given its target's mode, its writer killed before the rename: it
    // carries the provider's mark.
    let dead_chmodded = f.p(".seam-stage-00000000deadc0de");
    std::fs::write(&dead_chmodded, b"whole").expect("dead chmodded file");
    std::fs::set_permissions(&dead_chmodded, std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    mark(&dead_chmodded);
    // Someone else's entries that only look like staging by name (unmarked): a file of the
    // staged file's very mode and name shape, another mode, a directory with other content.
    // They stay.
    let lookalike = f.p(".seam-stage-00000000000a11ce");
    std::fs::write(&lookalike, b"mine too").expect("lookalike");
    std::fs::set_permissions(&lookalike, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let stranger = f.p(".seam-stage-000000000000f00d");
    std::fs::write(&stranger, b"mine").expect("stranger");
    std::fs::set_permissions(&stranger, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let crowded = f.p(".seam-stage-000000000000beef");
    std::fs::create_dir(&crowded).expect("crowded");
    std::fs::set_permissions(&crowded, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::write(format!("{crowded}/notes"), b"mine").expect("notes");
    // The next writer, at once: no age is asked of what nobody holds.
    let t = f.target("a").await;
    f.fs.write_text(&t, "1", None, None, &none())
        .await
        .expect("writes");
    assert!(
        !Path::new(&dead).exists(),
        "the dead staging directory is swept at once"
    );
    assert!(
        !Path::new(&dead_file).exists(),
        "the dead staged file is swept at once"
    );
    assert!(
        !Path::new(&dead_chmodded).exists(),
        "a dead staged file given its target's mode is swept at once"
    );
    assert_eq!(std::fs::read(&stranger).expect("stays"), b"mine");
    assert_eq!(std::fs::read(&lookalike).expect("stays"), b"mine too");
    std::fs::remove_file(&lookalike).expect("rm");
    assert_eq!(
        std::fs::read(format!("{crowded}/notes")).expect("stays"),
        b"mine"
    );
    std::fs::remove_file(&stranger).expect("rm");
    std::fs::remove_dir_all(&crowded).expect("rm");
    // A dead one again, for the provider below (whose clock is an hour ahead: its first sweep
    // of the directory).
    std::fs::create_dir(&dead).expect("dead staging");
    std::fs::set_permissions(&dead, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::write(format!("{dead}/content"), b"half").expect("half written");
    let later = LocalFileSystem::new(
        LocalConfig::new(f.root.clone())
            .with_clock(|| std::time::SystemTime::now() + std::time::Duration::from_secs(3600)),
    );
    // While a write holds its staging, the sweeper must not take it.
    let root = f.root.clone();
    let later = Arc::new(later);
    let sweeper = later.clone();
    let rt = tokio::runtime::Handle::current();
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged {
            let sweeper = sweeper.clone();
            let root = root.clone();
            std::thread::scope(|s| {
                s.spawn(|| {
                    rt.block_on(async move {
                        let t = sweeper
                            .resolve("b", ResolveOptions::default(), &Signal::none())
                            .await
                            .expect("resolve");
                        sweeper
                            .write_text(&t, "2", None, None, &Signal::none())
                            .await
                            .expect("nested write");
                    });
                });
            });
            let _ = root;
        }
        false
    });
    let t = f.target("c").await;
    let handle = std::thread::spawn({
        let fs_root = f.root.clone();
        move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("rt");
            rt.block_on(async move {
                let fs = LocalFileSystem::new(LocalConfig::new(fs_root));
                fs.write_text(&t, "3", None, None, &signal).await
            })
        }
    });
    handle
        .join()
        .expect("thread")
        .expect("the live write completes");
    assert!(!Path::new(&dead).exists(), "the dead staging was swept");
    assert_eq!(f.names(""), ["a", "b", "c"]);
    assert_eq!(
        (f.get("a"), f.get("b"), f.get("c")),
        (b"1".to_vec(), b"2".to_vec(), b"3".to_vec())
    );
}

#[tokio::test]
async fn symlinks_are_written_through_and_dangling_ones_refused() {
    let f = fixture();
    f.put("real", b"v1");
    std::os::unix::fs::symlink("real", f.p("alias")).expect("link");
    std::os::unix::fs::symlink("nowhere", f.p("dangling")).expect("link");
    let a = f.target("alias").await;
    let r = f.target("real").await;
    assert_eq!(a.key, r.key);
    let va =
        f.fs.stat(&a, &none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    let vr =
        f.fs.stat(&r, &none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    assert_eq!(va, vr);
    f.fs.write_text(
        &a,
        "v2",
        Some(&WriteIntent::ReplaceIfVersion {
            version: va.clone(),
        }),
        None,
        &none(),
    )
    .await
    .expect("through the link");
    assert_eq!(f.get("real"), b"v2");
    assert!(
        std::fs::symlink_metadata(f.p("alias"))
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    let e =
        f.fs.write_text(
            &r,
            "v3",
            Some(&WriteIntent::ReplaceIfVersion { version: va }),
            None,
            &none(),
        )
        .await
        .expect_err("stale through the other alias");
    assert_eq!(e.code(), FsErrorCode::StaleVersion);
    let d = f.target("dangling").await;
    for guard in [None, Some(WriteIntent::CreateIfAbsent)] {
        let e =
            f.fs.write_text(&d, "x", guard.as_ref(), None, &none())
                .await
                .expect_err("dangling");
        assert_eq!(e.code(), FsErrorCode::NotRegularFile);
    }
    assert!(!Path::new(&f.p("nowhere")).exists());
    assert_eq!(
        std::fs::read_link(f.p("dangling")).expect("still a link"),
        Path::new("nowhere")
    );
    let lst =
        f.fs.lstat("dangling", ResolveOptions::default(), &none())
            .await
            .expect("lstat")
            .expect("present");
    assert_eq!((lst.kind, lst.size), (FsPathKind::Symlink, Some(7)));
}

#[tokio::test]
async fn fifos_and_sockets_are_not_regular_files_and_never_block() {
    let f = fixture();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        f.p("fifo").as_str(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
    let _sock = std::os::unix::net::UnixListener::bind(f.p("sock")).expect("socket");
    for name in ["fifo", "sock"] {
        let t = f.target(name).await;
        assert_eq!(
            f.fs.read_text(&t, &none()).await.expect_err("read").code(),
            FsErrorCode::NotRegularFile
        );
        assert_eq!(
            f.fs.write_text(&t, "x", None, None, &none())
                .await
                .expect_err("write")
                .code(),
            FsErrorCode::NotRegularFile
        );
        let e =
            f.fs.edit_text(
                &t,
                &EditRequest {
                    old_string: "a".into(),
                    new_string: "b".into(),
                    replace_all: false,
                },
                None,
                None,
                &none(),
            )
            .await;
        assert_eq!(e.expect_err("edit").code(), FsErrorCode::NotRegularFile);
        let info =
            f.fs.stat(&t, &none())
                .await
                .expect("stat")
                .expect("present");
        assert_eq!((info.kind, info.size), (FsKind::Other, None));
    }
}

#[tokio::test]
async fn streaming_equals_reading_across_chunk_boundaries() {
    let f = fixture();
    // Chunks of 64 KiB (inline) or 256 KiB (on the blocking pool): multi-byte characters
    // across the boundaries, and a BOM in front.
    let mut text = String::from("\u{feff}");
    while text.len() < 1_400_000 {
        text.push_str("abc é 日本 🦀 line\r\n");
    }
    f.put("big", text.as_bytes());
    let t = f.target("big").await;
    let whole = f.fs.read_text(&t, &none()).await.expect("read");
    assert_eq!(whole, text.trim_start_matches('\u{feff}'));
    let mut streamed = String::new();
    let mut chunks = 0;
    let mut s = f.fs.stream_text(&t, &none()).await.expect("stream");
    while let Some(chunk) = s.next().await {
        streamed.push_str(&chunk.expect("chunk"));
        chunks += 1;
    }
    assert!(chunks >= 5, "{chunks} chunks");
    assert_eq!(streamed, whole);
    let mut bad = text.into_bytes();
    bad.truncate(bad.len() - 3);
    bad.extend_from_slice("🦀".as_bytes().split_at(2).0);
    f.put("bad", &bad);
    let t = f.target("bad").await;
    let mut s = f.fs.stream_text(&t, &none()).await.expect("stream");
    let mut last = None;
    while let Some(c) = s.next().await {
        last = Some(c);
    }
    assert_eq!(
        last.expect("items").expect_err("truncated").code(),
        FsErrorCode::NotText
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_guarded_writes_have_exactly_one_winner() {
    let f = fixture();
    f.put("a", b"0");
    let fs = Arc::new(f.fs);
    let t = fs
        .resolve(&format!("{}/a", f.root), ResolveOptions::default(), &none())
        .await
        .expect("resolve");
    let v = fs
        .stat(&t, &none())
        .await
        .expect("stat")
        .expect("present")
        .version;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let fs = fs.clone();
        let t = t.clone();
        let v = v.clone();
        tasks.push(tokio::spawn(async move {
            let intent = WriteIntent::ReplaceIfVersion { version: v.clone() };
            if i % 2 == 0 {
                fs.write_text(&t, &format!("w{i}"), Some(&intent), None, &Signal::none())
                    .await
                    .map(|_| ())
            } else {
                let edit = EditRequest {
                    old_string: "0".into(),
                    new_string: format!("e{i}"),
                    replace_all: false,
                };
                fs.edit_text(&t, &edit, Some(&v), None, &Signal::none())
                    .await
                    .map(|_| ())
            }
        }));
    }
    let mut wins = 0;
    for t in tasks {
        match t.await.expect("task") {
            Ok(()) => wins += 1,
            Err(e) => assert_eq!(e.code(), FsErrorCode::StaleVersion),
        }
    }
    assert_eq!(wins, 1);
    let names: Vec<_> = std::fs::read_dir(&f.root)
        .expect("dir")
        .map(|e| e.expect("e").file_name())
        .collect();
    assert_eq!(names.len(), 1, "no litter: {names:?}");
}

#[tokio::test]
async fn facts_for_other_capabilities() {
    let f = fixture();
    f.put("d/x y#.txt", b"");
    let d = f.target("d").await;
    let x = f.target("d/x y#.txt").await;
    assert_eq!(f.fs.process_path(&x), format!("{}/d/x y#.txt", f.root));
    assert!(f.fs.file_url(&x).ends_with("/d/x%20y%23.txt"));
    assert!(f.fs.file_url(&x).starts_with("file:///"));
    assert!(f.fs.contains(&d, &x));
    assert!(f.fs.contains(&d, &d));
    assert!(!f.fs.contains(&x, &d));
}

#[tokio::test]
async fn read_bytes_is_raw_and_inclusive() {
    let f = fixture();
    f.put("b", b"\x00\xff\x01\x02");
    let t = f.target("b").await;
    assert_eq!(
        f.fs.read_bytes(&t, 4, &none()).await.expect("at cap"),
        b"\x00\xff\x01\x02"
    );
    let e = f.fs.read_bytes(&t, 3, &none()).await.expect_err("over cap");
    assert_eq!(
        (e.code(), e.message()),
        (
            FsErrorCode::TooLarge,
            format!(
                "cannot read \"{}/b\": 4 bytes exceeds the 3-byte limit",
                f.root
            )
            .as_str()
        )
    );
}

/// Runs inside a child process (see `a_writer_killed_mid_write_leaves_staging_the_next_writer_sweeps`):
/// starts a write and dies at its staged point, like a process killed mid-write.
#[tokio::test]
async fn child_dies_mid_write() {
    let Ok(root) = std::env::var("SEAM_LOCAL_DIE_IN") else {
        return;
    };
    let staging = match std::env::var("SEAM_LOCAL_STAGING").as_deref() {
        Ok("directory") => Staging::Directory,
        _ => Staging::Auto,
    };
    let fs = LocalFileSystem::new(LocalConfig::new(root).with_staging(staging));
    let t = fs
        .resolve("victim", ResolveOptions::default(), &none())
        .await
        .expect("resolve");
    let signal = Signal::with_probe(|cp| {
        if cp.point == CancelPoint::Staged {
            std::process::exit(3);
        }
        false
    });
    let _ = fs.write_text(&t, "half", None, None, &signal).await;
    unreachable!("the child exits at its staged point");
}

#[tokio::test]
async fn a_writer_killed_mid_write_leaves_staging_the_next_writer_sweeps() {
    for staging in ["auto", "directory"] {
        let f = fixture();
        let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "child_dies_mid_write",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SEAM_LOCAL_DIE_IN", &f.root)
            .env("SEAM_LOCAL_STAGING", staging)
            .status()
            .expect("spawn child");
        assert_eq!(status.code(), Some(3), "the child died at its staged point");
        let litter = f.names("");
        assert_eq!(litter.len(), 1, "{staging}: {litter:?}");
        assert!(litter[0].starts_with(".seam-stage-"));
        assert!(!Path::new(&f.p("victim")).exists(), "nothing was published");
        let next = LocalFileSystem::new(
            LocalConfig::new(f.root.clone())
                .with_clock(|| std::time::SystemTime::now() + std::time::Duration::from_secs(120)),
        );
        let t = f.target("other").await;
        next.write_text(&t, "ok", None, None, &none())
            .await
            .expect("next writer");
        assert_eq!(
            f.names(""),
            ["other"],
            "{staging}: the killed writer's staging was swept"
        );
    }
}

#[tokio::test]
async fn grep_without_limits_finds_every_match() {
    // `usize::MAX` as the limit once wrapped to 0 and found nothing.
    let f = fixture();
    std::fs::create_dir(f.p("d")).expect("mkdir");
    std::fs::write(f.p("d/a.rs"), "fn needle_1() {}\nneedle_2\n").expect("write");
    let root =
        f.fs.resolve(&f.root, ResolveOptions::default(), &Signal::none())
            .await
            .expect("root");
    let query = seam::search::GrepQuery {
        limit: usize::MAX,
        max_line_bytes: usize::MAX,
        ..seam::search::GrepQuery::new("needle_[0-9]")
    };
    let found =
        f.fs.search()
            .expect("search")
            .grep(&root, &query, &Signal::none())
            .await
            .expect("grep");
    let lines: Vec<(String, u64, Vec<u8>)> = found
        .matches
        .into_iter()
        .map(|m| (m.path, m.line, m.text))
        .collect();
    assert_eq!(
        lines,
        [
            ("d/a.rs".to_string(), 1, b"fn needle_1() {}".to_vec()),
            ("d/a.rs".to_string(), 2, b"needle_2".to_vec()),
        ]
    );
    assert!(found.complete);
}

/// Another instance (another process, in life) creates the file between an unguarded create's
/// check and its publication: the write replaces it as the update it has become and says what
/// it replaced, so its outcome is one a sequential order explains (the create, then the write).
#[test]
fn an_unguarded_create_that_finds_a_file_created_elsewhere_reports_an_update() {
    let f = fixture();
    let other = Arc::new(LocalFileSystem::new(LocalConfig::new(f.root.clone())));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("rt");
    let t = rt.block_on(f.target("late"));
    let (other2, t2) = (other.clone(), t.clone());
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged {
            // On a thread of its own, as another process would; it must not wait for us.
            let (other, t) = (other2.clone(), t2.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .expect("rt");
                rt.block_on(other.write_text(
                    &t,
                    "created elsewhere\n",
                    Some(&WriteIntent::CreateIfAbsent),
                    None,
                    &Signal::none(),
                ))
                .expect("the other instance creates it")
            })
            .join()
            .expect("other");
        }
        false
    });
    let out = rt
        .block_on(f.fs.write_text(&t, "mine\n", None, None, &signal))
        .expect("the unguarded write lands");
    assert_eq!(out.operation, WriteOperation::Update);
    assert_eq!(out.before.as_deref(), Some("created elsewhere\n"));
    assert_eq!(f.get("late"), b"mine\n");
    assert_eq!(f.names(""), ["late"]);
    let now = rt
        .block_on(f.fs.stat(&t, &Signal::none()))
        .expect("stat")
        .expect("present");
    assert_eq!(now.version, out.version);
}

#[tokio::test]
async fn an_unguarded_edit_is_made_again_on_a_changed_file_and_gives_up_stale_after_eight_tries() {
    use std::sync::atomic::{AtomicU32, Ordering};
    let f = fixture();
    std::fs::write(f.p("f"), b"one\n").expect("seed");
    // Someone rewrites the file at every staged point of the edit, `limit` times.
    let edit_with_changes = |limit: u32| {
        let tries = Arc::new(AtomicU32::new(0));
        let seen = tries.clone();
        let path = f.p("f");
        let signal = Signal::with_probe(move |cp| {
            if cp.point == CancelPoint::Staged {
                let i = seen.fetch_add(1, Ordering::SeqCst);
                if i < limit {
                    std::fs::write(&path, format!("one {i}\n")).expect("change");
                }
            }
            false
        });
        (signal, tries)
    };
    let req = EditRequest {
        old_string: "one".into(),
        new_string: "two".into(),
        replace_all: false,
    };
    let t = f.target("f").await;
    // Changed twice: made again on what is there now, the change kept.
    let (signal, tries) = edit_with_changes(2);
    let out =
        f.fs.edit_text(&t, &req, None, None, &signal)
            .await
            .expect("edits");
    assert_eq!(tries.load(Ordering::SeqCst), 3);
    assert_eq!(std::fs::read(f.p("f")).expect("read"), b"two 1\n");
    assert_eq!(out.before, "one 1\n");
    // Changed every time: eight tries, then stale, the last change kept and nothing staged left.
    std::fs::write(f.p("f"), b"one\n").expect("seed again");
    let (signal, tries) = edit_with_changes(u32::MAX);
    let err =
        f.fs.edit_text(&t, &req, None, None, &signal)
            .await
            .expect_err("gives up");
    assert_eq!(err.code(), FsErrorCode::StaleVersion);
    assert_eq!(tries.load(Ordering::SeqCst), 8);
    assert_eq!(std::fs::read(f.p("f")).expect("read"), b"one 7\n");
    assert_eq!(f.names(""), ["f"]);
}

/// Every version a reader sees of a published file is one its writer returned: nothing is done
/// to the inode after its rename. One instance rewrites `a` again and again (staged in an
/// `O_TMPFILE`, as on this disk by default) while another stats it in a loop; each version the
/// stats saw must be among the writes' versions. Before the fix the staging mark was taken off
/// after the rename, which moved the ctime: a stat in between saw the new content at a token
/// the writer never returned (found by the gate's `linearizable` at a fresh seed,
/// 124863673803024, as "one state has two versions").
#[test]
fn a_reader_sees_a_published_file_only_at_the_version_its_writer_returned() {
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .to_string_lossy()
        .into_owned();
    let writes = 3000;
    let stop = Arc::new(AtomicBool::new(false));
    let (r2, stop2) = (root.clone(), stop.clone());
    let reader = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let fs = LocalFileSystem::new(LocalConfig::new(r2));
        let mut seen = HashSet::new();
        let mut stats = 0usize;
        while !stop2.load(Ordering::SeqCst) {
            let t = rt
                .block_on(fs.resolve("a", ResolveOptions::default(), &none()))
                .expect("resolve");
            if let Ok(Some(info)) = rt.block_on(fs.stat(&t, &none())) {
                seen.insert(info.version.as_str().to_owned());
                stats += 1;
            }
        }
        (seen, stats)
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let fs = LocalFileSystem::new(LocalConfig::new(root));
    let t = rt
        .block_on(fs.resolve("a", ResolveOptions::default(), &none()))
        .expect("resolve");
    let mut returned = HashSet::new();
    for i in 0..writes {
        let out = rt
            .block_on(fs.write_text(&t, &format!("{i}\n"), None, None, &none()))
            .expect("writes");
        returned.insert(out.version.as_str().to_owned());
    }
    stop.store(true, Ordering::SeqCst);
    let (seen, stats) = reader.join().expect("the reader");
    let never: Vec<&String> = seen.difference(&returned).collect();
    assert!(
        never.is_empty(),
        "{} versions seen by {stats} stats were never returned by a write; first: {}",
        never.len(),
        never[0]
    );
    assert!(stats > 100, "only {stats} stats ran");
}

/// A listing never shows the provider's staging — a marked file or a 0700 staging directory left
/// by a killed writer, before the next writer in the directory sweeps it — but lists a user's own
/// file that merely carries the prefix, and removes nothing (a read changes nothing).
#[tokio::test]
async fn a_listing_hides_staging_a_killed_writer_left_and_shows_a_users_file_of_that_prefix() {
    let f = fixture();
    f.put("a", b"a\n");
    f.put(".seam-stage-00000000000000ab", b"half a write");
    let marked = f.p(".seam-stage-00000000000000ab");
    std::fs::set_permissions(&marked, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    match rustix::fs::setxattr(
        marked.as_str(),
        "user.seam-staging",
        b"",
        rustix::fs::XattrFlags::empty(),
    ) {
        // Without user xattrs the 0600 mode it was staged with is what marks it.
        Ok(()) | Err(rustix::io::Errno::OPNOTSUPP) => {}
        Err(e) => panic!("setxattr: {e}"),
    }
    f.put(
        ".seam-stage-00000000000000cd/content",
        b"staged in a directory",
    );
    std::fs::set_permissions(
        f.p(".seam-stage-00000000000000cd"),
        std::fs::Permissions::from_mode(0o700),
    )
    .expect("chmod");
    f.put(".seam-stage-user", b"mine\n");
    std::fs::set_permissions(
        f.p(".seam-stage-user"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");

    let root = f.target(&f.root).await;
    let listed: Vec<String> =
        f.fs.list_dir(&root, &Signal::none())
            .await
            .expect("lists")
            .into_iter()
            .map(|e| e.name)
            .collect();
    assert_eq!(listed, [".seam-stage-user", "a"]);
    assert_eq!(
        f.names(""),
        [
            ".seam-stage-00000000000000ab",
            ".seam-stage-00000000000000cd",
            ".seam-stage-user",
            "a"
        ],
        "a listing removes nothing"
    );
}
