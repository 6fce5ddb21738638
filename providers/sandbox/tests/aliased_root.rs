//! A workspace reached through a link, as `/tmp/w` is on macOS (really `/private/tmp/w`): the
//! deployment names the workspace by the link's spelling, the fence holds its real path. Every
//! read and mutation inside must be allowed and answered as the local provider answers it,
//! messages naming the path as the caller wrote it; nothing outside may be reached by spelling
//! it through a link either. The gate's cases of the shipped disk providers are laid out the
//! through a link the same way (`seam-check-…/tmp/case-…/root`, `tmp -> private`), which is
//! where these were found.

use seam::{FileSystem, FsErrorCode, FsPathKind, ResolveOptions, SandboxMode, Signal};
use seam_local::LocalConfig;
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use std::os::unix::fs::symlink;
use std::path::PathBuf;

/// `base/private/ws` (the real workspace), `base/tmp -> private`, and `base/private/out` outside.
struct Layout {
    _dir: tempfile::TempDir,
    real: PathBuf,
    alias: String,
    out: PathBuf,
}

impl Layout {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("real path");
        let real = base.join("private/ws");
        let out = base.join("private/out");
        std::fs::create_dir_all(real.join("inside")).expect("mkdir ws");
        std::fs::create_dir_all(&out).expect("mkdir out");
        std::fs::write(out.join("canary"), b"outside\n").expect("canary");
        std::fs::write(real.join("file"), b"text\n").expect("file");
        std::fs::write(real.join("inside/target"), b"old\n").expect("target");
        symlink("private", base.join("tmp")).expect("alias");
        let alias = format!("{}/tmp/ws", base.to_str().expect("utf-8"));
        // Absolute links spelled through the alias: one inside, one to the outside.
        symlink(format!("{alias}/inside/target"), real.join("in-abs")).expect("link");
        symlink(format!("{alias}/../out/canary"), real.join("out-abs")).expect("link");
        symlink(format!("{alias}/inside/missing"), real.join("dangling-abs")).expect("link");
        symlink("inside/target", real.join("to-file")).expect("link");
        Self {
            _dir: dir,
            real,
            alias,
            out,
        }
    }

    fn fs(&self, mode: SandboxMode) -> SandboxFileSystem {
        SandboxFileSystem::new(
            SandboxConfig::new(self.alias.clone(), mode)
                .with_local(LocalConfig::new(self.alias.clone()))
                .with_temp_roots(Vec::new())
                .with_confined_reads(true),
        )
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn lstat_inside_a_workspace_reached_through_a_link_is_allowed() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::WorkspaceWrite);
    let none = Signal::none();
    rt().block_on(async {
        let opts = ResolveOptions::default();
        let file = fs.lstat("file", opts, &none).await.expect("lstat file");
        assert_eq!(file.map(|i| i.kind), Some(FsPathKind::File));
        let link = fs.lstat("in-abs", opts, &none).await.expect("lstat link");
        assert_eq!(link.map(|i| i.kind), Some(FsPathKind::Symlink));
        let root = fs.lstat(".", opts, &none).await.expect("lstat root");
        assert_eq!(root.map(|i| i.kind), Some(FsPathKind::Directory));
    });
}

#[test]
fn a_write_through_an_absolute_link_spelled_through_the_alias_lands_inside() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::WorkspaceWrite);
    let none = Signal::none();
    rt().block_on(async {
        let t = fs
            .resolve("in-abs", ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        fs.write_text(&t, "mine\n", None, None, &none)
            .await
            .expect("a write inside is allowed");
    });
    let landed = std::fs::read(l.real.join("inside/target")).expect("read back");
    assert_eq!(landed, b"mine\n");
}

/// A dangling link is keyed by its own path, so the confined walk follows its text: an absolute
/// text spelled through the alias leads inside, and the write is refused for what it meets (a
/// dangling link is not a regular file), not denied as an escape.
#[test]
fn a_write_through_a_dangling_link_spelled_through_the_alias_is_not_an_escape() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::WorkspaceWrite);
    let none = Signal::none();
    let err = rt().block_on(async {
        let t = fs
            .resolve("dangling-abs", ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        fs.write_text(&t, "mine\n", None, None, &none)
            .await
            .expect_err("a dangling link is not written through")
    });
    assert_eq!(err.code(), FsErrorCode::NotRegularFile, "{}", err.message());
    assert!(!l.real.join("inside/missing").exists());
}

#[test]
fn a_link_spelled_through_the_alias_to_outside_is_still_denied() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::WorkspaceWrite);
    let none = Signal::none();
    let (read, write) = rt().block_on(async {
        let t = fs
            .resolve("out-abs", ResolveOptions::default(), &none)
            .await
            .expect("resolve");
        let read = fs.read_text(&t, &none).await.map_err(|e| e.code());
        let write = fs
            .write_text(&t, "escaped\n", None, None, &none)
            .await
            .map_err(|e| e.code());
        (read, write)
    });
    assert_eq!(read, Err(FsErrorCode::SandboxDenied));
    assert_eq!(write.map(|_| ()), Err(FsErrorCode::SandboxDenied));
    let canary = std::fs::read(l.out.join("canary")).expect("canary");
    assert_eq!(canary, b"outside\n");
}

#[test]
fn a_path_through_a_file_is_not_found_and_named_as_written() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::WorkspaceWrite);
    let none = Signal::none();
    let err = rt().block_on(async {
        fs.create_dir(
            "file/x/y",
            ResolveOptions::default(),
            seam::CreateDirOptions::default(),
            None,
            &none,
        )
        .await
        .expect_err("nothing can be made under a file")
    });
    assert_eq!(err.code(), FsErrorCode::NotFound, "{}", err.message());
    assert!(
        err.message().contains(&format!("\"{}/file/x/y\"", l.alias)),
        "{}",
        err.message()
    );
    assert!(!err.message().contains("private"), "{}", err.message());
}

/// A path through a regular file has no real location: it is judged as spelled, against the
/// workspace as spelled — outside when its spelling is (though the file it passes through lies
/// inside), inside when its spelling is; nothing is found either way. Seed 167772367711594 of
/// `sandbox:read-only` (a per-call `workspace-write` policy) met the first.
#[test]
fn a_path_through_a_file_is_judged_as_spelled_against_the_workspace_as_spelled() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::ReadOnly);
    let none = Signal::none();
    let policy = seam::SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        workspace_root: format!("{}/inside", l.alias),
    };
    let remove = |path: &'static str| {
        let (fs, policy, none) = (&fs, &policy, &none);
        async move {
            fs.remove(
                path,
                ResolveOptions::default(),
                &seam::RemoveOptions::default(),
                Some(policy),
                none,
            )
            .await
            .map(|_| ())
            .map_err(|e| (e.code(), e.message().to_string()))
        }
    };
    let (outside, inside) = rt().block_on(async {
        (
            remove("to-file/d/a").await,
            remove("inside/target/d/a").await,
        )
    });
    let outside = outside.expect_err("nothing to remove");
    assert_eq!(outside.0, FsErrorCode::SandboxDenied, "{}", outside.1);
    assert!(
        outside.1.contains(&format!("\"{}/to-file/d/a\"", l.alias)),
        "{}",
        outside.1
    );
    let inside = inside.expect_err("nothing to remove");
    assert_eq!(inside.0, FsErrorCode::NotFound, "{}", inside.1);
    assert_eq!(
        std::fs::read(l.real.join("inside/target")).expect("file"),
        b"old\n"
    );
}

/// The workspace of a call spelled with `..` (`{alias}/inside/..`, really the workspace itself):
/// a path through a file spelled beneath the deployment's directory is judged by its real
/// spelling, so it is inside and nothing is found. Seeds 257753727644587 and 55457106455418 of
/// `sandbox:danger-full-access` and 17199562157230 of `sandbox:read-only` met it (0760aed
/// compared the spelling `…/inside/..` lexically and denied).
#[test]
fn a_path_through_a_file_under_a_workspace_spelled_with_dotdot_is_not_found() {
    let l = Layout::new();
    let fs = l.fs(SandboxMode::DangerFullAccess);
    let none = Signal::none();
    let policy = seam::SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        workspace_root: format!("{}/inside/..", l.alias),
    };
    let err = rt()
        .block_on(fs.remove(
            "file/d/a",
            ResolveOptions::default(),
            &seam::RemoveOptions::default(),
            Some(&policy),
            &none,
        ))
        .expect_err("nothing to remove");
    assert_eq!(err.code(), FsErrorCode::NotFound, "{}", err.message());
}
