//! The local provider across processes: what threads in one process cannot show.
//!
//! * **Compare-and-swap across processes.** Several processes, each with its own provider over
//!   one directory, read the same version and then race guarded writes and edits at it, round
//!   after round: exactly one winner per round, every loser `FS_STALE_VERSION`, the file holding
//!   the winner's bytes — checked from a log each process writes and from the disk.
//! * **Crashes.** A process writes and edits in a loop and is killed with SIGKILL at random
//!   moments, hundreds of times: every target then holds one complete content it was given (old
//!   or new, never torn), no lock is left held (the next writer gets in at once), and the next
//!   writer in the directory sweeps the staging the dead one left.
//!
//! Both re-run this test binary as the child (`child_process`, which does nothing unless
//! `SEAM_CHILD` names a role), so the children are the real provider in a real process.

use seam::{EditRequest, FileSystem, FsErrorCode, ResolveOptions, Signal, WriteIntent};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Processes racing in each round.
const RACERS: usize = 4;
/// Rounds of the cross-process race (times `SEAM_SOAK`).
const ROUNDS: usize = 40;
/// Kills of the crash test, split over the two staging methods (times `SEAM_SOAK`).
const KILLS: usize = 200;

/// `SEAM_SOAK=N` multiplies the rounds and kills by N for a long soak (default 1). The racing
/// children read it too, so both sides agree on the number of rounds.
fn soak() -> usize {
    std::env::var("SEAM_SOAK")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| *n > 0)
        .unwrap_or(1)
}
/// Targets the crashing child works on.
const TARGETS: usize = 3;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

fn real(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .expect("canonical")
        .to_string_lossy()
        .into_owned()
}

fn spawn(role: &str, dir: &str, id: usize, staging: &str) -> Child {
    spawn_with(role, dir, id, staging, None)
}

/// [`spawn`], the child told where to say it is ready (`SEAM_CHILD_READY`).
fn spawn_with(role: &str, dir: &str, id: usize, staging: &str, ready: Option<&Path>) -> Child {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    if let Some(ready) = ready {
        cmd.env("SEAM_CHILD_READY", ready);
    }
    cmd.args([
        "--exact",
        "child_process",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("SEAM_CHILD", role)
    .env("SEAM_CHILD_DIR", dir)
    .env("SEAM_CHILD_ID", id.to_string())
    .env("SEAM_CHILD_STAGING", staging)
    .stdout(Stdio::null())
    .stderr(Stdio::inherit())
    .spawn()
    .expect("spawn the child")
}

fn wait_for(path: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while !path.exists() {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}

/// The child: a role named by `SEAM_CHILD`, or nothing (when the test harness runs it as an
/// ordinary test).
#[test]
fn child_process() {
    let Ok(role) = std::env::var("SEAM_CHILD") else {
        return;
    };
    let dir = std::env::var("SEAM_CHILD_DIR").expect("dir");
    let id: usize = std::env::var("SEAM_CHILD_ID")
        .expect("id")
        .parse()
        .expect("id");
    let staging = match std::env::var("SEAM_CHILD_STAGING").as_deref() {
        Ok("directory") => Staging::Directory,
        _ => Staging::Auto,
    };
    let fs = LocalFileSystem::new(
        LocalConfig::new(dir.clone())
            .with_durability(Durability::None)
            .with_staging(staging),
    );
    match role.as_str() {
        "racer" => racer(&fs, Path::new(&dir), id),
        "crasher" => crasher(&fs, id),
        other => panic!("unknown role {other}"),
    }
}

/// One racing process: per round, read the version, say so, wait for the start, race.
fn racer(fs: &LocalFileSystem, dir: &Path, id: usize) {
    let rt = runtime();
    let ctl = dir.join("ctl");
    let mut log = String::new();
    for r in 0..ROUNDS * soak() {
        assert!(
            wait_for(&ctl.join(format!("set-{r}")), Duration::from_secs(60)),
            "round {r} never set"
        );
        let t = rt
            .block_on(fs.resolve("t", ResolveOptions::default(), &Signal::none()))
            .expect("resolve");
        let v = rt
            .block_on(fs.stat(&t, &Signal::none()))
            .expect("stat")
            .expect("present")
            .version;
        std::fs::write(ctl.join(format!("ready-{r}-{id}")), b"").expect("ready");
        assert!(wait_for(
            &ctl.join(format!("go-{r}")),
            Duration::from_secs(60)
        ));
        let outcome = if (r + id).is_multiple_of(2) {
            rt.block_on(fs.write_text(
                &t,
                &format!("round {r} won by {id}\n"),
                Some(&WriteIntent::ReplaceIfVersion { version: v.clone() }),
                None,
                &Signal::none(),
            ))
            .map(|_| ())
        } else {
            rt.block_on(fs.edit_text(
                &t,
                &EditRequest {
                    old_string: "base".into(),
                    new_string: format!("won by {id}"),
                    replace_all: false,
                },
                Some(&v),
                None,
                &Signal::none(),
            ))
            .map(|_| ())
        };
        let word = match outcome {
            Ok(()) => "won".to_string(),
            Err(e) if e.code() == FsErrorCode::StaleVersion => "stale".to_string(),
            Err(e) => format!("error {}", e.code()),
        };
        log.push_str(&format!("{r} {id} {} {word}\n", v.as_str()));
        std::fs::write(ctl.join(format!("done-{r}-{id}")), b"").expect("done");
    }
    std::fs::write(ctl.join(format!("log-{id}")), log).expect("log");
}

#[test]
fn guarded_writes_and_edits_racing_across_processes_have_one_winner_per_round() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = real(tmp.path());
    let ctl = Path::new(&dir).join("ctl");
    std::fs::create_dir(&ctl).expect("ctl");
    let target = Path::new(&dir).join("t");
    let mut children: Vec<Child> = (0..RACERS)
        .map(|id| spawn("racer", &dir, id, "tmpfile"))
        .collect();
    let mut winners = Vec::new();
    for r in 0..ROUNDS * soak() {
        std::fs::write(&target, format!("round {r} base\n")).expect("base");
        std::fs::write(ctl.join(format!("set-{r}")), b"").expect("set");
        for id in 0..RACERS {
            assert!(wait_for(
                &ctl.join(format!("ready-{r}-{id}")),
                Duration::from_secs(60)
            ));
        }
        std::fs::write(ctl.join(format!("go-{r}")), b"").expect("go");
        for id in 0..RACERS {
            assert!(wait_for(
                &ctl.join(format!("done-{r}-{id}")),
                Duration::from_secs(60)
            ));
        }
        winners.push(std::fs::read_to_string(&target).expect("read back"));
    }
    for c in &mut children {
        assert!(c.wait().expect("wait").success(), "a racer failed");
    }
    let mut per_round: Vec<Vec<(usize, String, String)>> = vec![Vec::new(); ROUNDS * soak()];
    for id in 0..RACERS {
        let log = std::fs::read_to_string(ctl.join(format!("log-{id}"))).expect("log");
        for line in log.lines() {
            let parts: Vec<&str> = line.splitn(4, ' ').collect();
            let r: usize = parts[0].parse().expect("round");
            per_round[r].push((id, parts[2].to_string(), parts[3].to_string()));
        }
    }
    for (r, entries) in per_round.iter().enumerate() {
        assert_eq!(entries.len(), RACERS, "round {r}: every racer logged");
        let versions: Vec<&String> = entries.iter().map(|e| &e.1).collect();
        assert!(
            versions.windows(2).all(|w| w[0] == w[1]),
            "round {r}: the racers read different versions: {versions:?}"
        );
        let won: Vec<usize> = entries
            .iter()
            .filter(|e| e.2 == "won")
            .map(|e| e.0)
            .collect();
        assert_eq!(won.len(), 1, "round {r}: winners {won:?} ({entries:?})");
        for e in entries {
            assert!(
                e.2 == "won" || e.2 == "stale",
                "round {r}: racer {} got {}",
                e.0,
                e.2
            );
        }
        let expected = format!("won by {}", won[0]);
        assert!(
            winners[r].contains(&expected),
            "round {r}: the file holds {:?}, the winner was {}",
            winners[r],
            won[0]
        );
    }
    println!(
        "{} rounds of {RACERS} processes: one winner each ({} stale losers)",
        ROUNDS * soak(),
        ROUNDS * soak() * (RACERS - 1)
    );
}

/// Every content the crashing child ever gives a target: two bodies, each with one of two
/// markers (an edit swaps the marker).
fn states(i: usize) -> Vec<String> {
    let body = |k: usize| format!("target {i} body {k}\n").repeat(4096);
    let mut out = Vec::new();
    for k in 0..2 {
        for m in ["marker-x", "marker-y"] {
            out.push(format!("{}{m}\n", body(k)));
        }
    }
    out
}

/// The crashing child: writes and edits its targets until it is killed.
fn crasher(fs: &LocalFileSystem, id: usize) {
    let rt = runtime();
    let mut n = id;
    // Says, after its first mutation, that it is in its loop (`SEAM_CHILD_READY`).
    let mut ready = std::env::var_os("SEAM_CHILD_READY");
    loop {
        if n > id
            && let Some(path) = ready.take()
        {
            std::fs::write(path, b"").expect("say ready");
        }
        n += 1;
        let i = n % TARGETS;
        let t = rt
            .block_on(fs.resolve(&format!("t{i}"), ResolveOptions::default(), &Signal::none()))
            .expect("resolve");
        if n.is_multiple_of(3) {
            let (old, new) = if n.is_multiple_of(2) {
                ("marker-x", "marker-y")
            } else {
                ("marker-y", "marker-x")
            };
            let edit = EditRequest {
                old_string: old.into(),
                new_string: new.into(),
                replace_all: false,
            };
            // Not found is fine: the marker was already swapped.
            let _ = rt.block_on(fs.edit_text(&t, &edit, None, None, &Signal::none()));
        } else {
            let s = &states(i)[(n / 3) % 2 * 2];
            rt.block_on(fs.write_text(&t, s, None, None, &Signal::none()))
                .expect("write");
        }
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn processes_killed_mid_mutation_leave_whole_files_no_lock_and_staging_the_next_writer_sweeps() {
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut swept = 0;
    let mut staged_at_kills = 0;
    let mut all_kills = 0;
    for (half, staging) in ["tmpfile", "directory"].into_iter().enumerate() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = real(tmp.path());
        for i in 0..TARGETS {
            std::fs::write(Path::new(&dir).join(format!("t{i}")), &states(i)[0]).expect("seed");
        }
        let ctl = tempfile::tempdir().expect("tempdir");
        // The planned kills; in the configuration whose staging has a name, more (up to ten
        // times as many) until one lands while a mutation has content staged — on a loaded
        // machine a kill lands there rarely (1 of 200 seen), and the test must not pass having
        // tested nothing mid-write, nor fail because the machine was busy.
        let planned = KILLS * soak() / 2;
        let mut kills = 0;
        while kills < planned
            || (staging == "directory" && staged_at_kills == 0 && kills < planned * 10)
        {
            let kill = kills;
            kills += 1;
            // The kill is timed from when the crasher is in its loop, not from its start: on a
            // loaded machine starting a process can take longer than the whole delay, and the
            // kills then landed before the first write.
            let ready = ctl.path().join(format!("ready-{kill}"));
            let mut child = spawn_with("crasher", &dir, kill + half, staging, Some(&ready));
            assert!(
                wait_for(&ready, Duration::from_secs(120)),
                "crasher {kill} ({staging}) did not start its loop within 120 s"
            );
            std::thread::sleep(Duration::from_micros(2_000 + next() % 18_000));
            child.kill().expect("SIGKILL");
            child.wait().expect("reap");
            // What this kill left staged (the next crasher, a writer too, sweeps it at once).
            staged_at_kills += names(Path::new(&dir))
                .iter()
                .filter(|n| n.starts_with(".seam-stage-"))
                .count();
            for i in 0..TARGETS {
                let got = std::fs::read(Path::new(&dir).join(format!("t{i}"))).expect("target");
                let got = String::from_utf8(got).expect("whole UTF-8");
                assert!(
                    states(i).contains(&got),
                    "kill {kill} ({staging}): t{i} holds {} bytes that are no content it was given",
                    got.len()
                );
            }
        }
        // The next writer: in at once (no lock outlives its process), and it sweeps what the
        // dead left staged (its clock says the staging is old enough to be abandoned).
        let left: Vec<String> = names(Path::new(&dir))
            .into_iter()
            .filter(|n| n.starts_with(".seam-stage-"))
            .collect();
        swept += left.len();
        let later = LocalFileSystem::new(
            LocalConfig::new(dir.clone())
                .with_clock(|| SystemTime::now() + Duration::from_secs(3600)),
        );
        let rt = runtime();
        // No lock outlives its process: the dead writers' file locks are all free now (asked
        // without waiting, so a loaded machine cannot make this look like a held lock).
        for i in 0..TARGETS {
            assert!(
                lock_is_free(&Path::new(&dir).join(format!("t{i}"))),
                "{staging}: a lock on t{i} held by a dead process"
            );
        }
        let t = rt
            .block_on(later.resolve("t0", ResolveOptions::default(), &Signal::none()))
            .expect("resolve");
        rt.block_on(later.write_text(&t, "after the crashes\n", None, None, &Signal::none()))
            .expect("the next writer gets in");
        let after: Vec<String> = names(Path::new(&dir));
        let expected: Vec<String> = (0..TARGETS).map(|i| format!("t{i}")).collect();
        assert_eq!(after, expected, "{staging}: staging left after the sweep");
        assert_eq!(
            std::fs::read(Path::new(&dir).join("t0")).expect("t0"),
            b"after the crashes\n"
        );
        all_kills += kills;
        println!(
            "{staging}: {kills} kills, {} staging entries left by the dead, all swept",
            left.len()
        );
    }
    println!(
        "{all_kills} kills survived, no torn file; {staged_at_kills} staging entries left at the kills, all swept by the next writer ({swept} by the last)"
    );
    assert!(
        staged_at_kills > 0,
        "no kill landed while a mutation had staged content: the crashes tested nothing mid-write"
    );
}

/// Whether nobody holds the `flock` on `path` (asked without waiting).
fn lock_is_free(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        // Never created: nobody can hold a lock on it.
        return true;
    };
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}
