//! The examples of seed-source.md §3 (and our deliberate departures), walked through the model.

use seam::{CancelPoint, FsErrorCode, FsKind, FsPathKind, WriteOperation};
use seam_model::{
    Competitor, Guard, Interference, Model, ModelConfig, SnapEntry, Version, WorldEffect, WorldOp,
};

const ROOT: &str = "/r";

fn model() -> Model {
    Model::new(ModelConfig::new(ROOT))
}

fn world(m: &mut Model, op: WorldOp) -> WorldEffect {
    m.world(&op).expect("world op applies")
}

fn file(m: &mut Model, path: &str, bytes: &[u8]) {
    world(
        m,
        WorldOp::Write {
            path: path.into(),
            bytes: bytes.to_vec().into(),
            mode: 0o644,
        },
    );
}

fn link(m: &mut Model, path: &str, target: &str) {
    world(
        m,
        WorldOp::Symlink {
            path: path.into(),
            target: target.into(),
        },
    );
}

fn code<T: std::fmt::Debug>(r: Result<T, seam_model::ModelError>) -> FsErrorCode {
    r.expect_err("expected a failure").code
}

fn bytes_at(m: &Model, rel: &str) -> Vec<u8> {
    match m.snapshot().get(rel) {
        Some(SnapEntry::File { bytes, .. }) => bytes.to_vec(),
        other => panic!("{rel} is not a file: {other:?}"),
    }
}

fn none() -> Interference {
    Interference::None
}

#[test]
fn resolve_relative_absolute_and_aliases() {
    let mut m = model();
    file(&mut m, "d/a", b"x");
    link(&mut m, "l", "d");
    let rel = m.resolve("d/a").expect("resolves");
    let abs = m.resolve("/r/d/a").expect("resolves");
    let via = m.resolve("l/a").expect("resolves");
    assert_eq!(rel, abs);
    assert_eq!(via.key, rel.key);
    assert_eq!(via.display, "/r/l/a");
    assert_eq!(m.resolve("l/../d/a").expect("lexical").display, "/r/d/a");
}

#[test]
fn missing_keys_are_stable_across_creation_even_under_a_linked_ancestor() {
    let mut m = model();
    world(&mut m, WorldOp::Mkdir { path: "d".into() });
    link(&mut m, "l", "d");
    let before = m.resolve("l/new/deeper/f").expect("resolves");
    assert_eq!(before.key.0, vec!["d", "new", "deeper", "f"]);
    m.write_text("l/new/deeper/f", "x", None, &none())
        .outcome
        .expect("creates parents");
    assert_eq!(
        m.resolve("l/new/deeper/f").expect("resolves").key,
        before.key
    );
    assert_eq!(bytes_at(&m, "d/new/deeper/f"), b"x");
}

#[test]
fn blank_file_parent_and_loop_resolution_errors() {
    let mut m = model();
    file(&mut m, "f", b"x");
    link(&mut m, "l", "m");
    link(&mut m, "m", "l");
    let e = m.resolve("  ").expect_err("blank");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            FsErrorCode::NotFound,
            "file_path must be a non-empty string"
        )
    );
    let e = m.resolve("f/x").expect_err("file parent");
    assert_eq!(e.code, FsErrorCode::NotFound);
    assert_eq!(
        e.message,
        "cannot resolve \"/r/f/x\": a parent path segment is not a directory"
    );
    assert_eq!(code(m.resolve("l")), FsErrorCode::IoError);
    assert_eq!(code(m.resolve("a\0b")), FsErrorCode::NotFound);
}

#[test]
fn stat_sizes_kinds_and_the_restored_mtime_rewrite() {
    let mut m = model();
    file(&mut m, "a", b"hello");
    world(&mut m, WorldOp::Mkdir { path: "d".into() });
    let info = m.stat("a").expect("ok").expect("present");
    assert_eq!((info.kind, info.size), (FsKind::File, Some(5)));
    let dir = m.stat("d").expect("ok").expect("present");
    assert_eq!((dir.kind, dir.size), (FsKind::Directory, None));
    assert_eq!(m.stat("zz").expect("ok"), None);
    world(
        &mut m,
        WorldOp::Scribble {
            path: "a".into(),
            restore_mtime: true,
        },
    );
    let after = m.stat("a").expect("ok").expect("present");
    assert_ne!(after.version, info.version);
    assert_eq!(after.size, Some(5));
}

#[test]
fn lstat_does_not_follow_the_final_link() {
    let mut m = model();
    file(&mut m, "a", b"hello");
    link(&mut m, "l", "a");
    link(&mut m, "dl", "nowhere");
    let l = m.lstat("l").expect("ok").expect("present");
    assert_eq!((l.kind, l.size), (FsPathKind::Symlink, Some(1)));
    assert_eq!(
        m.lstat("dl").expect("ok").map(|i| i.kind),
        Some(FsPathKind::Symlink)
    );
    assert_eq!(m.stat("dl").expect("ok"), None);
    assert_eq!(m.lstat("a/x").expect("through a file is absent"), None);
    assert_eq!(code(m.lstat("")), FsErrorCode::NotFound);
}

#[test]
fn reads_reject_missing_directories_binary_and_invalid_text() {
    let mut m = model();
    file(&mut m, "b", b"h\x00i");
    file(&mut m, "u", b"h\xFFi");
    file(&mut m, "t", b"\xEF\xBB\xBFhi\r\n");
    world(&mut m, WorldOp::Mkdir { path: "d".into() });
    assert_eq!(code(m.read_text("zz")), FsErrorCode::NotFound);
    assert_eq!(code(m.read_text("d")), FsErrorCode::NotRegularFile);
    let e = m.read_text("b").expect_err("binary");
    assert_eq!(e.message, "cannot read \"/r/b\": binary file");
    assert_eq!(
        m.read_text("u").expect_err("invalid").message,
        "cannot read \"/r/u\": invalid UTF-8 text"
    );
    assert_eq!(m.read_text("t").expect("text"), "hi\r\n");
}

#[test]
fn read_bytes_cap_is_inclusive() {
    let mut m = model();
    file(&mut m, "a", b"abcd");
    assert_eq!(m.read_bytes("a", 4).expect("at cap"), b"abcd");
    let e = m.read_bytes("a", 3).expect_err("over cap");
    assert_eq!(e.code, FsErrorCode::TooLarge);
    assert_eq!(
        e.message,
        "cannot read \"/r/a\": 4 bytes exceeds the 3-byte limit"
    );
}

#[test]
fn listing_is_byte_ordered_and_marks_broken_links() {
    let mut m = model();
    file(&mut m, "zeta.md", b"z");
    file(&mut m, "alpha.md", b"a");
    file(&mut m, "B.md", b"b");
    world(
        &mut m,
        WorldOp::Mkdir {
            path: "dir-skill".into(),
        },
    );
    link(&mut m, "broken-link", "nowhere");
    let names: Vec<String> = m
        .list_dir(".")
        .expect("lists")
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(
        names,
        ["B.md", "alpha.md", "broken-link", "dir-skill", "zeta.md"]
    );
    let entries = m.list_dir(".").expect("lists");
    let broken = &entries[2];
    assert_eq!(
        (broken.kind, broken.version, broken.size),
        (FsKind::Other, None, None)
    );
    assert_eq!(broken.key.0, vec!["broken-link"]);
    assert_eq!(entries[3].size, None);
    assert_eq!(code(m.list_dir("zz")), FsErrorCode::NotFound);
    assert_eq!(code(m.list_dir("zeta.md")), FsErrorCode::NotDirectory);
}

#[test]
fn the_write_guard_matrix() {
    let mut m = model();
    let created = m
        .write_text("a", "one", Some(Guard::CreateIfAbsent), &none())
        .outcome
        .expect("creates");
    assert_eq!(
        (created.operation, created.before.clone()),
        (WriteOperation::Create, None)
    );
    assert_eq!(
        m.snapshot().get("a"),
        Some(&SnapEntry::File {
            bytes: b"one".to_vec().into(),
            mode: Some(0o600)
        })
    );
    let e = m
        .write_text("a", "two", Some(Guard::CreateIfAbsent), &none())
        .outcome
        .expect_err("exists");
    assert_eq!(e.code, FsErrorCode::NotObserved);
    assert_eq!(
        e.message,
        "cannot overwrite existing \"/r/a\" without reading it first"
    );
    assert_eq!(bytes_at(&m, "a"), b"one");
    let stale = Guard::ReplaceIfVersion(Version::Object { n: 0 });
    assert_eq!(
        code(m.write_text("a", "two", Some(stale), &none()).outcome),
        FsErrorCode::StaleVersion
    );
    let ok = m
        .write_text(
            "a",
            "two\r\n",
            Some(Guard::ReplaceIfVersion(created.version)),
            &none(),
        )
        .outcome
        .expect("replaces");
    assert_eq!(
        (ok.operation, ok.before.as_deref(), ok.after.as_str()),
        (WriteOperation::Update, Some("one"), "two\n")
    );
    let gone = m
        .write_text(
            "zz",
            "x",
            Some(Guard::ReplaceIfVersion(ok.version)),
            &none(),
        )
        .outcome
        .expect_err("stale");
    assert_eq!(
        gone.message,
        "cannot write \"/r/zz\": file no longer exists"
    );
    assert!(!m.snapshot().contains_key("zz"));
    world(&mut m, WorldOp::Mkdir { path: "d".into() });
    assert_eq!(
        code(m.write_text("d", "x", None, &none()).outcome),
        FsErrorCode::NotRegularFile
    );
    assert_eq!(
        code(
            m.write_text("d", "x", Some(Guard::CreateIfAbsent), &none())
                .outcome
        ),
        FsErrorCode::NotRegularFile
    );
}

#[test]
fn writes_go_through_live_links_and_never_replace_dangling_ones() {
    let mut m = model();
    file(&mut m, "a", b"old");
    world(
        &mut m,
        WorldOp::Chmod {
            path: "a".into(),
            mode: 0o640,
        },
    );
    link(&mut m, "l", "a");
    link(&mut m, "dl", "nowhere");
    m.write_text("l", "new", None, &none())
        .outcome
        .expect("writes through");
    assert_eq!(
        m.snapshot().get("a"),
        Some(&SnapEntry::File {
            bytes: b"new".to_vec().into(),
            mode: Some(0o640)
        })
    );
    assert_eq!(
        m.snapshot().get("l"),
        Some(&SnapEntry::Symlink { target: "a".into() })
    );
    for guard in [None, Some(Guard::CreateIfAbsent)] {
        let e = m
            .write_text("dl", "x", guard, &none())
            .outcome
            .expect_err("dangling");
        assert_eq!(e.code, FsErrorCode::NotRegularFile);
    }
    assert_eq!(
        code(m.write_text("dl/x", "x", None, &none()).outcome),
        FsErrorCode::NotFound
    );
    assert!(!m.snapshot().contains_key("nowhere"));
}

#[test]
fn the_diff_basis_is_gated_on_both_sides() {
    let mut m = Model::new(ModelConfig {
        root: ROOT.into(),
        diff_basis_max_bytes: 8,
        fence: None,
        fence_workspace: String::new(),
    });
    file(&mut m, "a", b"1234567");
    let w = m.write_text("a", "abc", None, &none()).outcome.expect("ok");
    assert_eq!(w.before.as_deref(), Some("1234567"));
    file(&mut m, "a", b"12345678");
    assert_eq!(
        m.write_text("a", "abc", None, &none())
            .outcome
            .expect("ok")
            .before,
        None
    );
    assert_eq!(
        m.write_text("a", "你好吗", None, &none())
            .outcome
            .expect("ok")
            .before,
        None
    );
    file(&mut m, "b", b"x\x00");
    assert_eq!(
        m.write_text("b", "abc", None, &none())
            .outcome
            .expect("ok")
            .before,
        None
    );
}

#[test]
fn edit_ordering_stale_before_matching_and_missing_is_stale() {
    let mut m = model();
    let e = m
        .edit_text("zz", "a", "b", false, None, &none())
        .expect_err("missing");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            FsErrorCode::StaleVersion,
            "cannot edit \"/r/zz\": file changed since it was read"
        )
    );
    file(&mut m, "a", b"a a a");
    let stale = Some(Version::Object { n: 0 });
    assert_eq!(
        code(m.edit_text("a", "nope", "b", false, stale, &none())),
        FsErrorCode::StaleVersion
    );
    let e = m
        .edit_text("a", "a", "b", false, None, &none())
        .expect_err("ambiguous");
    assert_eq!(
        e.message,
        "old_string matched 3 times in \"/r/a\"; provide a more specific old_string or set replace_all to true"
    );
    let (v, before, after) = m
        .edit_text("a", "a", "$&", true, None, &none())
        .expect("all");
    assert_eq!((before.as_str(), after.as_str()), ("a a a", "$& $& $&"));
    assert_eq!(m.stat("a").expect("ok").expect("present").version, v);
    world(&mut m, WorldOp::Mkdir { path: "d".into() });
    assert_eq!(
        code(m.edit_text("d", "a", "b", false, None, &none())),
        FsErrorCode::NotRegularFile
    );
}

#[test]
fn cancellation_leaves_no_trace_before_commit_and_reports_commit_after() {
    let mut m = model();
    file(&mut m, "a", b"one");
    let snap = m.snapshot();
    for point in [CancelPoint::BeforeStage, CancelPoint::Staged] {
        let e = m
            .write_text("x/y/new", "n", None, &Interference::Cancel(point))
            .outcome
            .expect_err("aborted");
        assert_eq!(
            (e.code, e.message.as_str()),
            (FsErrorCode::Aborted, "write aborted")
        );
        let e = m
            .edit_text("a", "one", "two", false, None, &Interference::Cancel(point))
            .expect_err("aborted");
        assert_eq!(e.message, "edit aborted");
        assert_eq!(m.snapshot(), snap);
    }
    m.write_text(
        "a",
        "two",
        None,
        &Interference::Cancel(CancelPoint::Committed),
    )
    .outcome
    .expect("committed");
    assert_eq!(bytes_at(&m, "a"), b"two");
}

#[test]
fn a_competitor_after_the_probe_is_never_replaced_by_a_guarded_create() {
    let mut m = model();
    let r = m.write_text(
        "a",
        "mine",
        Some(Guard::CreateIfAbsent),
        &Interference::Competitor(Competitor::File("theirs".into())),
    );
    assert_eq!(code(r.outcome), FsErrorCode::NotObserved);
    assert!(r.competitor.is_some());
    assert_eq!(bytes_at(&m, "a"), b"theirs");
    let r = m.write_text(
        "b",
        "mine",
        None,
        &Interference::Competitor(Competitor::DanglingLink),
    );
    assert_eq!(code(r.outcome), FsErrorCode::NotRegularFile);
    let r = m.write_text(
        "c",
        "mine",
        None,
        &Interference::Competitor(Competitor::File("theirs".into())),
    );
    // Unguarded, it replaces the competitor as the update it has become (ours: the seed
    // reported a create): the competitor's text is the `before` and its bits are kept.
    let w = r.outcome.expect("unguarded overwrites");
    assert_eq!(
        (w.operation, w.before.as_deref()),
        (WriteOperation::Update, Some("theirs"))
    );
    assert_eq!(bytes_at(&m, "c"), b"mine");
    assert_eq!(
        m.snapshot().get("c"),
        Some(&SnapEntry::File {
            bytes: b"mine".to_vec().into(),
            mode: Some(0o644)
        })
    );
}

#[test]
fn symlink_identity_one_key_one_version_and_stale_through_either_alias() {
    let mut m = model();
    file(&mut m, "a", b"v1");
    link(&mut m, "l", "a");
    let va = m.stat("a").expect("ok").expect("present").version;
    assert_eq!(m.stat("l").expect("ok").expect("present").version, va);
    m.write_text("a", "v2", Some(Guard::ReplaceIfVersion(va)), &none())
        .outcome
        .expect("first wins");
    assert_eq!(
        code(
            m.write_text("l", "v3", Some(Guard::ReplaceIfVersion(va)), &none())
                .outcome
        ),
        FsErrorCode::StaleVersion
    );
}

#[test]
fn directory_versions_separate_entry_changes_from_touches() {
    let mut m = model();
    file(&mut m, "d/a", b"x");
    let v0 = m.stat("d").expect("ok").expect("present").version;
    m.write_text("d/a", "y", None, &none()).outcome.expect("ok");
    let v1 = m.stat("d").expect("ok").expect("present").version;
    let (
        Version::Dir {
            entries: e0,
            touch: t0,
            ..
        },
        Version::Dir {
            entries: e1,
            touch: t1,
            ..
        },
    ) = (v0, v1)
    else {
        panic!("directory versions expected");
    };
    assert_eq!(e0, e1, "replacing a child keeps the entry set");
    assert_ne!(t0, t1, "but touches the directory");
    m.write_text("d/b", "y", None, &none()).outcome.expect("ok");
    let Version::Dir { entries: e2, .. } = m.stat("d").expect("ok").expect("present").version
    else {
        panic!("directory");
    };
    assert_ne!(e1, e2);
}

#[test]
fn a_parent_swapped_for_a_link_after_resolution_is_followed_and_a_dangling_one_refused() {
    let mut m = model();
    world(&mut m, WorldOp::Mkdir { path: "d".into() });
    world(
        &mut m,
        WorldOp::Mkdir {
            path: "d/sub".into(),
        },
    );
    world(&mut m, WorldOp::Mkdir { path: "e".into() });
    let stale = m.resolve("d/sub/x").expect("resolves");
    world(
        &mut m,
        WorldOp::Remove {
            path: "d/sub".into(),
        },
    );
    link(&mut m, "d/sub", "../e");
    let w = m.write_target(&stale, "through\n", None, &none());
    assert!(w.outcome.is_ok(), "{:?}", w.outcome);
    match m.snapshot().get("e/x") {
        Some(SnapEntry::File { bytes, .. }) => assert_eq!(&bytes[..], b"through\n"),
        other => panic!("e/x is {other:?}"),
    }
    assert!(matches!(
        m.snapshot().get("d/sub"),
        Some(SnapEntry::Symlink { .. })
    ));
    // A dangling link on the way is never created through.
    let deeper = m.resolve("d/gone/y").expect("resolves");
    link(&mut m, "d/gone", "nowhere");
    assert_eq!(
        code(m.write_target(&deeper, "x", None, &none()).outcome),
        FsErrorCode::NotFound
    );
    assert!(!m.snapshot().contains_key("d/nowhere"));
}
