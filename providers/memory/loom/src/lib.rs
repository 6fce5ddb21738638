//! Model checks with loom. Nothing here is built into anything: the memory store's checks are
//! `tests/loom.rs`, compiled only under `--cfg seam_loom`, and `tests/loom_run.rs` runs that
//! build — and the local provider's lock-table checks (`seam-local`, `src/locks.rs`) — from the
//! ordinary `cargo test --workspace`.
