//! The shipped agent side as the suite sees it: the model-facing tools (`seam-tools`) with the
//! read-before-write policy (`seam-policy`) over a provider, one policy session (`Owner`) per
//! owner number. `seam check` hands it to the suite's `policy` property; the suite itself never
//! names the tools or the policy.

use seam::{FileSystem, FsErrorCode, Gate, SandboxMode, SandboxPolicy};
use seam_conformance::{Agent, AgentError, AgentFactory};
use seam_policy::{ObservationPolicy, Owner};
use seam_tools::{Exec, ToolError, Toolset};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Makes [`ToolAgent`]s.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolAgentFactory;

impl AgentFactory for ToolAgentFactory {
    fn name(&self) -> String {
        "seam-tools + seam-policy".into()
    }

    fn agent(&self, fs: Arc<dyn FileSystem>, cwd: &str) -> Box<dyn Agent> {
        Box::new(ToolAgent::new(fs, cwd, Arc::new(ObservationPolicy::new())))
    }
}

/// The `read`, `write` and `edit` tools under one gate (the observation policy, for
/// [`ToolAgentFactory`]), one policy session per owner number.
pub struct ToolAgent {
    tools: Toolset,
    fs: Arc<dyn FileSystem>,
    policy: Arc<dyn Gate>,
    cwd: String,
    owners: Mutex<HashMap<u8, Owner>>,
}

fn agent_error(e: ToolError) -> AgentError {
    AgentError {
        // A tool failure without a filesystem code (bad arguments) is never expected by the
        // suite: it shows as an I/O failure with the tool's words.
        code: e.fs_code().unwrap_or(FsErrorCode::IoError),
        message: e.render(),
    }
}

impl ToolAgent {
    /// The tools over `fs` under `gate`, relative paths resolved against `cwd`. A composition
    /// with a gate of its own (another policy) is checked by the suite through this.
    ///
    /// Over a fencing provider every session's mutations carry `workspace-write` on `cwd` as
    /// their sandbox policy, as a harness gives its session one: the suite's agent surface is
    /// about the tools and the policy, and a read-only deployment would refuse them all (the
    /// fence itself is judged by the suite's sequences).
    pub fn new(fs: Arc<dyn FileSystem>, cwd: &str, gate: Arc<dyn Gate>) -> Self {
        Self {
            tools: Toolset::builder(fs.as_ref()).build(),
            fs,
            policy: gate,
            cwd: cwd.to_string(),
            owners: Mutex::new(HashMap::new()),
        }
    }

    fn exec(&self, owner: u8) -> Exec {
        let session = self
            .owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(owner)
            .or_default()
            .clone();
        let exec = Exec::new(self.fs.clone())
            .with_gate(self.policy.clone())
            .with_actor(session)
            .with_cwd(self.cwd.clone());
        if self.fs.sandbox_mode().is_some() {
            exec.with_sandbox(SandboxPolicy {
                mode: SandboxMode::WorkspaceWrite,
                workspace_root: self.cwd.clone(),
            })
        } else {
            exec
        }
    }

    async fn call(&self, tool: &str, owner: u8, args: Value) -> Result<(), AgentError> {
        let Some(t) = self.tools.get(tool) else {
            return Err(AgentError {
                code: FsErrorCode::IoError,
                message: format!("no {tool} tool"),
            });
        };
        let exec = self.exec(owner);
        t.execute(&args, &exec)
            .await
            .map(|_| ())
            .map_err(agent_error)
    }
}

#[async_trait::async_trait]
impl Agent for ToolAgent {
    async fn read(
        &self,
        owner: u8,
        path: &str,
        window: Option<(u64, u64)>,
    ) -> Result<(), AgentError> {
        let mut args = json!({ "file_path": path });
        if let Some((offset, limit)) = window {
            args["offset"] = json!(offset);
            args["limit"] = json!(limit);
        }
        self.call("read", owner, args).await
    }

    async fn write(&self, owner: u8, path: &str, content: &str) -> Result<(), AgentError> {
        self.call(
            "write",
            owner,
            json!({ "file_path": path, "content": content }),
        )
        .await
    }

    async fn edit(
        &self,
        owner: u8,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<(), AgentError> {
        self.call(
            "edit",
            owner,
            json!({
                "file_path": path,
                "old_string": old,
                "new_string": new,
                "replace_all": replace_all,
            }),
        )
        .await
    }
}
