//! The registry against the real local provider: records read back from disk, spellings that
//! collapse, refusals that leave the file as it was, and races between a read and a write.

mod support;

use seam::{CancelPoint, Signal};
use seam_workspace::WorkspaceErrorCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use support::{fixture, mkdir, on_disk, runtime, s};

#[test]
fn an_added_workspace_is_on_disk_exactly_as_documented() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let added = runtime()
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    assert!(added.created);
    let w = &added.workspace;
    assert!(w.id.starts_with("ws-") && w.id.len() == 19, "{}", w.id);
    assert_eq!(w.root, project);
    assert_eq!(w.title, "project");
    let expected = format!(
        "{{\n  \"format\": 1,\n  \"workspaces\": [\n    {{\n      \"id\": \"{}\",\n      \"root\": \"{}\",\n      \"title\": \"project\",\n      \"created_at_ms\": 1000,\n      \"updated_at_ms\": 1000\n    }}\n  ]\n}}\n",
        w.id, project
    );
    assert_eq!(
        std::fs::read_to_string(&f.file).expect("read back"),
        expected
    );
    // A new registry object (another process, later) sees the same record.
    let again = support::registry_at(&f.root, &f.file);
    let listed = runtime()
        .block_on(again.list(&Signal::none()))
        .expect("list");
    assert_eq!(listed, vec![w.clone()]);
}

#[test]
fn a_symlinked_and_a_dotdot_spelling_of_one_root_are_one_workspace() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    mkdir(&f.root.join("other"));
    std::os::unix::fs::symlink(&project, f.root.join("alias")).expect("symlink");
    let rt = runtime();
    let first = rt
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    for spelling in [
        s(&f.root.join("alias")),
        format!("{}/other/../project", s(&f.root)),
        format!("{}/project/", s(&f.root)),
        format!("{}/./project", s(&f.root)),
    ] {
        let again = rt
            .block_on(f.registry.add(&spelling, None, &Signal::none()))
            .expect(&spelling);
        assert!(!again.created, "{spelling} made a second record");
        assert_eq!(again.workspace, first.workspace, "{spelling}");
        let found = rt
            .block_on(f.registry.lookup(&spelling, &Signal::none()))
            .expect("lookup by path");
        assert_eq!(found.id, first.workspace.id);
    }
    let records = on_disk(&f.file)["workspaces"]
        .as_array()
        .expect("array")
        .len();
    assert_eq!(records, 1);
}

#[test]
fn a_title_renames_the_existing_record_and_moves_its_update_time_only() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let rt = runtime();
    let first = rt
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    f.clock.set(5_000);
    let renamed = rt
        .block_on(
            f.registry
                .add(&project, Some("The Project"), &Signal::none()),
        )
        .expect("rename");
    assert!(!renamed.created);
    assert_eq!(renamed.workspace.id, first.workspace.id);
    let disk = &on_disk(&f.file)["workspaces"][0];
    assert_eq!(disk["title"], "The Project");
    assert_eq!(disk["created_at_ms"], 1000);
    assert_eq!(disk["updated_at_ms"], 5000);
}

#[test]
fn adding_what_is_already_there_writes_nothing() {
    use std::os::unix::fs::MetadataExt;
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let rt = runtime();
    rt.block_on(f.registry.add(&project, Some("P"), &Signal::none()))
        .expect("add");
    let before = std::fs::metadata(&f.file).expect("stat");
    f.clock.set(9_000);
    // The same root, without a title and with the title it already has: no change, no write
    // (a publication would put a new inode at the name).
    for title in [None, Some("P")] {
        let again = rt
            .block_on(f.registry.add(&project, title, &Signal::none()))
            .expect("add again");
        assert!(!again.created && !again.renamed, "{title:?}");
    }
    let after = std::fs::metadata(&f.file).expect("stat");
    assert_eq!(after.ino(), before.ino(), "the registry was rewritten");
    assert_eq!(on_disk(&f.file)["workspaces"][0]["updated_at_ms"], 1000);
}

#[test]
fn roots_that_are_relative_missing_or_files_are_refused_and_nothing_is_written() {
    let f = fixture();
    std::fs::write(f.root.join("plain.txt"), b"x").expect("file");
    let rt = runtime();
    for (root, says) in [
        ("project".to_string(), "not an absolute path"),
        (s(&f.root.join("missing")), "no such directory"),
        (s(&f.root.join("plain.txt")), "not a directory"),
    ] {
        let err = rt
            .block_on(f.registry.add(&root, None, &Signal::none()))
            .expect_err(&root);
        assert_eq!(err.code(), WorkspaceErrorCode::InvalidRoot, "{err}");
        assert!(
            err.message().contains(says) && err.message().contains(&root),
            "{err}"
        );
    }
    assert!(!f.file.exists(), "a refused add wrote the registry");
}

#[test]
fn remove_by_id_or_by_path_keeps_the_directory_and_unknown_names_are_not_found() {
    let f = fixture();
    let a = mkdir(&f.root.join("a"));
    let b = mkdir(&f.root.join("b"));
    let rt = runtime();
    let wa = rt
        .block_on(f.registry.add(&a, None, &Signal::none()))
        .expect("add a")
        .workspace;
    let wb = rt
        .block_on(f.registry.add(&b, None, &Signal::none()))
        .expect("add b")
        .workspace;
    let removed = rt
        .block_on(f.registry.remove(&wa.id, &Signal::none()))
        .expect("remove by id");
    assert_eq!(removed, wa);
    let removed = rt
        .block_on(f.registry.remove(&format!("{a}/../b"), &Signal::none()))
        .expect("remove by a path");
    assert_eq!(removed, wb);
    assert!(f.root.join("a").is_dir() && f.root.join("b").is_dir());
    assert_eq!(on_disk(&f.file)["workspaces"], serde_json::json!([]));
    for name in [wa.id.as_str(), "ws-0000000000000000", a.as_str()] {
        let err = rt
            .block_on(f.registry.remove(name, &Signal::none()))
            .expect_err(name);
        assert_eq!(err.code(), WorkspaceErrorCode::NotFound, "{err}");
        let err = rt
            .block_on(f.registry.lookup(name, &Signal::none()))
            .expect_err(name);
        assert_eq!(err.code(), WorkspaceErrorCode::NotFound, "{err}");
    }
}

#[test]
fn a_record_whose_directory_is_gone_is_removed_by_its_recorded_root() {
    let f = fixture();
    let gone = mkdir(&f.root.join("gone"));
    let rt = runtime();
    rt.block_on(f.registry.add(&gone, None, &Signal::none()))
        .expect("add");
    std::fs::remove_dir(&gone).expect("rmdir");
    rt.block_on(f.registry.remove(&gone, &Signal::none()))
        .expect("removed by its recorded spelling");
    assert_eq!(on_disk(&f.file)["workspaces"], serde_json::json!([]));
}

/// Writes `bytes` as the registry file, then checks that listing and adding both fail with
/// `code`, naming the file, and leave the bytes as they were.
fn refuses(bytes: &[u8], code: WorkspaceErrorCode) {
    let f = fixture();
    std::fs::create_dir_all(f.file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&f.file, bytes).expect("seed the file");
    let project = mkdir(&f.root.join("project"));
    let rt = runtime();
    let listed = rt
        .block_on(f.registry.list(&Signal::none()))
        .expect_err("list");
    let added = rt
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect_err("add");
    for err in [listed, added] {
        assert_eq!(err.code(), code, "{err}");
        assert!(err.message().contains(&s(&f.file)), "{err}");
        assert!(err.message().contains("nothing was changed"), "{err}");
    }
    assert_eq!(std::fs::read(&f.file).expect("read back"), bytes);
}

#[test]
fn a_file_that_is_not_json_is_corrupt_never_reset() {
    refuses(
        b"{\"format\": 1, \"workspaces\": [",
        WorkspaceErrorCode::RegistryCorrupt,
    );
}

#[test]
fn a_file_that_is_not_text_is_corrupt_never_reset() {
    refuses(b"\xff\xfe\x00garbage", WorkspaceErrorCode::RegistryCorrupt);
}

#[test]
fn an_empty_file_is_corrupt_never_reset() {
    refuses(b"", WorkspaceErrorCode::RegistryCorrupt);
}

#[test]
fn a_record_with_a_field_this_format_lacks_is_corrupt() {
    refuses(
        br#"{"format":1,"workspaces":[{"id":"ws-1","root":"/a","title":"a","created_at_ms":0,"updated_at_ms":0,"colour":"red"}]}"#,
        WorkspaceErrorCode::RegistryCorrupt,
    );
}

#[test]
fn a_newer_format_is_refused_by_name_never_rewritten() {
    refuses(
        br#"{"format":2,"workspaces":[],"shared_with":["x"]}"#,
        WorkspaceErrorCode::RegistryFormat,
    );
}

#[test]
fn a_directory_where_the_file_should_be_is_corrupt() {
    let f = fixture();
    std::fs::create_dir_all(&f.file).expect("a directory in the file's place");
    let err = runtime()
        .block_on(f.registry.list(&Signal::none()))
        .expect_err("list");
    assert_eq!(err.code(), WorkspaceErrorCode::RegistryCorrupt, "{err}");
}

#[test]
fn a_registry_under_a_regular_file_is_a_store_failure_with_the_fs_code() {
    let f = fixture();
    std::fs::write(f.root.join("blocker"), b"x").expect("file");
    let registry = support::registry_at(&f.root, &f.root.join("blocker").join("r.json"));
    let project = mkdir(&f.root.join("project"));
    let err = runtime()
        .block_on(registry.add(&project, None, &Signal::none()))
        .expect_err("add");
    assert_eq!(err.code(), WorkspaceErrorCode::Store, "{err}");
    let fs = err.fs_error().expect("the filesystem error underneath");
    assert_eq!(fs.code(), seam::FsErrorCode::NotFound, "{fs}");
    assert_eq!(std::fs::read(f.root.join("blocker")).expect("read"), b"x");
}

/// The race between a save's read and its write, made deterministic on the in-memory provider
/// (which checks the guard again at publication, after the staged checkpoint): a store with
/// `ours`, `theirs` and `seeded` directories, a registry in it holding `seeded`, and a signal
/// whose probe, once, at the staged checkpoint of the registry's write, replaces the file with
/// a registry holding only `theirs` — another process saving between our read and our
/// publication.
struct Race {
    registry: seam_workspace::Registry,
    signal: Signal,
}

const FILE: &str = "/state/workspaces.json";

fn race() -> Race {
    let store = seam_memory::MemoryStore::new();
    let world = store.world();
    for d in ["/ws/ours", "/ws/theirs", "/ws/seeded"] {
        world.create_dir_all(d).expect("mkdir");
    }
    let fs = Arc::new(seam_memory::MemoryFileSystem::new(
        store,
        seam_memory::MemoryConfig::new("/"),
    ));
    let registry = seam_workspace::Registry::new(fs, FILE);
    runtime()
        .block_on(registry.add("/ws/seeded", None, &Signal::none()))
        .expect("the file exists before the race");
    let fired = Arc::new(AtomicBool::new(false));
    let signal = Signal::with_probe(move |cp| {
        if cp.point == CancelPoint::Staged && !fired.swap(true, Ordering::SeqCst) {
            let text = "{\"format\":1,\"workspaces\":[{\"id\":\"ws-00000000000000aa\",\"root\":\"/ws/theirs\",\"title\":\"theirs\",\"created_at_ms\":7,\"updated_at_ms\":7}]}\n";
            world
                .rewrite_file(FILE, text.as_bytes().to_vec())
                .expect("the competitor saves");
        }
        false
    });
    Race { registry, signal }
}

fn roots(registry: &seam_workspace::Registry) -> Vec<String> {
    runtime()
        .block_on(registry.list(&Signal::none()))
        .expect("list")
        .into_iter()
        .map(|w| w.root)
        .collect()
}

#[test]
fn a_save_that_lands_between_our_read_and_our_write_is_kept_and_ours_is_added() {
    let r = race();
    let added = runtime()
        .block_on(r.registry.add("/ws/ours", None, &r.signal))
        .expect("add after a lost round");
    assert!(added.created);
    // The competitor's whole file won that round (it dropped `seeded`); ours was re-applied to
    // what won, not to what we had read.
    assert_eq!(roots(&r.registry), ["/ws/theirs", "/ws/ours"]);
}

#[test]
fn a_registry_that_changes_under_every_attempt_gives_up_as_contended_and_keeps_the_winner() {
    let r = race();
    let registry = r.registry.clone().with_max_attempts(1);
    let err = runtime()
        .block_on(registry.add("/ws/ours", None, &r.signal))
        .expect_err("one attempt, lost");
    assert_eq!(err.code(), WorkspaceErrorCode::Contended, "{err}");
    assert!(err.message().contains(FILE), "{err}");
    assert_eq!(roots(&r.registry), ["/ws/theirs"]);
}

#[test]
fn removing_a_record_someone_else_removed_first_is_not_found_and_keeps_their_file() {
    let r = race();
    let err = runtime()
        .block_on(r.registry.remove("/ws/seeded", &r.signal))
        .expect_err("gone after the lost round");
    assert_eq!(err.code(), WorkspaceErrorCode::NotFound, "{err}");
    assert!(err.message().contains("removed by someone else"), "{err}");
    assert_eq!(roots(&r.registry), ["/ws/theirs"]);
}

/// Clears the immutable attribute it set, whatever happens to the test.
struct Immutable(std::path::PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn a_save_the_storage_refuses_is_a_store_failure_and_the_old_file_stays() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let other = mkdir(&f.root.join("other"));
    let rt = runtime();
    rt.block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    let before = std::fs::read(&f.file).expect("read");
    // An immutable directory takes no new entry, not even from root: the save cannot stage.
    let dir = f.file.parent().expect("parent").to_path_buf();
    let set = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&dir)
        .status();
    if !set.is_ok_and(|s| s.success()) {
        eprintln!(
            "skipped: chattr +i is not available here (needs root and a filesystem that has it)"
        );
        return;
    }
    let _guard = Immutable(dir);
    let err = rt
        .block_on(f.registry.add(&other, None, &Signal::none()))
        .expect_err("the storage refuses the save");
    assert_eq!(err.code(), WorkspaceErrorCode::Store, "{err}");
    assert!(err.message().contains("save the registry"), "{err}");
    assert!(err.fs_error().is_some(), "{err}");
    assert_eq!(std::fs::read(&f.file).expect("read back"), before);
}
