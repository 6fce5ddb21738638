//! The model's sandbox fence: the call's policy over the deployment's, the writable root by its
//! real path, and a walk beneath it that may not leave it.

use seam::{FsErrorCode, SandboxMode};
use seam_model::{CallFence, FenceCase, Model, ModelConfig, WorldOp};

const ROOT: &str = "/r";

fn fenced(mode: SandboxMode) -> Model {
    let mut config = ModelConfig::new(ROOT);
    config.fence = Some(mode);
    let mut m = Model::new(config);
    for op in [
        WorldOp::Mkdir { path: "d".into() },
        WorldOp::Mkdir {
            path: "d/sub".into(),
        },
        WorldOp::Mkdir { path: "dd".into() },
        WorldOp::Write {
            path: "a".into(),
            bytes: b"canary\n".to_vec().into(),
            mode: 0o644,
        },
        WorldOp::Symlink {
            path: "d/dangling".into(),
            target: "../nowhere".into(),
        },
        WorldOp::Symlink {
            path: "d/inside".into(),
            target: "sub".into(),
        },
        WorldOp::Symlink {
            path: "l".into(),
            target: "d".into(),
        },
        WorldOp::Symlink {
            path: "dd/deep".into(),
            target: "../d/sub".into(),
        },
    ] {
        assert!(m.world(&op).is_some(), "{op:?}");
    }
    m
}

fn call(mode: SandboxMode, workspace: &str) -> CallFence {
    CallFence {
        mode,
        workspace: workspace.into(),
    }
}

fn case(m: &Model, path: &str, c: Option<&CallFence>) -> FenceCase {
    let r = m.resolve(path).expect("resolves");
    m.fence(&r, c).case
}

#[test]
fn the_call_decides_over_the_deployment() {
    let ro = fenced(SandboxMode::ReadOnly);
    let r = ro.resolve("d/x").expect("resolves");
    let v = ro.fence(&r, None);
    assert_eq!(v.case, FenceCase::DeniedReadOnly);
    let denial = v.denial.expect("denied");
    assert_eq!(denial.code, FsErrorCode::SandboxDenied);
    assert_eq!(
        denial.message,
        "cannot write \"/r/d/x\": file access denied under read-only mode"
    );
    let widened = ro.fence(&r, Some(&call(SandboxMode::WorkspaceWrite, "/r")));
    assert_eq!(widened.case, FenceCase::Beneath { case_root: true });
    assert!(widened.denial.is_none());
    let ww = fenced(SandboxMode::WorkspaceWrite);
    assert_eq!(
        case(&ww, "a", Some(&call(SandboxMode::ReadOnly, "/r"))),
        FenceCase::DeniedReadOnly
    );
    assert_eq!(
        case(&ww, "a", Some(&call(SandboxMode::DangerFullAccess, "/r/d"))),
        FenceCase::Anywhere
    );
}

#[test]
fn the_writable_root_is_a_real_directory_and_holds_the_key_by_components() {
    let m = fenced(SandboxMode::WorkspaceWrite);
    let on = |ws: &str| call(SandboxMode::WorkspaceWrite, ws);
    assert_eq!(
        case(&m, "d/x", Some(&on("/r/d"))),
        FenceCase::Beneath { case_root: false }
    );
    assert_eq!(
        case(&m, "d/x", Some(&on("/r/l"))),
        FenceCase::Beneath { case_root: false },
        "a workspace spelled through a link is its real path"
    );
    assert_eq!(
        case(&m, "dd/x", Some(&on("/r/d"))),
        FenceCase::DeniedOutside
    );
    assert_eq!(case(&m, "a", Some(&on("/r/d"))), FenceCase::DeniedOutside);
    assert_eq!(
        case(&m, "d/x", Some(&on("/r/nowhere"))),
        FenceCase::DeniedNoRoot
    );
    assert_eq!(case(&m, "d/x", Some(&on("/r/a"))), FenceCase::DeniedNoRoot);
    let r = m.resolve("dd/x").expect("resolves");
    let v = m.fence(&r, Some(&on("/r/d")));
    assert_eq!(v.root.expect("a root").0, vec!["d".to_string()]);
}

#[test]
fn looking_at_the_key_must_not_leave_the_root() {
    let mut m = fenced(SandboxMode::WorkspaceWrite);
    let on_d = call(SandboxMode::WorkspaceWrite, "/r/d");
    assert_eq!(
        case(&m, "d/dangling", Some(&on_d)),
        FenceCase::DeniedLeaves,
        "a dangling link at the key that points out"
    );
    assert_eq!(
        case(&m, "d/inside/x", Some(&on_d)),
        FenceCase::Beneath { case_root: false }
    );
    // Resolved while `d/sub` is a directory; then it becomes a link to outside.
    let stale = m.resolve("d/sub/x").expect("resolves");
    assert!(
        m.world(&WorldOp::Remove {
            path: "d/sub".into()
        })
        .is_some()
    );
    assert!(
        m.world(&WorldOp::Symlink {
            path: "d/sub".into(),
            target: "../dd".into(),
        })
        .is_some()
    );
    assert_eq!(m.fence(&stale, Some(&on_d)).case, FenceCase::DeniedLeaves);
    // Beneath the test root the same swap stays inside: nothing to deny.
    assert_eq!(
        m.fence(&stale, None).case,
        FenceCase::Beneath { case_root: true }
    );
}

#[test]
fn an_unfenced_backend_ignores_the_call() {
    let m = Model::new(ModelConfig::new(ROOT));
    let r = m.resolve("x").expect("resolves");
    let v = m.fence(&r, Some(&call(SandboxMode::ReadOnly, "/r")));
    assert_eq!(v.case, FenceCase::Unfenced);
    assert!(v.denial.is_none());
}

#[test]
fn a_workspace_is_absolute_and_its_dotdot_is_physical() {
    let m = fenced(SandboxMode::WorkspaceWrite);
    let on = |ws: &str| call(SandboxMode::WorkspaceWrite, ws);
    // `dd/deep -> ../d/sub`: `dd/deep/..` is `d` (the real parent of `d/sub`), not `dd` as
    // it would be lexically.
    assert_eq!(
        case(&m, "d/x", Some(&on("/r/dd/deep/.."))),
        FenceCase::Beneath { case_root: false }
    );
    assert_eq!(
        case(&m, "dd/x", Some(&on("/r/dd/deep/.."))),
        FenceCase::DeniedOutside
    );
    assert_eq!(
        case(&m, "d/x", Some(&on("d"))),
        FenceCase::DeniedNoRoot,
        "a relative workspace matches nothing"
    );
}

#[test]
fn a_call_without_a_policy_is_decided_by_the_deployment_s_workspace() {
    let mut config = ModelConfig::new(ROOT);
    config.fence = Some(SandboxMode::WorkspaceWrite);
    config.fence_workspace = "d".into();
    let mut m = Model::new(config);
    let r = m.resolve("d/x").expect("resolves");
    assert_eq!(
        m.fence(&r, None).case,
        FenceCase::DeniedNoRoot,
        "the deployment's workspace does not exist yet: it matches nothing"
    );
    assert!(m.world(&WorldOp::Mkdir { path: "d".into() }).is_some());
    assert_eq!(
        m.fence(&r, None).case,
        FenceCase::Beneath { case_root: false }
    );
    let outside = m.resolve("a").expect("resolves");
    let v = m.fence(&outside, None);
    assert_eq!(v.case, FenceCase::DeniedOutside);
    assert_eq!(v.root.expect("a root").0, vec!["d".to_string()]);
    // The call's own policy still wins.
    let ws = call(SandboxMode::WorkspaceWrite, "/r");
    assert_eq!(
        m.fence(&outside, Some(&ws)).case,
        FenceCase::Beneath { case_root: true }
    );
}
