//! The `read` tool against the real local provider: the seed's read tests (tools.spec.ts,
//! integration.spec.ts) and every error code `read` can produce, with snapshots of every text.

mod support;

use insta::assert_snapshot;
use seam::{FsVersion, Signal};
use seam_policy::Observed;
use seam_tools::{ReadConfig, Toolset};
use serde_json::json;
use std::num::NonZeroUsize;
use std::sync::Arc;
use support::counting::{Counting, Counts};
use support::{Harness, code, message, text};

fn counted(hide_sizes: bool) -> (Harness, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    let h = Harness::build(true, move |root| {
        Arc::new(Counting {
            inner: Arc::new(support::local(root)),
            counts: c,
            hide_sizes,
            hide_search: false,
        })
    });
    (h, counts)
}

async fn version_of(h: &Harness, rel: &str) -> FsVersion {
    let t =
        h.fs.resolve(&h.display(rel), Default::default(), &Signal::none())
            .await
            .expect("resolve");
    h.fs.stat(&t, &Signal::none())
        .await
        .expect("stat")
        .expect("present")
        .version
}

#[tokio::test]
async fn formats_line_numbered_content_with_a_footer() {
    let h = Harness::with_policy();
    h.put("a.txt", "hello\nworld");
    let r = h.call("read", json!({"file_path": "a.txt"})).await;
    assert_eq!(
        text(&r),
        format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n(End of file - total 2 lines)\n</content>",
            h.display("a.txt")
        )
    );
    assert_snapshot!("hello_world", h.render(&r));
    assert_snapshot!("hello_world_metadata", h.metadata(&r));
}

#[tokio::test]
async fn returns_an_explicit_empty_window_for_an_empty_file() {
    let h = Harness::with_policy();
    h.put("e.txt", "");
    let r = h.call("read", json!({"file_path": "e.txt"})).await;
    assert_snapshot!("empty_file", h.render(&r));
    let r = h
        .call("read", json!({"file_path": "e.txt", "offset": 2}))
        .await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_snapshot!("empty_file_offset_2", h.render(&r));
}

#[tokio::test]
async fn rejects_bad_offsets_and_limits_before_any_io() {
    let (h, counts) = counted(false);
    h.put("a.txt", "x\n");
    let cases = [
        (
            json!({"file_path": "a.txt", "offset": 0}),
            "offset must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "offset": -1}),
            "offset must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "offset": 1.5}),
            "offset must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "offset": "2"}),
            "offset must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "limit": 0}),
            "limit must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "limit": -3}),
            "limit must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "limit": 2.5}),
            "limit must be a positive integer",
        ),
        (
            json!({"file_path": "a.txt", "limit": 2001}),
            "limit must be less than or equal to 2000",
        ),
        (
            json!({"file_path": ""}),
            "file_path must be a non-empty string",
        ),
        (
            json!({"file_path": "   "}),
            "file_path must be a non-empty string",
        ),
        (
            json!({"file_path": 7}),
            "file_path must be a non-empty string",
        ),
        (json!({}), "file_path must be a non-empty string"),
    ];
    let mut rendered = Vec::new();
    for (args, expected) in cases {
        let r = h.call("read", args.clone()).await;
        assert_eq!(message(&r), expected, "{args}");
        assert_eq!(r.as_ref().err().map(|e| e.name()), Some("ArgumentError"));
        assert_eq!(r.as_ref().err().and_then(|e| e.code()), None);
        rendered.push(format!("{args} => {}", h.render(&r)));
    }
    assert_eq!(counts.get(), (0, 0, 0), "validation happens before any I/O");
    assert_snapshot!("argument_errors", rendered.join("\n"));
    // An integral float is an integer.
    let r = h
        .call(
            "read",
            json!({"file_path": "a.txt", "offset": 1.0, "limit": 2000.0}),
        )
        .await;
    assert!(text(&r).contains("1: x"));
}

#[tokio::test]
async fn records_observed_state_so_a_follow_up_edit_by_the_same_session_is_authorized() {
    let h = Harness::with_policy();
    h.put("a.txt", "alpha beta\n");
    let v = version_of(&h, "a.txt").await;
    text(&h.call("read", json!({"file_path": "a.txt"})).await);
    let key =
        h.fs.resolve(&h.display("a.txt"), Default::default(), &Signal::none())
            .await
            .expect("resolve")
            .key;
    let policy = h.policy.as_ref().expect("policy");
    assert_eq!(policy.observation(&h.owner, &key), Observed::Present(v));
    let r = h
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
        )
        .await;
    text(&r);
    assert_eq!(h.bytes("a.txt"), b"alpha gamma\n");
}

#[tokio::test]
async fn an_absent_file_is_fs_not_found_and_recorded_absent() {
    let h = Harness::with_policy();
    let r = h.call("read", json!({"file_path": "missing.txt"})).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_eq!(
        message(&r),
        format!("cannot read \"{}\": not found", h.display("missing.txt"))
    );
    assert_snapshot!("missing", h.render(&r));
    let key =
        h.fs.resolve(
            &h.display("missing.txt"),
            Default::default(),
            &Signal::none(),
        )
        .await
        .expect("resolve")
        .key;
    assert_eq!(
        h.policy
            .as_ref()
            .expect("policy")
            .observation(&h.owner, &key),
        Observed::Absent
    );
}

#[tokio::test]
async fn a_path_through_a_regular_file_is_fs_not_found() {
    let h = Harness::with_policy();
    h.put("file", "x");
    let r = h.call("read", json!({"file_path": "file/inner.txt"})).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_snapshot!("through_a_file", h.render(&r));
}

#[tokio::test]
async fn rejects_a_non_regular_target() {
    let h = Harness::with_policy();
    std::fs::create_dir(h.path("d")).expect("mkdir");
    let r = h.call("read", json!({"file_path": "d"})).await;
    assert_eq!(code(&r), "FS_NOT_REGULAR_FILE");
    assert_snapshot!("directory", h.render(&r));
}

#[tokio::test]
async fn reports_binary_and_invalid_utf8_files_as_not_text() {
    let h = Harness::with_policy();
    h.put("bin.dat", b"ab\0cd");
    h.put("bad.txt", b"h\xFFi");
    let r = h.call("read", json!({"file_path": "bin.dat"})).await;
    assert_eq!(code(&r), "FS_NOT_TEXT");
    assert_snapshot!("binary", h.render(&r));
    let r = h.call("read", json!({"file_path": "bad.txt"})).await;
    assert_eq!(code(&r), "FS_NOT_TEXT");
    assert_snapshot!("invalid_utf8", h.render(&r));
    // A PNG is refused by read too (read_image is for images).
    h.put("p.png", support::images::png(1, 1));
    assert_eq!(
        code(&h.call("read", json!({"file_path": "p.png"})).await),
        "FS_NOT_TEXT"
    );
}

#[tokio::test]
async fn a_symlink_loop_is_fs_io_error() {
    let h = Harness::with_policy();
    std::os::unix::fs::symlink("loop", h.path("loop")).expect("symlink");
    let r = h.call("read", json!({"file_path": "loop"})).await;
    assert_eq!(code(&r), "FS_IO_ERROR");
    assert_snapshot!("symlink_loop", h.render(&r));
}

#[tokio::test]
async fn a_cancelled_call_is_fs_aborted_and_records_nothing() {
    let mut h = Harness::with_policy();
    h.put("a.txt", "x\n");
    h.signal = Signal::new();
    h.signal.cancel();
    let r = h.call("read", json!({"file_path": "a.txt"})).await;
    assert_eq!(code(&r), "FS_ABORTED");
    assert_snapshot!("aborted", h.render(&r));
    assert_eq!(h.policy.as_ref().expect("policy").owner_count(), 0);
}

#[tokio::test]
async fn paginates_a_multi_line_file_with_offset_and_limit() {
    let h = Harness::with_policy();
    h.put("p.txt", "one\ntwo\nthree\nfour\n");
    let r = h
        .call(
            "read",
            json!({"file_path": "p.txt", "offset": 2, "limit": 2}),
        )
        .await;
    assert!(
        text(&r)
            .contains("2: two\n3: three\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)")
    );
    assert_snapshot!("paginated", h.render(&r));
    let r = h
        .call("read", json!({"file_path": "p.txt", "offset": 4}))
        .await;
    assert_snapshot!("last_page", h.render(&r));
}

#[tokio::test]
async fn an_offset_past_the_end_is_fs_not_found_and_records_nothing() {
    let h = Harness::with_policy();
    h.put("p.txt", "one\ntwo\n");
    let r = h
        .call("read", json!({"file_path": "p.txt", "offset": 3}))
        .await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_eq!(
        message(&r),
        format!(
            "offset 3 is out of range for \"{}\" (2 lines)",
            h.display("p.txt")
        )
    );
    assert_snapshot!("offset_out_of_range", h.render(&r));
    assert_eq!(h.policy.as_ref().expect("policy").owner_count(), 0);
}

#[tokio::test]
async fn surfaces_a_byte_capped_read_as_a_truncated_footer() {
    let h = Harness::with_policy();
    let line = "y".repeat(100);
    h.put(
        "big.txt",
        (0..2000).map(|_| format!("{line}\n")).collect::<String>(),
    );
    let r = h.call("read", json!({"file_path": "big.txt"})).await;
    let t = text(&r);
    assert!(t.contains("\n506: "));
    assert!(!t.contains("\n507: "));
    assert!(t.ends_with(
        "\n\n(Output capped. Showing lines 1-506. Use offset=507 to continue.)\n</content>"
    ));
    let r = h
        .call("read", json!({"file_path": "big.txt", "offset": 507}))
        .await;
    assert!(text(&r).ends_with(
        "(Output capped. Showing lines 507-1012. Use offset=1013 to continue.)\n</content>"
    ));
}

#[tokio::test]
async fn truncates_a_long_line_in_the_output() {
    let h = Harness::with_policy();
    h.put("long.txt", format!("{}\nok\n", "L".repeat(2100)));
    let r = h.call("read", json!({"file_path": "long.txt"})).await;
    assert!(text(&r).contains(&format!(
        "1: {}... (line truncated to 2000 chars)\n2: ok\n",
        "L".repeat(2000)
    )));
}

#[tokio::test]
async fn a_bom_is_not_shown_and_crlf_is_stripped() {
    let h = Harness::with_policy();
    h.put("bom.txt", b"\xEF\xBB\xBFfirst\r\nsecond\r\n");
    let r = h.call("read", json!({"file_path": "bom.txt"})).await;
    assert!(text(&r).contains("<content>\n1: first\n2: second\n\n"));
}

#[tokio::test]
async fn read_stats_exactly_once_and_streams_at_or_over_one_mib() {
    let (h, counts) = counted(false);
    let below = 1024 * 1024 - 1;
    h.put("below.txt", "a\n".repeat(below / 2) + "a");
    h.put("at.txt", "a\n".repeat(1024 * 1024 / 2));
    text(
        &h.call("read", json!({"file_path": "below.txt", "limit": 3}))
            .await,
    );
    assert_eq!(
        counts.get(),
        (1, 1, 0),
        "one stat, buffered below the threshold"
    );
    counts.reset();
    let r = h
        .call("read", json!({"file_path": "at.txt", "limit": 3}))
        .await;
    assert_eq!(
        counts.get(),
        (1, 0, 1),
        "one stat, streamed at the threshold"
    );
    assert!(
        text(&r).ends_with("(Showing lines 1-3 of 524288. Use offset=4 to continue.)\n</content>")
    );
    counts.reset();
    let r = h.call("read", json!({"file_path": "missing.txt"})).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_eq!(counts.get(), (1, 0, 0), "a missing read still stats once");
}

#[tokio::test]
async fn streams_when_the_backend_reports_no_size() {
    let (h, counts) = counted(true);
    h.put("small.txt", "tiny\n");
    let r = h.call("read", json!({"file_path": "small.txt"})).await;
    assert!(text(&r).contains("1: tiny"));
    assert_eq!(counts.get(), (1, 0, 1));
}

#[tokio::test]
async fn streamed_and_buffered_reads_render_the_same() {
    let content = "α\r\nβ\n\nγ 🦀\nlast";
    let (h, _) = counted(false);
    h.put("f.txt", content);
    let buffered = h.render(&h.call("read", json!({"file_path": "f.txt"})).await);
    let (h2, counts) = counted(true);
    h2.put("f.txt", content);
    let streamed = h2.render(&h2.call("read", json!({"file_path": "f.txt"})).await);
    assert_eq!(counts.get(), (1, 0, 1));
    assert_eq!(buffered, streamed);
}

#[tokio::test]
async fn a_configured_limit_is_both_the_default_and_the_cap_and_the_schema_names_it() {
    let h = Harness::with_policy();
    let config = ReadConfig {
        limit: NonZeroUsize::new(3).expect("3"),
        max_line_chars: NonZeroUsize::new(4).expect("4"),
        ..ReadConfig::default()
    };
    let tools = Toolset::builder(h.fs.as_ref()).read_config(config).build();
    let read = tools.get("read").expect("read");
    assert_eq!(
        read.schema()["properties"]["limit"]["description"],
        "Maximum number of lines to return. Defaults to 3."
    );
    h.put("f.txt", "abcdef\n2\n3\n4\n");
    let r = read
        .execute(&json!({"file_path": "f.txt"}), &h.exec())
        .await;
    assert_eq!(
        h.redact(&text(&r)),
        "<path>[TMP]/f.txt</path>\n<type>file</type>\n<content>\n1: abcd... (line truncated to 4 chars)\n2: 2\n3: 3\n\n(Showing lines 1-3 of 4. Use offset=4 to continue.)\n</content>"
    );
    let r = read
        .execute(&json!({"file_path": "f.txt", "limit": 4}), &h.exec())
        .await;
    assert_eq!(message(&r), "limit must be less than or equal to 3");
}

#[tokio::test]
async fn relative_paths_resolve_against_the_session_cwd_and_dotdot_against_the_physical_cwd() {
    let h = Harness::with_policy();
    h.put("real/sub/x.txt", "in sub\n");
    h.put("real/y.txt", "physical parent\n");
    h.put("y.txt", "lexical parent\n");
    std::os::unix::fs::symlink(h.path("real/sub"), h.path("link")).expect("symlink");
    let exec = h.exec().with_cwd(h.display("link"));
    // Ordinary spelling is kept.
    let r = h
        .call_with("read", json!({"file_path": "x.txt"}), &exec)
        .await;
    assert!(
        h.redact(&text(&r))
            .starts_with("<path>[TMP]/link/x.txt</path>")
    );
    // `..` is interpreted against the physical cwd (real/sub → real).
    let r = h
        .call_with("read", json!({"file_path": "../y.txt"}), &exec)
        .await;
    let t = h.redact(&text(&r));
    assert!(t.contains("1: physical parent"), "{t}");
    assert!(t.starts_with("<path>[TMP]/real/y.txt</path>"), "{t}");
}

#[tokio::test]
async fn works_without_the_policy() {
    let h = Harness::bare();
    h.put("a.txt", "bare\n");
    let r = h.call("read", json!({"file_path": "a.txt"})).await;
    assert!(text(&r).contains("1: bare"));
    let r = h.call("read", json!({"file_path": "nope.txt"})).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
}
