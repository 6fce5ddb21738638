//! The shared store: one lock around the whole tree.
//!
//! The tree lock is the whole data story: every provider instance and every out-of-band handle
//! over a store takes the same lock, nothing is cached outside it, and a mutation installs its
//! result in one critical section. It is never held across a checkpoint, because the world must
//! be able to act there (that is how a suite plays the competitor that appears mid-write).
//!
//! So a mutation looks twice — once to check its guard, once to publish — and anything may
//! come between the two looks: the world, another call, another instance over the same store.
//! Publication re-checks what is there and decides as the contract says (a guard whose version
//! moved fails, a file that appeared under an unguarded write makes it an update of that file),
//! so every outcome is one a sequential order explains, and two instances over one store are
//! exactly as safe as one. (A first version made mutations take turns on a second lock; once the
//! contract said what a write that finds a new file reports, the turn guarded nothing, and loom
//! explores more interleavings without it.)

use crate::sync::{Arc, Mutex, MutexGuard, PoisonError};
use crate::tree::Tree;
use std::fmt;

#[derive(Default)]
struct Shared {
    tree: Mutex<Tree>,
}

/// An in-memory namespace (a tree of directories, files, links and FIFO stand-ins rooted at
/// `/`), shared by every handle cloned from it.
///
/// Cloning is cheap and gives another handle to the *same* store. Open providers over it with
/// [`crate::MemoryFileSystem::new`] and change it behind their back with [`MemoryStore::world`].
#[derive(Clone, Default)]
pub struct MemoryStore {
    shared: Arc<Shared>,
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store: only the root directory `/` (mode 0755).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether two handles share one store.
    pub fn same_store(&self, other: &MemoryStore) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The tree, locked. A panic while the lock was held cannot leave a half-made change:
    /// every mutation computes first and installs its result with infallible map operations,
    /// so a poisoned lock still guards a consistent tree and is taken as it is.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Tree> {
        self.shared
            .tree
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}
