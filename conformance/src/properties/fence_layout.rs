//! What the properties that attack the fence share: the layout every attack starts from (a
//! workspace, links out of it, canaries outside), what lies outside the workspace, when such a
//! property applies, and how racing operations are paced by a swapper. Below `containment`,
//! `containment_ns`, `read_fence` and `swap_race`, which all use it.

use super::{Applicability, Context};
use seam::Capability;
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) fn file(path: &str, text: &str) -> WorldEffect {
    WorldEffect::CreateFile {
        path: path.into(),
        bytes: text.as_bytes().to_vec().into(),
        mode: 0o644,
    }
}

pub(super) fn link(path: &str, target: &str) -> WorldEffect {
    WorldEffect::Symlink {
        path: path.into(),
        target: target.into(),
    }
}

/// The layout every attack starts from; absolute link texts are spelled with the case's root
/// (never the host's: a broken fence must only ever reach the case's own directory).
pub(super) fn layout(root: &str) -> Vec<WorldEffect> {
    let abs = |p: &str| format!("{root}{p}");
    vec![
        file("ws/in/file", "inside\n"),
        file("ws/d/f", "inside\n"),
        file("out/canary", "outside\n"),
        file("out/f", "outside\n"),
        WorldEffect::CreateDir {
            path: "out/sub".into(),
        },
        file("ws2/canary", "sibling\n"),
        link("ws/abs", &abs("/out")),
        link("ws/rel", "../out"),
        link("ws/chain", "rel"),
        link("ws/file-abs", &abs("/out/canary")),
        link("ws/file-rel", "../out/canary"),
        link("ws/dang", &abs("/out/missing")),
        link("ws/sib", "../ws2"),
        link("ws/root", root),
        link("ws/inlink", "in"),
    ]
}

/// Everything outside the workspace (`ws/`) of a case.
pub(super) fn outside(world: &BTreeMap<String, SnapEntry>) -> BTreeMap<&String, &SnapEntry> {
    world
        .iter()
        .filter(|(k, _)| *k != "ws" && !k.starts_with("ws/"))
        .collect()
}

/// Whether a property that attacks the fence applies: it needs sandbox modes and links.
pub(super) fn fenced_with_links(cx: &Context) -> Applicability {
    Applicability::needs(&cx.caps, &[Capability::SandboxModes, Capability::Symlinks])
}

/// At most this many racing operations per swap: an operation waits for the swapper when the
/// operations get ahead of it.
const OPS_PER_SWAP: u64 = 4;

/// Paced by the swapper's progress, not by a clock: operation `n` starts only once the swapper
/// has made `n / OPS_PER_SWAP` swaps (or has stopped), so however a busy machine's scheduler
/// shares its cores between the two threads, the operations are spread over hundreds of swaps.
pub(super) fn pace<T>(swaps: &AtomicU64, n: u64, swapper: &std::thread::JoinHandle<T>) {
    while swaps.load(Ordering::Relaxed) < n / OPS_PER_SWAP && !swapper.is_finished() {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
}
