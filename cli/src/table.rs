//! The one table of providers the CLI knows: every shipped provider by name, its factory (from
//! the provider's test-world crate, `providers/<name>/testkit`), the provider it is compared
//! with step by step, and servers by address. Adding a shipped provider is its test-world
//! crate and a line here.

use seam_conformance::Factory;
use seam_local_testkit::LocalFactory;
use seam_memory_testkit::MemoryFactory;
use seam_remote_testkit::RemoteFactory;
use seam_sandbox_testkit::SandboxFactory;
use std::sync::Arc;

/// Every provider `seam check` runs when none is named.
pub const SHIPPED: &[&str] = &[
    "local",
    "sandbox:read-only",
    "sandbox:workspace-write",
    "sandbox:danger-full-access",
    "remote",
    "memory",
];

/// The factory for a provider name.
pub fn factory(name: &str) -> Result<Arc<dyn Factory>, String> {
    if let Some(mode) = crate::providers::sandbox_mode(name)? {
        return Ok(Arc::new(SandboxFactory(mode)));
    }
    match name {
        "local" => Ok(Arc::new(LocalFactory)),
        "memory" => Ok(Arc::new(MemoryFactory)),
        "remote" => {
            let exe = std::env::current_exe()
                .map_err(|e| format!("cannot find the seam binary to serve from: {e}"))?;
            Ok(Arc::new(RemoteFactory::own(
                exe,
                LocalFactory.configurations(),
            )))
        }
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
            SHIPPED.join(", ")
        )),
    }
}

/// The provider a shipped one must answer exactly like, step by step (the `differential`
/// property): the sandbox, in every mode, against the local provider it wraps. The comparison
/// draws no per-call policies: under `danger-full-access` the fence never refuses, and under
/// `read-only` and `workspace-write` (whose workspace `d` leaves most of the case outside) every
/// mutation carries `workspace-write` on the case's directory, where nothing the suite
/// generates leads out. The fence itself is judged against the model by `sequences`.
///
/// The remote provider hosting local must answer exactly as local does: the wire may add
/// nothing and lose nothing.
pub fn reference(name: &str) -> Option<Arc<dyn Factory>> {
    (name.starts_with("sandbox:") || name == "remote")
        .then(|| Arc::new(LocalFactory) as Arc<dyn Factory>)
}
