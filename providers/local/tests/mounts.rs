//! Faults the storage itself raises: a full filesystem and a read-only one, on small tmpfs mounts
//! this test makes (root only; elsewhere it says it was skipped and why). Every failed mutation
//! must be coded, leave the original file byte for byte as it was, and leave nothing staged
//! beside it. (An unreadable directory is the suite's `permission-denied` property, run as an
//! unprivileged user.)

use seam::{EditRequest, FileSystem, FsErrorCode, ResolveOptions, Signal, WriteIntent};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted for one test, unmounted on drop.
struct Mount {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mount {
    /// A tmpfs of `size` at a fresh directory, or why it cannot be made here.
    fn tmpfs(size: &str) -> Result<Mount, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = std::fs::canonicalize(dir.path()).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(&path)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Mount { path, _dir: dir })
    }

    fn remount_read_only(&self) {
        let out = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.path)
            .output()
            .expect("mount");
        assert!(out.status.success(), "remount ro: {out:?}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn provider(root: &Path, staging: Staging) -> LocalFileSystem {
    LocalFileSystem::new(
        LocalConfig::new(root.to_string_lossy().into_owned())
            .with_durability(Durability::Full)
            .with_staging(staging),
    )
}

const ORIGINAL: &[u8] = b"the original content\nmarker\n";

/// Runs every mutation that must fail on `root` and checks the world after each.
fn mutations_fail_cleanly(
    root: &Path,
    fs: &LocalFileSystem,
    big: &str,
    what: &str,
    says: &str,
) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let t = rt
        .block_on(fs.resolve("keep", ResolveOptions::default(), &Signal::none()))
        .expect("resolve");
    let n = rt
        .block_on(fs.resolve(
            "new/deeper/file",
            ResolveOptions::default(),
            &Signal::none(),
        ))
        .expect("resolve");
    let v = rt
        .block_on(fs.stat(&t, &Signal::none()))
        .expect("stat")
        .expect("present")
        .version;
    let edit = EditRequest {
        old_string: "marker".into(),
        new_string: big.into(),
        replace_all: false,
    };
    let attempts: Vec<(&str, Result<(), seam::FsError>)> = vec![
        (
            "unguarded write",
            rt.block_on(fs.write_text(&t, big, None, None, &Signal::none()))
                .map(|_| ()),
        ),
        (
            "guarded write",
            rt.block_on(fs.write_text(
                &t,
                big,
                Some(&WriteIntent::ReplaceIfVersion { version: v.clone() }),
                None,
                &Signal::none(),
            ))
            .map(|_| ()),
        ),
        (
            "edit",
            rt.block_on(fs.edit_text(&t, &edit, Some(&v), None, &Signal::none()))
                .map(|_| ()),
        ),
        (
            "create with parents",
            rt.block_on(fs.write_text(&n, big, None, None, &Signal::none()))
                .map(|_| ()),
        ),
    ];
    for (name, result) in &attempts {
        let err = result
            .as_ref()
            .expect_err(&format!("{what}: the {name} cannot succeed"));
        println!("{what}: {name}: {} {}", err.code(), err.message());
        assert!(
            err.code() == FsErrorCode::IoError && err.message().contains(says),
            "{what}: {name} failed with {} {} (expected FS_IO_ERROR saying {says:?})",
            err.code(),
            err.message()
        );
        assert!(
            err.message().contains("/keep") || err.message().contains("/new/deeper/file"),
            "{what}: {name}: the message names the path: {}",
            err.message()
        );
        assert_eq!(
            std::fs::read(root.join("keep")).expect("read back"),
            ORIGINAL,
            "{what}: {name} changed the original"
        );
        assert_eq!(
            names(root),
            ["keep"],
            "{what}: {name} left something beside the file"
        );
    }
    attempts.len()
}

#[test]
fn a_full_filesystem_fails_mutations_coded_and_leaves_the_file_and_no_staging() {
    for staging in [Staging::Auto, Staging::Directory] {
        let mount = match Mount::tmpfs("64k") {
            Ok(m) => m,
            Err(why) => {
                eprintln!("SKIPPED: no tmpfs can be mounted here ({why})");
                return;
            }
        };
        std::fs::write(mount.path.join("keep"), ORIGINAL).expect("seed");
        let fs = provider(&mount.path, staging);
        // Four times the filesystem's size: no staging can hold it.
        let big = "x".repeat(256 * 1024);
        let n = mutations_fail_cleanly(&mount.path, &fs, &big, "full filesystem", "No space left");
        println!("full filesystem ({staging:?}): {n} mutations failed coded, nothing changed");
    }
}

#[test]
fn a_read_only_filesystem_fails_mutations_coded_and_changes_nothing() {
    let mount = match Mount::tmpfs("1m") {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED: no tmpfs can be mounted here ({why})");
            return;
        }
    };
    std::fs::write(mount.path.join("keep"), ORIGINAL).expect("seed");
    mount.remount_read_only();
    let fs = provider(&mount.path, Staging::Auto);
    let n = mutations_fail_cleanly(
        &mount.path,
        &fs,
        "small\n",
        "read-only filesystem",
        "Read-only file system",
    );
    println!("read-only filesystem: {n} mutations failed coded, nothing changed");
}
