//! `str_replace_editor` against the real local provider, with and without the policy: the
//! seed's texts, every byte read back from disk, the version guard, the sandbox marker.

mod support;

use seam_tools::{CLIPPED, Exec, Tool, ToolResult};
use serde_json::{Value, json};
use support::{Harness, code, message, text};

fn editor() -> seam_tools::StrReplaceEditorTool {
    seam_tools::StrReplaceEditorTool::new()
}

async fn call(h: &Harness, args: Value) -> ToolResult {
    editor().execute(&args, &h.exec()).await
}

#[tokio::test]
async fn creates_views_replaces_and_inserts_with_the_seed_texts() {
    let h = Harness::bare();
    let p = h.display("notes.txt");
    assert_eq!(
        text(
            &call(
                &h,
                json!({"command": "create", "path": p, "file_text": "one\ntwo\n"})
            )
            .await
        ),
        format!("New file created successfully at: {p}")
    );
    assert_eq!(h.bytes("notes.txt"), b"one\ntwo\n");
    assert_eq!(
        text(&call(&h, json!({"command": "view", "path": p})).await),
        format!(
            "Here's the content of {p} with line numbers (which has a total of 3 lines):\n     1  one\n     2  two\n     3  \n"
        )
    );
    assert_eq!(
        text(
            &call(
                &h,
                json!({"command": "view", "path": p, "view_range": [2, -1]})
            )
            .await
        ),
        format!(
            "Here's the content of {p} with line numbers (which has a total of 3 lines) with view_range=[2, -1]:\n     2  two\n     3  \n"
        )
    );
    assert_eq!(
        text(
            &call(
                &h,
                json!({"command": "str_replace", "path": p, "old_str": "two", "new_str": "$& 2\t"})
            )
            .await
        ),
        format!("The file {p} has been edited successfully.")
    );
    assert_eq!(h.bytes("notes.txt"), b"one\n$& 2\t\n", "literal, tabs kept");
    text(
        &call(
            &h,
            json!({"command": "insert", "path": p, "insert_line": 2, "new_str": "three"}),
        )
        .await,
    );
    assert_eq!(h.bytes("notes.txt"), b"one\n$& 2\t\nthree\n");
    text(
        &call(
            &h,
            json!({"command": "insert", "path": p, "insert_line": 0, "new_str": "zero"}),
        )
        .await,
    );
    assert_eq!(h.bytes("notes.txt"), b"zero\none\n$& 2\t\nthree\n");
}

#[tokio::test]
async fn str_replace_matches_the_raw_text_once() {
    let h = Harness::bare();
    h.put("m.txt", "alpha\r\nbeta\nalpha\n");
    let p = h.display("m.txt");
    let r = call(
        &h,
        json!({"command": "str_replace", "path": p, "old_str": "alpha"}),
    )
    .await;
    assert_eq!(code(&r), "FS_AMBIGUOUS_EDIT");
    assert_eq!(
        message(&r),
        "No replacement was performed. Multiple occurrences of old_str `alpha` in lines [1, 3]. Please ensure it is unique"
    );
    let r = call(
        &h,
        json!({"command": "str_replace", "path": p, "old_str": "alpha\nbeta"}),
    )
    .await;
    assert_eq!(
        code(&r),
        "FS_EDIT_NOT_FOUND",
        "no line-ending normalisation"
    );
    assert_eq!(
        message(&r),
        format!(
            "No replacement was performed, old_str `alpha\nbeta` did not appear verbatim in {p}."
        )
    );
    text(&call(&h, json!({"command": "str_replace", "path": p, "old_str": "alpha\r\nbeta", "new_str": "x"})).await);
    assert_eq!(h.bytes("m.txt"), b"x\nalpha\n", "nothing else touched");
}

#[tokio::test]
async fn a_leading_bom_stays_on_disk_through_replace_and_insert() {
    let h = Harness::bare();
    h.put("b.txt", "\u{FEFF}one\r\ntwo\n");
    let p = h.display("b.txt");
    text(
        &call(
            &h,
            json!({"command": "str_replace", "path": p, "old_str": "two", "new_str": "2"}),
        )
        .await,
    );
    assert_eq!(h.bytes("b.txt"), b"\xEF\xBB\xBFone\r\n2\n");
    text(
        &call(
            &h,
            json!({"command": "insert", "path": p, "insert_line": 0, "new_str": "zero"}),
        )
        .await,
    );
    assert_eq!(h.bytes("b.txt"), b"\xEF\xBB\xBFzero\none\r\n2\n");
    // No BOM, none added.
    h.put("n.txt", "one\n");
    let n = h.display("n.txt");
    text(
        &call(
            &h,
            json!({"command": "str_replace", "path": n, "old_str": "one", "new_str": "1"}),
        )
        .await,
    );
    assert_eq!(h.bytes("n.txt"), b"1\n");
}

#[tokio::test]
async fn binary_content_is_fs_not_text_and_untouched() {
    let h = Harness::bare();
    h.put("bin", "a\0b");
    let p = h.display("bin");
    for args in [
        json!({"command": "str_replace", "path": p, "old_str": "a", "new_str": "c"}),
        json!({"command": "insert", "path": p, "insert_line": 0, "new_str": "c"}),
    ] {
        let r = call(&h, args).await;
        assert_eq!(code(&r), "FS_NOT_TEXT");
        assert_eq!(h.bytes("bin"), b"a\0b");
    }
}

#[tokio::test]
async fn refusals_change_nothing() {
    let h = Harness::bare();
    h.put("a.txt", "keep\n");
    let p = h.display("a.txt");
    let not_absolute = format!(
        "The path a.txt is not an absolute path, it should start with `/`. Maybe you meant {}?",
        h.display("a.txt")
    );
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"command": "create", "path": p, "file_text": "x"}),
            "none",
            "File already exists at:",
        ),
        (
            json!({"command": "view", "path": "a.txt"}),
            "none",
            // The guess is beneath the session's cwd, not at the filesystem's root.
            &not_absolute,
        ),
        (
            json!({"command": "str_replace", "path": p}),
            "none",
            "Parameter `old_str` is required for command: str_replace",
        ),
        (
            json!({"command": "str_replace", "path": p, "old_str": ""}),
            "none",
            "Parameter `old_str` is empty for command: str_replace",
        ),
        (
            json!({"command": "insert", "path": p, "new_str": "x"}),
            "none",
            "Parameter `insert_line` is required for command: insert",
        ),
        (
            json!({"command": "insert", "path": p, "insert_line": 9, "new_str": "x"}),
            "none",
            "Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 2]",
        ),
        (
            json!({"command": "view", "path": p, "view_range": [0, 1]}),
            "none",
            "Invalid `view_range`: [0, 1]. Its first element `0` should be within the range of lines of the file: [1, 2]",
        ),
        (
            json!({"command": "view", "path": p, "view_range": [2, 1]}),
            "none",
            "Invalid `view_range`: [2, 1]. Its second element `1` should be larger or equal than its first `2`",
        ),
        (
            json!({"command": "undo_edit", "path": p}),
            "none",
            "Unrecognized command undo_edit.",
        ),
        (
            json!({"command": "str_replace", "path": h.display("gone.txt"), "old_str": "x"}),
            "FS_NOT_FOUND",
            "does not exist. Please provide a valid path.",
        ),
        (
            json!({"command": "insert", "path": h.root.clone(), "insert_line": 0, "new_str": "x"}),
            "FS_NOT_REGULAR_FILE",
            "is a directory and only the `view` command can be used on directories",
        ),
    ];
    for (args, want_code, want) in cases {
        let r = call(&h, args.clone()).await;
        assert_eq!(code(&r), want_code, "{args}");
        assert!(
            message(&r).starts_with(want) || message(&r).ends_with(want),
            "{args}: {}",
            message(&r)
        );
        assert_eq!(h.bytes("a.txt"), b"keep\n", "{args}");
    }
}

#[tokio::test]
async fn a_directory_is_listed_two_levels_deep_without_hidden_entries() {
    let h = Harness::bare();
    for f in [
        "src/a.rs",
        "src/deep/b.rs",
        "src/deep/deeper/c.rs",
        ".git/x",
        "node_modules/m.js",
        "node_modules_old/k.js",
        "__pycache__backup/p",
    ] {
        h.put(f, "");
    }
    let out = text(&call(&h, json!({"command": "view", "path": h.root.clone()})).await);
    let r = &h.root;
    assert_eq!(
        out,
        format!(
            "Here're the files and directories up to 2 levels deep in {r}, excluding hidden items, node_modules, and Python cache directories:\nd\t{r}\nd\t{r}/__pycache__backup\nf\t{r}/__pycache__backup/p\nd\t{r}/node_modules_old\nf\t{r}/node_modules_old/k.js\nd\t{r}/src\nf\t{r}/src/a.rs\nd\t{r}/src/deep\n"
        )
    );
}

#[tokio::test]
async fn long_output_is_clipped_with_the_seed_note() {
    let h = Harness::bare();
    h.put("big.txt", "x".repeat(20_000));
    let out = text(&call(&h, json!({"command": "view", "path": h.display("big.txt")})).await);
    assert!(out.ends_with(CLIPPED));
    assert_eq!(out.chars().count() - CLIPPED.chars().count(), 16_000);
}

#[tokio::test]
async fn under_the_policy_a_stale_edit_is_refused_and_the_file_untouched() {
    let h = Harness::with_policy();
    h.put("s.txt", "one\n");
    let p = h.display("s.txt");
    let r = call(
        &h,
        json!({"command": "str_replace", "path": p, "old_str": "one", "new_str": "two"}),
    )
    .await;
    assert_eq!(code(&r), "FS_NOT_OBSERVED", "read first");
    text(&call(&h, json!({"command": "view", "path": p})).await);
    h.put("s.txt", "one changed behind its back\n");
    let r = call(
        &h,
        json!({"command": "str_replace", "path": p, "old_str": "one", "new_str": "two"}),
    )
    .await;
    assert_eq!(code(&r), "FS_STALE_VERSION");
    assert_eq!(h.bytes("s.txt"), b"one changed behind its back\n");
    text(&call(&h, json!({"command": "view", "path": p})).await);
    text(
        &call(
            &h,
            json!({"command": "str_replace", "path": p, "old_str": "changed", "new_str": "edited"}),
        )
        .await,
    );
    assert_eq!(h.bytes("s.txt"), b"one edited behind its back\n");
}

#[tokio::test]
async fn a_sandbox_denial_is_the_marker() {
    let h = Harness::build(false, |root| {
        std::sync::Arc::new(seam_sandbox::SandboxFileSystem::new(
            seam_sandbox::SandboxConfig::new(root, seam::SandboxMode::ReadOnly)
                .with_temp_roots(Vec::new()),
        )) as std::sync::Arc<dyn seam::FileSystem>
    });
    let p = h.display("n.txt");
    let exec = Exec::new(h.fs.clone());
    let r = editor()
        .execute(
            &json!({"command": "create", "path": p, "file_text": "x"}),
            &exec,
        )
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    assert_eq!(
        message(&r),
        "[sandbox: file access denied under read-only mode]"
    );
    assert!(!h.exists("n.txt"));
}

#[tokio::test]
async fn a_failed_view_records_absence_so_create_recovers_after_an_external_deletion() {
    let h = Harness::with_policy();
    h.put("gone.txt", "was here\n");
    let p = h.display("gone.txt");
    text(&call(&h, json!({"command": "view", "path": p})).await);
    std::fs::remove_file(h.path("gone.txt")).expect("deleted behind its back");
    let r = call(&h, json!({"command": "view", "path": p})).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_eq!(
        message(&r),
        format!("The path {p} does not exist. Please provide a valid path.")
    );
    text(
        &call(
            &h,
            json!({"command": "create", "path": p, "file_text": "again\n"}),
        )
        .await,
    );
    assert_eq!(h.bytes("gone.txt"), b"again\n");
}

#[tokio::test]
async fn empty_lines_ranges_and_end_inserts_follow_the_seed() {
    let h = Harness::bare();
    // Ownerless create of an empty file: one (empty) line.
    let e = h.display("empty.txt");
    text(&call(&h, json!({"command": "create", "path": e, "file_text": ""})).await);
    assert_eq!(h.bytes("empty.txt"), b"");
    assert_eq!(
        text(&call(&h, json!({"command": "view", "path": e})).await),
        format!(
            "Here's the content of {e} with line numbers (which has a total of 1 lines):\n     1  \n"
        )
    );
    // A lone newline: two lines.
    h.put("nl.txt", "\n");
    let n = h.display("nl.txt");
    assert_eq!(
        text(&call(&h, json!({"command": "view", "path": n})).await),
        format!(
            "Here's the content of {n} with line numbers (which has a total of 2 lines):\n     1  \n     2  \n"
        )
    );
    // Inserting after the last line adds no newline of its own.
    h.put("one.txt", "one\n");
    let o = h.display("one.txt");
    text(
        &call(
            &h,
            json!({"command": "insert", "path": o, "insert_line": 2, "new_str": "three"}),
        )
        .await,
    );
    assert_eq!(h.bytes("one.txt"), b"one\n\nthree");
    h.put("two.txt", "one\ntwo");
    let t = h.display("two.txt");
    text(
        &call(
            &h,
            json!({"command": "insert", "path": t, "insert_line": 2, "new_str": "three"}),
        )
        .await,
    );
    assert_eq!(h.bytes("two.txt"), b"one\ntwo\nthree");
    let r = call(
        &h,
        json!({"command": "insert", "path": t, "insert_line": 4, "new_str": "x"}),
    )
    .await;
    assert_eq!(
        message(&r),
        "Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]"
    );
    assert_eq!(h.bytes("two.txt"), b"one\ntwo\nthree");
}
