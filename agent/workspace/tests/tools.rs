//! The resolved policy driving the real sandbox provider and the real tools: the path a tool
//! shows is the path its write landed on, and the root it is fenced to is the session's.

mod support;

use seam::{FileSystem, FsErrorCode, SandboxMode, Signal};
use seam_local::LocalConfig;
use seam_sandbox::{SandboxConfig, SandboxFileSystem};
use seam_tools::{Exec, Toolset};
use seam_workspace::{ModeRequest, PolicyService, Session};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use support::{Fixture, fixture, mkdir, runtime, s};

/// The deployment: the sandbox provider over the workspace, read-only unless a call says
/// otherwise; the tools; a session that entered through `cwd`.
struct Deployment {
    fs: Arc<dyn FileSystem>,
    tools: Toolset,
    service: PolicyService,
    session: Session,
}

fn deploy(f: &Fixture, cwd: &str) -> Deployment {
    let project = s(&f.root.join("project"));
    let fs: Arc<dyn FileSystem> = Arc::new(SandboxFileSystem::new(
        SandboxConfig::new(project.clone(), SandboxMode::ReadOnly)
            .with_local(LocalConfig::new(project))
            .with_temp_roots(Vec::new()),
    ));
    let session = runtime()
        .block_on(f.registry.session(cwd, &Signal::none()))
        .expect("session");
    Deployment {
        tools: Toolset::builder(fs.as_ref()).build(),
        fs,
        service: PolicyService::default(),
        session,
    }
}

impl Deployment {
    /// One tool call, its context built from the policy resolved for this call.
    fn call(&self, tool: &str, args: serde_json::Value) -> seam_tools::ToolResult {
        let call = self
            .service
            .resolve(Some(&self.session), None)
            .expect("policy");
        let exec = Exec::new(self.fs.clone())
            .with_cwd(call.cwd)
            .with_sandbox(call.policy);
        let tool = self.tools.get(tool).expect("tool").clone();
        runtime().block_on(async { tool.execute(&args, &exec).await })
    }
}

fn registered(f: &Fixture) -> String {
    let project = mkdir(&f.root.join("project"));
    runtime()
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    project
}

#[test]
fn the_path_a_write_shows_is_the_path_it_landed_on_through_a_symlinked_cwd() {
    let f = fixture();
    let project = registered(&f);
    mkdir(&f.root.join("project/src"));
    std::os::unix::fs::symlink(f.root.join("project/src"), f.root.join("src-link"))
        .expect("symlink");
    let d = deploy(&f, &s(&f.root.join("src-link")));
    d.session.set_mode(Some(SandboxMode::WorkspaceWrite));
    let out = d
        .call(
            "write",
            json!({"file_path": "notes/a.txt", "content": "hello\r\n"}),
        )
        .expect("written");
    let shown = out.metadata["path"].as_str().expect("path").to_string();
    assert_eq!(shown, format!("{project}/src/notes/a.txt"));
    assert!(
        out.text().contains(&format!("<path>{shown}</path>")),
        "{}",
        out.text()
    );
    assert_eq!(
        std::fs::read(Path::new(&shown)).expect("on disk"),
        b"hello\r\n"
    );
    assert!(!f.root.join("src-link/../notes").exists());
}

#[test]
fn under_the_read_only_default_a_session_write_is_denied_and_nothing_lands() {
    let f = fixture();
    let project = registered(&f);
    let d = deploy(&f, &project);
    let err = d
        .call("write", json!({"file_path": "a.txt", "content": "x"}))
        .expect_err("read-only");
    assert_eq!(err.fs_code(), Some(FsErrorCode::SandboxDenied), "{err}");
    assert!(err.to_string().contains("read-only mode"), "{err}");
    assert!(!Path::new(&project).join("a.txt").exists());
}

#[test]
fn workspace_write_is_fenced_to_the_session_cwd_not_the_whole_workspace() {
    let f = fixture();
    let project = registered(&f);
    let sub = mkdir(&f.root.join("project/sub"));
    let d = deploy(&f, &sub);
    d.session.set_mode(Some(SandboxMode::WorkspaceWrite));
    d.call("write", json!({"file_path": "in.txt", "content": "in"}))
        .expect("inside the session cwd");
    assert_eq!(
        std::fs::read(format!("{sub}/in.txt")).expect("read back"),
        b"in"
    );
    let err = d
        .call(
            "write",
            json!({"file_path": "../beside.txt", "content": "x"}),
        )
        .expect_err("outside the session cwd");
    assert_eq!(err.fs_code(), Some(FsErrorCode::SandboxDenied), "{err}");
    assert!(!Path::new(&project).join("beside.txt").exists());
}

#[test]
fn an_approved_override_reaches_the_fence_for_that_call_only() {
    let f = fixture();
    let project = registered(&f);
    let outside = mkdir(&f.root.join("outside"));
    let d = deploy(&f, &project);
    d.session.set_mode(Some(SandboxMode::WorkspaceWrite));
    let target = format!("{outside}/granted.txt");
    let approved = d
        .service
        .resolve(
            Some(&d.session),
            Some(ModeRequest::approved(SandboxMode::DangerFullAccess)),
        )
        .expect("approved");
    let exec = Exec::new(d.fs.clone())
        .with_cwd(approved.cwd)
        .with_sandbox(approved.policy);
    let write = d.tools.get("write").expect("write").clone();
    runtime()
        .block_on(async {
            write
                .execute(&json!({"file_path": target, "content": "ok"}), &exec)
                .await
        })
        .expect("approved for this call");
    assert_eq!(std::fs::read(&target).expect("read back"), b"ok");
    let err = d
        .call(
            "write",
            json!({"file_path": format!("{outside}/next.txt"), "content": "x"}),
        )
        .expect_err("the next call is back to workspace-write");
    assert_eq!(err.fs_code(), Some(FsErrorCode::SandboxDenied), "{err}");
    assert!(!Path::new(&outside).join("next.txt").exists());
}
