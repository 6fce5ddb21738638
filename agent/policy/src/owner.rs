//! Owner handles: the identity observations are recorded under.
//!
//! An owner stands for one agent session. Its authority must end with the session, so the
//! handle, not the policy, decides how long an owner's observations live: when the last clone
//! of an [`Owner`] is dropped, every policy that recorded something for it forgets it. That is
//! the seed's `WeakMap<session, …>`, made explicit.

use crate::table::Table;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An opaque session handle. Clones are the same owner; two `Owner::new()` are two owners that
/// never share authority.
///
/// Pass it (or a clone) as the actor of a tool call; the policy recognises it by downcasting.
#[derive(Clone)]
pub struct Owner {
    inner: Arc<OwnerInner>,
}

struct OwnerInner {
    id: u64,
    /// The policies holding observations for this owner, told to forget it on drop.
    tables: Mutex<Vec<Weak<Table>>>,
}

impl Owner {
    /// A new owner, distinct from every other.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(OwnerInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                tables: Mutex::new(Vec::new()),
            }),
        }
    }

    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    /// Registers a policy table that now holds state for this owner.
    pub(crate) fn attach(&self, table: Weak<Table>) {
        let mut tables = self
            .inner
            .tables
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        tables.retain(|t| t.strong_count() > 0);
        tables.push(table);
    }
}

impl Default for Owner {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for Owner {
    fn eq(&self, other: &Self) -> bool {
        self.inner.id == other.inner.id
    }
}

impl Eq for Owner {}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Owner#{}", self.inner.id)
    }
}

impl Drop for OwnerInner {
    fn drop(&mut self) {
        let tables = std::mem::take(
            self.tables
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for table in tables {
            if let Some(table) = table.upgrade() {
                table.forget(self.id);
            }
        }
    }
}
