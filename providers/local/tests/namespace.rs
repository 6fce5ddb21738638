//! The local provider's namespace operations where a disk differs from the model: hard links
//! (two names of one file, which the gate's world cannot make), and two instances — as two
//! processes would be — moving two files onto each other at once.

use seam::{FileSystem, RenameOptions, ResolveOptions, Signal};
use seam_local::{Durability, LocalConfig, LocalFileSystem};
use std::future::Future;
use std::time::Duration;

/// Runs `work` on a thread and runtime of its own and waits for it at most a minute: a call
/// that waits for itself then fails the test instead of hanging it (the stuck thread is left
/// behind; the test process ends without it).
fn bounded<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> std::pin::Pin<Box<dyn Future<Output = T> + Send>> + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let _ = tx.send(rt.block_on(work()));
        // Leaked on purpose if a blocking task is stuck: dropping the runtime would wait for it.
        std::mem::forget(rt);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what} did not return within a minute: it waits for itself"))
}

fn provider(root: &str) -> LocalFileSystem {
    LocalFileSystem::new(LocalConfig::new(root.to_string()).with_durability(Durability::Full))
}

async fn version(fs: &LocalFileSystem, path: &str) -> seam::FsVersion {
    fs.lstat(path, ResolveOptions::default(), &Signal::none())
        .await
        .expect("lstat")
        .expect("there")
        .version
}

#[test]
fn a_move_onto_another_name_of_the_same_file_takes_the_source_name_away() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::write(root.join("a"), b"one file\n").expect("a");
    std::fs::hard_link(root.join("a"), root.join("b")).expect("b");
    let root_s = root.to_string_lossy().into_owned();
    // Locked once, not twice: a second lock on the same file through another descriptor would
    // wait for this very call, forever.
    let (moved, after) = bounded("a move onto a hard link of its source", move || {
        Box::pin(async move {
            let fs = provider(&root_s);
            let request = RenameOptions {
                if_version: None,
                replace: Some(version(&fs, "b").await),
            };
            let moved = fs
                .rename(
                    "a",
                    "b",
                    ResolveOptions::default(),
                    &request,
                    None,
                    &Signal::none(),
                )
                .await
                .expect("moved");
            (moved, version(&fs, "b").await)
        })
    });
    assert!(moved.replaced);
    assert!(
        !root.join("a").exists(),
        "rename(2) alone would leave both names"
    );
    assert_eq!(std::fs::read(root.join("b")).expect("b"), b"one file\n");
    assert_eq!(after, moved.version);
}

#[test]
fn two_instances_moving_two_files_onto_each_other_never_wait_for_each_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let root_s = root.to_string_lossy().into_owned();
    for round in 0..40 {
        std::fs::write(root.join("a"), format!("a{round}\n")).expect("a");
        std::fs::write(root.join("b"), format!("b{round}\n")).expect("b");
        let r = root_s.clone();
        let (x, y) = bounded("two crossed moves", move || {
            Box::pin(async move {
                // Two instances share no in-process lock: only the file locks order them.
                let (one, two) = (provider(&r), provider(&r));
                let (va, vb) = (version(&one, "a").await, version(&one, "b").await);
                let ab = RenameOptions {
                    if_version: None,
                    replace: Some(vb),
                };
                let ba = RenameOptions {
                    if_version: None,
                    replace: Some(va),
                };
                let none = Signal::none();
                let opts = ResolveOptions::default;
                tokio::join!(
                    one.rename("a", "b", opts(), &ab, None, &none),
                    two.rename("b", "a", opts(), &ba, None, &none)
                )
            })
        });
        // Exactly one wins; the loser's destination is gone or changed: stale.
        assert_eq!(
            u8::from(x.is_ok()) + u8::from(y.is_ok()),
            1,
            "round {round}: {x:?} {y:?}"
        );
        let left: Vec<_> = std::fs::read_dir(&root)
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left.len(), 1, "round {round}: one file is left: {left:?}");
        std::fs::remove_file(root.join(&left[0])).expect("clean");
    }
}
