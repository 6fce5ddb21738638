//! The `edit` tool against the real local provider, with and without the policy: every byte
//! checked on disk, every text snapshotted, every error code `edit` can produce.

mod support;

use insta::assert_snapshot;
use seam_policy::Owner;
use serde_json::json;
use support::{Harness, code, message, text};

fn edit(path: &str, old: &str, new: &str) -> serde_json::Value {
    json!({"file_path": path, "old_string": old, "new_string": new})
}

#[tokio::test]
async fn validation_texts_before_any_io() {
    let h = Harness::with_policy();
    h.put("a.txt", "same\n");
    let cases = [
        json!({"file_path": "", "old_string": "a", "new_string": "b"}),
        json!({"file_path": "a.txt", "old_string": "", "new_string": "b"}),
        json!({"file_path": "a.txt", "new_string": "b"}),
        json!({"file_path": "a.txt", "old_string": "same", "new_string": "same"}),
        json!({"file_path": "a.txt", "old_string": "same"}),
        json!({"file_path": "a.txt", "old_string": "same", "new_string": "x", "replace_all": "yes"}),
        json!({"file_path": "a.txt", "old_string": "same", "new_string": "x", "justification": "j"}),
    ];
    let mut rendered = Vec::new();
    for args in cases {
        let r = h.call("edit", args.clone()).await;
        assert!(r.is_err(), "{args}");
        rendered.push(format!("{args} => {}", h.render(&r)));
    }
    assert_eq!(h.bytes("a.txt"), b"same\n");
    assert_snapshot!("argument_errors", rendered.join("\n"));
    // "Must differ" compares the strings as given: a CRLF/LF pair differs.
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let r = h.call("edit", edit("a.txt", "same\r\n", "same\n")).await;
    assert!(r.is_ok(), "{}", h.render(&r));
}

#[tokio::test]
async fn applies_a_unique_literal_replacement_after_a_read() {
    let h = Harness::with_policy();
    let before: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    h.put("a.txt", &before);
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let r = h
        .call("edit", edit("a.txt", "line 5\n", "five $& $$\n"))
        .await;
    assert_eq!(
        h.bytes("a.txt"),
        before.replace("line 5\n", "five $& $$\n").as_bytes()
    );
    assert_snapshot!("single", h.render(&r));
    assert_snapshot!("single_metadata", h.metadata(&r));
}

#[tokio::test]
async fn replace_all_has_its_own_success_text() {
    let h = Harness::with_policy();
    h.put("a.txt", "x y x y x\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let r = h
        .call("edit", json!({"file_path": "a.txt", "old_string": "x", "new_string": "z", "replace_all": true}))
        .await;
    assert_eq!(h.bytes("a.txt"), b"z y z y z\n");
    assert_snapshot!("replace_all", h.render(&r));
}

#[tokio::test]
async fn rejects_an_edit_before_any_read_leaving_the_file_untouched() {
    let h = Harness::with_policy();
    h.put("a.txt", "keep me\n");
    let r = h.call("edit", edit("a.txt", "keep", "lose")).await;
    assert_eq!(code(&r), "FS_NOT_OBSERVED");
    assert_eq!(
        message(&r),
        format!(
            "edit requires reading \"{}\" first — read the file, then retry",
            h.display("a.txt")
        )
    );
    assert_snapshot!("unread", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"keep me\n");
}

#[tokio::test]
async fn a_windowed_read_authorises_an_edit_while_the_file_is_unchanged() {
    let h = Harness::with_policy();
    let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    h.put("a.txt", &before);
    text(
        &h.call("read", json!({"file_path": "a.txt", "limit": 1}))
            .await,
    );
    text(&h.call("edit", edit("a.txt", "line 12\n", "twelve\n")).await);
    assert_eq!(
        h.bytes("a.txt"),
        before.replace("line 12\n", "twelve\n").as_bytes()
    );
}

#[tokio::test]
async fn a_change_since_the_windowed_read_is_stale_before_matching_and_the_remedy_works() {
    let h = Harness::with_policy();
    h.put("a.txt", "one\ntwo\nthree\n");
    text(
        &h.call("read", json!({"file_path": "a.txt", "limit": 1}))
            .await,
    );
    h.put("a.txt", "one\ntwo\nthree\nfour\n");
    // "nowhere" would be FS_EDIT_NOT_FOUND, but the version is checked first.
    let r = h.call("edit", edit("a.txt", "nowhere", "x")).await;
    assert_eq!(code(&r), "FS_STALE_VERSION");
    assert_snapshot!("stale", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"one\ntwo\nthree\nfour\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    text(&h.call("edit", edit("a.txt", "four", "FOUR")).await);
    assert_eq!(h.bytes("a.txt"), b"one\ntwo\nthree\nFOUR\n");
}

#[tokio::test]
async fn rejects_an_ambiguous_match_without_replace_all() {
    let h = Harness::with_policy();
    h.put("a.txt", "dup dup dup\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let r = h.call("edit", edit("a.txt", "dup", "one")).await;
    assert_eq!(code(&r), "FS_AMBIGUOUS_EDIT");
    assert_snapshot!("ambiguous", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"dup dup dup\n");
}

#[tokio::test]
async fn an_absent_old_string_is_fs_edit_not_found() {
    let h = Harness::with_policy();
    h.put("a.txt", "abc\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let r = h.call("edit", edit("a.txt", "xyz", "q")).await;
    assert_eq!(code(&r), "FS_EDIT_NOT_FOUND");
    assert_snapshot!("edit_not_found", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"abc\n");
}

#[tokio::test]
async fn a_nul_past_the_read_sample_is_readable_but_not_editable() {
    let h = Harness::with_policy();
    let mut bytes = "a".repeat(9000).into_bytes();
    bytes.extend_from_slice(b"\0tail\n");
    h.put("late-nul.txt", &bytes);
    text(&h.call("read", json!({"file_path": "late-nul.txt"})).await);
    let r = h.call("edit", edit("late-nul.txt", "tail", "TAIL")).await;
    assert_eq!(code(&r), "FS_NOT_TEXT");
    assert_snapshot!("not_text", h.render(&r));
    assert_eq!(h.bytes("late-nul.txt"), bytes);
}

#[tokio::test]
async fn supports_a_full_write_then_edit_cycle_without_an_intervening_read() {
    let h = Harness::with_policy();
    text(
        &h.call("write", json!({"file_path": "c.txt", "content": "draft\n"}))
            .await,
    );
    text(&h.call("edit", edit("c.txt", "draft", "final")).await);
    text(&h.call("edit", edit("c.txt", "final", "final!")).await);
    assert_eq!(h.bytes("c.txt"), b"final!\n");
}

#[tokio::test]
async fn editing_a_file_observed_absent_is_fs_not_found() {
    let h = Harness::with_policy();
    assert_eq!(
        code(&h.call("read", json!({"file_path": "gone.txt"})).await),
        "FS_NOT_FOUND"
    );
    let r = h.call("edit", edit("gone.txt", "a", "b")).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_snapshot!("observed_absent", h.render(&r));
    assert!(!h.exists("gone.txt"));
}

#[tokio::test]
async fn keeps_untouched_bytes_crlf_and_bom() {
    let h = Harness::with_policy();
    h.put("w.txt", b"\xEF\xBB\xBFone\r\ntwo\nthree\r\n");
    text(&h.call("read", json!({"file_path": "w.txt"})).await);
    text(&h.call("edit", edit("w.txt", "two", "TWO")).await);
    assert_eq!(h.bytes("w.txt"), b"\xEF\xBB\xBFone\r\nTWO\nthree\r\n");
}

#[tokio::test]
async fn a_cancelled_edit_is_fs_aborted_and_changes_nothing() {
    let mut h = Harness::with_policy();
    h.put("a.txt", "abc\n");
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    h.signal = seam::Signal::new();
    h.signal.cancel();
    let r = h.call("edit", edit("a.txt", "abc", "xyz")).await;
    assert_eq!(code(&r), "FS_ABORTED");
    assert_snapshot!("aborted", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"abc\n");
}

#[tokio::test]
async fn another_owners_read_authorises_nothing() {
    let h = Harness::with_policy();
    h.put("a.txt", "abc\n");
    let other = Owner::new();
    text(
        &h.call_with("read", json!({"file_path": "a.txt"}), &h.exec_as(&other))
            .await,
    );
    assert_eq!(
        code(&h.call("edit", edit("a.txt", "abc", "x")).await),
        "FS_NOT_OBSERVED"
    );
    text(
        &h.call_with("edit", edit("a.txt", "abc", "x"), &h.exec_as(&other))
            .await,
    );
    assert_eq!(h.bytes("a.txt"), b"x\n");
}

// ---- without the policy ----

#[tokio::test]
async fn bare_edit_edits_an_unread_existing_file() {
    let h = Harness::bare();
    h.put("a.txt", "unread\n");
    text(&h.call("edit", edit("a.txt", "unread", "edited")).await);
    assert_eq!(h.bytes("a.txt"), b"edited\n");
}

#[tokio::test]
async fn bare_edit_of_a_missing_target_is_stale_with_the_remedy() {
    let h = Harness::bare();
    let r = h.call("edit", edit("missing.txt", "a", "b")).await;
    assert_eq!(code(&r), "FS_STALE_VERSION");
    assert!(message(&r).ends_with(" — re-read the file, then retry"));
    assert_snapshot!("bare_missing", h.render(&r));
    assert!(!h.exists("missing.txt"));
}

#[tokio::test]
async fn bare_edit_still_enforces_literal_match_codes_and_file_kinds() {
    let h = Harness::bare();
    h.put("a.txt", "aa\n");
    assert_eq!(
        code(&h.call("edit", edit("a.txt", "a", "b")).await),
        "FS_AMBIGUOUS_EDIT"
    );
    assert_eq!(
        code(&h.call("edit", edit("a.txt", "q", "b")).await),
        "FS_EDIT_NOT_FOUND"
    );
    h.put("bin.dat", b"x\0y");
    assert_eq!(
        code(&h.call("edit", edit("bin.dat", "x", "z")).await),
        "FS_NOT_TEXT"
    );
    std::fs::create_dir(h.path("d")).expect("mkdir");
    let r = h.call("edit", edit("d", "x", "z")).await;
    assert_eq!(code(&r), "FS_NOT_REGULAR_FILE");
    assert_snapshot!("bare_directory", h.render(&r));
    assert_eq!(h.bytes("a.txt"), b"aa\n");
    assert_eq!(h.bytes("bin.dat"), b"x\0y");
}
