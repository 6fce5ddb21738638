//! The `write` tool against the real local provider, with and without the policy: every byte
//! checked on disk, every text snapshotted, every error code `write` can produce.

mod support;

use insta::assert_snapshot;
use seam::{FsVersion, Signal};
use seam_policy::{Observed, Owner};
use serde_json::json;
use support::{Harness, code, message, text};

async fn stat_version(h: &Harness, rel: &str) -> (seam::FsTargetKey, FsVersion) {
    let t =
        h.fs.resolve(&h.display(rel), Default::default(), &Signal::none())
            .await
            .expect("resolve");
    let v =
        h.fs.stat(&t, &Signal::none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    (t.key, v)
}

#[tokio::test]
async fn creates_a_file_with_exactly_the_requested_bytes_and_observes_it() {
    let h = Harness::with_policy();
    let content = "línea uno\r\nline two\n\ttabbed $& $$\n";
    let r = h
        .call(
            "write",
            json!({"file_path": "new/dir/a.txt", "content": content}),
        )
        .await;
    assert_eq!(h.bytes("new/dir/a.txt"), content.as_bytes());
    assert_snapshot!("created", h.render(&r));
    assert_snapshot!("created_metadata", h.metadata(&r));
    let (key, v) = stat_version(&h, "new/dir/a.txt").await;
    assert_eq!(
        h.policy
            .as_ref()
            .expect("policy")
            .observation(&h.owner, &key),
        Observed::Present(v),
        "observed at the new version"
    );
}

#[tokio::test]
async fn empty_content_is_legal() {
    let h = Harness::with_policy();
    text(
        &h.call("write", json!({"file_path": "e.txt", "content": ""}))
            .await,
    );
    assert_eq!(h.bytes("e.txt"), b"");
}

#[tokio::test]
async fn rejects_bad_arguments_before_any_io() {
    let h = Harness::with_policy();
    let cases = [
        json!({"file_path": "", "content": "x"}),
        json!({"file_path": "  ", "content": "x"}),
        json!({"content": "x"}),
        json!({"file_path": "a.txt"}),
        json!({"file_path": "a.txt", "content": 5}),
        json!({"file_path": "a.txt", "content": "x", "sandbox_permissions": "danger-full-access", "justification": "because"}),
    ];
    let mut rendered = Vec::new();
    for args in cases {
        let r = h.call("write", args.clone()).await;
        assert!(r.is_err(), "{args}");
        rendered.push(format!("{args} => {}", h.render(&r)));
    }
    assert!(!h.exists("a.txt"));
    assert_snapshot!("argument_errors", rendered.join("\n"));
}

#[tokio::test]
async fn rejects_overwriting_an_existing_file_without_reading_it_first() {
    let h = Harness::with_policy();
    h.put("a.txt", "precious\n");
    let r = h
        .call("write", json!({"file_path": "a.txt", "content": "clobber"}))
        .await;
    assert_eq!(code(&r), "FS_NOT_OBSERVED");
    assert!(message(&r).contains("without reading it first"));
    assert!(message(&r).ends_with(" — read the file, then retry"));
    assert_snapshot!("unread_overwrite", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"precious\n");
}

#[tokio::test]
async fn allows_overwriting_after_a_read_and_reports_diff_hunks() {
    let h = Harness::with_policy();
    let before: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    h.put("a.txt", &before);
    text(
        &h.call("read", json!({"file_path": "a.txt", "limit": 1}))
            .await,
    );
    let after = before.replace("line 6\n", "LINE SIX\n");
    let r = h
        .call("write", json!({"file_path": "a.txt", "content": after}))
        .await;
    assert_eq!(h.bytes("a.txt"), after.as_bytes());
    assert_snapshot!("updated", h.render(&r));
    assert_snapshot!("updated_metadata", h.metadata(&r));
    // The write refreshed the basis: a second write needs no re-read.
    text(
        &h.call("write", json!({"file_path": "a.txt", "content": "third\n"}))
            .await,
    );
    assert_eq!(h.bytes("a.txt"), b"third\n");
}

#[tokio::test]
async fn rejects_a_full_overwrite_when_the_file_changed_since_the_read() {
    let h = Harness::with_policy();
    h.put("a.txt", "v1\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    h.put("a.txt", "someone else\n");
    let r = h
        .call("write", json!({"file_path": "a.txt", "content": "mine\n"}))
        .await;
    assert_eq!(code(&r), "FS_STALE_VERSION");
    assert!(message(&r).ends_with(" — re-read the file, then retry"));
    assert_snapshot!("stale", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"someone else\n");
    // The remedy is actionable: re-read, retry.
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    text(
        &h.call("write", json!({"file_path": "a.txt", "content": "mine\n"}))
            .await,
    );
    assert_eq!(h.bytes("a.txt"), b"mine\n");
}

#[tokio::test]
async fn a_file_deleted_after_the_read_is_stale_and_not_recreated_until_reread() {
    let h = Harness::with_policy();
    h.put("a.txt", "v1\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    std::fs::remove_file(h.path("a.txt")).expect("rm");
    let r = h
        .call("write", json!({"file_path": "a.txt", "content": "again\n"}))
        .await;
    assert_eq!(code(&r), "FS_STALE_VERSION");
    assert_snapshot!("stale_deleted", h.render(&r));
    assert!(!h.exists("a.txt"), "a stale write never recreates");
    // A failed re-read records absence, so a write may create it again.
    assert_eq!(
        code(&h.call("read", json!({"file_path": "a.txt"})).await),
        "FS_NOT_FOUND"
    );
    text(
        &h.call("write", json!({"file_path": "a.txt", "content": "again\n"}))
            .await,
    );
    assert_eq!(h.bytes("a.txt"), b"again\n");
}

#[tokio::test]
async fn a_directory_or_a_dangling_link_at_the_path_is_not_a_regular_file() {
    let h = Harness::with_policy();
    std::fs::create_dir(h.path("d")).expect("mkdir");
    let r = h
        .call("write", json!({"file_path": "d", "content": "x"}))
        .await;
    assert_eq!(code(&r), "FS_NOT_REGULAR_FILE");
    assert_snapshot!("directory", h.render(&r));
    assert!(h.path("d").is_dir());
    let hb = Harness::bare();
    std::os::unix::fs::symlink(hb.path("nowhere"), hb.path("dangling")).expect("symlink");
    let r = hb
        .call("write", json!({"file_path": "dangling", "content": "x"}))
        .await;
    assert_eq!(code(&r), "FS_NOT_REGULAR_FILE");
    assert!(
        hb.path("dangling")
            .symlink_metadata()
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(!hb.exists("nowhere"));
}

#[tokio::test]
async fn a_parent_that_is_a_file_is_fs_not_found() {
    let h = Harness::with_policy();
    h.put("file", "x");
    let r = h
        .call("write", json!({"file_path": "file/a.txt", "content": "y"}))
        .await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_snapshot!("parent_is_a_file", h.render(&r));
    assert_eq!(h.bytes("file"), b"x");
}

#[tokio::test]
async fn a_cancelled_write_is_fs_aborted_and_leaves_no_trace() {
    let mut h = Harness::with_policy();
    h.signal = Signal::new();
    h.signal.cancel();
    let r = h
        .call("write", json!({"file_path": "sub/a.txt", "content": "x"}))
        .await;
    assert_eq!(code(&r), "FS_ABORTED");
    assert_snapshot!("aborted", h.render(&r));
    assert!(!h.exists("sub"));
    assert_eq!(std::fs::read_dir(h.dir.path()).expect("ls").count(), 0);
}

#[tokio::test]
async fn a_write_through_a_symlink_lands_on_its_target_and_keeps_the_link() {
    let h = Harness::with_policy();
    h.put("real.txt", "old\n");
    std::os::unix::fs::symlink(h.path("real.txt"), h.path("alias.txt")).expect("symlink");
    text(&h.call("read", json!({"file_path": "real.txt"})).await);
    // The alias shares the key, so the read through one spelling authorises the other.
    text(
        &h.call(
            "write",
            json!({"file_path": "alias.txt", "content": "new\n"}),
        )
        .await,
    );
    assert_eq!(h.bytes("real.txt"), b"new\n");
    assert!(
        h.path("alias.txt")
            .symlink_metadata()
            .expect("lstat")
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn owners_never_share_authority() {
    let h = Harness::with_policy();
    h.put("a.txt", "shared\n");
    let other = Owner::new();
    text(
        &h.call_with("read", json!({"file_path": "a.txt"}), &h.exec_as(&other))
            .await,
    );
    let r = h
        .call("write", json!({"file_path": "a.txt", "content": "mine\n"}))
        .await;
    assert_eq!(code(&r), "FS_NOT_OBSERVED");
    assert_eq!(h.bytes("a.txt"), b"shared\n");
}

#[tokio::test]
async fn without_the_policy_write_creates_and_overwrites_unconditionally() {
    let h = Harness::bare();
    let r = h
        .call("write", json!({"file_path": "a.txt", "content": "one\n"}))
        .await;
    assert_snapshot!("bare_created", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"one\n");
    h.put("b.txt", "unread\n");
    let r = h
        .call("write", json!({"file_path": "b.txt", "content": "two\n"}))
        .await;
    assert_snapshot!("bare_updated", h.render(&r));
    assert_eq!(h.bytes("b.txt"), b"two\n");
}
