//! The seed's cross-tool integration cases (integration.spec.ts) that are not about one tool:
//! the stat budget, direct provider reads recording nothing, the recovery after an external
//! delete, per-session cwd, two concurrent edits in one session, old observations failing
//! closed, and a session's authority ending with its owner handle.

mod support;

use seam::{Actor, FsError, FsObservation, FsTarget, FsVersion, Gate, Signal, WriteIntent};
use seam_policy::{ObservationPolicy, Owner};
use seam_tools::Exec;
use serde_json::json;
use std::sync::Arc;
use support::counting::{Counting, Counts};
use support::{Harness, code, text};

fn counted(policy: bool) -> (Harness, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    let h = Harness::build(policy, move |root| {
        Arc::new(Counting {
            inner: Arc::new(support::local(root)),
            counts: c,
            hide_sizes: false,
            hide_search: false,
        })
    });
    (h, counts)
}

#[tokio::test]
async fn read_stats_once_and_write_and_edit_never_stat_in_the_tool() {
    for policy in [true, false] {
        let (h, counts) = counted(policy);
        h.put("a.txt", "one\n");
        text(&h.call("read", json!({"file_path": "a.txt"})).await);
        assert_eq!(counts.stat.load(std::sync::atomic::Ordering::SeqCst), 1);
        counts.reset();
        text(
            &h.call("write", json!({"file_path": "a.txt", "content": "two\n"}))
                .await,
        );
        text(
            &h.call(
                "edit",
                json!({"file_path": "a.txt", "old_string": "two", "new_string": "three"}),
            )
            .await,
        );
        assert_eq!(
            counts.get(),
            (0, 0, 0),
            "policy={policy}: no stat, no read in write/edit"
        );
        assert_eq!(h.bytes("a.txt"), b"three\n");
    }
}

#[tokio::test]
async fn a_missing_read_stats_once_and_its_recovery_write_stats_zero_times() {
    let (h, counts) = counted(true);
    assert_eq!(
        code(&h.call("read", json!({"file_path": "n.txt"})).await),
        "FS_NOT_FOUND"
    );
    assert_eq!(counts.get(), (1, 0, 0));
    counts.reset();
    text(
        &h.call("write", json!({"file_path": "n.txt", "content": "made\n"}))
            .await,
    );
    assert_eq!(counts.get(), (0, 0, 0));
    assert_eq!(h.bytes("n.txt"), b"made\n");
}

#[tokio::test]
async fn a_direct_provider_read_records_nothing_so_a_later_edit_is_refused() {
    let h = Harness::with_policy();
    h.put("a.txt", "abc\n");
    let t =
        h.fs.resolve(&h.display("a.txt"), Default::default(), &Signal::none())
            .await
            .expect("resolve");
    assert_eq!(
        h.fs.read_text(&t, &Signal::none()).await.expect("read"),
        "abc\n"
    );
    let r = h
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "abc", "new_string": "x"}),
        )
        .await;
    assert_eq!(code(&r), "FS_NOT_OBSERVED");
    assert_eq!(h.bytes("a.txt"), b"abc\n");
}

#[tokio::test]
async fn after_an_external_delete_a_failed_reread_lets_write_recreate_but_not_edit() {
    let h = Harness::with_policy();
    h.put("a.txt", "v1\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    std::fs::remove_file(h.path("a.txt")).expect("rm");
    // The old observation makes both mutations stale.
    assert_eq!(
        code(
            &h.call(
                "edit",
                json!({"file_path": "a.txt", "old_string": "v1", "new_string": "v2"})
            )
            .await
        ),
        "FS_STALE_VERSION"
    );
    assert_eq!(
        code(
            &h.call("write", json!({"file_path": "a.txt", "content": "v2\n"}))
                .await
        ),
        "FS_STALE_VERSION"
    );
    assert!(!h.exists("a.txt"));
    // A re-read fails but records absence.
    assert_eq!(
        code(&h.call("read", json!({"file_path": "a.txt"})).await),
        "FS_NOT_FOUND"
    );
    assert_eq!(
        code(
            &h.call(
                "edit",
                json!({"file_path": "a.txt", "old_string": "v1", "new_string": "v2"})
            )
            .await
        ),
        "FS_NOT_FOUND"
    );
    text(
        &h.call("write", json!({"file_path": "a.txt", "content": "v2\n"}))
            .await,
    );
    assert_eq!(h.bytes("a.txt"), b"v2\n");
    // And if someone recreates it first, the create-if-absent write refuses to replace it.
    let h2 = Harness::with_policy();
    assert_eq!(
        code(&h2.call("read", json!({"file_path": "b.txt"})).await),
        "FS_NOT_FOUND"
    );
    h2.put("b.txt", "theirs\n");
    assert_eq!(
        code(
            &h2.call("write", json!({"file_path": "b.txt", "content": "mine\n"}))
                .await
        ),
        "FS_NOT_OBSERVED"
    );
    assert_eq!(h2.bytes("b.txt"), b"theirs\n");
}

#[tokio::test]
async fn relative_paths_land_in_the_session_cwd_not_the_providers() {
    let h = Harness::build(true, |root| {
        std::fs::create_dir_all(format!("{root}/provider")).expect("mkdir");
        Arc::new(support::local(&format!("{root}/provider")))
    });
    std::fs::create_dir(h.path("session")).expect("mkdir");
    let exec = h.exec().with_cwd(h.display("session"));
    text(
        &h.call_with(
            "write",
            json!({"file_path": "rel.txt", "content": "here\n"}),
            &exec,
        )
        .await,
    );
    assert_eq!(h.bytes("session/rel.txt"), b"here\n");
    assert!(!h.exists("provider/rel.txt"));
    let r = h
        .call_with("read", json!({"file_path": "rel.txt"}), &exec)
        .await;
    assert!(text(&r).contains("1: here"));
    text(
        &h.call_with(
            "edit",
            json!({"file_path": "rel.txt", "old_string": "here", "new_string": "there"}),
            &exec,
        )
        .await,
    );
    assert_eq!(h.bytes("session/rel.txt"), b"there\n");
    // Without a session cwd, the provider's own default applies.
    let bare_cwd = Exec {
        cwd: None,
        ..h.exec()
    };
    text(
        &h.call_with(
            "write",
            json!({"file_path": "rel.txt", "content": "default\n"}),
            &bare_cwd,
        )
        .await,
    );
    assert_eq!(h.bytes("provider/rel.txt"), b"default\n");
}

/// The policy, with both edit-intents of a race answered before either edit runs: the
/// schedule the seed's concurrent test relies on, made deterministic.
struct BothAskFirst {
    policy: ObservationPolicy,
    barrier: tokio::sync::Barrier,
}

#[async_trait::async_trait]
impl Gate for BothAskFirst {
    async fn write_intent(
        &self,
        t: &FsTarget,
        a: Option<&Actor>,
    ) -> Result<Option<WriteIntent>, FsError> {
        self.policy.write_intent(t, a).await
    }
    async fn edit_intent(
        &self,
        t: &FsTarget,
        a: Option<&Actor>,
    ) -> Result<Option<FsVersion>, FsError> {
        let decision = self.policy.edit_intent(t, a).await;
        self.barrier.wait().await;
        decision
    }
    fn observed(&self, t: &FsTarget, o: &FsObservation, a: Option<&Actor>) {
        self.policy.observed(t, o, a)
    }
}

#[tokio::test]
async fn two_concurrent_edits_in_one_session_one_wins_one_is_stale() {
    let h = Harness::with_policy();
    h.put("a.txt", "alpha beta\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let gate = Arc::new(BothAskFirst {
        policy: h.policy.clone().expect("policy"),
        barrier: tokio::sync::Barrier::new(2),
    });
    let exec = h.exec().with_gate(gate);
    let (a, b) = tokio::join!(
        h.call_with(
            "edit",
            json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
            &exec
        ),
        h.call_with(
            "edit",
            json!({"file_path": "a.txt", "old_string": "beta", "new_string": "BETA"}),
            &exec
        ),
    );
    let outcomes = [a.is_ok(), b.is_ok()];
    assert_eq!(
        outcomes.iter().filter(|ok| **ok).count(),
        1,
        "exactly one wins"
    );
    let loser = if a.is_ok() { &b } else { &a };
    assert_eq!(code(loser), "FS_STALE_VERSION");
    let on_disk = String::from_utf8(h.bytes("a.txt")).expect("utf8");
    assert!(
        on_disk == "ALPHA beta\n" || on_disk == "alpha BETA\n",
        "{on_disk}"
    );
}

#[tokio::test]
async fn a_stale_observation_from_an_older_read_fails_closed_at_the_edit() {
    let h = Harness::with_policy();
    h.put("a.txt", "one two\n");
    let other = Owner::new();
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    text(
        &h.call_with("read", json!({"file_path": "a.txt"}), &h.exec_as(&other))
            .await,
    );
    text(
        &h.call_with(
            "edit",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
            &h.exec_as(&other),
        )
        .await,
    );
    let r = h
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"}),
        )
        .await;
    assert_eq!(code(&r), "FS_STALE_VERSION");
    assert_eq!(h.bytes("a.txt"), b"1 two\n");
}

#[tokio::test]
async fn a_sessions_authority_ends_with_its_owner_handle() {
    let h = Harness::with_policy();
    h.put("a.txt", "x\n");
    let policy = h.policy.clone().expect("policy");
    let session = Owner::new();
    let exec = h.exec_as(&session);
    text(
        &h.call_with("read", json!({"file_path": "a.txt"}), &exec)
            .await,
    );
    assert_eq!(policy.owner_count(), 1);
    drop(exec);
    drop(session);
    assert_eq!(
        policy.owner_count(),
        0,
        "the table entry went with the last handle"
    );
}

#[tokio::test]
async fn a_call_with_no_actor_can_read_but_never_satisfies_the_policy() {
    let h = Harness::with_policy();
    h.put("a.txt", "x\n");
    let anonymous = Exec {
        actor: None,
        ..h.exec()
    };
    text(
        &h.call_with("read", json!({"file_path": "a.txt"}), &anonymous)
            .await,
    );
    assert_eq!(
        code(
            &h.call_with(
                "edit",
                json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"}),
                &anonymous
            )
            .await
        ),
        "FS_NOT_OBSERVED"
    );
    assert_eq!(
        code(
            &h.call_with(
                "write",
                json!({"file_path": "a.txt", "content": "y"}),
                &anonymous
            )
            .await
        ),
        "FS_NOT_OBSERVED"
    );
    // It can still create what does not exist.
    text(
        &h.call_with(
            "write",
            json!({"file_path": "new.txt", "content": "n\n"}),
            &anonymous,
        )
        .await,
    );
    assert_eq!(h.bytes("a.txt"), b"x\n");
    assert_eq!(h.bytes("new.txt"), b"n\n");
    assert_eq!(h.policy.as_ref().expect("policy").owner_count(), 0);
}

#[tokio::test]
async fn a_symlink_loop_is_fs_io_error_for_every_tool() {
    let mut h = Harness::with_policy();
    h.tools = seam_tools::Toolset::builder(h.fs.as_ref())
        .image_sink(Arc::new(AnySink))
        .build();
    std::os::unix::fs::symlink("loop.png", h.path("loop.png")).expect("symlink");
    let calls = [
        ("read", json!({"file_path": "loop.png"})),
        ("write", json!({"file_path": "loop.png", "content": "x"})),
        (
            "edit",
            json!({"file_path": "loop.png", "old_string": "a", "new_string": "b"}),
        ),
        ("read_image", json!({"file_path": "loop.png"})),
    ];
    for (tool, args) in calls {
        let r = h.call(tool, args).await;
        assert_eq!(code(&r), "FS_IO_ERROR", "{tool}");
        assert_eq!(
            h.redact(&support::message(&r)),
            "cannot resolve \"[TMP]/loop.png\": too many levels of symbolic links",
            "{tool}"
        );
    }
    assert!(
        h.path("loop.png")
            .symlink_metadata()
            .expect("lstat")
            .file_type()
            .is_symlink()
    );
}

struct AnySink;

impl seam_tools::ImageSink for AnySink {}
