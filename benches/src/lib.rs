//! Shared pieces of the seam benchmarks: test data, the providers under measurement, and the raw
//! baselines — the same work done with `std` and plain syscalls, measured in the same run so that
//! a noisy machine moves both sides and the ratio stays honest.

pub mod checking;
pub mod floor;
pub mod raw;

use seam::{FileSystem, FsTarget, ResolveOptions, Signal};
use seam_local::{Durability, LocalConfig, LocalFileSystem};
use std::io::Write;
use std::path::Path;

/// Whether the bench binary runs in criterion's test mode (`cargo test --benches`, or
/// `cargo bench -- --test`): every benchmark once, with small inputs.
pub fn quick() -> bool {
    let args: Vec<String> = std::env::args().collect();
    !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test")
}

/// `sizes` in full mode; only those up to 1 MiB in quick mode.
pub fn sizes(sizes: &[u64]) -> Vec<u64> {
    sizes
        .iter()
        .copied()
        .filter(|s| !quick() || *s <= 1 << 20)
        .collect()
}

/// A human label for a byte size.
pub fn label(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b}B"),
    }
}

/// Source-like lines (about 1.1 % non-ASCII bytes), cycled by [`text_file`] and [`lines_file`].
const LINES: &[&str] = &[
    "fn main() { let x = 42; println!(\"{x}\"); }\n",
    "    // é café naïve résumé\n",
    "    let name = \"日本語\"; let crab = '🦀';\n",
    "struct Point { x: f64, y: f64 } impl Point { fn norm(&self) -> f64 { 0.0 } }\n",
    "use std::collections::HashMap; // a comment that is just long enough\n",
];

/// Writes `lines` lines of the same source-like text, synced.
pub fn lines_file(path: &Path, lines: usize) -> std::io::Result<()> {
    let out: String = (0..lines).map(|i| LINES[i % LINES.len()]).collect();
    let mut f = std::fs::File::create(path)?;
    f.write_all(out.as_bytes())?;
    f.sync_all()
}

/// Writes `size` bytes of source-like UTF-8 text (about 1.1 % non-ASCII bytes: é, 日本語, 🦀),
/// ending on a character boundary, and syncs it so later fsyncs do not pay for it. Written in
/// pieces of about 1 MiB, so a 1 GiB file does not leave a 1 GiB buffer behind in an allocator
/// that keeps freed memory (the remote bench's peak-RSS measurement would not see the stream).
pub fn text_file(path: &Path, size: u64) -> std::io::Result<()> {
    const PIECE: usize = 1 << 20;
    let mut f = std::fs::File::create(path)?;
    let mut piece = Vec::with_capacity(PIECE + 128);
    let mut written = 0u64;
    let mut i = 0;
    while written < size {
        let line = LINES[i % LINES.len()].as_bytes();
        let room = usize::try_from(size - written).unwrap_or(usize::MAX) - piece.len();
        if line.len() <= room {
            piece.extend_from_slice(line);
        } else {
            piece.extend(std::iter::repeat_n(b'a', room));
        }
        i += 1;
        if piece.len() >= PIECE || written + piece.len() as u64 == size {
            f.write_all(&piece)?;
            written += piece.len() as u64;
            piece.clear();
        }
    }
    f.sync_all()
}

/// A local provider rooted at `root` with a durability.
pub fn local(root: &Path, durability: Durability) -> LocalFileSystem {
    LocalFileSystem::new(
        LocalConfig::new(root.to_string_lossy().into_owned()).with_durability(durability),
    )
}

/// A current-thread runtime.
pub fn runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => panic!("cannot start a runtime: {e}"),
    }
}

/// Resolves `path` or panics (benchmarks only run on paths they created).
pub fn target(rt: &tokio::runtime::Runtime, fs: &dyn FileSystem, path: &Path) -> FsTarget {
    match rt.block_on(fs.resolve(
        &path.to_string_lossy(),
        ResolveOptions::default(),
        &Signal::none(),
    )) {
        Ok(t) => t,
        Err(e) => panic!("cannot resolve {}: {e}", path.display()),
    }
}

/// A fresh scratch directory on the same filesystem as `/tmp`.
pub fn scratch() -> tempfile::TempDir {
    match tempfile::Builder::new().prefix("seam-bench-").tempdir() {
        Ok(d) => d,
        Err(e) => panic!("cannot create a scratch directory: {e}"),
    }
}
