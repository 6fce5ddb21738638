//! The settings of a suite run and what it reports of its progress: below the suite and the
//! properties, which both read them.

use crate::Scratch;
use crate::agent::AgentFactory;
use crate::factory::Factory;
use crate::sequences::{Progress, SequenceConfig};
use crate::timing::Timing;
use crate::unprivileged::Unprivileged;
use std::sync::Arc;

/// Settings of a suite run.
#[derive(Clone, Default)]
pub struct SuiteConfig {
    /// The generated-sequence property.
    pub sequences: SequenceConfig,
    /// How to run cases as an unprivileged user when this process is root.
    pub unprivileged: Option<Arc<dyn Unprivileged>>,
    /// Run only the properties with these names (all when empty). A run that leaves out a core
    /// property is incomplete, not a pass.
    pub only: Vec<String>,
    /// When a call is slow (a warning) and when it is hung (a failure): [`Timing`].
    pub timing: Timing,
    /// The agent side (tools and policy) to check over the provider, when the run has one.
    pub agent: Option<Arc<dyn AgentFactory>>,
    /// A provider this one must answer exactly like, step by step (the `differential`
    /// property), when the run has one.
    pub reference: Option<Arc<dyn Factory>>,
    /// Where the suite makes directories of its own ([`Scratch`]); plain temporary directories
    /// in `TMPDIR` when `None`.
    pub scratch: Option<Arc<dyn Scratch>>,
}

/// What a suite run is doing, for progress displays.
#[derive(Clone, Debug)]
pub enum SuiteProgress {
    /// A property started.
    Property(String),
    /// Progress through the generated cases of the property that started last (`sequences`,
    /// `policy`).
    Sequences(Progress),
}
