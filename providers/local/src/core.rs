//! The provider's shared state. It lives behind an `Arc` because mutations and reads run on the
//! blocking pool ([`crate::offload`]) and must own what they use.

use crate::config::LocalConfig;
use crate::locks::Locks;
use crate::root::Root;
use crate::sweep::Sweeper;
use std::sync::atomic::AtomicBool;

pub(crate) struct Core {
    pub config: LocalConfig,
    pub locks: Locks,
    /// The handle every path operation runs beneath.
    pub root: Root,
    pub sweeper: Sweeper,
    /// Cleared the first time the filesystem refuses `O_TMPFILE`.
    pub tmpfile_ok: AtomicBool,
}

impl Core {
    pub fn new(config: LocalConfig) -> Self {
        Self {
            config,
            locks: Locks::default(),
            root: Root::host(),
            sweeper: Sweeper::default(),
            tmpfile_ok: AtomicBool::new(true),
        }
    }
}
