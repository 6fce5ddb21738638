//! `swap-race`: for a backend that claims sandbox modes, writes and edits of `ws/d/f` under
//! `workspace-write` (workspace `ws/`) run while another thread keeps replacing the directory
//! `ws/d` with a link to outside and back, through the world — the race a fence that checks a
//! path and then opens another object loses. Targets are resolved afresh and reused from before
//! the swaps began. Afterwards everything outside the workspace is read back: any change is an
//! escape. The swaps alternate between an absolute and a relative link text.
//!
//! A backend that can be deployed with its reads confined ([`seam::Capability::ReadFence`]) also
//! has 1,500 reads of `d/x/f` (the deployment's workspace) race `d/x` swapped for a link out:
//! no read may return the outside ([`super::read_fence::race`]).
//!
//! A race is a race: passing says no escape happened in this many swaps, not that none can.
//! The sandbox crate's own test runs 10,000 atomic exchanges and shows the same race escaping a
//! check-then-open fence.

use super::{Applicability, Context, NotChecked, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{EditRequest, FsErrorCode, ResolveOptions, SandboxMode, SandboxPolicy, Signal};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `swap-race`.
pub struct SwapRace;

/// Mutations per run; the swapping goes on until they are done.
pub const MUTATIONS: u64 = 1_500;

/// Everything outside the workspace, owned (the snapshot it came from is gone by the check).
fn outside(world: &BTreeMap<String, SnapEntry>) -> BTreeMap<String, SnapEntry> {
    super::fence_layout::outside(world)
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

impl Property for SwapRace {
    fn name(&self) -> &'static str {
        "swap-race"
    }

    fn summary(&self) -> &'static str {
        "writes and edits under workspace-write (and, where reads are confined, reads) race a directory swapped for a link to outside and back: nothing outside changes or is read"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        super::fence_layout::fenced_with_links(cx)
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rt = cx.runtime()?;
        let subject = cx
            .factory
            .make(&cx.options())
            .map_err(|e| fail(FailureKind::Setup, e))?;
        let (fs, world) = (subject.fs.clone(), subject.world.clone());
        let root = world.root_display();
        let setup = |e: std::io::Error| fail(FailureKind::Setup, e.to_string());
        let file = |path: &str, text: &str| WorldEffect::CreateFile {
            path: path.into(),
            bytes: text.as_bytes().to_vec().into(),
            mode: 0o644,
        };
        for e in [
            file("ws/d/f", "inside\n"),
            file("out/f", "outside\n"),
            file("out/d/f", "outside\n"),
        ] {
            world.apply(&e).map_err(setup)?;
        }
        let baseline = outside(&world.snapshot().map_err(setup)?);
        let policy = SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            workspace_root: format!("{root}/ws"),
        };
        let opts = ResolveOptions { cwd: Some(&root) };
        let early = rt
            .block_on(fs.resolve("ws/d/f", opts, &Signal::none()))
            .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;

        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let swapper = {
            let (world, stop, swaps, root) =
                (world.clone(), stop.clone(), swaps.clone(), root.clone());
            std::thread::spawn(move || -> std::io::Result<()> {
                let remove = WorldEffect::Remove {
                    path: "ws/d".into(),
                };
                // The provider works in `ws/d` at the same time (creating it again as a parent,
                // staging inside it), so a removal or a creation can lose a race of its own:
                // try again, a bounded number of times.
                let replace = |with: &WorldEffect| -> std::io::Result<()> {
                    let mut last = None;
                    for _ in 0..100 {
                        match world.apply(&remove) {
                            Ok(()) => {}
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                            Err(e) => {
                                last = Some(e);
                                continue;
                            }
                        }
                        match world.apply(with) {
                            Ok(()) => return Ok(()),
                            Err(e) => last = Some(e),
                        }
                    }
                    Err(last.unwrap_or_else(|| std::io::Error::other("could not swap ws/d")))
                };
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    if n.is_multiple_of(2) {
                        let text = if n.is_multiple_of(4) {
                            format!("{root}/out")
                        } else {
                            "../out".to_string()
                        };
                        replace(&WorldEffect::Symlink {
                            path: "ws/d".into(),
                            target: text,
                        })?;
                    } else {
                        replace(&WorldEffect::CreateFile {
                            path: "ws/d/f".into(),
                            bytes: b"inside\n".to_vec().into(),
                            mode: 0o644,
                        })?;
                    }
                    swaps.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
                Ok(())
            })
        };
        let (mut landed, mut denied, mut other) = (0u64, 0u64, 0u64);
        let edit = EditRequest {
            old_string: "side".into(),
            new_string: "SIDE".into(),
            replace_all: false,
        };
        for n in 0..MUTATIONS {
            super::fence_layout::pace(&swaps, n, &swapper);
            let fresh = rt.block_on(fs.resolve("ws/d/f", opts, &Signal::none()));
            let target = match (n % 2, fresh) {
                (0, Ok(t)) => t,
                _ => early.clone(),
            };
            let none = Signal::none();
            let result = rt.block_on(async {
                if n % 3 == 0 {
                    fs.edit_text(&target, &edit, None, Some(&policy), &none)
                        .await
                        .map(|_| ())
                } else {
                    fs.write_text(&target, "pwned\n", None, Some(&policy), &none)
                        .await
                        .map(|_| ())
                }
            });
            match result {
                Ok(()) => landed += 1,
                Err(e) if e.code() == FsErrorCode::SandboxDenied => denied += 1,
                Err(_) => other += 1,
            }
        }
        stop.store(true, Ordering::SeqCst);
        match swapper.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(setup(e)),
            Err(_) => return Err(fail(FailureKind::Setup, "the swapping thread panicked")),
        }
        let swapped = swaps.load(Ordering::Relaxed);
        let after = outside(&world.snapshot().map_err(setup)?);
        out.stats.check();
        if after != baseline {
            let changed: Vec<&String> = after
                .iter()
                .filter(|(k, v)| baseline.get(*k) != Some(*v))
                .map(|(k, _)| k)
                .chain(baseline.keys().filter(|k| !after.contains_key(*k)))
                .collect();
            return Err(fail(
                FailureKind::Sandbox,
                format!(
                    "an escape during the swap race: {changed:?} changed outside the workspace ({swapped} swaps; {landed} mutations landed, {denied} denied, {other} failed otherwise)"
                ),
            ));
        }
        // No mutation met `ws/d` leading outside (and none escaped): the race never happened,
        // which says nothing about the backend — the swaps and the mutations did not overlap.
        if denied == 0 {
            out.not_checked = Some(NotChecked::NotRun(format!(
                "no mutation met ws/d leading outside in {swapped} swaps ({landed} landed, {other} failed otherwise): the swaps and the mutations never overlapped, so nothing was checked"
            )));
        } else {
            out.stats.checks(denied);
            out.stats.rule(Rule::SandboxSwapRace);
        }
        super::read_fence::race(cx, out)?;
        Ok(())
    }
}
