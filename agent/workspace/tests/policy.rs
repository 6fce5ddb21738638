//! The per-call policy, one test per row of the precedence table:
//!
//! | session mode | request              | result                       |
//! |--------------|----------------------|------------------------------|
//! | —            | —                    | deployment default           |
//! | set          | —                    | the session's mode           |
//! | set / —      | approved, wider      | the approved mode            |
//! | set / —      | approved, narrower   | the approved mode            |
//! | set / —      | unapproved, narrower | the narrower mode            |
//! | set / —      | unapproved, same     | unchanged                    |
//! | set / —      | unapproved, wider    | `WS_ESCALATION_REFUSED`      |
//!
//! and the root: the session's cwd, else the configured workspace, else `WS_NO_ROOT`.

mod support;

use seam::SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};
use seam::{SandboxMode, Signal};
use seam_workspace::{ModeRequest, ModeSource, PolicyService, Session, WorkspaceErrorCode};
use support::{Fixture, fixture, mkdir, runtime};

fn session(f: &Fixture, mode: Option<SandboxMode>) -> Session {
    let project = mkdir(&f.root.join("project"));
    let rt = runtime();
    rt.block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add");
    let sub = mkdir(&f.root.join("project/sub"));
    let session = rt
        .block_on(f.registry.session(&sub, &Signal::none()))
        .expect("session");
    session.set_mode(mode);
    session
}

/// Resolves with a session whose mode is `mode`, and checks mode, source and root.
fn row(
    default: SandboxMode,
    mode: Option<SandboxMode>,
    request: Option<ModeRequest>,
    want: SandboxMode,
    source: ModeSource,
) {
    let f = fixture();
    let s = session(&f, mode);
    let call = PolicyService::new(default)
        .resolve(Some(&s), request)
        .expect("resolves");
    assert_eq!(call.policy.mode, want);
    assert_eq!(call.source, source);
    // The root is the session's real cwd, for the fence and for relative paths alike.
    assert_eq!(call.policy.workspace_root, s.cwd());
    assert_eq!(call.cwd, s.cwd());
    assert_eq!(s.cwd(), support::s(&f.root.join("project/sub")));
}

#[test]
fn without_a_session_mode_or_request_the_deployment_default_applies() {
    row(ReadOnly, None, None, ReadOnly, ModeSource::Default);
    row(
        WorkspaceWrite,
        None,
        None,
        WorkspaceWrite,
        ModeSource::Default,
    );
}

#[test]
fn the_default_deployment_mode_is_read_only() {
    assert_eq!(PolicyService::default().default_mode(), ReadOnly);
}

#[test]
fn the_sessions_last_mode_choice_beats_the_default() {
    row(
        ReadOnly,
        Some(WorkspaceWrite),
        None,
        WorkspaceWrite,
        ModeSource::Session,
    );
    row(
        WorkspaceWrite,
        Some(ReadOnly),
        None,
        ReadOnly,
        ModeSource::Session,
    );
}

#[test]
fn a_session_that_clears_its_choice_returns_to_the_default() {
    let f = fixture();
    let s = session(&f, Some(DangerFullAccess));
    s.set_mode(None);
    let call = PolicyService::default()
        .resolve(Some(&s), None)
        .expect("resolves");
    assert_eq!(
        (call.policy.mode, call.source),
        (ReadOnly, ModeSource::Default)
    );
}

#[test]
fn an_approved_wider_override_beats_the_session_and_the_default() {
    row(
        ReadOnly,
        Some(WorkspaceWrite),
        Some(ModeRequest::approved(DangerFullAccess)),
        DangerFullAccess,
        ModeSource::Approved,
    );
    row(
        ReadOnly,
        None,
        Some(ModeRequest::approved(WorkspaceWrite)),
        WorkspaceWrite,
        ModeSource::Approved,
    );
}

#[test]
fn an_approved_narrower_override_applies() {
    row(
        DangerFullAccess,
        Some(WorkspaceWrite),
        Some(ModeRequest::approved(ReadOnly)),
        ReadOnly,
        ModeSource::Approved,
    );
}

#[test]
fn an_unapproved_narrower_request_applies_without_asking() {
    row(
        ReadOnly,
        Some(DangerFullAccess),
        Some(ModeRequest::unapproved(WorkspaceWrite)),
        WorkspaceWrite,
        ModeSource::Narrowed,
    );
    row(
        WorkspaceWrite,
        None,
        Some(ModeRequest::unapproved(ReadOnly)),
        ReadOnly,
        ModeSource::Narrowed,
    );
}

#[test]
fn an_unapproved_request_for_the_same_mode_changes_nothing() {
    row(
        ReadOnly,
        Some(WorkspaceWrite),
        Some(ModeRequest::unapproved(WorkspaceWrite)),
        WorkspaceWrite,
        ModeSource::Session,
    );
}

#[test]
fn an_unapproved_escalation_is_refused_and_fails_closed() {
    let f = fixture();
    let s = session(&f, Some(WorkspaceWrite));
    for (default, wanted) in [
        (ReadOnly, DangerFullAccess),
        (DangerFullAccess, DangerFullAccess),
    ] {
        let err = PolicyService::new(default)
            .resolve(Some(&s), Some(ModeRequest::unapproved(wanted)))
            .expect_err("no approval, no escalation");
        assert_eq!(err.code(), WorkspaceErrorCode::EscalationRefused, "{err}");
        assert!(
            err.message()
                .contains("\"workspace-write\" to \"danger-full-access\""),
            "{err}"
        );
    }
    // With no session mode, the default is what a request escalates from.
    let err = PolicyService::new(ReadOnly)
        .resolve(
            Some(&s_without_mode(&f)),
            Some(ModeRequest::unapproved(WorkspaceWrite)),
        )
        .expect_err("read-only to workspace-write needs approval");
    assert_eq!(err.code(), WorkspaceErrorCode::EscalationRefused, "{err}");
}

fn s_without_mode(f: &Fixture) -> Session {
    runtime()
        .block_on(
            f.registry
                .session(&support::s(&f.root.join("project")), &Signal::none()),
        )
        .expect("session")
}

#[test]
fn a_call_without_a_session_takes_the_configured_workspace_as_its_root() {
    let f = fixture();
    let project = mkdir(&f.root.join("project"));
    let w = runtime()
        .block_on(f.registry.add(&project, None, &Signal::none()))
        .expect("add")
        .workspace;
    let call = PolicyService::new(WorkspaceWrite)
        .with_fallback(w)
        .resolve(None, None)
        .expect("resolves");
    assert_eq!(call.policy.workspace_root, project);
    assert_eq!(call.cwd, project);
    assert_eq!(
        (call.policy.mode, call.source),
        (WorkspaceWrite, ModeSource::Default)
    );
}

#[test]
fn a_call_with_neither_a_session_nor_a_configured_workspace_has_no_root() {
    let err = PolicyService::new(DangerFullAccess)
        .resolve(None, None)
        .expect_err("nowhere to fence to");
    assert_eq!(err.code(), WorkspaceErrorCode::NoRoot, "{err}");
}

#[test]
fn the_session_root_beats_the_configured_workspace() {
    let f = fixture();
    let other = mkdir(&f.root.join("other"));
    let w = runtime()
        .block_on(f.registry.add(&other, None, &Signal::none()))
        .expect("add")
        .workspace;
    let s = session(&f, None);
    let call = PolicyService::new(WorkspaceWrite)
        .with_fallback(w)
        .resolve(Some(&s), None)
        .expect("resolves");
    assert_eq!(call.policy.workspace_root, s.cwd());
}
