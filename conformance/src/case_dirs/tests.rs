//! The run directory, its spread, and case directories kept, emptied and handed out again.

use super::Registry;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_case_never_dropped_is_removed_at_the_end_and_a_dropped_one_is_not_listed() {
    static REGISTRY: Registry = Registry::new();
    let dropped = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let dropped_path = dropped.path().to_path_buf();
    let run = REGISTRY.run_dir().expect("a run directory");
    let cases = run.join(super::CASES_IN);
    assert_eq!(dropped_path.parent(), Some(cases.as_path()));
    assert_topdir_on_ext4(&cases);
    for dir in [&run, &cases] {
        let mode = std::fs::metadata(dir)
            .expect("run dir")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o711, "others pass through, never list");
    }
    // The same directory, spelled through the run directory's link.
    let aliased = dropped
        .through_link(&dropped_path.join("root"))
        .expect("in the case");
    assert_eq!(
        aliased,
        run.join("tmp")
            .join(dropped_path.file_name().expect("a name"))
            .join("root")
    );
    let mode = std::fs::metadata(&dropped_path)
        .expect("case dir")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o711,
        "others pass through to its root, never list it"
    );
    // Its root is there, empty, whatever the umask.
    assert_eq!(dropped.root(), dropped_path.join("root"));
    assert_eq!(std::fs::read_dir(dropped.root()).expect("root").count(), 0);
    let mode = std::fs::metadata(dropped.root())
        .expect("root")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(
        std::fs::canonicalize(&aliased).expect("through the link"),
        std::fs::canonicalize(dropped_path.join("root")).expect("the directory")
    );
    assert_eq!(dropped.through_link(&run), None, "not in the case");
    let beside = REGISTRY.make("seam-case-dirs-test-", false).expect("a dir");
    assert_eq!(beside.path().parent(), Some(run.as_path()));
    assert_eq!(beside.through_link(beside.path()), None, "not in private/");
    drop(beside);
    drop(dropped);
    assert!(!dropped_path.exists());
    assert!(!run.exists(), "the run directory goes with its last case");
    let abandoned = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let path = abandoned.path().to_path_buf();
    std::fs::create_dir_all(path.join("d/e")).expect("content");
    std::fs::write(path.join("d/e/f"), b"x").expect("content");
    // What a thread given up on does with its case: never drops it.
    std::mem::forget(abandoned);
    assert!(path.exists());
    let run = REGISTRY.run_dir().expect("a run directory");
    assert_eq!(REGISTRY.remove_all(), 1);
    assert!(!path.exists(), "{} is left", path.display());
    assert!(!run.exists(), "{} is left", run.display());
    assert_eq!(REGISTRY.remove_all(), 0);
}

#[test]
fn an_interrupted_command_loses_its_run_directory_held_or_not_and_makes_no_more() {
    static REGISTRY: Registry = Registry::new();
    let _held = REGISTRY.hold();
    let running = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let path = running.path().to_path_buf();
    std::fs::write(path.join("f"), b"x").expect("content");
    let run = REGISTRY.run_dir().expect("a run directory");
    REGISTRY.close();
    // Closed first (while the run's processes are stopped): nothing removed yet, nothing
    // new made.
    assert!(path.exists());
    assert_eq!(
        REGISTRY
            .make("seam-case-dirs-test-", true)
            .map(|_| ())
            .map_err(|e| e.kind()),
        Err(std::io::ErrorKind::Interrupted)
    );
    assert_eq!(REGISTRY.remove_everything(), 1);
    assert!(!run.exists(), "{} is left", run.display());
    let refused = REGISTRY.make("seam-case-dirs-test-", true).map(|_| ());
    assert_eq!(
        refused.map_err(|e| e.kind()),
        Err(std::io::ErrorKind::Interrupted)
    );
    assert!(REGISTRY.run_dir().is_none());
    // The case still running ends later: its drop finds nothing to remove.
    drop(running);
    assert!(!path.exists());
}

/// The run directory is spread (on ext2/3/4; elsewhere there is no flag to look at).
fn assert_topdir_on_ext4(dir: &std::path::Path) {
    use rustix::fs::{IFlags, Mode, OFlags, ioctl_getflags, open, statfs};
    if statfs(dir).map(|fs| fs.f_type) != Ok(0xEF53) {
        return;
    }
    let fd = open(dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).expect("open");
    let flags = ioctl_getflags(&fd).expect("flags");
    assert!(
        flags.contains(IFlags::TOPDIR),
        "{} is not spread",
        dir.display()
    );
}

/// On ext2/3/4 (this machine's TMPDIR) the flag is set; elsewhere `spread` does nothing.
#[test]
fn spread_marks_a_directory_a_top_of_a_hierarchy_on_ext4() {
    use rustix::fs::{IFlags, Mode, OFlags, ioctl_getflags, open, statfs};
    let dir = tempfile::tempdir().expect("tempdir");
    let Ok(fs) = statfs(dir.path()) else {
        return;
    };
    // EXT2_SUPER_MAGIC, shared by ext2, ext3 and ext4.
    if fs.f_type != 0xEF53 {
        eprintln!("TMPDIR is not ext2/3/4: nothing to check");
        return;
    }
    let flags = || {
        let fd = open(
            dir.path(),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .expect("open");
        ioctl_getflags(&fd).expect("flags")
    };
    assert!(!flags().contains(IFlags::TOPDIR));
    super::spread(dir.path());
    assert!(flags().contains(IFlags::TOPDIR));
    // Twice is the same.
    super::spread(dir.path());
    assert!(flags().contains(IFlags::TOPDIR));
}

#[test]
fn a_case_directory_is_emptied_and_used_again_then_removed_after_its_uses() {
    use std::os::unix::fs::MetadataExt;
    static REGISTRY: Registry = Registry::busy_after(std::time::Duration::from_secs(3600));
    let _held = REGISTRY.hold();
    let first = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let path = first.path().to_path_buf();
    let root = first.root();
    std::fs::create_dir_all(path.join("d/e")).expect("content");
    std::fs::write(path.join("d/e/f"), b"x").expect("content");
    std::os::unix::fs::symlink("/", path.join("l")).expect("a link");
    std::fs::create_dir_all(root.join("r/s")).expect("content");
    std::fs::write(root.join("r/s/f"), b"x").expect("content");
    std::os::unix::fs::symlink("/", root.join("l")).expect("a link");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o500)).expect("mode");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).expect("mode");
    // Held across the case's end: its inode cannot be freed, so none can be given back with
    // its number, and a root removed and made again shows as another inode.
    let held = hold(&root);
    drop(first);
    assert!(path.is_dir(), "kept");
    // Only for a case asking for the same kind of directory.
    let other = REGISTRY.make("seam-case-dirs-other-", true).expect("a dir");
    assert_ne!(other.path(), path);
    let again = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    assert_eq!(again.path(), path, "the kept one");
    let names: Vec<_> = std::fs::read_dir(&path)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["root"], "empty but for its root");
    assert_eq!(
        std::fs::read_dir(again.root()).expect("list").count(),
        0,
        "an empty root"
    );
    let kept_root = std::fs::metadata(again.root()).expect("root");
    assert!(is_the_root(&held, &again), "the same root");
    assert_eq!(
        kept_root.permissions().mode() & 0o777,
        0o755,
        "its mode as a fresh one's"
    );
    let mode = std::fs::metadata(&path).expect("dir").permissions().mode();
    assert_eq!(mode & 0o777, 0o711, "its mode again, as a fresh one's");
    // A case that put something else where its root was: the next case has a root again.
    std::fs::remove_dir(again.root()).expect("root gone");
    std::os::unix::fs::symlink("/", again.root()).expect("a link for a root");
    drop(again);
    let relinked = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    assert_eq!(relinked.path(), path, "kept");
    let root = std::fs::symlink_metadata(relinked.root()).expect("root");
    assert!(root.is_dir(), "a directory again, not the link");
    // A root with what a fresh one has not — another owner, another group, an extended
    // attribute (an ACL is one, inherited by what the next case makes) — is not handed to the
    // next case: removed, made again. (Where this process may not give it them, nothing to see.)
    let nobody = 65_534;
    type Taint = fn(&std::path::Path) -> std::io::Result<()>;
    let taints: [(&str, Taint); 3] = [
        ("an owner", |r| {
            std::os::unix::fs::chown(r, Some(65_534), None)
        }),
        ("a group", |r| {
            std::os::unix::fs::chown(r, None, Some(65_534))
        }),
        ("an extended attribute", |r| {
            use rustix::fs::{XattrFlags, lsetxattr};
            Ok(lsetxattr(r, "user.seam-test", b"x", XattrFlags::empty())?)
        }),
    ];
    let mut dir = relinked;
    for (what, taint) in taints {
        let held = hold(&dir.root());
        let tainted = taint(&dir.root());
        drop(dir);
        dir = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_eq!(dir.path(), path, "kept");
        if tainted.is_ok() {
            assert!(!is_the_root(&held, &dir), "a root with {what} was kept");
            let root = std::fs::metadata(dir.root()).expect("root");
            assert_ne!((root.uid(), root.gid()), (nobody, nobody));
            let xattrs = rustix::fs::llistxattr_query(dir.root()).unwrap_or(0);
            assert_eq!(xattrs, 0, "{what}: the new root has an extended attribute");
        }
    }
    drop(dir);
    // Written into after its case ended: not handed to another case, and removed.
    std::fs::write(path.join("late"), b"x").expect("a late write");
    let fresh = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    assert_ne!(fresh.path(), path);
    assert!(!path.exists(), "the littered one is removed");
    let path = fresh.path().to_path_buf();
    drop(fresh);
    // Used USES times, a directory is removed rather than kept.
    for _ in 1..super::USES {
        let dir = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_eq!(dir.path(), path, "one directory serves every case");
    }
    assert!(!path.exists(), "removed after its last use");
    // Once a call was given up, nothing is kept, and what was kept goes.
    let kept = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let kept_path = kept.path().to_path_buf();
    drop(kept);
    assert!(kept_path.exists(), "kept");
    REGISTRY.with(|s| s.given_up = true);
    let after = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    assert_ne!(after.path(), kept_path);
    assert!(
        !kept_path.exists(),
        "a kept directory outlived a call given up"
    );
    let after_path = after.path().to_path_buf();
    drop(after);
    assert!(!after_path.exists(), "kept after a call was given up");
    REGISTRY.with(|s| s.given_up = false);
    // The suite's other directories are never kept (a mount in one is unmounted by path).
    let plain = REGISTRY.make("seam-case-dirs-test-", false).expect("a dir");
    let path = plain.path().to_path_buf();
    drop(plain);
    assert!(!path.exists(), "{} is kept", path.display());
    drop(other);
}

#[test]
fn a_directory_held_longer_than_the_busy_limit_is_removed_not_kept() {
    static REGISTRY: Registry = Registry::busy_after(std::time::Duration::from_millis(100));
    let _held = REGISTRY.hold();
    let quick = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let quick_path = quick.path().to_path_buf();
    drop(quick);
    // (A machine so busy that make and drop took 100 ms would fail this line, not the next.)
    assert!(quick_path.exists(), "a short case's directory is kept");
    let busy = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    assert_eq!(busy.path(), quick_path, "the kept one");
    std::thread::sleep(std::time::Duration::from_millis(150));
    drop(busy);
    assert!(!quick_path.exists(), "a busy case's directory was kept");
}

#[test]
fn a_hold_keeps_one_run_directory_for_cases_made_one_after_another() {
    static REGISTRY: Registry = Registry::new();
    let hold = REGISTRY.hold();
    let first = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    let run = REGISTRY.run_dir().expect("a run directory");
    drop(first);
    assert!(run.exists(), "held");
    let second = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
    assert_eq!(
        second.path().parent(),
        Some(run.join(super::CASES_IN).as_path()),
        "the same one"
    );
    drop(second);
    drop(hold);
    assert!(!run.exists(), "{} is left", run.display());
    assert_eq!(REGISTRY.run_dir(), None);
}

/// A descriptor of `dir` (for its place alone) that keeps its inode from being freed.
fn hold(dir: &std::path::Path) -> rustix::fd::OwnedFd {
    use rustix::fs::{Mode, OFlags, open};
    open(dir, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).expect("held")
}

/// Whether the root of `case` is the directory `held` (still linked, the same inode).
fn is_the_root(held: &rustix::fd::OwnedFd, case: &super::CaseDir) -> bool {
    use std::os::unix::fs::MetadataExt;
    let then = rustix::fs::fstat(held).expect("fstat");
    let now = std::fs::metadata(case.root()).expect("root");
    then.st_nlink > 0 && (now.dev(), now.ino()) == (then.st_dev as u64, then.st_ino as u64)
}
