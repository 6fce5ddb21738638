//! Durability order, seen from outside. A process kill cannot show a missing fsync (the page
//! cache survives it), so the system calls of durable writes are traced with `strace` and the
//! order is checked: for every publication of the target, the staged file was fsynced before it
//! was linked or renamed into place, the directory was fsynced after, and the call returned only
//! then. The same checker must fail a run without fsyncs (the provider's own relaxed mode) and a
//! real trace with the directory fsync taken out. Without `strace` on the PATH the test says it
//! was skipped and why.

use seam::{FileSystem, ResolveOptions, Signal};
use seam_local::{Durability, LocalConfig, LocalFileSystem, Staging};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Writes per traced run.
const WRITES: usize = 6;

/// The traced child: durable (or relaxed) writes of `t`, each followed by a `returned-N` marker.
#[test]
fn traced_writer() {
    let Ok(dir) = std::env::var("SEAM_TRACED_DIR") else {
        return;
    };
    let durability = match std::env::var("SEAM_TRACED_DURABILITY").as_deref() {
        Ok("none") => Durability::None,
        _ => Durability::Full,
    };
    let staging = match std::env::var("SEAM_TRACED_STAGING").as_deref() {
        Ok("directory") => Staging::Directory,
        _ => Staging::Auto,
    };
    let fs = LocalFileSystem::new(
        LocalConfig::new(dir.clone())
            .with_durability(durability)
            .with_staging(staging),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let t = rt
        .block_on(fs.resolve("t", ResolveOptions::default(), &Signal::none()))
        .expect("resolve");
    for i in 0..WRITES {
        rt.block_on(fs.write_text(&t, &format!("write {i}\n"), None, None, &Signal::none()))
            .expect("write");
        std::fs::write(Path::new(&dir).join(format!("returned-{i}")), b"").expect("marker");
    }
}

/// One traced system call, in completion order.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    args: String,
    result: String,
}

/// Parses `strace -f` output, joining `<unfinished ...>` with `<... resumed>` (a call is placed
/// where it completed).
fn parse(trace: &str) -> Vec<Call> {
    let mut pending: HashMap<String, (String, String)> = HashMap::new();
    let mut out = Vec::new();
    for line in trace.lines() {
        let (pid, rest) = line.split_once(' ').unwrap_or(("", line));
        let rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("<... ") {
            let Some((name, tail)) = after.split_once(" resumed>") else {
                continue;
            };
            if let Some((n, args)) = pending.remove(pid)
                && n == name
            {
                let (more, result) = tail.rsplit_once(" = ").unwrap_or((tail, ""));
                out.push(Call {
                    name: n,
                    args: format!("{args}{more}"),
                    result: result.trim().to_string(),
                });
            }
            continue;
        }
        let Some((name, args)) = rest.split_once('(') else {
            continue;
        };
        if let Some(args) = args.strip_suffix(" <unfinished ...>") {
            pending.insert(pid.to_string(), (name.to_string(), args.to_string()));
            continue;
        }
        let (args, result) = args.rsplit_once(" = ").unwrap_or((args, ""));
        out.push(Call {
            name: name.to_string(),
            args: args.to_string(),
            result: result.trim().to_string(),
        });
    }
    out
}

/// The first argument of a call (a descriptor, for fsync).
fn first_arg(c: &Call) -> &str {
    c.args.split([',', ')']).next().unwrap_or("").trim()
}

/// Checks the durability order of every write in `calls`; `Err` says what broke first.
fn check_order(calls: &[Call]) -> Result<usize, String> {
    let mut dirs: HashMap<String, bool> = HashMap::new();
    let mut synced_file = false;
    let mut published = false;
    let mut synced_dir = false;
    let mut checked = 0;
    for c in calls {
        match c.name.as_str() {
            "openat" | "open" => {
                let is_dir = c.args.contains("O_DIRECTORY") || c.args.contains("O_PATH");
                dirs.insert(c.result.clone(), is_dir);
                if c.args.contains("/returned-") {
                    if !published {
                        return Err(format!("write {checked} returned without publishing"));
                    }
                    if !synced_dir {
                        return Err(format!(
                            "write {checked} returned before its directory was fsynced"
                        ));
                    }
                    checked += 1;
                    synced_file = false;
                    published = false;
                    synced_dir = false;
                }
            }
            "fsync" | "fdatasync" if c.result == "0" => {
                let is_dir = dirs.get(first_arg(c)).copied().unwrap_or(false);
                match (is_dir, published) {
                    (false, false) => synced_file = true,
                    (true, true) => synced_dir = true,
                    _ => {}
                }
            }
            "renameat" | "renameat2" | "rename" | "linkat"
                if c.result == "0" && c.args.contains("\"t\"") =>
            {
                if !synced_file {
                    return Err(format!(
                        "write {checked}: published ({}) before the staged data was fsynced",
                        c.name
                    ));
                }
                published = true;
            }
            _ => {}
        }
    }
    if checked == 0 {
        return Err("no write returned in the trace".into());
    }
    Ok(checked)
}

/// The trace with every fsync of a directory taken out (descriptors are tracked in order, since
/// numbers are reused).
fn strip_dir_fsyncs(calls: &[Call]) -> Vec<Call> {
    let mut dirs: HashMap<String, bool> = HashMap::new();
    let mut out = Vec::new();
    for c in calls {
        if c.name == "openat" || c.name == "open" {
            dirs.insert(
                c.result.clone(),
                c.args.contains("O_DIRECTORY") || c.args.contains("O_PATH"),
            );
        }
        let dir_sync = (c.name == "fsync" || c.name == "fdatasync")
            && dirs.get(first_arg(c)).copied().unwrap_or(false);
        if !dir_sync {
            out.push(c.clone());
        }
    }
    out
}

fn strace_available() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the test `child` of this binary under `strace`, tracing `calls`, with `env` set and its
/// directory in `dir_var`; `None` when the machine cannot (no strace, ptrace refused).
fn trace_child(child: &str, dir_var: &str, env: &[(&str, &str)], calls: &str) -> Option<Vec<Call>> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = std::fs::canonicalize(tmp.path()).expect("canonical");
    let log = dir.join("strace.log");
    std::fs::create_dir(dir.join("w")).expect("child dir");
    let status = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .args(["-e", calls])
        .arg(std::env::current_exe().expect("test binary"))
        .args(["--exact", child, "--nocapture", "--test-threads=1"])
        .env(dir_var, dir.join("w"))
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        eprintln!("strace could not trace the child ({status}): skipped");
        return None;
    }
    Some(parse(&std::fs::read_to_string(&log).ok()?))
}

/// Traces the child writer.
fn traced(durability: &str, staging: &str) -> Option<Vec<Call>> {
    trace_child(
        "traced_writer",
        "SEAM_TRACED_DIR",
        &[
            ("SEAM_TRACED_DURABILITY", durability),
            ("SEAM_TRACED_STAGING", staging),
        ],
        "trace=openat,open,fsync,fdatasync,rename,renameat,renameat2,linkat",
    )
}

#[test]
fn durable_writes_sync_the_staged_data_before_publishing_and_the_directory_before_returning() {
    if !strace_available() {
        eprintln!("SKIPPED: strace is not on the PATH, so the durability order cannot be traced");
        return;
    }
    for staging in ["tmpfile", "directory"] {
        let Some(calls) = traced("full", staging) else {
            eprintln!("SKIPPED: strace is installed but could not trace a child here");
            return;
        };
        assert_eq!(
            check_order(&calls),
            Ok(WRITES),
            "{staging}: {:#?}",
            calls.iter().rev().take(40).collect::<Vec<_>>()
        );

        // The same real trace without the directory fsyncs must be caught...
        let without_dir_sync = strip_dir_fsyncs(&calls);
        let caught = check_order(&without_dir_sync).expect_err("a missing directory fsync");
        assert!(caught.contains("directory was fsynced"), "{caught}");
        println!(
            "{staging}: {WRITES} durable writes in order; without the directory fsync: {caught}"
        );
    }
    // ...and so must the provider's own relaxed mode, which skips every fsync.
    let Some(relaxed) = traced("none", "tmpfile") else {
        return;
    };
    let caught = check_order(&relaxed).expect_err("relaxed writes do not fsync");
    assert!(caught.contains("fsynced"), "{caught}");
    println!("relaxed: {caught}");
}

#[test]
fn the_parser_joins_unfinished_calls() {
    let trace = "10 openat(AT_FDCWD, \"/w\", O_RDONLY|O_DIRECTORY) = 3\n\
                 11 fsync(4 <unfinished ...>\n\
                 10 openat(3, \"x\", O_RDONLY) = 5\n\
                 11 <... fsync resumed>) = 0\n";
    let calls = parse(trace);
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2].name, "fsync");
    assert_eq!(first_arg(&calls[2]), "4");
    assert_eq!(calls[2].result, "0");
    assert_eq!(calls[0].result, "3");
}

/// Renames per traced run.
const RENAMES: usize = 4;

/// The traced child of the rename test: durable (or relaxed) renames of `a/s<i>` to `b/t<i>`,
/// each followed by a `returned-N` marker.
#[test]
fn traced_renamer() {
    let Ok(dir) = std::env::var("SEAM_TRACED_RENAME_DIR") else {
        return;
    };
    let durability = match std::env::var("SEAM_TRACED_DURABILITY").as_deref() {
        Ok("none") => Durability::None,
        _ => Durability::Full,
    };
    let fs = LocalFileSystem::new(LocalConfig::new(dir.clone()).with_durability(durability));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let base = Path::new(&dir);
    std::fs::create_dir_all(base.join("a")).expect("a");
    std::fs::create_dir_all(base.join("b")).expect("b");
    for i in 0..RENAMES {
        std::fs::write(base.join(format!("a/s{i}")), format!("file {i}\n")).expect("seed");
    }
    for i in 0..RENAMES {
        rt.block_on(fs.rename(
            &format!("a/s{i}"),
            &format!("b/t{i}"),
            ResolveOptions::default(),
            &seam::RenameOptions::default(),
            None,
            &Signal::none(),
        ))
        .expect("rename");
        std::fs::write(base.join(format!("returned-{i}")), b"").expect("marker");
    }
}

/// Checks that every rename was made durable before it returned: after the `renameat2` that
/// moved the file, both directories it changed were fsynced (the destination's and the
/// source's), and only then did the call return.
fn check_rename_order(calls: &[Call]) -> Result<usize, String> {
    let mut dirs: HashMap<String, bool> = HashMap::new();
    let mut renamed = false;
    // The descriptors of the directories fsynced since the rename: both must be there (both
    // directories stay open across the call, so their descriptors differ).
    let mut synced: Vec<String> = Vec::new();
    let mut checked = 0;
    for c in calls {
        match c.name.as_str() {
            "openat" | "open" => {
                let is_dir = c.args.contains("O_DIRECTORY") || c.args.contains("O_PATH");
                dirs.insert(c.result.clone(), is_dir);
                if c.args.contains("/returned-") {
                    if !renamed {
                        return Err(format!("rename {checked} returned without renaming"));
                    }
                    if synced.len() < 2 {
                        return Err(format!(
                            "rename {checked} returned after {} directory fsync(s) of distinct directories: both directories must be fsynced after the rename",
                            synced.len()
                        ));
                    }
                    checked += 1;
                    renamed = false;
                    synced.clear();
                }
            }
            "fsync" | "fdatasync"
                if c.result == "0"
                    && renamed
                    && dirs.get(first_arg(c)).copied().unwrap_or(false) =>
            {
                let fd = first_arg(c).to_string();
                if !synced.contains(&fd) {
                    synced.push(fd);
                }
            }
            "renameat" | "renameat2" | "rename" if c.result == "0" && c.args.contains("\"t") => {
                renamed = true;
                synced.clear();
            }
            _ => {}
        }
    }
    if checked == 0 {
        return Err("no rename returned in the trace".into());
    }
    Ok(checked)
}

/// The trace with the second directory fsync after each rename turned into a repeat of the
/// first (the same descriptor fsynced twice).
fn same_dir_twice(calls: &[Call]) -> Vec<Call> {
    let mut dirs: HashMap<String, bool> = HashMap::new();
    let mut first: Option<String> = None;
    let mut out = Vec::new();
    for c in calls {
        let mut c = c.clone();
        match c.name.as_str() {
            "openat" | "open" => {
                dirs.insert(
                    c.result.clone(),
                    c.args.contains("O_DIRECTORY") || c.args.contains("O_PATH"),
                );
            }
            "renameat" | "renameat2" | "rename" => first = None,
            "fsync" | "fdatasync" if dirs.get(first_arg(&c)).copied().unwrap_or(false) => {
                match &first {
                    None => first = Some(first_arg(&c).to_string()),
                    Some(fd) => {
                        let own = first_arg(&c).to_string();
                        c.args = c.args.replacen(&own, fd, 1);
                    }
                }
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Traces the child renamer.
fn traced_renames(durability: &str) -> Option<Vec<Call>> {
    trace_child(
        "traced_renamer",
        "SEAM_TRACED_RENAME_DIR",
        &[("SEAM_TRACED_DURABILITY", durability)],
        "trace=openat,open,fsync,fdatasync,rename,renameat,renameat2",
    )
}

#[test]
fn durable_renames_sync_both_directories_after_the_rename_and_before_returning() {
    if !strace_available() {
        eprintln!("SKIPPED: strace is not on the PATH, so the durability order cannot be traced");
        return;
    }
    let Some(calls) = traced_renames("full") else {
        eprintln!("SKIPPED: strace is installed but could not trace a child here");
        return;
    };
    assert_eq!(
        check_rename_order(&calls),
        Ok(RENAMES),
        "{:#?}",
        calls.iter().rev().take(40).collect::<Vec<_>>()
    );
    // The same real trace without its directory fsyncs is caught, and so is the relaxed mode.
    let caught = check_rename_order(&strip_dir_fsyncs(&calls)).expect_err("no directory fsync");
    assert!(caught.contains("directory fsync"), "{caught}");
    // Fsyncing one of the two directories twice is caught too: the trace with every fsync of
    // the source's directory made an fsync of the destination's.
    let one_dir = same_dir_twice(&calls);
    let caught_one = check_rename_order(&one_dir).expect_err("one directory fsynced twice");
    assert!(caught_one.contains("distinct directories"), "{caught_one}");
    let Some(relaxed) = traced_renames("none") else {
        return;
    };
    let caught_relaxed = check_rename_order(&relaxed).expect_err("relaxed renames do not fsync");
    assert!(
        caught_relaxed.contains("directory fsync"),
        "{caught_relaxed}"
    );
    println!("{RENAMES} durable renames in order; without the directory fsyncs: {caught}");
}
