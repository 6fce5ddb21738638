//! Sandbox escalation through `write` and `edit`, under a confining provider (the real sandbox
//! provider, with the recorder of `support/fence.rs` in front) and under a non-confining one.

mod support;

use insta::assert_snapshot;
use seam::{SandboxMode, SandboxPolicy};
use seam_tools::{Approval, Approver, EscalationRequest, Toolset};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::fence::Fence;
use support::{Harness, code, message, text};

/// The composition's approval prompt, answering as told and remembering what it was asked.
struct User {
    answer: Approval,
    asked: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Approver for User {
    async fn approve(&self, r: &EscalationRequest<'_>) -> Approval {
        self.asked.lock().expect("lock").push(format!(
            "{} {} {:?} {:?} actor={}",
            r.tool,
            r.path,
            r.mode,
            r.justification,
            r.actor.is_some()
        ));
        self.answer
    }
}

struct Fenced {
    h: Harness,
    fence: Arc<Fence>,
    user: Option<Arc<User>>,
}

fn fenced(mode: SandboxMode, answer: Option<Approval>) -> Fenced {
    let mut keep = None;
    let mut h = Harness::build(true, |root| {
        let f = Arc::new(Fence::new(&format!("{root}/ws"), mode));
        keep = Some(f.clone());
        f
    });
    let fence = keep.expect("fence");
    std::fs::create_dir(h.path("ws")).expect("mkdir");
    let user = answer.map(|answer| {
        Arc::new(User {
            answer,
            asked: Mutex::new(Vec::new()),
        })
    });
    let mut builder = Toolset::builder(h.fs.as_ref());
    if let Some(u) = &user {
        builder = builder.approver(u.clone());
    }
    h.tools = builder.build();
    Fenced { h, fence, user }
}

impl Fenced {
    fn exec(&self) -> seam_tools::Exec {
        self.h.exec().with_sandbox(SandboxPolicy {
            mode: self.fence.default_mode,
            workspace_root: self.h.display("ws"),
        })
    }

    async fn call(&self, tool: &str, args: Value) -> seam_tools::ToolResult {
        self.h.call_with(tool, args, &self.exec()).await
    }

    fn stamps(&self) -> Vec<Option<SandboxPolicy>> {
        self.fence.stamps.lock().expect("lock").clone()
    }
}

#[tokio::test]
async fn advertises_the_escalation_fields_only_under_a_confining_provider_with_an_approver() {
    // Nobody to approve: nothing is offered that could only be refused.
    let unapproved = fenced(SandboxMode::ReadOnly, None);
    for tool in ["write", "edit"] {
        let schema = unapproved.h.tools.get(tool).expect("tool").schema();
        assert!(
            schema["properties"]["sandbox_permissions"].is_null(),
            "{tool}"
        );
        assert!(schema["properties"]["justification"].is_null(), "{tool}");
    }
    let f = fenced(SandboxMode::ReadOnly, Some(Approval::Rejected));
    for tool in ["write", "edit"] {
        let schema = f.h.tools.get(tool).expect("tool").schema();
        assert_eq!(
            schema["properties"]["sandbox_permissions"]["enum"],
            json!(["workspace-write", "danger-full-access"])
        );
        assert!(schema["properties"]["justification"].is_object());
    }
    assert!(
        f.h.tools.get("read").expect("read").schema()["properties"]["sandbox_permissions"]
            .is_null()
    );
    let bare = Harness::bare();
    for tool in ["write", "edit"] {
        assert!(
            bare.tools.get(tool).expect("tool").schema()["properties"]["sandbox_permissions"]
                .is_null()
        );
    }
    assert_snapshot!(
        "confining_write_schema",
        serde_json::to_string_pretty(f.h.tools.get("write").expect("write").schema())
            .expect("json")
    );
}

#[tokio::test]
async fn mutations_resolve_against_the_workspace_root_and_carry_the_calls_policy() {
    let f = fenced(SandboxMode::WorkspaceWrite, None);
    text(
        &f.call("write", json!({"file_path": "in.txt", "content": "ok\n"}))
            .await,
    );
    assert_eq!(f.h.bytes("ws/in.txt"), b"ok\n");
    assert!(
        !f.h.exists("in.txt"),
        "not the session cwd: the workspace root"
    );
    assert_eq!(
        f.stamps(),
        [Some(SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            workspace_root: f.h.display("ws"),
        })]
    );
    text(
        &f.call(
            "edit",
            json!({"file_path": "in.txt", "old_string": "ok", "new_string": "fine"}),
        )
        .await,
    );
    assert_eq!(f.h.bytes("ws/in.txt"), b"fine\n");
}

#[tokio::test]
async fn a_denied_write_maps_to_the_marker_and_the_escalation_hint_and_changes_nothing() {
    let f = fenced(SandboxMode::WorkspaceWrite, Some(Approval::Rejected));
    let r = f
        .call("write", json!({"file_path": "../out.txt", "content": "x"}))
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    assert_snapshot!("denied_write", f.h.render(&r));
    assert!(!f.h.exists("out.txt"));
    let ro = fenced(SandboxMode::ReadOnly, Some(Approval::Rejected));
    ro.h.put("ws/a.txt", "keep\n");
    text(&ro.call("read", json!({"file_path": "ws/a.txt"})).await);
    let r = ro
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "keep", "new_string": "lose"}),
        )
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    assert_snapshot!("denied_edit_read_only", ro.h.render(&r));
    assert_eq!(ro.h.bytes("ws/a.txt"), b"keep\n");
}

#[tokio::test]
async fn a_non_sandbox_error_passes_through_unchanged() {
    let f = fenced(SandboxMode::DangerFullAccess, None);
    f.h.put("ws/a.txt", "theirs\n");
    let r = f
        .call("write", json!({"file_path": "a.txt", "content": "mine"}))
        .await;
    assert_eq!(code(&r), "FS_NOT_OBSERVED");
    assert!(message(&r).starts_with("cannot overwrite existing"));
    assert_eq!(f.h.bytes("ws/a.txt"), b"theirs\n");
}

#[tokio::test]
async fn an_approved_escalation_stamps_the_granted_mode_onto_that_call_only() {
    let f = fenced(SandboxMode::ReadOnly, Some(Approval::Granted));
    let args = json!({
        "file_path": "wanted.txt", "content": "granted\n",
        "sandbox_permissions": "workspace-write",
        "justification": "The user asked for this file."
    });
    text(&f.call("write", args).await);
    assert_eq!(f.h.bytes("ws/wanted.txt"), b"granted\n");
    let asked = f
        .user
        .as_ref()
        .expect("user")
        .asked
        .lock()
        .expect("lock")
        .clone();
    assert_eq!(
        asked,
        ["write wanted.txt WorkspaceWrite \"The user asked for this file.\" actor=true"]
    );
    // The next plain call is back under the default mode.
    let r = f
        .call(
            "edit",
            json!({"file_path": "wanted.txt", "old_string": "granted", "new_string": "again"}),
        )
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    assert_eq!(
        f.stamps()
            .iter()
            .map(|s| s.as_ref().map(|p| p.mode))
            .collect::<Vec<_>>(),
        [
            Some(SandboxMode::WorkspaceWrite),
            Some(SandboxMode::ReadOnly)
        ]
    );
    assert_eq!(f.h.bytes("ws/wanted.txt"), b"granted\n");
}

#[tokio::test]
async fn a_denial_after_an_approved_escalation_offers_no_further_escalation() {
    let f = fenced(SandboxMode::ReadOnly, Some(Approval::Granted));
    let r = f
        .call(
            "write",
            json!({
                "file_path": "/elsewhere/x.txt", "content": "x",
                "sandbox_permissions": "workspace-write", "justification": "Needed."
            }),
        )
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    assert_snapshot!("denied_after_escalation", f.h.render(&r));
}

#[tokio::test]
async fn a_rejected_escalation_fails_closed_and_never_mutates() {
    let f = fenced(SandboxMode::ReadOnly, Some(Approval::Rejected));
    let r = f
        .call(
            "write",
            json!({
                "file_path": "x.txt", "content": "x",
                "sandbox_permissions": "danger-full-access", "justification": "Please."
            }),
        )
        .await;
    assert_eq!(r.as_ref().err().map(|e| e.name()), Some("EscalationError"));
    assert_snapshot!("rejected", f.h.render(&r));
    assert!(!f.h.exists("ws/x.txt"));
    assert!(f.stamps().is_empty(), "the provider was never called");
}

#[tokio::test]
async fn escalation_without_an_approver_fails_closed() {
    let f = fenced(SandboxMode::ReadOnly, None);
    let r = f
        .call(
            "edit",
            json!({
                "file_path": "x.txt", "old_string": "a", "new_string": "b",
                "sandbox_permissions": "workspace-write", "justification": "Please."
            }),
        )
        .await;
    assert_snapshot!("no_approver", f.h.render(&r));
    assert!(f.stamps().is_empty());
}

#[tokio::test]
async fn escalation_with_no_workspace_root_or_cwd_fails_closed() {
    let f = fenced(SandboxMode::ReadOnly, Some(Approval::Granted));
    let exec = seam_tools::Exec {
        cwd: None,
        sandbox: None,
        ..f.h.exec()
    };
    let r =
        f.h.call_with(
            "write",
            json!({
                "file_path": "/tmp/x.txt", "content": "x",
                "sandbox_permissions": "workspace-write", "justification": "Please."
            }),
            &exec,
        )
        .await;
    assert_snapshot!("no_workspace_root", f.h.render(&r));
    assert!(f.stamps().is_empty());
}

#[tokio::test]
async fn rejects_the_escalation_argument_pairing() {
    let f = fenced(SandboxMode::ReadOnly, Some(Approval::Granted));
    let cases = [
        json!({"file_path": "x.txt", "content": "x", "sandbox_permissions": "workspace-write"}),
        json!({"file_path": "x.txt", "content": "x", "justification": "why"}),
        json!({"file_path": "x.txt", "content": "x", "sandbox_permissions": "workspace-write", "justification": "  "}),
        json!({"file_path": "x.txt", "content": "x", "sandbox_permissions": "workspace-write", "justification": 3}),
        json!({"file_path": "x.txt", "content": "x", "sandbox_permissions": "root", "justification": "why"}),
    ];
    let mut rendered = Vec::new();
    for args in cases {
        let r = f.call("write", args.clone()).await;
        assert!(r.is_err(), "{args}");
        rendered.push(format!("{args} => {}", f.h.render(&r)));
    }
    assert_snapshot!("pairing", rendered.join("\n"));
    assert!(
        f.user
            .as_ref()
            .expect("user")
            .asked
            .lock()
            .expect("lock")
            .is_empty()
    );
    assert!(f.stamps().is_empty());
}

#[tokio::test]
async fn sandbox_permissions_under_a_non_confining_provider_fails_closed() {
    let h = Harness::bare();
    let r = h
        .call(
            "write",
            json!({
                "file_path": "x.txt", "content": "x",
                "sandbox_permissions": "workspace-write", "justification": "why"
            }),
        )
        .await;
    assert_eq!(
        message(&r),
        "sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)"
    );
    assert!(!h.exists("x.txt"));
}

/// Without an approver a denial offers no retry that could only be refused: it says what the
/// deployment allows and that the user widens it.
#[tokio::test]
async fn without_an_approver_a_denial_says_what_the_deployment_allows_and_offers_no_retry() {
    let f = fenced(SandboxMode::WorkspaceWrite, None);
    let r = f
        .call("write", json!({"file_path": "../out.txt", "content": "x"}))
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    let m = message(&r);
    assert!(!m.contains("sandbox_permissions"), "{m}");
    assert!(
        m.contains(&format!(
            "allows changes beneath \"{}\" only",
            f.h.display("ws")
        )) && m.contains("no escalation can be approved here"),
        "{m}"
    );
    assert_snapshot!("denied_write_no_approver", f.h.render(&r));
    assert!(!f.h.exists("out.txt"));
    let ro = fenced(SandboxMode::ReadOnly, None);
    ro.h.put("ws/a.txt", "keep\n");
    text(&ro.call("read", json!({"file_path": "ws/a.txt"})).await);
    let r = ro
        .call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "keep", "new_string": "lose"}),
        )
        .await;
    assert_eq!(code(&r), "FS_SANDBOX_DENIED");
    let m = message(&r);
    assert!(m.contains("this deployment allows no changes"), "{m}");
    assert!(!m.contains("sandbox_permissions"), "{m}");
    assert_eq!(ro.h.bytes("ws/a.txt"), b"keep\n");
}
