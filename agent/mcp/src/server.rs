//! The MCP server: lists the toolset, runs calls in the session's context, maps cancellation
//! onto the contract's signal and keeps mutations exclusive.

use crate::convert::{call_result, listed};
use crate::inflight::{Inflight, SessionLimits, key};
use crate::roots::RootsBinder;
use crate::transport::LineTransport;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use seam::Signal;
use seam_tools::{Exec, Tool, ToolError, Toolset};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::RwLock;

/// Why the server stopped serving.
pub type McpError = rmcp::ErrorData;

/// The composition's say over each call: builds the call's context from the session's (the
/// per-call sandbox policy and cwd, say), or refuses the call.
pub trait CallContext: Send + Sync {
    /// The context `exec` (the session's, with the call's signal) becomes for this call.
    ///
    /// # Errors
    ///
    /// A refusal the model reads as the call's error; the tool does not run.
    fn prepare(&self, exec: Exec) -> Result<Exec, ToolError>;
}

/// One MCP session over a toolset: every call runs in (a clone of) the same [`Exec`], so under
/// the observation policy the session is one owner.
pub struct SeamMcp {
    tools: Toolset,
    listed: Vec<rmcp::model::Tool>,
    /// The session's context; replaced (provider and cwd) when the client's roots change.
    exec: Arc<std::sync::RwLock<Exec>>,
    /// Binds the client's roots, when the composition honours them.
    binder: Option<Arc<dyn RootsBinder>>,
    context: Option<Arc<dyn CallContext>>,
    /// Readers share it, mutations hold it alone.
    turns: Arc<RwLock<()>>,
    /// The requests read and not yet answered (shared with the transport).
    inflight: Arc<Inflight>,
}

impl std::fmt::Debug for SeamMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeamMcp")
            .field("tools", &self.tools)
            .field("roots", &self.binder.is_some())
            .finish_non_exhaustive()
    }
}

impl SeamMcp {
    /// A session serving `tools`, each call run in `exec` (with the call's own cancellation
    /// signal).
    pub fn new(tools: Toolset, exec: Exec) -> Self {
        let listed = tools.tools().iter().map(|t| listed(t.as_ref())).collect();
        Self {
            tools,
            listed,
            exec: Arc::new(std::sync::RwLock::new(exec)),
            binder: None,
            context: None,
            turns: Arc::new(RwLock::new(())),
            inflight: Arc::new(Inflight::new(SessionLimits::default())),
        }
    }

    /// The same session honouring the client's MCP roots: when the client offers them, they
    /// become the roots its calls run in (see [`crate::roots`]).
    pub fn with_client_roots(mut self, binder: Arc<dyn RootsBinder>) -> Self {
        self.binder = Some(binder);
        self
    }

    /// The context calls run in now.
    fn exec(&self) -> Exec {
        self.exec.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Asks the client for its roots and, if they can be served, runs the next calls in them.
    /// Spawned: a request to the client from inside its notification would wait on itself.
    /// (MCP's roots are deprecated by SEP-2577; clients still send them, and they are honoured
    /// while they do.)
    #[allow(deprecated)]
    fn refresh_roots(&self, peer: rmcp::service::Peer<RoleServer>) {
        let Some(binder) = self.binder.clone() else {
            return;
        };
        let offers = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers {
            return;
        }
        let exec = self.exec.clone();
        tokio::spawn(async move {
            let listed = match peer.list_roots().await {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("seam mcp: the client's roots could not be read: {e}");
                    return;
                }
            };
            let roots: Vec<String> = listed
                .roots
                .iter()
                .filter_map(|r| crate::roots::path_of_file_url(&r.uri))
                .collect();
            if roots.is_empty() {
                eprintln!(
                    "seam mcp: the client named no file:// root ({} given); the roots stay as they were",
                    listed.roots.len()
                );
                return;
            }
            match binder.bind(&roots) {
                Ok((fs, cwd)) => {
                    let mut current = exec.write().unwrap_or_else(|p| p.into_inner());
                    let mut next = current.clone();
                    next.fs = fs;
                    next.cwd = Some(cwd);
                    next.sandbox = None;
                    next.roots = roots.clone();
                    *current = next;
                    eprintln!("seam mcp: roots from the client: {}", roots.join(", "));
                }
                Err(e) => eprintln!(
                    "seam mcp: the client's roots cannot be served ({e}); the roots stay as they were"
                ),
            }
        });
    }

    /// The same session with other bounds (the longest message, requests held at once).
    pub fn with_limits(mut self, limits: SessionLimits) -> Self {
        self.inflight = Arc::new(Inflight::new(limits));
        self
    }

    /// The same session with each call's context prepared by `context` before its tool runs.
    pub fn with_call_context(mut self, context: Arc<dyn CallContext>) -> Self {
        self.context = Some(context);
        self
    }

    /// The tools as a client lists them.
    pub fn listed_tools(&self) -> &[rmcp::model::Tool] {
        &self.listed
    }

    /// Serves one session on this process's stdin and stdout until the client closes it.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        self.serve_on(
            tokio::io::BufReader::new(tokio::io::stdin()),
            Box::new(tokio::io::stdout()),
        )
        .await
    }

    /// Serves one session on `reader` and `writer` (newline-delimited JSON-RPC) until the
    /// client closes it. Every message gets an answer (see the transport's documentation).
    pub async fn serve_on<R>(
        self,
        reader: R,
        writer: Box<dyn tokio::io::AsyncWrite + Send + Unpin>,
    ) -> Result<(), McpError>
    where
        R: tokio::io::AsyncBufRead + Unpin + Send + 'static,
    {
        let transport = LineTransport::new(reader, writer, self.inflight.clone());
        let running = self.serve(transport).await.map_err(|e| {
            McpError::internal_error(format!("MCP initialisation failed: {e}"), None)
        })?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::internal_error(format!("MCP session failed: {e}"), None))?;
        Ok(())
    }

    /// Runs `tool` with the call's signal, cancelled when the client cancels the request; the
    /// call is awaited to its end either way (the provider stops at its next cancel point), so
    /// no mutation is abandoned half-way.
    async fn run(
        &self,
        tool: &Arc<dyn Tool>,
        args: Value,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> seam_tools::ToolResult {
        let signal = Signal::new();
        let mut exec = self.exec().with_signal(signal.clone());
        if let Some(context) = &self.context {
            exec = context.prepare(exec)?;
        }
        let call = tool.execute(&args, &exec);
        tokio::pin!(call);
        tokio::select! {
            // A request cancelled before its call began reaches the provider already cancelled.
            biased;
            () = cancelled => {
                signal.cancel();
                call.await
            }
            result = &mut call => result,
        }
    }
}

impl ServerHandler for SeamMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("seam", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.tools.system_prompt())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.listed.clone()))
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.refresh_roots(context.peer);
    }

    async fn on_roots_list_changed(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.refresh_roots(context.peer);
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.tools.get(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool {:?} (this server has: {})",
                    request.name,
                    self.tools.names().join(", ")
                ),
                None,
            ));
        };
        let listed = self.listed.iter().find(|t| t.name == request.name);
        let args = request.arguments.unwrap_or_default();
        if let Some(unknown) = listed.and_then(|t| unknown_argument(t, &args)) {
            return Err(unknown);
        }
        let args = Value::Object(args);
        let ct = context.ct.clone();
        let result = if tool.parallel_safe() {
            let _turn = self.turns.read().await;
            self.run(tool, args, ct.cancelled()).await
        } else {
            let _turn = self.turns.write().await;
            self.run(tool, args, ct.cancelled()).await
        };
        // A call the client cancelled gets no answer (the MCP layer drops it): its place is
        // free now that it ended.
        if ct.is_cancelled() {
            self.inflight.done(&key(&context.id));
        }
        Ok(call_result(result, tool.output_schema().is_some()).into())
    }
}

/// The refusal of an argument the tool's schema does not have (`additionalProperties: false`).
fn unknown_argument(
    tool: &rmcp::model::Tool,
    args: &serde_json::Map<String, Value>,
) -> Option<McpError> {
    let schema = &tool.input_schema;
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let known = schema.get("properties").and_then(Value::as_object);
    let unknown: Vec<&String> = args
        .keys()
        .filter(|k| !known.is_some_and(|p| p.contains_key(k.as_str())))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let takes: Vec<&String> = known.map(|p| p.keys().collect()).unwrap_or_default();
    Some(McpError::invalid_params(
        format!(
            "{} has no argument {} (it takes: {})",
            tool.name,
            unknown
                .iter()
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", "),
            takes
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam::FileSystem;
    use serde_json::json;

    fn session(root: &std::path::Path) -> SeamMcp {
        let root = root.to_string_lossy().into_owned();
        let fs: Arc<dyn FileSystem> = Arc::new(seam_local::LocalFileSystem::new(
            seam_local::LocalConfig::new(root.clone()),
        ));
        let tools = Toolset::builder(fs.as_ref()).build();
        SeamMcp::new(tools, Exec::new(fs).with_cwd(root))
    }

    #[tokio::test]
    async fn a_cancelled_request_reaches_the_provider_as_fs_aborted_and_writes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = session(dir.path());
        let write = server.tools.get("write").expect("write").clone();
        let args = json!({"file_path": "new.txt", "content": "x"});
        let result = server
            .run(&write, args.clone(), std::future::ready(()))
            .await;
        let err = result.expect_err("cancelled");
        assert_eq!(err.fs_code(), Some(seam::FsErrorCode::Aborted), "{err}");
        assert!(!dir.path().join("new.txt").exists());

        // The same call, never cancelled, lands.
        server
            .run(&write, args, std::future::pending())
            .await
            .expect("written");
        assert_eq!(
            std::fs::read(dir.path().join("new.txt")).expect("read back"),
            b"x"
        );
    }

    /// Refuses every call under its own code, as a composition's rule would.
    struct Refuse;

    impl CallContext for Refuse {
        fn prepare(&self, _exec: Exec) -> Result<Exec, ToolError> {
            Err(ToolError::composition(
                "WS_NOT_MEMBER",
                "this session is in no workspace",
            ))
        }
    }

    #[tokio::test]
    async fn a_call_the_context_refuses_never_runs_and_carries_the_contexts_code() {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = session(dir.path()).with_call_context(Arc::new(Refuse));
        let write = server.tools.get("write").expect("write").clone();
        let err = server
            .run(
                &write,
                json!({"file_path": "new.txt", "content": "x"}),
                std::future::pending(),
            )
            .await
            .expect_err("refused");
        assert_eq!(err.code().map(|c| c.as_str()), Some("WS_NOT_MEMBER"));
        assert_eq!(err.to_string(), "this session is in no workspace");
        assert!(!dir.path().join("new.txt").exists());
    }
}
