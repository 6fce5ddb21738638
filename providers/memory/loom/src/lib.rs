//! Model checks of `seam-memory` with loom. Nothing here is built into anything: the checks are
//! `tests/loom.rs`, compiled only under `--cfg seam_loom`, and `tests/loom_run.rs` runs that
//! build from the ordinary `cargo test --workspace`.
