//! The one table of providers the CLI knows: every shipped provider by name, its factory (from
//! the provider's test-world crate, `providers/<name>/testkit`), the provider it is compared
//! with step by step, and servers by address. Adding a shipped provider is its test-world
//! crate and a line here.

use seam::SandboxMode;
use seam_conformance::Factory;
use seam_local_testkit::LocalFactory;
use seam_memory_testkit::MemoryFactory;
use seam_remote_testkit::RemoteFactory;
use seam_sandbox_testkit::SandboxFactory;
use std::sync::Arc;

/// A shipped provider: its name, how its factory is made (from its test-world crate), and the
/// shipped provider it must answer exactly like, step by step (the `differential` property).
pub struct Shipped {
    /// The name `--provider` takes.
    pub name: &'static str,
    /// Its factory.
    pub factory: fn() -> Result<Arc<dyn Factory>, String>,
    /// The provider it is compared with, if any.
    pub against: Option<&'static str>,
}

/// Every provider `seam check` runs when none is named, in the order it reports them. A
/// shipped provider is one line here.
///
/// The sandbox, in every mode, is compared with the local provider it wraps. The comparison
/// draws no per-call policies: under `danger-full-access` the fence never refuses, and under
/// `read-only` and `workspace-write` (whose workspace `d` leaves most of the case outside)
/// every mutation carries `workspace-write` on the case's directory, where nothing the suite
/// generates leads out. The fence itself is judged against the model by `sequences`. The
/// remote provider hosting local must answer exactly as local does: the wire may add nothing
/// and lose nothing.
#[rustfmt::skip]
pub const SHIPPED: &[Shipped] = &[
    Shipped { name: "local", factory: || Ok(Arc::new(LocalFactory)), against: None },
    Shipped { name: "sandbox:read-only", factory: || Ok(Arc::new(SandboxFactory(SandboxMode::ReadOnly))), against: Some("local") },
    Shipped { name: "sandbox:workspace-write", factory: || Ok(Arc::new(SandboxFactory(SandboxMode::WorkspaceWrite))), against: Some("local") },
    Shipped { name: "sandbox:danger-full-access", factory: || Ok(Arc::new(SandboxFactory(SandboxMode::DangerFullAccess))), against: Some("local") },
    Shipped { name: "remote", factory: remote, against: Some("local") },
    Shipped { name: "memory", factory: || Ok(Arc::new(MemoryFactory)), against: None },
];

/// `remote`: the local provider behind `seam serve`, which this binary starts itself.
fn remote() -> Result<Arc<dyn Factory>, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the seam binary to serve from: {e}"))?;
    Ok(Arc::new(RemoteFactory::own(
        exe,
        LocalFactory.configurations(),
    )))
}

/// The names of the shipped providers, in order.
pub fn shipped_names() -> impl Iterator<Item = &'static str> {
    SHIPPED.iter().map(|s| s.name)
}

/// The factory for a provider name: a shipped provider, or a server by address.
pub fn factory(name: &str) -> Result<Arc<dyn Factory>, String> {
    if let Some(shipped) = SHIPPED.iter().find(|s| s.name == name) {
        return (shipped.factory)();
    }
    // `sandbox:` with a mode that does not exist says which exist.
    crate::providers::sandbox_mode(name)?;
    match name {
        other
            if other.starts_with("unix:")
                || other.starts_with("tcp:")
                || other.starts_with("exec:") =>
        {
            let address = other.parse::<seam_remote::Address>()?;
            Ok(Arc::new(RemoteFactory::external(address)))
        }
        other => Err(format!(
            "unknown provider {other:?} (shipped: {}; or a server: unix:PATH, tcp://HOST:PORT, exec:COMMAND)",
            shipped_names().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The provider a shipped one must answer exactly like, step by step (the `differential`
/// property), from [`SHIPPED`].
pub fn reference(name: &str) -> Option<Arc<dyn Factory>> {
    let against = SHIPPED.iter().find(|s| s.name == name)?.against?;
    factory(against).ok()
}
