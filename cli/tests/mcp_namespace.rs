//! `create_directory`, `move` and `delete` through `seam mcp`, spoken to by a real MCP client
//! (rmcp, the binary as a child process over stdio). The observation policy must hold for the
//! namespace operations as for writes: a file the session never read is neither moved over nor
//! deleted, a stale delete removes nothing, and every refusal leaves the disk byte for byte as
//! it was.

mod support;

use serde_json::json;
use support::mcp::{call, disk, ok, refused, serve};

#[tokio::test]
async fn a_move_onto_a_file_the_session_never_read_is_refused_and_the_file_is_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("draft.md"), b"new text\r\n").expect("seed");
    std::fs::write(root.join("notes.md"), b"someone's notes\n").expect("seed");
    let client = serve(root, &[]).await;

    // The source is read; the destination never was.
    ok(&call(&client, "read", json!({"file_path": "draft.md"})).await);
    refused(
        &call(
            &client,
            "move",
            json!({"source": "draft.md", "destination": "notes.md"}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    assert_eq!(disk(root, "notes.md"), b"someone's notes\n");
    assert_eq!(disk(root, "draft.md"), b"new text\r\n");

    // Moving a file the session never read is refused too.
    std::fs::write(root.join("other.md"), b"unread\n").expect("seed");
    let said = refused(
        &call(
            &client,
            "move",
            json!({"source": "other.md", "destination": "moved.md"}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    assert!(said.contains("rename requires reading"), "{said}");
    assert_eq!(disk(root, "other.md"), b"unread\n");
    assert!(!root.join("moved.md").exists());

    // Once the destination is read at its current version, the move replaces it: the bytes
    // (CRLF included) are the source's, the source is gone.
    ok(&call(&client, "read", json!({"file_path": "notes.md"})).await);
    let moved = ok(&call(
        &client,
        "move",
        json!({"source": "draft.md", "destination": "notes.md"}),
    )
    .await);
    assert!(moved.contains("replaced"), "{moved}");
    assert_eq!(disk(root, "notes.md"), b"new text\r\n");
    assert!(!root.join("draft.md").exists());
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn a_stale_delete_removes_nothing_and_a_fresh_one_removes_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("log.txt"), b"v1\n").expect("seed");
    let client = serve(root, &[]).await;

    // Never read: refused.
    refused(
        &call(&client, "delete", json!({"path": "log.txt"})).await,
        "FS_NOT_OBSERVED",
    );
    assert_eq!(disk(root, "log.txt"), b"v1\n");

    // Read, then changed behind the session's back: stale, and the new content survives.
    ok(&call(&client, "read", json!({"file_path": "log.txt"})).await);
    std::fs::write(root.join("log.txt"), b"v2, written by someone else\n").expect("change");
    refused(
        &call(&client, "delete", json!({"path": "log.txt"})).await,
        "FS_STALE_VERSION",
    );
    assert_eq!(disk(root, "log.txt"), b"v2, written by someone else\n");

    // A dry run after a re-read says what it would do and changes nothing; the real call then
    // removes the file.
    ok(&call(&client, "read", json!({"file_path": "log.txt"})).await);
    let dry = ok(&call(
        &client,
        "delete",
        json!({"path": "log.txt", "dry_run": true}),
    )
    .await);
    assert!(dry.contains("Dry run"), "{dry}");
    assert_eq!(disk(root, "log.txt"), b"v2, written by someone else\n");
    ok(&call(&client, "delete", json!({"path": "log.txt"})).await);
    assert!(!root.join("log.txt").exists());
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn directories_are_made_moved_and_removed_when_empty_never_recursively() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let client = serve(root, &[]).await;

    ok(&call(&client, "create_directory", json!({"path": "a/b/c"})).await);
    assert!(root.join("a/b/c").is_dir());
    // Again: an existing directory is fine.
    let again = ok(&call(&client, "create_directory", json!({"path": "a/b/c"})).await);
    assert!(again.contains("already exists"), "{again}");

    ok(&call(
        &client,
        "write",
        json!({"file_path": "a/b/c/keep.txt", "content": "kept\n"}),
    )
    .await);
    ok(&call(
        &client,
        "move",
        json!({"source": "a/b", "destination": "z"}),
    )
    .await);
    assert_eq!(disk(root, "z/c/keep.txt"), b"kept\n");
    assert!(!root.join("a/b").exists());

    // A directory with something in it is never removed.
    refused(
        &call(&client, "delete", json!({"path": "z/c"})).await,
        "FS_IO_ERROR",
    );
    assert_eq!(disk(root, "z/c/keep.txt"), b"kept\n");
    ok(&call(&client, "delete", json!({"path": "a"})).await);
    assert!(!root.join("a").exists());

    // A move into its own subtree is refused.
    refused(
        &call(
            &client,
            "move",
            json!({"source": "z", "destination": "z/c/inner"}),
        )
        .await,
        "FS_IO_ERROR",
    );
    assert!(root.join("z/c").is_dir());
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn links_go_without_a_read_and_a_dry_run_refuses_what_the_call_would() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("target.txt"), b"kept\n").expect("seed");
    std::fs::write(root.join("unread.txt"), b"not read\n").expect("seed");
    std::os::unix::fs::symlink("target.txt", root.join("link")).expect("link");
    std::os::unix::fs::symlink("nowhere", root.join("dangling")).expect("dangling");
    std::fs::create_dir(root.join("dir")).expect("dir");
    let client = serve(root, &[]).await;

    // A link is deleted, never what it points to, and needs no read: it holds no content.
    ok(&call(&client, "delete", json!({"path": "link"})).await);
    assert!(std::fs::symlink_metadata(root.join("link")).is_err());
    assert_eq!(disk(root, "target.txt"), b"kept\n");
    ok(&call(&client, "delete", json!({"path": "dangling"})).await);
    assert!(std::fs::symlink_metadata(root.join("dangling")).is_err());
    // One that loops is an entry too: it cannot be resolved, and need not be.
    std::os::unix::fs::symlink("loop", root.join("loop")).expect("loop");
    ok(&call(&client, "delete", json!({"path": "loop"})).await);
    assert!(std::fs::symlink_metadata(root.join("loop")).is_err());

    // Moving a link leaves what the session saw of its target as it was: the file read through
    // its own name can still be edited.
    ok(&call(&client, "read", json!({"file_path": "target.txt"})).await);
    std::os::unix::fs::symlink("target.txt", root.join("alias")).expect("alias");
    ok(&call(
        &client,
        "move",
        json!({"source": "alias", "destination": "alias2"}),
    )
    .await);
    ok(&call(
        &client,
        "edit",
        json!({"file_path": "target.txt", "old_string": "kept", "new_string": "still kept"}),
    )
    .await);
    assert_eq!(disk(root, "target.txt"), b"still kept\n");
    ok(&call(&client, "delete", json!({"path": "alias2"})).await);
    assert_eq!(disk(root, "target.txt"), b"still kept\n");

    // A dry run onto a file the session never read says what the call would say.
    ok(&call(&client, "read", json!({"file_path": "target.txt"})).await);
    refused(
        &call(
            &client,
            "move",
            json!({"source": "target.txt", "destination": "unread.txt", "dry_run": true}),
        )
        .await,
        "FS_NOT_OBSERVED",
    );
    // Onto a directory: said plainly, not as a file to read.
    let (error, said) = support::mcp::text(
        &call(
            &client,
            "move",
            json!({"source": "target.txt", "destination": "dir"}),
        )
        .await,
    );
    assert!(error, "{said}");
    assert!(
        said.contains("is a directory") && said.contains("dir/<name>"),
        "{said}"
    );
    assert_eq!(disk(root, "unread.txt"), b"not read\n");
    assert_eq!(disk(root, "target.txt"), b"still kept\n");
    client.cancel().await.expect("close");
}
