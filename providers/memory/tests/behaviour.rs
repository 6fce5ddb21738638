//! The tricky parts of the in-memory provider, one by one, through its public surface: versions,
//! the guard matrix, links, what publication does about a competitor that appeared at a
//! checkpoint, streams that never split a character, and two instances over one store. The
//! conformance suite (`tests/suite.rs`) checks all of it against the model; these say it in
//! plain examples and fail with a message that names the rule.

use futures_util::StreamExt;
use seam::{
    CancelPoint, EditRequest, FileSystem, FsErrorCode, FsKind, FsPathKind, FsTarget, FsVersion,
    ResolveOptions, Signal, Verb, WriteIntent, WriteOperation,
};
use seam_memory::{MemoryConfig, MemoryFileSystem, MemoryKind, MemoryStore, MemoryWorld};
use std::collections::HashSet;
use std::sync::{Arc, Barrier};

const ROOT: &str = "/w";

fn setup(limit: u64) -> (MemoryFileSystem, MemoryWorld) {
    let store = MemoryStore::new();
    let world = store.world();
    world.create_dir_all(ROOT).expect("root");
    let fs = MemoryFileSystem::new(
        store,
        MemoryConfig::new(ROOT).with_diff_basis_max_bytes(limit),
    );
    (fs, world)
}

fn at(rel: &str) -> String {
    MemoryWorld::join(ROOT, rel)
}

async fn target(fs: &MemoryFileSystem, path: &str) -> FsTarget {
    fs.resolve(path, ResolveOptions::default(), &Signal::none())
        .await
        .expect("resolve")
}

async fn version(fs: &MemoryFileSystem, path: &str) -> Option<FsVersion> {
    let t = target(fs, path).await;
    fs.stat(&t, &Signal::none())
        .await
        .expect("stat")
        .map(|i| i.version)
}

async fn write(
    fs: &MemoryFileSystem,
    path: &str,
    content: &str,
    guard: Option<&WriteIntent>,
) -> Result<seam::WriteOutcome, seam::FsError> {
    let t = target(fs, path).await;
    fs.write_text(&t, content, guard, None, &Signal::none())
        .await
}

fn edit(old: &str, new: &str) -> EditRequest {
    EditRequest {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

fn bytes_of(world: &MemoryWorld, rel: &str) -> Option<Vec<u8>> {
    match world.snapshot(ROOT).expect("snapshot").remove(rel) {
        Some(seam_memory::MemoryEntry::File { bytes, .. }) => Some(bytes.to_vec()),
        _ => None,
    }
}

fn mode_of(world: &MemoryWorld, rel: &str) -> Option<(MemoryKind, u32)> {
    world
        .entry(&at(rel))
        .expect("entry")
        .map(|e| (e.kind, e.mode))
}

#[tokio::test]
async fn versions_change_with_every_change_and_are_never_reused() {
    let (fs, world) = setup(1024);
    let mut seen = HashSet::new();
    world
        .create_file(&at("a"), b"one\n".to_vec(), 0o644)
        .expect("create");
    let v1 = version(&fs, "a").await.expect("a exists");
    world
        .rewrite_file(&at("a"), b"one\n".to_vec())
        .expect("rewrite");
    let v2 = version(&fs, "a").await.expect("a exists");
    assert_ne!(v1, v2, "an in-place rewrite, even with the same bytes");
    world.chmod(&at("a"), 0o600).expect("chmod");
    let v3 = version(&fs, "a").await.expect("a exists");
    assert_ne!(v2, v3, "a change of mode");
    let wrote = write(&fs, "a", "two\n", None).await.expect("write");
    assert_eq!(
        Some(&wrote.version),
        version(&fs, "a").await.as_ref(),
        "fresh stat"
    );
    for v in [&v1, &v2, &v3, &wrote.version] {
        assert!(seen.insert(v.clone()), "{v:?} reused");
    }

    // A directory's version moves with its set of entries, and only with it.
    let d0 = version(&fs, ".").await.expect("root");
    write(&fs, "a", "three\n", None).await.expect("replace");
    assert_eq!(version(&fs, ".").await.as_ref(), Some(&d0), "same entries");
    write(&fs, "b", "new\n", None).await.expect("create");
    let d1 = version(&fs, ".").await.expect("root");
    assert_ne!(d0, d1, "a new entry");
    world.remove(&at("b")).expect("remove");
    let d2 = version(&fs, ".").await.expect("root");
    world
        .create_file(&at("b"), b"new\n".to_vec(), 0o600)
        .expect("again");
    let d3 = version(&fs, ".").await.expect("root");
    for v in [&d0, &d1, &d2, &d3] {
        assert!(seen.insert(v.clone()), "{v:?} reused");
    }
}

#[tokio::test]
async fn the_guard_matrix_and_the_diff_basis() {
    let (fs, world) = setup(8);
    world
        .create_file(&at("a"), b"old\r\n".to_vec(), 0o644)
        .expect("create");
    let v = version(&fs, "a").await.expect("a");

    let e = write(&fs, "a", "x", Some(&WriteIntent::CreateIfAbsent))
        .await
        .expect_err("exists");
    assert_eq!(e, seam::FsError::exists_not_observed("/w/a"));
    let stale = WriteIntent::ReplaceIfVersion {
        version: FsVersion::new("m0"),
    };
    let e = write(&fs, "a", "x", Some(&stale)).await.expect_err("stale");
    assert_eq!(e, seam::FsError::changed_since_read(Verb::Write, "/w/a"));
    let e = write(&fs, "gone", "x", Some(&stale))
        .await
        .expect_err("missing");
    assert_eq!(e, seam::FsError::no_longer_exists("/w/gone"));
    assert_eq!(bytes_of(&world, "gone"), None, "not recreated");
    assert_eq!(bytes_of(&world, "a").as_deref(), Some(&b"old\r\n"[..]));

    let guard = WriteIntent::ReplaceIfVersion { version: v };
    let out = write(&fs, "a", "new\r\n", Some(&guard))
        .await
        .expect("at version");
    assert_eq!(out.operation, WriteOperation::Update);
    assert_eq!(out.before.as_deref(), Some("old\n"), "LF-normalised");
    assert_eq!(out.after, "new\n");
    assert_eq!(bytes_of(&world, "a").as_deref(), Some(&b"new\r\n"[..]));
    assert_eq!(
        mode_of(&world, "a"),
        Some((MemoryKind::File, 0o644)),
        "kept"
    );
    // Content at the (exclusive) limit drops `before`.
    let out = write(&fs, "a", "12345678", None).await.expect("replace");
    assert_eq!(out.before, None);

    let out = write(&fs, "deep/er/new", "x", None).await.expect("create");
    assert_eq!(out.operation, WriteOperation::Create);
    assert_eq!(
        mode_of(&world, "deep/er/new"),
        Some((MemoryKind::File, 0o600))
    );
    assert_eq!(mode_of(&world, "deep/er"), Some((MemoryKind::Dir, 0o755)));

    let e = write(&fs, "deep", "x", None)
        .await
        .expect_err("a directory");
    assert_eq!(e, seam::FsError::not_regular_file(Verb::Write, "/w/deep"));
    let e = fs
        .resolve("a/x", ResolveOptions::default(), &Signal::none())
        .await
        .expect_err("through a file");
    assert_eq!(
        e,
        seam::FsError::parent_not_directory(Verb::Resolve, "/w/a/x")
    );
}

#[tokio::test]
async fn edits_check_the_guard_first_and_never_create() {
    let (fs, world) = setup(1024);
    let none = Signal::none();
    let t = target(&fs, "a").await;
    let e = fs
        .edit_text(&t, &edit("x", "y"), None, None, &none)
        .await
        .expect_err("missing");
    assert_eq!(e, seam::FsError::changed_since_read(Verb::Edit, "/w/a"));
    world
        .create_file(&at("a"), b"\xEF\xBB\xBFone\r\ntwo\n".to_vec(), 0o640)
        .expect("create");
    let stale = FsVersion::new("m0");
    let e = fs
        .edit_text(&t, &edit("absent", "y"), Some(&stale), None, &none)
        .await
        .expect_err("stale");
    assert_eq!(
        e.code(),
        FsErrorCode::StaleVersion,
        "the guard before the match"
    );
    let out = fs
        .edit_text(&t, &edit("one", "uno\ndos"), None, None, &none)
        .await
        .expect("edit");
    assert_eq!(out.before, "one\ntwo\n");
    assert_eq!(
        bytes_of(&world, "a").as_deref(),
        Some(&b"\xEF\xBB\xBFuno\ndos\r\ntwo\n"[..]),
        "a tie is LF; the BOM and the untouched ending stay"
    );
    assert_eq!(mode_of(&world, "a"), Some((MemoryKind::File, 0o640)));
    let mut late = vec![b'a'; 9000];
    late.push(0);
    world.create_file(&at("b"), late, 0o600).expect("create");
    let b = target(&fs, "b").await;
    let e = fs
        .edit_text(&b, &edit("a", "b"), None, None, &none)
        .await
        .expect_err("NUL anywhere");
    assert_eq!(e, seam::FsError::binary(Verb::Edit, "/w/b"));
    // ...while a read only looks at the first 8192 bytes.
    assert!(fs.read_text(&b, &none).await.is_ok());
}

#[tokio::test]
async fn links_are_written_through_and_never_replaced() {
    let (fs, world) = setup(1024);
    let none = Signal::none();
    world.create_dir(&at("d")).expect("d");
    world
        .create_file(&at("d/a"), b"x\n".to_vec(), 0o644)
        .expect("d/a");
    world.symlink(&at("live"), "d/a").expect("live");
    world.symlink(&at("abs"), "/w/d").expect("abs");
    world.symlink(&at("dangling"), "nowhere").expect("dangling");
    world.symlink(&at("loop"), "loop").expect("loop");

    let live = target(&fs, "live").await;
    assert_eq!(live.key.as_str(), "/w/d/a");
    assert_eq!(target(&fs, "abs/a").await.key, live.key, "one key");
    assert_eq!(target(&fs, "abs/new").await.key.as_str(), "/w/d/new");
    write(&fs, "live", "through\n", None)
        .await
        .expect("through");
    assert_eq!(bytes_of(&world, "d/a").as_deref(), Some(&b"through\n"[..]));
    assert_eq!(
        mode_of(&world, "live").map(|m| m.0),
        Some(MemoryKind::Symlink)
    );

    for guard in [None, Some(&WriteIntent::CreateIfAbsent)] {
        let e = write(&fs, "dangling", "x", guard)
            .await
            .expect_err("dangling");
        assert_eq!(
            e,
            seam::FsError::not_regular_file(Verb::Write, "/w/dangling")
        );
    }
    let e = write(&fs, "dangling/x", "x", None)
        .await
        .expect_err("through a dangling link");
    assert_eq!(
        e,
        seam::FsError::parent_not_directory(Verb::Write, "/w/dangling/x")
    );
    assert_eq!(
        mode_of(&world, "dangling").map(|m| m.0),
        Some(MemoryKind::Symlink)
    );

    let looping = fs
        .resolve("loop", ResolveOptions::default(), &none)
        .await
        .expect_err("loop");
    assert_eq!(
        looping,
        seam::FsError::symlink_loop(Verb::Resolve, "/w/loop")
    );
    let info = fs
        .lstat("dangling", ResolveOptions::default(), &none)
        .await
        .expect("lstat")
        .expect("a link");
    assert_eq!((info.kind, info.size), (FsPathKind::Symlink, Some(7)));

    world.create_file(&at("B"), b"".to_vec(), 0o644).expect("B");
    let root = target(&fs, ".").await;
    let list = fs.list_dir(&root, &none).await.expect("list");
    let names: Vec<&str> = list.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["B", "abs", "d", "dangling", "live", "loop"],
        "bytes"
    );
    for broken in ["dangling", "loop"] {
        let e = list.iter().find(|e| e.name == broken).expect("listed");
        assert_eq!((e.kind, &e.version, e.size), (FsKind::Other, &None, None));
    }
    let abs = list.iter().find(|e| e.name == "abs").expect("listed");
    assert_eq!((abs.kind, abs.size), (FsKind::Directory, None));
}

/// A signal whose probe does `act` at `point` (and cancels there when `cancel`).
fn probe(point: CancelPoint, cancel: bool, act: impl Fn() + Send + Sync + 'static) -> Signal {
    Signal::with_probe(move |cp| {
        if cp.point == point {
            act();
        }
        cancel && cp.point == point
    })
}

#[tokio::test]
async fn publication_refuses_what_appeared_at_a_checkpoint() {
    let (fs, world) = setup(1024);
    let w = world.clone();
    let file = probe(CancelPoint::BeforeStage, false, move || {
        let _ = w.create_file(&at("a"), b"theirs\n".to_vec(), 0o644);
    });
    let t = target(&fs, "a").await;
    let e = fs
        .write_text(
            &t,
            "mine\n",
            Some(&WriteIntent::CreateIfAbsent),
            None,
            &file,
        )
        .await
        .expect_err("a file appeared");
    assert_eq!(e, seam::FsError::exists_not_observed("/w/a"));
    assert_eq!(bytes_of(&world, "a").as_deref(), Some(&b"theirs\n"[..]));

    // Unguarded, a competing file is replaced as the update the write has become: its bits are
    // kept and its text is the `before`.
    world.remove(&at("a")).expect("remove");
    let w = world.clone();
    let file = probe(CancelPoint::BeforeStage, false, move || {
        let _ = w.create_file(&at("a"), b"theirs\n".to_vec(), 0o644);
    });
    let out = fs
        .write_text(&t, "mine\n", None, None, &file)
        .await
        .expect("replaces a file");
    assert_eq!(
        (out.operation, out.before.as_deref()),
        (WriteOperation::Update, Some("theirs\n"))
    );
    assert_eq!(mode_of(&world, "a"), Some((MemoryKind::File, 0o644)));
    assert_eq!(bytes_of(&world, "a").as_deref(), Some(&b"mine\n"[..]));

    for (name, competitor) in [("d", "dir"), ("l", "link")] {
        let w = world.clone();
        let signal = probe(CancelPoint::BeforeStage, false, move || {
            let _ = if competitor == "dir" {
                w.create_dir(&at(name))
            } else {
                w.symlink(&at(name), "nowhere")
            };
        });
        let t = target(&fs, name).await;
        let e = fs
            .write_text(&t, "mine\n", None, None, &signal)
            .await
            .expect_err("refused");
        assert_eq!(
            e,
            seam::FsError::not_regular_file(Verb::Write, &format!("/w/{name}")),
            "{competitor}"
        );
    }
    assert_eq!(mode_of(&world, "l").map(|m| m.0), Some(MemoryKind::Symlink));

    // Cancelled with its content staged: no trace, not even the parents.
    let staged = probe(CancelPoint::Staged, true, || {});
    let t = target(&fs, "p/q/new").await;
    let e = fs
        .write_text(&t, "x", None, None, &staged)
        .await
        .expect_err("cancelled");
    assert_eq!(e, seam::FsError::aborted(Verb::Write));
    assert_eq!(mode_of(&world, "p"), None);
    // Cancelled after publication: a success.
    let committed = probe(CancelPoint::Committed, true, || {});
    fs.write_text(&t, "x", None, None, &committed)
        .await
        .expect("committed");
    assert_eq!(bytes_of(&world, "p/q/new").as_deref(), Some(&b"x"[..]));
}

async fn collect(fs: &MemoryFileSystem, t: &FsTarget) -> (Vec<String>, Option<seam::FsError>) {
    let mut stream = fs.stream_text(t, &Signal::none()).await.expect("stream");
    let mut chunks = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(c) => chunks.push(c),
            Err(e) => return (chunks, Some(e)),
        }
    }
    (chunks, None)
}

#[tokio::test]
async fn streams_never_split_a_character_and_fail_like_reads() {
    let (fs, world) = setup(1024);
    // A BOM, then two- and four-byte characters across every 64 KiB boundary.
    let text = format!("\u{FEFF}a{}", "é𝄞".repeat(60_000));
    world
        .create_file(&at("big"), text.clone().into_bytes(), 0o644)
        .expect("big");
    let t = target(&fs, "big").await;
    let (chunks, err) = collect(&fs, &t).await;
    assert!(err.is_none(), "{err:?}");
    assert!(chunks.len() > 4, "{} chunks", chunks.len());
    let read = fs.read_text(&t, &Signal::none()).await.expect("read");
    assert_eq!(chunks.concat(), read);
    assert_eq!(read, text.trim_start_matches('\u{FEFF}'));

    let mut bad = "x".repeat(300 * 1024).into_bytes();
    bad.push(0xFF);
    world.create_file(&at("bad"), bad, 0o644).expect("bad");
    let t = target(&fs, "bad").await;
    let (chunks, err) = collect(&fs, &t).await;
    assert!(!chunks.is_empty(), "text before the bad byte streams");
    assert_eq!(err, Some(seam::FsError::invalid_utf8(Verb::Read, "/w/bad")));
    let read = fs.read_text(&t, &Signal::none()).await.expect_err("read");
    assert_eq!(Some(read), err);

    world
        .create_file(&at("nul"), b"a\0b".to_vec(), 0o644)
        .expect("nul");
    let t = target(&fs, "nul").await;
    let e = fs
        .stream_text(&t, &Signal::none())
        .await
        .err()
        .expect("binary at once");
    assert_eq!(e, seam::FsError::binary(Verb::Read, "/w/nul"));
}

#[test]
fn two_instances_over_one_store_have_one_winner() {
    let (one, world) = setup(1024);
    let two = one.share();
    assert!(one.store().same_store(two.store()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    for round in 0..20 {
        world
            .create_file(&at("a"), b"base\n".to_vec(), 0o644)
            .expect("base");
        let v = rt.block_on(version(&one, "a")).expect("a");
        let t = rt.block_on(target(&one, "a"));
        let barrier = Arc::new(Barrier::new(8));
        let wins: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let fs = if i % 2 == 0 { one.share() } else { two.share() };
                    let (t, v, barrier) = (t.clone(), v.clone(), barrier.clone());
                    s.spawn(move || {
                        let rt = tokio::runtime::Builder::new_current_thread()
                            .build()
                            .expect("runtime");
                        barrier.wait();
                        rt.block_on(async {
                            if i % 4 < 2 {
                                let guard = WriteIntent::ReplaceIfVersion { version: v };
                                fs.write_text(
                                    &t,
                                    &format!("w{i}\n"),
                                    Some(&guard),
                                    None,
                                    &Signal::none(),
                                )
                                .await
                                .map(|_| ())
                            } else {
                                fs.edit_text(
                                    &t,
                                    &edit("base", &format!("e{i}")),
                                    Some(&v),
                                    None,
                                    &Signal::none(),
                                )
                                .await
                                .map(|_| ())
                            }
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join() {
                    Ok(Ok(())) => 1,
                    Ok(Err(e)) => {
                        assert_eq!(e.code(), FsErrorCode::StaleVersion, "round {round}");
                        0
                    }
                    Err(p) => std::panic::resume_unwind(p),
                })
                .sum()
        });
        assert_eq!(wins, 1, "round {round}");
    }
}

#[test]
fn a_file_another_instance_creates_mid_write_makes_the_unguarded_write_an_update() {
    // While a write sits at its checkpoint (no lock held, so anything can act), a
    // create-if-absent through another instance gets in and lands. The write then replaces that
    // file as the update it has become: a sequential order explains both (theirs, then mine).
    let (one, world) = setup(1024);
    let two = Arc::new(one.share());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let t = rt.block_on(target(&one, "b"));
    let t2 = t.clone();
    let signal = probe(CancelPoint::BeforeStage, false, move || {
        let (two, t2) = (two.clone(), t2.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime");
            rt.block_on(two.write_text(
                &t2,
                "theirs\n",
                Some(&WriteIntent::CreateIfAbsent),
                None,
                &Signal::none(),
            ))
            .expect("the other instance is not kept waiting")
        })
        .join()
        .expect("racer");
    });
    let mine = rt
        .block_on(one.write_text(&t, "mine\n", None, None, &signal))
        .expect("mine");
    assert_eq!(
        (mine.operation, mine.before.as_deref()),
        (WriteOperation::Update, Some("theirs\n"))
    );
    assert_eq!(bytes_of(&world, "b").as_deref(), Some(&b"mine\n"[..]));
}

#[test]
fn the_world_acts_like_the_operating_system_would() {
    use seam_memory::MemoryEntry;
    use std::io::ErrorKind;
    let (_, world) = setup(1024);
    assert!(world.create_dir_all("/").is_ok());
    let kind = |r: std::io::Result<()>| r.err().map(|e| e.kind());
    assert_eq!(
        kind(world.remove(&at("nothing"))),
        Some(ErrorKind::NotFound)
    );
    assert_eq!(
        kind(world.create_file("relative", Vec::new(), 0o644)),
        Some(ErrorKind::InvalidInput)
    );
    world.create_dir(&at("d")).expect("d");
    assert_eq!(
        kind(world.create_dir(&at("d"))),
        Some(ErrorKind::AlreadyExists)
    );
    assert_eq!(
        kind(world.create_file(&at("d"), Vec::new(), 0o644)),
        Some(ErrorKind::IsADirectory)
    );
    world.symlink(&at("l"), "d").expect("l");
    world.symlink(&at("gone"), "nowhere").expect("gone");
    assert_eq!(
        kind(world.symlink(&at("gone"), "x")),
        Some(ErrorKind::AlreadyExists)
    );
    // Links on the way are followed; missing parents are made.
    world
        .create_file(&at("l/x/y"), b"y".to_vec(), 0o640)
        .expect("through l");
    world.create_other(&at("fifo")).expect("fifo");
    let snap = world.snapshot(ROOT).expect("snapshot");
    let names: Vec<&str> = snap.keys().map(String::as_str).collect();
    assert_eq!(names, ["d", "d/x", "d/x/y", "fifo", "gone", "l"]);
    assert_eq!(snap.get("d/x"), Some(&MemoryEntry::Dir { mode: 0o755 }));
    assert_eq!(
        snap.get("d/x/y"),
        Some(&MemoryEntry::File {
            bytes: bytes::Bytes::from_static(b"y"),
            mode: 0o640
        })
    );
    assert_eq!(
        snap.get("gone"),
        Some(&MemoryEntry::Symlink {
            text: "nowhere".into()
        })
    );
    assert_eq!(snap.get("fifo"), Some(&MemoryEntry::Other));
    assert_eq!(mode_of(&world, "l"), Some((MemoryKind::Symlink, 0o777)));
    assert_eq!(mode_of(&world, "l/x"), Some((MemoryKind::Dir, 0o755)));
    assert_eq!(mode_of(&world, "nothing/at/all"), None);
    // Removing a link removes the link, not what it leads to.
    world.remove(&at("l")).expect("remove l");
    assert_eq!(mode_of(&world, "d/x/y"), Some((MemoryKind::File, 0o640)));
}
