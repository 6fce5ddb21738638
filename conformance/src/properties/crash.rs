//! `crash`: the backend killed with SIGKILL while it writes or edits, then its storage opened
//! again by a fresh instance — the failure users lose work to, and the one no sequence of calls
//! can show: a backend that publishes by truncating the file and writing it again passes every
//! sequence (nothing overlaps a call that serves one request at a time), and leaves half a file
//! behind when its process dies.
//!
//! For a backend the factory can run in a process it kills ([`crate::Factory::killable`]): 24
//! rounds, each on a fresh subject, each a file of its own (from a few bytes to 3 MiB, mode
//! 0640 where modes are kept) written unguarded, written at its version, or edited; the process
//! is killed at a checkpoint of the mutation (where the backend claims cancel points: the probe
//! kills it while the mutation waits there) or after a moment drawn from the seed, as a fraction
//! of the time the same mutation took uncut just before (so the moment scales with the backend
//! and the machine's load). Then a fresh backend over
//! the same storage ([`crate::Factory::recover`]) and its world must show:
//!
//! * the file holds exactly its old or its new content, byte for byte, with its mode;
//! * a listing of its directory, before anyone writes there, shows the file and nothing else:
//!   what the killed backend left (its staging) is on the storage until a writer sweeps it, and
//!   a reader must not see it;
//! * a write guarded by the version the fresh instance reads succeeds;
//! * once that write is done, nothing the killed backend left is there — in the world (every
//!   entry read back) nor in a listing through the contract.
//!
//! A kill that landed after the mutation had answered still checks the file (it must then be
//! new), but it is not a crash: the rounds count how many kills landed mid-mutation, and a run
//! where none did checked nothing and says so. A backend whose storage lives in its process
//! (an in-memory store) loses it whole in a crash, as the contract allows: the property does
//! not apply to it. A factory that offers no killable backend (one that does not implement
//! `killable`, a server given by address) is like a capability not claimed: the report says
//! `not claimed` with the reason, and the crash rules need a backend the gate can kill.

use super::{Context, NotChecked, Property, Run};
use crate::factory::{Killable, NotKillable, Subject};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{CancelPoint, EditRequest, FileSystem, FsVersion, ResolveOptions, Signal, WriteIntent};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `crash`.
pub struct Crash;

/// Rounds per run.
pub const ROUNDS: u64 = 24;

/// The sizes the files rotate through.
const SIZES: [usize; 4] = [13, 64 * 1024, 1 << 20, 3 << 20];

/// What a mutation of a round does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    Write,
    GuardedWrite,
    Edit,
}

/// The text of one version of a round's file: `size` bytes of lines that say which version
/// and which round they belong to, with a marker an edit replaces.
fn content(tag: &str, round: u64, size: usize) -> String {
    let mut text = format!("MARKER {tag} round {round}\n");
    let line = format!("{tag} {round:03} ..................................................\n");
    while text.len() < size {
        text.push_str(&line);
    }
    text
}

fn shown(bytes: &[u8]) -> String {
    crate::excerpt::excerpt(&String::from_utf8_lossy(bytes))
}

/// What a kill left, judged: the file's bytes and mode as the world shows them.
fn judge_file(
    world: &BTreeMap<String, SnapEntry>,
    path: &str,
    old: &[u8],
    new: &[u8],
    mode: Option<u32>,
) -> Result<bool, String> {
    match world.get(path) {
        Some(SnapEntry::File { bytes, mode: m }) => {
            let is_old = bytes[..] == *old;
            let is_new = bytes[..] == *new;
            if !is_old && !is_new {
                return Err(format!(
                    "{path:?} holds neither its old content ({} bytes) nor its new one ({} bytes): {} ({} bytes)",
                    old.len(),
                    new.len(),
                    shown(bytes),
                    bytes.len()
                ));
            }
            if let (Some(want), Some(got)) = (mode, m)
                && want != *got
            {
                return Err(format!(
                    "{path:?} holds its {} content but mode {got:o}, not its own {want:o}",
                    if is_new { "new" } else { "old" }
                ));
            }
            Ok(is_new)
        }
        other => Err(format!(
            "{path:?} is gone or not a file after the kill: {other:?} (it held its old content before)"
        )),
    }
}

impl Property for Crash {
    fn name(&self) -> &'static str {
        "crash"
    }

    fn summary(&self) -> &'static str {
        "a backend killed mid-write or mid-edit leaves each file whole — its old or its new content, with its mode — and the next writer writes at the version it reads and leaves nothing of the killed one"
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rules = vec![
            Rule::CrashOldOrNew,
            Rule::CrashAtCheckpoint,
            Rule::CrashRecoveredWrite,
            Rule::CrashListedUnswept,
            Rule::CrashSwept,
        ];
        let rt = cx.runtime()?;
        let options = cx.options();
        let mut mid = 0u64;
        let mut at_checkpoint = 0u64;
        let seed = cx.config.sequences.seed;
        for round in 0..ROUNDS {
            let Some(k) = killable(cx, &options, &rules, out)? else {
                return Ok(());
            };
            let outcome = self.round(cx, &rt, &k, round, seed, out)?;
            mid += u64::from(outcome.mid);
            at_checkpoint += u64::from(outcome.checkpoint);
        }
        out.detail = Some(format!(
            "{mid} of {ROUNDS} kills landed mid-mutation ({at_checkpoint} at a checkpoint); every file was old or new, and the next writer recovered"
        ));
        if mid == 0 {
            out.not_checked = Some(NotChecked::NotRun(format!(
                "none of {ROUNDS} kills landed before the mutation answered: nothing was checked of a crash"
            )));
        }
        Ok(())
    }
}

/// A backend the gate can kill, for a crash property; `Ok(None)` — with the reason recorded in
/// `out`, and `rules` said not to apply or to need what is missing — when there is none.
pub(super) fn killable(
    cx: &Context,
    options: &crate::factory::CaseOptions,
    rules: &[Rule],
    out: &mut Run,
) -> Result<Option<Killable>, Failure> {
    match cx.factory.killable(options) {
        Ok(k) => Ok(Some(k)),
        Err(NotKillable::Volatile(why)) => {
            out.not_checked = Some(NotChecked::DoesNotApply {
                reason: format!("nothing of the storage outlives the backend's process: {why}"),
                rules: rules.to_vec(),
            });
            Ok(None)
        }
        Err(NotKillable::Cannot(why)) => {
            out.not_checked = Some(NotChecked::NotOffered {
                reason: format!("the gate cannot kill this backend: {why}"),
                need: "a backend the gate can kill".into(),
                rules: rules.to_vec(),
            });
            Ok(None)
        }
        Err(NotKillable::Failed(why)) => Err(fail(FailureKind::Setup, why)),
    }
}

/// What one round saw.
struct Outcome {
    /// The kill landed before the mutation answered.
    mid: bool,
    /// It landed while the mutation waited at a checkpoint.
    checkpoint: bool,
}

impl Crash {
    #[allow(clippy::too_many_arguments)]
    fn round(
        &self,
        cx: &Context,
        rt: &tokio::runtime::Runtime,
        k: &Killable,
        round: u64,
        seed: u64,
        out: &mut Run,
    ) -> Result<Outcome, Failure> {
        let Subject { fs, world, .. } = &k.subject;
        let caps = fs.capabilities();
        let setup = |e: String| fail(FailureKind::Setup, e);
        let size = SIZES[(round % 4) as usize];
        let act = [Act::Write, Act::GuardedWrite, Act::Edit][(round % 3) as usize];
        let path = format!("c/f{round:02}");
        let old = content("old", round, size);
        let new = match act {
            Act::Edit => old.replacen(
                &format!("MARKER old round {round}"),
                &format!("EDITED new round {round} {}", "+".repeat(40)),
                1,
            ),
            _ => content("new", round, size + size / 3 + 7),
        };
        let mode = caps.modes.then_some(0o640);
        world
            .apply(&WorldEffect::CreateFile {
                path: path.clone(),
                bytes: old.as_bytes().to_vec().into(),
                mode: mode.unwrap_or(0o644),
            })
            .map_err(|e| setup(e.to_string()))?;
        let root = world.root_display();
        let none = Signal::none();
        let opts = ResolveOptions { cwd: Some(&root) };
        let target = rt
            .block_on(fs.resolve(&path, opts, &none))
            .map_err(|e| setup(format!("resolve {path:?}: {}", e.message())))?;
        let version = rt
            .block_on(fs.stat(&target, &none))
            .map_err(|e| setup(format!("stat {path:?}: {}", e.message())))?
            .map(|i| i.version)
            .ok_or_else(|| setup(format!("{path:?} is not there after the world wrote it")))?;
        // Where the kill lands: at a checkpoint (rotating through the points) for a backend
        // that shows them, every other round; else after a moment drawn from the seed.
        let points = [
            CancelPoint::BeforeStage,
            CancelPoint::Staged,
            CancelPoint::Committed,
        ];
        let at_point = (caps.cancel_points && round.is_multiple_of(2))
            .then(|| points[((round / 2) % 3) as usize]);
        let killed = Arc::new(AtomicBool::new(false));
        let signal = match at_point {
            Some(point) => {
                let (kill, killed) = (k.kill.clone(), killed.clone());
                Signal::with_probe(move |cp: &seam::Checkpoint<'_>| {
                    if cp.point == point && !killed.swap(true, Ordering::SeqCst) {
                        kill();
                        // Give the process a moment to be gone before the call goes on.
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    false
                })
            }
            None => Signal::none(),
        };
        let policy = super::let_through(fs.as_ref(), &root);
        // A timed kill lands at a fraction (drawn from the seed) of the time the same mutation
        // took uncut, just before, on a file of its own: the moment scales with the backend's
        // speed and the machine's load, so a slow backend on a busy machine is hit mid-write
        // as often as a fast one on an idle machine.
        let delay = match at_point {
            Some(_) => Duration::ZERO,
            None => {
                let took =
                    self.rehearse(rt, fs.as_ref(), world.as_ref(), round, act, &old, &new)?;
                let draw = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    ^ round.wrapping_mul(0xBF58_476D_1CE4_E5B9))
                    % 1024;
                took.mul_f64(draw as f64 / 1024.0)
            }
        };
        let mutation = {
            let (fs, target, new, old_marker, version) = (
                fs.clone(),
                target.clone(),
                new.clone(),
                format!("MARKER old round {round}"),
                version.clone(),
            );
            let replacement = format!("EDITED new round {round} {}", "+".repeat(40));
            async move {
                mutate(
                    fs.as_ref(),
                    &target,
                    act,
                    &new,
                    (&old_marker, &replacement),
                    &version,
                    policy.as_ref(),
                    &signal,
                )
                .await
            }
        };
        let answered = Arc::new(AtomicBool::new(false));
        let result = if at_point.is_some() {
            rt.block_on(mutation)
        } else {
            let (kill, killed2, answered2) = (k.kill.clone(), killed.clone(), answered.clone());
            let killer = std::thread::spawn(move || {
                std::thread::sleep(delay);
                if !answered2.load(Ordering::SeqCst) {
                    killed2.store(true, Ordering::SeqCst);
                    kill();
                }
            });
            let r = rt.block_on(mutation);
            answered.store(true, Ordering::SeqCst);
            let _ = killer.join();
            r
        };
        // The kill landed mid-mutation when it came before the answer: the call then failed.
        let was_killed = killed.load(Ordering::SeqCst);
        let mid = was_killed && result.is_err();
        if !was_killed {
            // The mutation answered before the kill: kill it now all the same (the round goes
            // on with a fresh instance).
            (k.kill)();
        }
        if let Ok(()) = &result
            && mid
        {
            return Err(fail(
                FailureKind::Setup,
                "the mutation answered success after its process was killed".to_string(),
            ));
        }
        // A fresh backend over the same storage, and its world.
        let rec = cx.factory.recover(&cx.options(), &k.subject).map_err(|e| {
            fail(
                FailureKind::Crash,
                format!("no fresh backend could open the storage after the kill: {e}"),
            )
        })?;
        let snap = rec
            .world
            .snapshot()
            .map_err(|e| setup(format!("snapshot after the kill: {e}")))?;
        let when = match (at_point, mid) {
            (Some(p), true) => format!("killed at its {p:?} checkpoint"),
            (None, true) => format!("killed {} µs in", delay.as_micros()),
            (_, false) => "killed after it answered".to_string(),
        };
        let what = format!(
            "{act:?} of {path:?} ({} bytes → {} bytes), {when}",
            old.len(),
            new.len()
        );
        out.stats.check();
        let is_new = judge_file(&snap, &path, old.as_bytes(), new.as_bytes(), mode)
            .map_err(|m| fail(FailureKind::Crash, format!("{what}: {m}")))?;
        if !mid && !is_new {
            return Err(fail(
                FailureKind::Crash,
                format!(
                    "{what}: the mutation answered success, but the file holds its old content"
                ),
            ));
        }
        if mid {
            out.stats.rule(Rule::CrashOldOrNew);
            if at_point.is_some() {
                out.stats.rule(Rule::CrashAtCheckpoint);
            }
        }
        let rfs = &rec.fs;
        let own = path.trim_start_matches("c/").to_string();
        // A reader right after the kill, before any writer sweeps: whatever the killed backend
        // left beside the file (its staging) is on the storage now, and must not be listed.
        let listed = listing(rt, rfs.as_ref(), opts, &what, "right after the kill")?;
        out.stats.check();
        if listed.iter().any(|n| n != &own) {
            return Err(fail(
                FailureKind::Litter,
                format!(
                    "{what}: a fresh instance's listing right after the kill, before any write, shows more than the file: {listed:?}"
                ),
            ));
        }
        if mid {
            out.stats.rule(Rule::CrashListedUnswept);
        }
        // The next writer: reads the version, writes at it.
        let t = rt
            .block_on(rfs.resolve(&path, opts, &none))
            .map_err(|e| setup(format!("resolve after the kill: {}", e.message())))?;
        let v = match rt.block_on(rfs.stat(&t, &none)) {
            Ok(Some(i)) => i.version,
            other => {
                return Err(fail(
                    FailureKind::Crash,
                    format!("{what}: a fresh instance cannot stat the file: {other:?}"),
                ));
            }
        };
        let after = format!("recovered {round}\n");
        let policy = super::let_through(rfs.as_ref(), &root);
        let wrote = rt.block_on(rfs.write_text(
            &t,
            &after,
            Some(&WriteIntent::ReplaceIfVersion { version: v }),
            policy.as_ref(),
            &none,
        ));
        out.stats.check();
        if let Err(e) = wrote {
            return Err(fail(
                FailureKind::Crash,
                format!(
                    "{what}: a write at the version a fresh instance read failed: {} {:?}",
                    e.code(),
                    e.message()
                ),
            ));
        }
        out.stats.rule(Rule::CrashRecoveredWrite);
        // Nothing of the killed backend is left: in the world, and in a listing.
        let snap = rec
            .world
            .snapshot()
            .map_err(|e| setup(format!("snapshot after recovery: {e}")))?;
        let litter: Vec<&String> = snap
            .keys()
            .filter(|p| p.as_str() != "c" && p.as_str() != path)
            .collect();
        out.stats.check();
        if !litter.is_empty() {
            return Err(fail(
                FailureKind::Crash,
                format!(
                    "{what}: after the next writer wrote, what the killed backend left is still there: {litter:?}"
                ),
            ));
        }
        let listed = listing(rt, rfs.as_ref(), opts, &what, "after recovery")?;
        out.stats.check();
        if listed.iter().any(|n| n != &own) {
            return Err(fail(
                FailureKind::Crash,
                format!("{what}: a listing after recovery shows more than the file: {listed:?}"),
            ));
        }
        out.stats.rule(Rule::CrashSwept);
        // Leave the storage empty for whoever cleans up after the killed process.
        let _ = rec.world.apply(&WorldEffect::Remove { path: "c".into() });
        drop(rec);
        Ok(Outcome {
            mid,
            checkpoint: mid && at_point.is_some(),
        })
    }
}

impl Crash {
    /// Runs the round's mutation uncut on a file of its own beside the round's (same content,
    /// same mode), removes it, and returns how long the mutation took.
    #[allow(clippy::too_many_arguments)]
    fn rehearse(
        &self,
        rt: &tokio::runtime::Runtime,
        fs: &dyn FileSystem,
        world: &dyn crate::world::World,
        round: u64,
        act: Act,
        old: &str,
        new: &str,
    ) -> Result<Duration, Failure> {
        let setup = |e: String| fail(FailureKind::Setup, e);
        let path = format!("c/rehearsal{round:02}");
        world
            .apply(&WorldEffect::CreateFile {
                path: path.clone(),
                bytes: old.as_bytes().to_vec().into(),
                mode: 0o644,
            })
            .map_err(|e| setup(e.to_string()))?;
        let root = world.root_display();
        let none = Signal::none();
        let opts = ResolveOptions { cwd: Some(&root) };
        let target = rt
            .block_on(fs.resolve(&path, opts, &none))
            .map_err(|e| setup(format!("resolve {path:?}: {}", e.message())))?;
        let version = rt
            .block_on(fs.stat(&target, &none))
            .map_err(|e| setup(format!("stat {path:?}: {}", e.message())))?
            .map(|i| i.version)
            .ok_or_else(|| setup(format!("{path:?} is not there after the world wrote it")))?;
        let policy = super::let_through(fs, &root);
        let marker = format!("MARKER old round {round}");
        let replacement = format!("EDITED new round {round} {}", "+".repeat(40));
        let started = std::time::Instant::now();
        rt.block_on(mutate(
            fs,
            &target,
            act,
            new,
            (&marker, &replacement),
            &version,
            policy.as_ref(),
            &none,
        ))
        .map_err(|e| {
            setup(format!(
                "the uncut {act:?} of {path:?} failed: {} {:?}",
                e.code(),
                e.message()
            ))
        })?;
        let took = started.elapsed();
        world
            .apply(&WorldEffect::Remove { path })
            .map_err(|e| setup(e.to_string()))?;
        Ok(took)
    }
}

/// The names a fresh instance lists in the round's directory `c`.
fn listing(
    rt: &tokio::runtime::Runtime,
    fs: &dyn FileSystem,
    opts: ResolveOptions<'_>,
    what: &str,
    when: &str,
) -> Result<Vec<String>, Failure> {
    let none = Signal::none();
    let dir = rt
        .block_on(fs.resolve("c", opts, &none))
        .map_err(|e| fail(FailureKind::Setup, e.message().to_string()))?;
    Ok(rt
        .block_on(fs.list_dir(&dir, &none))
        .map_err(|e| {
            fail(
                FailureKind::Crash,
                format!("{what}: listing {when}: {}", e.message()),
            )
        })?
        .into_iter()
        .map(|e| e.name)
        .collect())
}

#[allow(clippy::too_many_arguments)]
async fn mutate(
    fs: &dyn FileSystem,
    target: &seam::FsTarget,
    act: Act,
    new: &str,
    (old, replacement): (&str, &str),
    version: &FsVersion,
    policy: Option<&seam::SandboxPolicy>,
    signal: &Signal,
) -> Result<(), seam::FsError> {
    match act {
        Act::Write => fs
            .write_text(target, new, None, policy, signal)
            .await
            .map(|_| ()),
        Act::GuardedWrite => fs
            .write_text(
                target,
                new,
                Some(&WriteIntent::ReplaceIfVersion {
                    version: version.clone(),
                }),
                policy,
                signal,
            )
            .await
            .map(|_| ()),
        Act::Edit => fs
            .edit_text(
                target,
                &EditRequest {
                    old_string: old.to_string(),
                    new_string: replacement.to_string(),
                    replace_all: false,
                },
                Some(version),
                policy,
                signal,
            )
            .await
            .map(|_| ()),
    }
}
