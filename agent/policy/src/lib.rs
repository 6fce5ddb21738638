//! # seam-policy — the observation gate
//!
//! A model that overwrites a file it never read, or edits a file that changed since it looked,
//! destroys someone's work without noticing. This crate turns "read before you write" into
//! version guards: it remembers, per owner (an agent session) and per file, what that owner last
//! saw — nothing, "absent", or "present at version V" — and answers the contract's gate hooks
//! with the guard the provider then enforces atomically:
//!
//! | what the owner saw | write-intent           | edit-intent                       |
//! |--------------------|------------------------|-----------------------------------|
//! | nothing (unseen)   | `CreateIfAbsent`       | `FS_NOT_OBSERVED`                 |
//! | absent             | `CreateIfAbsent`       | `FS_NOT_FOUND`                    |
//! | present at V       | `ReplaceIfVersion(V)`  | `V`                               |
//!
//! `remove` and `rename` of a file follow the edit's column (a file is taken away only at the
//! version the session saw: `remove requires reading "<path>" first` otherwise), and a rename
//! replaces a destination file only at the version the session saw of it (never one it did not
//! see: the provider then refuses with `FS_NOT_OBSERVED`).
//!
//! The policy does no I/O and knows no provider and no tool: it is reached only through
//! [`seam::Gate`], so removing it leaves an unconstrained but working store. The table itself is
//! the pure pair [`decide_write`] / [`decide_edit`], kept apart so that a model or a conformance
//! suite can reuse exactly these semantics.
//!
//! Owners are opaque session handles ([`Owner`]): the actor a tool passes to the gate must be an
//! `Owner` for its observations to count. An actor that is not one (or no actor) can read, but
//! records nothing and never satisfies the policy. Two owners never share authority, and an
//! owner's observations are freed when its last handle is dropped (the seed kept them in a
//! `WeakMap` keyed by the session object for the same reason: a finished session must not pin
//! memory, nor hand its authority to anyone).
//!
//! ```
//! use seam::{FsObservation, FsTarget, FsTargetKey, FsVersion, Gate, WriteIntent};
//! use seam_policy::{ObservationPolicy, Owner};
//!
//! # tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(async {
//! let policy = ObservationPolicy::new();
//! let session = Owner::new();
//! let target = FsTarget { key: FsTargetKey::new("/w/a.txt"), display_path: "/w/a.txt".into() };
//! let v1 = FsVersion::new("v1");
//!
//! // Never read: a write may only create, an edit is refused.
//! assert_eq!(policy.write_intent(&target, Some(&session)).await, Ok(Some(WriteIntent::CreateIfAbsent)));
//! assert!(policy.edit_intent(&target, Some(&session)).await.is_err());
//!
//! // After a read at v1, both are guarded by v1.
//! policy.observed(&target, &FsObservation::Present { version: v1.clone() }, Some(&session));
//! assert_eq!(policy.edit_intent(&target, Some(&session)).await, Ok(Some(v1)));
//! # });
//! ```

mod decide;
mod owner;
mod policy;
mod table;

pub use decide::{EditRefusal, Observed, decide_edit, decide_remove, decide_replace, decide_write};
pub use owner::Owner;
pub use policy::ObservationPolicy;
