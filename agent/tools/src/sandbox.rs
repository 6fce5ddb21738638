//! Sandbox escalation for `write` and `edit`, offered only under a confining provider.
//!
//! A fence that denies a write is right most of the time and wrong some of the time (the user
//! really wants that file outside the workspace changed). The model may then retry the exact
//! operation once with a wider mode and a one-sentence justification; the composition's
//! [`Approver`] asks the user. There is no approver, no escalation: it fails closed.
//! The denial itself is rewritten into the `[sandbox: …]` marker text the seed's harness uses,
//! so the model learns both what happened and what it may do about it.

use crate::args::Args;
use crate::exec::Exec;
use crate::output::ToolError;
use seam::{Actor, FsError, FsErrorCode, SandboxMode, SandboxPolicy};
use serde_json::{Value, json};

/// The argument naming the wider mode.
pub const SANDBOX_PERMISSIONS: &str = "sandbox_permissions";
/// The argument carrying the model's reason.
pub const JUSTIFICATION: &str = "justification";

/// The mode's name as the sandbox speaks it.
pub fn mode_name(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::DangerFullAccess => "danger-full-access",
    }
}

/// What the composition is asked to approve.
#[derive(Debug)]
pub struct EscalationRequest<'a> {
    /// `write` or `edit`.
    pub tool: &'a str,
    /// The path as the model gave it.
    pub path: &'a str,
    /// The wider mode asked for.
    pub mode: SandboxMode,
    /// The model's one sentence for the user.
    pub justification: &'a str,
    /// Who is acting.
    pub actor: Option<&'a Actor>,
}

/// The user's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Go ahead, this once.
    Granted,
    /// No.
    Rejected,
}

/// Asks the user whether one operation may run under a wider sandbox mode. Supplied by the
/// composition (a harness's approval prompt); the tools never decide this themselves.
#[async_trait::async_trait]
pub trait Approver: Send + Sync {
    /// The user's decision on this request.
    async fn approve(&self, request: &EscalationRequest<'_>) -> Approval;
}

/// The two fields a mutating tool's schema gains under a confining provider.
pub(crate) fn schema_fields() -> [(&'static str, Value); 2] {
    [
        (
            SANDBOX_PERMISSIONS,
            json!({
                "type": "string",
                "enum": ["workspace-write", "danger-full-access"],
                "description": "The wider sandbox mode this file operation needs. Only valid as a one-shot retry of an operation the sandbox just denied; requires justification and user approval."
            }),
        ),
        (
            JUSTIFICATION,
            json!({
                "type": "string",
                "description": "Required with sandbox_permissions: one sentence for the user explaining why this exact file operation needs the wider access."
            }),
        ),
    ]
}

/// An escalation the model asked for, checked for shape (not yet approved).
pub(crate) struct Escalation<'a> {
    mode: SandboxMode,
    justification: &'a str,
}

/// Parses the escalation fields. Pairing rules and texts are the seed's.
pub(crate) fn parse<'a>(
    args: &Args<'a>,
    confining: bool,
) -> Result<Option<Escalation<'a>>, ToolError> {
    let mode = args.get(SANDBOX_PERMISSIONS);
    let justification = args.get(JUSTIFICATION);
    if mode.is_some() && !confining {
        return Err(ToolError::escalation(
            "sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)",
        ));
    }
    let (mode, justification) = match (mode, justification) {
        (None, None) => return Ok(None),
        (None, Some(_)) => {
            return Err(ToolError::escalation(
                "invalid escalation: justification is only valid together with sandbox_permissions",
            ));
        }
        (Some(_), None) => {
            return Err(ToolError::escalation(
                "invalid escalation: sandbox_permissions requires a justification",
            ));
        }
        (Some(m), Some(j)) => (m, j),
    };
    let justification = match justification.as_str() {
        Some(j) if !j.trim().is_empty() => j,
        _ => {
            return Err(ToolError::escalation(
                "invalid justification: expected a non-empty sentence",
            ));
        }
    };
    let mode = match mode.as_str() {
        Some("workspace-write") => SandboxMode::WorkspaceWrite,
        Some("danger-full-access") => SandboxMode::DangerFullAccess,
        _ => {
            return Err(ToolError::escalation(
                "invalid escalation: sandbox_permissions must be \"workspace-write\" or \"danger-full-access\"",
            ));
        }
    };
    Ok(Some(Escalation {
        mode,
        justification,
    }))
}

/// The sandbox policy a mutation runs under, and whether it is an approved escalation.
pub(crate) struct Stamp {
    pub policy: Option<SandboxPolicy>,
    pub escalated: bool,
    /// An approver is composed: a denial may offer an escalation.
    pub can_escalate: bool,
}

impl Stamp {
    /// The workspace root the fence applies to this call, as far as the tool can know it.
    fn root(&self, exec: &Exec) -> Option<String> {
        self.policy
            .as_ref()
            .map(|p| p.workspace_root.clone())
            .or_else(|| exec.cwd.clone())
    }

    /// The mode the fence applies to this call, as far as the tool can know it.
    fn mode(&self, exec: &Exec) -> Option<SandboxMode> {
        self.policy
            .as_ref()
            .map(|p| p.mode)
            .or_else(|| exec.fs.sandbox_mode())
    }

    /// Rewrites a sandbox denial into the marker text; other errors pass through.
    pub(crate) fn map_denial(&self, exec: &Exec, err: FsError) -> FsError {
        if err.code() != FsErrorCode::SandboxDenied {
            return err;
        }
        let Some(mode) = self.mode(exec) else {
            return err;
        };
        let mut message = format!(
            "[sandbox: file access denied under {} mode]",
            mode_name(mode)
        );
        if self.escalated {
            // Already the widest this call could get.
        } else if self.can_escalate {
            message.push_str("\n[sandbox: escalation available — retry this exact operation once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]");
        } else {
            // Nobody can approve more here: say what the deployment allows, and who widens it.
            let allows = match (mode, self.root(exec)) {
                (SandboxMode::WorkspaceWrite, Some(root)) => {
                    format!("allows changes beneath \"{root}\" only")
                }
                (SandboxMode::WorkspaceWrite, None) => {
                    "allows changes in its workspace only".into()
                }
                _ => "allows no changes".into(),
            };
            message.push_str(&format!(
                "\n[sandbox: this deployment {allows} and no escalation can be approved here; do not retry — if this file must change, the user has to widen the deployment (its mode or its root)]"
            ));
        }
        FsError::new(FsErrorCode::SandboxDenied, message).with_source(err)
    }
}

/// Decides the policy for one mutation: the call's own, or — for an escalation — the wider
/// mode once the approver granted it. Without an approver an escalation fails closed.
pub(crate) async fn stamp(
    exec: &Exec,
    escalation: Option<Escalation<'_>>,
    approver: Option<&dyn Approver>,
    tool: &str,
    path: &str,
) -> Result<Stamp, ToolError> {
    let Some(esc) = escalation else {
        return Ok(Stamp {
            policy: exec.sandbox.clone(),
            escalated: false,
            can_escalate: approver.is_some(),
        });
    };
    let wanted = mode_name(esc.mode);
    let Some(approver) = approver else {
        return Err(ToolError::escalation(format!(
            "cannot escalate this operation to \"{wanted}\": no approval service is composed"
        )));
    };
    let root = exec
        .sandbox
        .as_ref()
        .map(|p| p.workspace_root.clone())
        .or_else(|| exec.cwd.clone());
    let Some(workspace_root) = root else {
        return Err(ToolError::escalation(format!(
            "cannot escalate this operation to \"{wanted}\": no workspace root is known for this call"
        )));
    };
    let request = EscalationRequest {
        tool,
        path,
        mode: esc.mode,
        justification: esc.justification,
        actor: exec.actor(),
    };
    match approver.approve(&request).await {
        Approval::Granted => Ok(Stamp {
            policy: Some(SandboxPolicy {
                mode: esc.mode,
                workspace_root,
            }),
            escalated: true,
            can_escalate: true,
        }),
        Approval::Rejected => Err(ToolError::escalation(format!(
            "the user rejected escalating this operation to \"{wanted}\""
        ))),
    }
}
