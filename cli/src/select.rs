//! Which factory a command runs: a shipped provider, or — in a build with the `faults` feature —
//! a deliberately broken variant of one.

use seam_conformance::Factory;
use std::sync::Arc;

/// The factory for `provider`, broken by `fault` when one is named.
pub fn factory(provider: &str, fault: Option<&str>) -> Result<Arc<dyn Factory>, String> {
    let base = seam_cli::table::factory(provider)?;
    match fault {
        None => Ok(base),
        Some(name) => broken(base, name),
    }
}

#[cfg(feature = "faults")]
fn broken(base: Arc<dyn Factory>, name: &str) -> Result<Arc<dyn Factory>, String> {
    use seam_faults::{Fault, FaultyFactory};
    let fault = Fault::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
        format!("unknown fault {name:?} (known: {})", known.join(", "))
    })?;
    Ok(Arc::new(FaultyFactory::new(base, fault)))
}

#[cfg(not(feature = "faults"))]
fn broken(_base: Arc<dyn Factory>, _name: &str) -> Result<Arc<dyn Factory>, String> {
    Err("this seam was built without the `faults` feature".into())
}
