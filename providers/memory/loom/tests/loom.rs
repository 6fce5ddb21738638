//! Model-checked critical sections of the memory provider: loom runs each scenario under every
//! interleaving of its threads (up to its preemption bound) over the store's own locks, which
//! `src/sync.rs` swaps for loom's under `--cfg seam_loom`.
//!
//! Built and run only in that configuration (`tests/loom_run.rs` does it as part of the normal
//! test run): `RUSTFLAGS="--cfg seam_loom" cargo test -p seam-memory-loom --test loom
//! --target-dir target/loom`.
//!
//! Each scenario asserts, in every interleaving: exactly one compare-and-swap winner per version,
//! every loser coded, the winner's bytes in the store (no lost update), and no lock left held
//! after success, failure or cancellation (a final mutation must get in; a lock left held is a
//! deadlock loom reports).
#![cfg(seam_loom)]

use seam::{
    CancelPoint, EditRequest, FileSystem, FsErrorCode, FsTarget, FsVersion, ResolveOptions, Signal,
    WriteIntent,
};
use seam_memory::{MemoryConfig, MemoryEntry, MemoryFileSystem, MemoryStore};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Interleavings explored, over all scenarios (printed at the end of each).
static EXPLORED: AtomicUsize = AtomicUsize::new(0);

const ROOT: &str = "/w";

/// Runs a provider call to completion. The memory provider never waits on anything but its own
/// locks (which loom schedules), so its futures finish on their first poll; the loop is for
/// safety, yielding to loom's scheduler between polls.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        loom::thread::yield_now();
    }
}

/// A store with `/w/a` holding `base`, a provider over it, the target and its version.
fn setup(with_file: bool) -> (MemoryStore, MemoryFileSystem, FsTarget, Option<FsVersion>) {
    let store = MemoryStore::new();
    let world = store.world();
    world.create_dir_all(ROOT).expect("root");
    if with_file {
        world
            .create_file("/w/a", b"base\n".to_vec(), 0o644)
            .expect("file");
    }
    let fs = MemoryFileSystem::new(store.clone(), MemoryConfig::new(ROOT));
    let t = block_on(fs.resolve("a", ResolveOptions::default(), &Signal::none())).expect("resolve");
    let v = block_on(fs.stat(&t, &Signal::none()))
        .expect("stat")
        .map(|i| i.version);
    (store, fs, t, v)
}

fn content(store: &MemoryStore) -> Vec<u8> {
    match store.world().snapshot(ROOT).expect("snapshot").remove("a") {
        Some(MemoryEntry::File { bytes, .. }) => bytes.to_vec(),
        other => panic!("a is {other:?}"),
    }
}

/// After everything: one more mutation gets in (no lock was left held) and lands.
fn still_writable(fs: &MemoryFileSystem, t: &FsTarget, store: &MemoryStore) {
    block_on(fs.write_text(t, "after\n", None, None, &Signal::none()))
        .expect("a lock was left held");
    assert_eq!(content(store), b"after\n");
}

fn report(name: &str, before: usize) {
    println!(
        "{name}: {} interleavings explored",
        EXPLORED.load(Ordering::Relaxed) - before
    );
}

#[test]
fn two_guarded_writes_through_two_instances_have_one_winner() {
    let before = EXPLORED.load(Ordering::Relaxed);
    loom::model(|| {
        EXPLORED.fetch_add(1, Ordering::Relaxed);
        let (store, fs, t, v) = setup(true);
        let v = v.expect("version");
        let racers: Vec<_> = [fs.share(), fs.share()]
            .into_iter()
            .enumerate()
            .map(|(i, fs)| {
                let (t, v) = (t.clone(), v.clone());
                loom::thread::spawn(move || {
                    let text = format!("racer {i}\n");
                    block_on(fs.write_text(
                        &t,
                        &text,
                        Some(&WriteIntent::ReplaceIfVersion { version: v }),
                        None,
                        &Signal::none(),
                    ))
                    .map(|_| text)
                    .map_err(|e| e.code())
                })
            })
            .collect();
        let results: Vec<Result<String, FsErrorCode>> = racers
            .into_iter()
            .map(|h| h.join().expect("racer"))
            .collect();
        let winners: Vec<&String> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        assert!(
            results
                .iter()
                .all(|r| r.is_ok() || r == &Err(FsErrorCode::StaleVersion))
        );
        assert_eq!(content(&store), winners[0].as_bytes(), "no lost update");
        still_writable(&fs, &t, &store);
    });
    report("guarded write x2", before);
}

#[test]
fn a_guarded_write_and_a_guarded_edit_at_one_version_have_one_winner() {
    let before = EXPLORED.load(Ordering::Relaxed);
    loom::model(|| {
        EXPLORED.fetch_add(1, Ordering::Relaxed);
        let (store, fs, t, v) = setup(true);
        let v = v.expect("version");
        let (fs2, t2, v2) = (fs.share(), t.clone(), v.clone());
        let writer = loom::thread::spawn(move || {
            block_on(fs2.write_text(
                &t2,
                "written\n",
                Some(&WriteIntent::ReplaceIfVersion { version: v2 }),
                None,
                &Signal::none(),
            ))
            .map(|_| ())
            .map_err(|e| e.code())
        });
        let edit = EditRequest {
            old_string: "base".into(),
            new_string: "edited".into(),
            replace_all: false,
        };
        let edited = block_on(fs.edit_text(&t, &edit, Some(&v), None, &Signal::none()))
            .map(|_| ())
            .map_err(|e| e.code());
        let written = writer.join().expect("writer");
        match (written, edited) {
            (Ok(()), Err(FsErrorCode::StaleVersion)) => assert_eq!(content(&store), b"written\n"),
            (Err(FsErrorCode::StaleVersion), Ok(())) => assert_eq!(content(&store), b"edited\n"),
            other => panic!("not exactly one winner: {other:?}"),
        }
        still_writable(&fs, &t, &store);
    });
    report("guarded write vs guarded edit", before);
}

#[test]
fn two_creates_if_absent_have_one_winner() {
    let before = EXPLORED.load(Ordering::Relaxed);
    loom::model(|| {
        EXPLORED.fetch_add(1, Ordering::Relaxed);
        let (store, fs, t, v) = setup(false);
        assert!(v.is_none());
        let (fs2, t2) = (fs.share(), t.clone());
        let other = loom::thread::spawn(move || {
            block_on(fs2.write_text(
                &t2,
                "second\n",
                Some(&WriteIntent::CreateIfAbsent),
                None,
                &Signal::none(),
            ))
            .map(|_| ())
            .map_err(|e| e.code())
        });
        let first = block_on(fs.write_text(
            &t,
            "first\n",
            Some(&WriteIntent::CreateIfAbsent),
            None,
            &Signal::none(),
        ))
        .map(|_| ())
        .map_err(|e| e.code());
        match (first, other.join().expect("other")) {
            (Ok(()), Err(FsErrorCode::NotObserved)) => assert_eq!(content(&store), b"first\n"),
            (Err(FsErrorCode::NotObserved), Ok(())) => assert_eq!(content(&store), b"second\n"),
            other => panic!("not exactly one creator: {other:?}"),
        }
        still_writable(&fs, &t, &store);
    });
    report("create-if-absent x2", before);
}

#[test]
fn a_write_cancelled_with_its_content_staged_leaves_nothing_and_holds_nothing() {
    let before = EXPLORED.load(Ordering::Relaxed);
    loom::model(|| {
        EXPLORED.fetch_add(1, Ordering::Relaxed);
        let (store, fs, t, v) = setup(true);
        let v = v.expect("version");
        let (fs2, t2, v2) = (fs.share(), t.clone(), v.clone());
        let cancelled = loom::thread::spawn(move || {
            let signal = Signal::with_probe(|c| c.point == CancelPoint::Staged);
            block_on(fs2.write_text(
                &t2,
                "cancelled\n",
                Some(&WriteIntent::ReplaceIfVersion { version: v2 }),
                None,
                &signal,
            ))
            .map(|_| ())
            .map_err(|e| e.code())
        });
        let won = block_on(fs.write_text(
            &t,
            "kept\n",
            Some(&WriteIntent::ReplaceIfVersion { version: v }),
            None,
            &Signal::none(),
        ));
        let lost = cancelled.join().expect("cancelled");
        assert!(won.is_ok(), "the uncancelled write wins: {:?}", won.err());
        assert!(
            matches!(
                lost,
                Err(FsErrorCode::Aborted) | Err(FsErrorCode::StaleVersion)
            ),
            "{lost:?}"
        );
        assert_eq!(
            content(&store),
            b"kept\n",
            "the cancelled write left nothing"
        );
        still_writable(&fs, &t, &store);
    });
    report("cancelled at staged vs guarded write", before);
}

#[test]
fn a_reader_during_a_write_sees_the_old_or_the_new_content() {
    let before = EXPLORED.load(Ordering::Relaxed);
    loom::model(|| {
        EXPLORED.fetch_add(1, Ordering::Relaxed);
        let (store, fs, t, _) = setup(true);
        let (fs2, t2) = (fs.share(), t.clone());
        let reader = loom::thread::spawn(move || {
            block_on(fs2.read_text(&t2, &Signal::none())).expect("read")
        });
        block_on(fs.write_text(&t, "new\n", None, None, &Signal::none())).expect("write");
        let seen = reader.join().expect("reader");
        assert!(seen == "base\n" || seen == "new\n", "{seen:?}");
        assert_eq!(content(&store), b"new\n");
    });
    report("read vs write", before);
}

#[test]
fn an_unguarded_write_racing_a_create_reports_what_it_replaced() {
    let before = EXPLORED.load(Ordering::Relaxed);
    loom::model(|| {
        EXPLORED.fetch_add(1, Ordering::Relaxed);
        let (store, fs, t, _) = setup(false);
        let (fs2, t2) = (fs.share(), t.clone());
        let creator = loom::thread::spawn(move || {
            block_on(fs2.write_text(
                &t2,
                "created\n",
                Some(&WriteIntent::CreateIfAbsent),
                None,
                &Signal::none(),
            ))
            .map(|_| ())
            .map_err(|e| e.code())
        });
        let written = block_on(fs.write_text(&t, "written\n", None, None, &Signal::none()))
            .expect("an unguarded write succeeds");
        let created = creator.join().expect("creator");
        // Either order is fine; what the write reports must match the one that happened.
        match created {
            Ok(()) => {
                assert_eq!(
                    written.operation,
                    seam::WriteOperation::Update,
                    "it replaced the created file"
                );
                assert_eq!(written.before.as_deref(), Some("created\n"));
            }
            Err(FsErrorCode::NotObserved) => {
                assert_eq!(written.operation, seam::WriteOperation::Create);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(content(&store), b"written\n");
        still_writable(&fs, &t, &store);
    });
    report("unguarded write vs create-if-absent", before);
}
