//! The context of one tool call: which world, which gate, who is acting, and how to cancel.
//!
//! Everything a tool touches arrives here rather than being captured at registration, so one
//! toolset serves many sessions (each with its own actor, cwd and sandbox policy) and the tools
//! themselves hold no filesystem and no policy.

use seam::{Actor, BareGate, FileSystem, Gate, SandboxPolicy, Signal};
use std::any::Any;
use std::sync::Arc;

/// The execution context of a tool call.
#[derive(Clone)]
pub struct Exec {
    /// The filesystem world the call acts on.
    pub fs: Arc<dyn FileSystem>,
    /// The gate asked for guards and told about observations ([`BareGate`] decides nothing).
    pub gate: Arc<dyn Gate>,
    /// Who is acting, opaque to the tools; a policy recognises its owners in it.
    pub actor: Option<Arc<Actor>>,
    /// Cancellation, forwarded to every primitive.
    pub signal: Signal,
    /// The directory relative paths resolve against (the session's cwd); the provider's default
    /// when `None`.
    pub cwd: Option<String>,
    /// The sandbox policy stamped on mutations (mode and workspace root); only a confining
    /// provider reads it. `None` leaves the provider's default.
    pub sandbox: Option<SandboxPolicy>,
    /// Every root the deployment lets the session work in, when it has several (an MCP
    /// client's roots), for the `roots` tool; empty: the workspace alone.
    pub roots: Vec<String>,
}

impl std::fmt::Debug for Exec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exec")
            .field("actor", &self.actor.is_some())
            .field("signal", &self.signal)
            .field("cwd", &self.cwd)
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

impl Exec {
    /// A call on `fs` with no gate, no actor, no cancellation, the provider's cwd and no
    /// sandbox policy.
    pub fn new(fs: Arc<dyn FileSystem>) -> Self {
        Self {
            fs,
            gate: Arc::new(BareGate),
            actor: None,
            signal: Signal::none(),
            cwd: None,
            sandbox: None,
            roots: Vec::new(),
        }
    }

    /// The same context with a gate.
    pub fn with_gate(mut self, gate: Arc<dyn Gate>) -> Self {
        self.gate = gate;
        self
    }

    /// The same context with an actor (for the observation policy: the session's owner handle).
    pub fn with_actor(mut self, actor: impl Any + Send + Sync) -> Self {
        self.actor = Some(Arc::new(actor));
        self
    }

    /// The same context with a cancellation signal.
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signal = signal;
        self
    }

    /// The same context with a cwd for relative paths.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The same context with a sandbox policy for mutations.
    pub fn with_sandbox(mut self, sandbox: SandboxPolicy) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The actor as the gate hooks take it.
    pub fn actor(&self) -> Option<&Actor> {
        self.actor.as_deref()
    }
}
