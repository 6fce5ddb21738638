//! The read tool's limits. Zero is not a limit, so the types rule it out (the seed checked
//! "must be a positive integer" at load time).

use std::num::{NonZeroU64, NonZeroUsize};

/// Files at or above this size (and files whose size the provider cannot tell) are streamed:
/// **1 MiB**, not the seed's 10 MiB. `docs/performance.md` measured `read_text` against
/// `stream_text` on this project's machine: up to 256 KiB they are within ±5 %; from 1 MiB to
/// 16 MiB buffering wins by under a millisecond but costs the file's size in memory per
/// concurrent read (`read` is parallel-safe); from about 32 MiB streaming is faster too. Above
/// 1 MiB the time given up is nothing beside a model round trip, and memory stays at about
/// 100 KiB per read.
pub const DEFAULT_STREAM_MIN_SIZE: u64 = 1024 * 1024;

/// Limits of one `read` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadConfig {
    /// Lines returned by default, and the most a call may ask for (default 2000).
    pub limit: NonZeroUsize,
    /// Characters kept per line before it is truncated (default 2000).
    pub max_line_chars: NonZeroUsize,
    /// UTF-8 bytes of selected text per call (default 51200, 50 KiB).
    pub max_bytes: NonZeroUsize,
    /// Size from which a file is streamed instead of read whole (default
    /// [`DEFAULT_STREAM_MIN_SIZE`]).
    pub stream_min_size: NonZeroU64,
}

impl Default for ReadConfig {
    fn default() -> Self {
        const fn nz(n: usize) -> NonZeroUsize {
            match NonZeroUsize::new(n) {
                Some(n) => n,
                None => NonZeroUsize::MIN,
            }
        }
        Self {
            limit: nz(2000),
            max_line_chars: nz(2000),
            max_bytes: nz(51200),
            stream_min_size: match NonZeroU64::new(DEFAULT_STREAM_MIN_SIZE) {
                Some(n) => n,
                None => NonZeroU64::MIN,
            },
        }
    }
}
