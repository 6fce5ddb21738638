//! Settings of the local provider. Randomness and the clock are settings too, so tests can pin
//! them (the only things we mock).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// How hard a mutation works to survive a crash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// fsync the staged file before publishing and the directory after: a published write
    /// survives power loss. The default.
    #[default]
    Full,
    /// fsync the staged file only: content is never torn, but the rename may be lost in a crash.
    File,
    /// No fsync: atomic against concurrent readers, not against power loss. For tests and
    /// scratch space.
    None,
}

/// Where a mutation stages its content before publishing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Staging {
    /// An `O_TMPFILE` inode, linked under a fresh 0600 name just before the rename; a private
    /// directory where the filesystem has no `O_TMPFILE`. The default (one metadata operation
    /// cheaper than a directory, which matters at fsync-bound speeds).
    #[default]
    Auto,
    /// Always a fresh 0700 directory holding one exclusively created 0600 file.
    Directory,
}

/// A source of names for staging entries.
pub type NonceSource = Arc<dyn Fn() -> u64 + Send + Sync>;
/// A clock.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// Configuration of a [`crate::LocalFileSystem`].
#[derive(Clone)]
pub struct LocalConfig {
    /// The directory relative paths resolve against when a call gives no `cwd`. Not a sandbox:
    /// absolute paths and `..` leave it.
    pub cwd: String,
    /// Exclusive byte limit on each side of an overwrite's `before` text (default 10 MiB).
    pub diff_basis_max_bytes: u64,
    /// fsync policy for mutations.
    pub durability: Durability,
    /// How content is staged before publication.
    pub staging: Staging,
    /// How often one directory's abandoned staging is looked for, at most, by one provider
    /// (default 60 s): its first mutation there sweeps at once, later ones wait this long (a
    /// busy directory is not scanned on every write).
    pub sweep_grace: Duration,
    /// Names staging directories. Default: a process-random sequence.
    pub nonce: NonceSource,
    /// Tells the time, for the sweeper. Default: the system clock.
    pub clock: Clock,
}

impl std::fmt::Debug for LocalConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("LocalConfig");
        d.field("cwd", &self.cwd)
            .field("diff_basis_max_bytes", &self.diff_basis_max_bytes)
            .field("durability", &self.durability)
            .field("staging", &self.staging)
            .field("sweep_grace", &self.sweep_grace);
        d.finish_non_exhaustive()
    }
}

/// The seed's default diff-basis limit: 10 MiB.
pub const DEFAULT_DIFF_BASIS_MAX_BYTES: u64 = 10 * 1024 * 1024;

pub(crate) fn random_nonces() -> NonceSource {
    let state = RandomState::new();
    let counter = AtomicU64::new(0);
    Arc::new(move || {
        let mut h = state.build_hasher();
        h.write_u64(counter.fetch_add(1, Ordering::Relaxed));
        h.write_u32(std::process::id());
        h.finish()
    })
}

impl LocalConfig {
    /// Defaults with relative paths resolved against `cwd`.
    pub fn new(cwd: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            diff_basis_max_bytes: DEFAULT_DIFF_BASIS_MAX_BYTES,
            durability: Durability::Full,
            staging: Staging::Auto,
            sweep_grace: Duration::from_secs(60),
            nonce: random_nonces(),
            clock: Arc::new(SystemTime::now),
        }
    }

    /// The same configuration with another durability.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The same configuration with another staging method.
    pub fn with_staging(mut self, staging: Staging) -> Self {
        self.staging = staging;
        self
    }

    /// The same configuration with another diff-basis limit.
    pub fn with_diff_basis_max_bytes(mut self, limit: u64) -> Self {
        self.diff_basis_max_bytes = limit;
        self
    }

    /// Staging names from a deterministic sequence starting at `seed` (for tests that must know
    /// a name in advance).
    pub fn with_seeded_nonces(mut self, seed: u64) -> Self {
        let next = AtomicU64::new(seed);
        self.nonce = Arc::new(move || next.fetch_add(1, Ordering::Relaxed));
        self
    }

    /// The same configuration with another clock.
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }
}
