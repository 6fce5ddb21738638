//! `crash-rename`: the backend's process killed with SIGKILL while renames are in flight, then
//! its storage opened again by a fresh instance. Rename is where storage loses files (the
//! classic crash-consistency studies found most of their bugs around it): a backend that moves
//! by copy-and-delete leaves both or a torn copy, one that deletes first and links later loses
//! the file. No sequence of calls can show it. A killed process is not a lost machine: the page
//! cache survives it, so this checks what a dying process leaves (one rename syscall always
//! passes), not what a power cut leaves — the order of the directory fsyncs that durability
//! needs is traced in the local provider's own tests (`providers/local/tests/durability.rs`).
//!
//! For a backend that claims the namespace operations and that the factory can run in a process
//! it kills ([`crate::Factory::killable`]): [`ROUNDS`] rounds, each on a fresh subject with
//! [`FILES`] files of their own (13 bytes to 1 MiB, mode 0640 where modes are kept), all renamed
//! at once into another directory, and the process killed after a moment drawn from the seed as
//! a fraction of the time the same burst took uncut just before. Then a fresh backend over the
//! same storage and its world must show, for every file:
//!
//! * it is at its source or at its destination — never both (duplicated), never neither (lost)
//!   — with its bytes and its mode, and a rename that answered success left it at the
//!   destination;
//! * nothing else is there (no staging, no half copy), in the world and in a listing.
//!
//! The rounds count the renames not yet answered when the kill landed (sent or about to be); a
//! run where no kill landed mid-burst checked nothing of a crash and says so. An in-memory backend loses its
//! storage whole in a crash, as the contract allows: the property does not apply to it.

use super::{Applicability, Context, NotChecked, Property, Run};
use crate::factory::{Killable, Subject};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{Capability, FileSystem, RenameOptions, ResolveOptions, Signal};
use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `crash-rename`.
pub struct CrashRename;

/// Rounds per run (one kill each).
pub const ROUNDS: u64 = 24;

/// Files renamed at once in a round.
pub const FILES: usize = 12;

/// The sizes the files rotate through.
const SIZES: [usize; 4] = [13, 4096, 64 * 1024, 1 << 20];

fn content(round: u64, i: usize) -> Vec<u8> {
    let size = SIZES[i % SIZES.len()];
    let line = format!("round {round:03} file {i:02} ..........................................\n");
    let mut out = Vec::with_capacity(size + line.len());
    while out.len() < size {
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(size.max(1));
    out
}

fn src(i: usize) -> String {
    format!("r/from/f{i:02}")
}

fn dst(i: usize) -> String {
    format!("r/to/g{i:02}")
}

impl Property for CrashRename {
    fn name(&self) -> &'static str {
        "crash-rename"
    }

    fn summary(&self) -> &'static str {
        "a backend killed while renames are in flight leaves every file at its source or at its destination — never both, never neither — whole, with its mode, and nothing else"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        Applicability::needs(&cx.caps, &[Capability::Namespace])
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rules = vec![Rule::CrashRenameOneOf];
        let rt = cx.runtime()?;
        let options = cx.options();
        let seed = cx.config.sequences.seed;
        let (mut kills_mid, mut in_flight) = (0u64, 0u64);
        for round in 0..ROUNDS {
            let Some(k) = super::crash::killable(cx, &options, &rules, out)? else {
                return Ok(());
            };
            let cut = self.round(cx, &rt, &k, round, seed, out)?;
            if cut > 0 {
                kills_mid += 1;
                in_flight += cut as u64;
                out.stats.rule(Rule::CrashRenameOneOf);
            }
        }
        out.detail = Some(format!(
            "{kills_mid} of {ROUNDS} kills landed while renames were in flight ({in_flight} of {} renames cut); every file was at its source or its destination, whole, and nothing else was left",
            ROUNDS * FILES as u64
        ));
        if kills_mid == 0 {
            out.not_checked = Some(NotChecked::NotRun(format!(
                "none of {ROUNDS} kills landed while a rename was in flight: nothing was checked of a crash"
            )));
        }
        Ok(())
    }
}

impl CrashRename {
    /// Sets up the round's files, the `to` directory, and returns the mode they carry.
    fn setup(
        &self,
        world: &dyn crate::world::World,
        round: u64,
        prefix: &str,
        modes: bool,
    ) -> Result<Option<u32>, Failure> {
        let setup = |e: String| fail(FailureKind::Setup, e);
        let mode = modes.then_some(0o640);
        for i in 0..FILES {
            world
                .apply(&WorldEffect::CreateFile {
                    path: format!("{prefix}{}", src(i)),
                    bytes: content(round, i).into(),
                    mode: mode.unwrap_or(0o644),
                })
                .map_err(|e| setup(e.to_string()))?;
        }
        world
            .apply(&WorldEffect::CreateDir {
                path: format!("{prefix}r/to"),
            })
            .map_err(|e| setup(e.to_string()))?;
        Ok(mode)
    }

    /// The burst: every file renamed at once; returns how many answered success.
    async fn burst(
        fs: Arc<dyn FileSystem>,
        root: String,
        prefix: String,
        policy: Option<seam::SandboxPolicy>,
        answered: Arc<AtomicUsize>,
        ok: Arc<Vec<AtomicBool>>,
    ) {
        let mut tasks = Vec::new();
        for i in 0..FILES {
            let (fs, root, prefix, policy, answered, ok) = (
                fs.clone(),
                root.clone(),
                prefix.clone(),
                policy.clone(),
                answered.clone(),
                ok.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let r = fs
                    .rename(
                        &format!("{prefix}{}", src(i)),
                        &format!("{prefix}{}", dst(i)),
                        ResolveOptions { cwd: Some(&root) },
                        &RenameOptions::default(),
                        policy.as_ref(),
                        &Signal::none(),
                    )
                    .await;
                if r.is_ok() {
                    ok[i].store(true, Ordering::SeqCst);
                }
                answered.fetch_add(1, Ordering::SeqCst);
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
    }

    /// One round; returns how many renames were still in flight when the kill landed.
    fn round(
        &self,
        cx: &Context,
        rt: &tokio::runtime::Runtime,
        k: &Killable,
        round: u64,
        seed: u64,
        out: &mut Run,
    ) -> Result<usize, Failure> {
        let Subject { fs, world, .. } = &k.subject;
        let setup = |e: String| fail(FailureKind::Setup, e);
        let root = world.root_display();
        let policy = super::let_through(fs.as_ref(), &root);
        let modes = fs.capabilities().modes;
        // The rehearsal: the same burst, uncut, under `q/`, timed.
        self.setup(world.as_ref(), round, "q/", modes)?;
        let started = std::time::Instant::now();
        let ok: Arc<Vec<AtomicBool>> =
            Arc::new((0..FILES).map(|_| AtomicBool::new(false)).collect());
        rt.block_on(Self::burst(
            fs.clone(),
            root.clone(),
            "q/".into(),
            policy.clone(),
            Arc::new(AtomicUsize::new(0)),
            ok.clone(),
        ));
        let took = started.elapsed();
        if ok.iter().any(|o| !o.load(Ordering::SeqCst)) {
            return Err(setup(
                "an uncut rename of the rehearsal failed: the backend cannot rename a file into an existing directory".into(),
            ));
        }
        world
            .apply(&WorldEffect::Remove { path: "q".into() })
            .map_err(|e| setup(e.to_string()))?;
        // The round itself.
        let mode = self.setup(world.as_ref(), round, "", modes)?;
        let draw = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (round + 0x51).wrapping_mul(0xBF58_476D_1CE4_E5B9))
            % 1024;
        let delay = took.mul_f64(draw as f64 / 1024.0);
        let answered = Arc::new(AtomicUsize::new(0));
        let ok: Arc<Vec<AtomicBool>> =
            Arc::new((0..FILES).map(|_| AtomicBool::new(false)).collect());
        let cut = Arc::new(AtomicUsize::new(0));
        let killer = {
            let (kill, answered, cut) = (k.kill.clone(), answered.clone(), cut.clone());
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                cut.store(FILES - answered.load(Ordering::SeqCst), Ordering::SeqCst);
                kill();
            })
        };
        rt.block_on(Self::burst(
            fs.clone(),
            root.clone(),
            String::new(),
            policy,
            answered,
            ok.clone(),
        ));
        let _ = killer.join();
        let cut = cut.load(Ordering::SeqCst);
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
        let what = format!(
            "round {round}: {FILES} renames from r/from to r/to, killed {} µs in ({cut} still in flight)",
            delay.as_micros()
        );
        self.judge(&snap, round, mode, &ok, &what, out)?;
        // A listing through the fresh instance agrees.
        let none = Signal::none();
        let opts = ResolveOptions { cwd: Some(&root) };
        let mut listed = Vec::new();
        for dir in ["r/from", "r/to"] {
            let t = rt
                .block_on(rec.fs.resolve(dir, opts, &none))
                .map_err(|e| setup(e.message().to_string()))?;
            match rt.block_on(rec.fs.list_dir(&t, &none)) {
                Ok(entries) => {
                    listed.extend(entries.into_iter().map(|e| format!("{dir}/{}", e.name)))
                }
                Err(e) if e.code() == seam::FsErrorCode::NotFound => {}
                Err(e) => {
                    return Err(fail(
                        FailureKind::Crash,
                        format!("{what}: listing {dir} after recovery: {}", e.message()),
                    ));
                }
            }
        }
        let in_world: Vec<String> = snap
            .iter()
            .filter(|(p, e)| matches!(e, SnapEntry::File { .. }) && p.starts_with("r/"))
            .map(|(p, _)| p.clone())
            .collect();
        let mut listed_sorted = listed.clone();
        listed_sorted.sort();
        out.stats.check();
        if listed_sorted != in_world {
            return Err(fail(
                FailureKind::Crash,
                format!(
                    "{what}: a listing after recovery ({listed_sorted:?}) is not what is on disk ({in_world:?})"
                ),
            ));
        }
        let _ = rec.world.apply(&WorldEffect::Remove { path: "r".into() });
        drop(rec);
        Ok(cut)
    }

    /// Every file at exactly one of its two places, whole, with its mode; nothing else.
    fn judge(
        &self,
        snap: &BTreeMap<String, SnapEntry>,
        round: u64,
        mode: Option<u32>,
        ok: &[AtomicBool],
        what: &str,
        out: &mut Run,
    ) -> Result<(), Failure> {
        let crash = |m: String| fail(FailureKind::Crash, format!("{what}: {m}"));
        let mut expected = vec!["r".to_string(), "r/from".to_string(), "r/to".to_string()];
        for (i, answered_ok) in ok.iter().enumerate() {
            out.stats.check();
            let want = content(round, i);
            let (s, d) = (src(i), dst(i));
            let at = |p: &str| -> Result<bool, Failure> {
                match snap.get(p) {
                    None => Ok(false),
                    Some(SnapEntry::File { bytes, mode: m }) => {
                        if *bytes != want {
                            return Err(crash(format!(
                                "{p:?} holds {} bytes that are not the file's {} (a torn or partial copy)",
                                bytes.len(),
                                want.len()
                            )));
                        }
                        if let (Some(w), Some(g)) = (mode, m)
                            && w != *g
                        {
                            return Err(crash(format!(
                                "{p:?} has mode {g:o}, not the file's own {w:o} (a copy, not the file)"
                            )));
                        }
                        Ok(true)
                    }
                    Some(other) => Err(crash(format!("{p:?} is not a file: {other:?}"))),
                }
            };
            match (at(&s)?, at(&d)?) {
                (true, true) => {
                    return Err(crash(format!(
                        "{s:?} is duplicated: it is at {s:?} and at {d:?}"
                    )));
                }
                (false, false) => {
                    return Err(crash(format!(
                        "{s:?} is lost: neither at {s:?} nor at {d:?}"
                    )));
                }
                (true, false) if answered_ok.load(Ordering::SeqCst) => {
                    return Err(crash(format!(
                        "the rename of {s:?} answered success, but the file is still at its source"
                    )));
                }
                (true, false) => expected.push(s),
                (false, true) => expected.push(d),
            }
        }
        out.stats.check();
        let litter: Vec<&String> = snap.keys().filter(|p| !expected.contains(p)).collect();
        if !litter.is_empty() {
            return Err(crash(format!(
                "what the killed backend left is there besides the files: {litter:?}"
            )));
        }
        Ok(())
    }
}
