//! `seam check`: the suite against one or more providers, with a readable report, optional JSON
//! and JUnit files, and every failing trace saved with the command that replays it.

use crate::Usage;
use crate::progress::Display;
use crate::select::factory;
pub use crate::soak::Seeds;
use seam_cli::unprivileged::SelfExec;
use seam_conformance::{
    MessageCheck, Report, SequenceConfig, Status, SuiteConfig, SuiteError, Timing, Verdict,
    junit_document, property_names, run_suite,
};
use seam_remote::shell_word;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// What `seam check` was asked to do.
pub struct CheckArgs {
    pub providers: Vec<String>,
    pub cases: u32,
    pub max_steps: usize,
    pub seeds: Seeds,
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub trace_dir: PathBuf,
    pub properties: Vec<String>,
    pub against: Option<String>,
    pub messages: MessageCheck,
    pub timing: Timing,
    pub fault: Option<String>,
    /// How many providers are checked at once.
    pub jobs: usize,
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// What one seed's run over every provider gave.
struct SeedRun {
    reports: Vec<Report>,
    /// A report file or trace could not be written, or a backend could not start.
    io_failed: bool,
    /// Providers that could not be checked at all, with why.
    not_started: Vec<(String, String)>,
}

/// Exit status: 0 pass, 1 a property failed (or a file could not be written), 3 incomplete.
pub fn run(args: &CheckArgs) -> Result<ExitCode, Usage> {
    // Every case of the command in one run directory, removed when the command ends.
    let _run = seam_conformance::case_dirs::hold();
    seam_remote_testkit::give_adapters_temp_dirs();
    let known = property_names();
    for p in &args.properties {
        if !known.contains(&p.as_str()) {
            return Err(Usage(format!(
                "unknown property {p:?} (known: {})",
                known.join(", ")
            )));
        }
    }
    let names: Vec<String> = if args.providers.is_empty() {
        seam_cli::table::shipped_names()
            .map(str::to_string)
            .collect()
    } else {
        args.providers.clone()
    };
    let factories = names
        .iter()
        .map(|n| factory(n, args.fault.as_deref()).map(|f| (n.clone(), f)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Usage)?;
    // One reference for every provider when asked; else the shipped pairs (sandbox and remote
    // against local).
    let against = match &args.against {
        Some(name) => Some(
            seam_cli::table::factory(name)
                .map(seam_cli::providers::Reference::around)
                .map_err(|e| Usage(format!("--against: {e}")))?,
        ),
        None => None,
    };
    let mut all: Vec<Report> = Vec::new();
    let mut io_failed = false;
    match args.seeds {
        Seeds::One { seed, given } => {
            println!(
                "seed {seed}{}",
                if given {
                    String::new()
                } else {
                    format!(" (fresh; reproduce this run with --seed {seed})")
                }
            );
            let run = run_seed(args, seed, &factories, against.as_ref(), false)?;
            io_failed |= run.io_failed;
            all.extend(run.reports);
        }
        Seeds::Count(_) | Seeds::For(_) => {
            let mut soak = crate::soak::Soak::new(args.seeds, &names);
            while let Some(seed) = soak.next_seed() {
                let run = run_seed(args, seed, &factories, against.as_ref(), true)?;
                io_failed |= run.io_failed;
                soak.record(seed, &run.reports, &run.not_started, |name| {
                    reproduce(args, name, seed)
                });
                all.extend(run.reports);
            }
            soak.finish();
        }
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&all).unwrap_or_default();
        if let Err(e) = write_file(path, &json) {
            eprintln!("seam: {e}");
            io_failed = true;
        }
    }
    if let Some(path) = &args.junit
        && let Err(e) = write_file(path, &junit_document(&all))
    {
        eprintln!("seam: {e}");
        io_failed = true;
    }
    // A call given up on keeps its subject (an adapter process, the server this check started)
    // alive on its thread: stop what is left rather than leave it running after we exit.
    drop(factories);
    drop(against);
    let left = seam_remote::children::stop_all();
    if left > 0 {
        eprintln!(
            "seam: stopped {left} process(es) that calls given up on had left running (adapters, servers)"
        );
    }
    // A power-loss cut given up on keeps its layer mounted: detached here, its mount point is an
    // empty directory the removal below can take.
    let mounts = seam_powercut::detach_all();
    if mounts > 0 {
        eprintln!("seam: detached {mounts} power-loss mount(s) that calls given up on had left");
    }
    let cases = seam_conformance::case_dirs::remove_abandoned();
    if cases > 0 {
        eprintln!("seam: removed {cases} case director(ies) that calls given up on had left");
    }
    let failed = io_failed || all.iter().any(|r| r.verdict == Verdict::Fail);
    let incomplete = all
        .iter()
        .any(|r| matches!(r.verdict, Verdict::Incomplete(_)));
    Ok(if failed {
        ExitCode::from(1)
    } else if incomplete {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// What checking one provider at one seed gave.
struct ProviderRun {
    report: Option<Report>,
    /// What to print for it, in order (its report, where its traces went).
    text: String,
    /// Said on stderr (a file not written, a backend that could not start).
    errors: Vec<String>,
    not_started: Option<(String, String)>,
}

/// Every provider at one seed, `args.jobs` at a time, each provider's report printed whole and
/// in the order the providers were given (as soon as it and the ones before it are done). In a
/// soak (`quiet`) only a failing report is printed whole: the soak prints one line per run.
fn run_seed(
    args: &CheckArgs,
    seed: u64,
    factories: &[(String, Arc<dyn seam_conformance::Factory>)],
    against: Option<&Arc<dyn seam_conformance::Factory>>,
    quiet: bool,
) -> Result<SeedRun, Usage> {
    let jobs = args.jobs.clamp(1, factories.len().max(1));
    let board = crate::progress::Board::new();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<Result<ProviderRun, Usage>>>> =
        std::sync::Mutex::new((0..factories.len()).map(|_| None).collect());
    let ready = std::sync::Condvar::new();
    let mut out = SeedRun {
        reports: Vec::new(),
        io_failed: false,
        not_started: Vec::new(),
    };
    // Backends behind a wire first (a round trip per call: the longest runs), so that the run
    // does not end with one of them alone.
    let mut order: Vec<usize> = (0..factories.len()).collect();
    order.sort_by_key(|&i| !over_the_wire(&factories[i].0));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&i) = order.get(n) else {
                        return;
                    };
                    let (name, factory) = &factories[i];
                    let run = check_one(args, seed, name, factory, against, quiet, &board);
                    let mut slots = done.lock().unwrap_or_else(|p| p.into_inner());
                    slots[i] = Some(run);
                    ready.notify_all();
                }
            });
        }
        // Print in order, each as soon as it and every one before it are done.
        for i in 0..factories.len() {
            let mut slots = done.lock().unwrap_or_else(|p| p.into_inner());
            while slots[i].is_none() {
                slots = ready.wait(slots).unwrap_or_else(|p| p.into_inner());
            }
            let run = slots[i].take();
            drop(slots);
            match run {
                Some(Ok(run)) => {
                    board.clear();
                    print!("{}", run.text);
                    for e in &run.errors {
                        eprintln!("seam: {e}");
                    }
                    out.io_failed |= !run.errors.is_empty();
                    out.not_started.extend(run.not_started);
                    out.reports.extend(run.report);
                }
                Some(Err(usage)) => return Err(usage),
                None => {}
            }
        }
        Ok(())
    })?;
    board.clear();
    Ok(out)
}

/// Whether a provider is reached over the wire protocol (the remote provider, a server, an
/// adapter).
fn over_the_wire(name: &str) -> bool {
    name == "remote"
        || ["exec:", "unix:", "tcp:"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// One provider at one seed: its report, and what to print for it.
fn check_one(
    args: &CheckArgs,
    seed: u64,
    name: &str,
    factory: &Arc<dyn seam_conformance::Factory>,
    against: Option<&Arc<dyn seam_conformance::Factory>>,
    quiet: bool,
    board: &crate::progress::Board,
) -> Result<ProviderRun, Usage> {
    use std::fmt::Write as _;
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("seam"));
    let mut run = ProviderRun {
        report: None,
        text: String::new(),
        errors: Vec::new(),
        not_started: None,
    };
    let config = SuiteConfig {
        sequences: SequenceConfig {
            cases: args.cases,
            max_steps: args.max_steps,
            seed,
            messages: args.messages,
            ..SequenceConfig::default()
        },
        unprivileged: Some(Arc::new(SelfExec {
            exe: exe.clone(),
            provider: name.to_string(),
        })),
        only: args.properties.clone(),
        timing: args.timing,
        agent: Some(Arc::new(seam_cli::agent::ToolAgentFactory)),
        reference: match against {
            Some(r) => Some(r.clone()),
            None => seam_cli::table::reference(name),
        },
        scratch: Some(Arc::new(seam_conformance::case_dirs::RunScratch)),
    };
    let reference_name = config.reference.as_ref().map(|r| r.name());
    // A server someone else started may still be on its way up.
    if (name.starts_with("unix:") || name.starts_with("tcp:"))
        && let Ok(address) = name.parse::<seam_remote::Address>()
        && let Err(e) = seam_remote_testkit::wait_listening(&address, args.timing.start_after)
    {
        run.errors.push(format!("{}: {e}", factory.name()));
        run.not_started = Some((name.to_string(), e.to_string()));
        return Ok(run);
    }
    let mut display = Display::new(&factory.name(), board);
    let report = run_suite(factory.clone(), &config, &mut |p| {
        // Interrupted: the properties rushing to their end meanwhile are not progress.
        if !seam_cli::interrupt::is_interrupted() {
            display.show(&p);
        }
    });
    display.finish();
    // Interrupted meanwhile: what this run saw after its directories and backends were taken
    // away is no fact about the backend — no report, no trace; the cleanup ends the process.
    seam_cli::interrupt::unless_interrupted(());
    let report = match report {
        Ok(r) => r,
        // A usage mistake stops the command (exit 2); a backend that could not even start
        // fails its run (exit 1), and the next provider is checked.
        Err(e @ (SuiteError::UnknownProperty { .. } | SuiteError::Timing(_))) => {
            return Err(Usage(e.to_string()));
        }
        Err(e) => {
            run.errors.push(format!("{}: {e}", factory.name()));
            run.not_started = Some((name.to_string(), e.to_string()));
            return Ok(run);
        }
    };
    let shown = !quiet || report.verdict == Verdict::Fail;
    if shown {
        run.text.push_str(&report.render());
    }
    for p in report
        .properties
        .iter()
        .filter(|p| p.status == Status::Failed)
    {
        let Some(trace) = &p.trace else {
            continue;
        };
        // A soak keeps every seed's trace: the seed is in the name.
        let stem = if quiet {
            format!("{}-{}-{seed}", file_stem(&report.provider), p.name)
        } else {
            format!("{}-{}", file_stem(&report.provider), p.name)
        };
        let file = args.trace_dir.join(format!("{stem}.json"));
        if let Err(e) = write_file(&file, &trace.to_json()) {
            run.errors.push(e);
            continue;
        }
        // Absolute, and through this very binary: the command works from any directory, in a
        // source checkout or not.
        let file = std::path::absolute(&file).unwrap_or(file);
        let seam = exe.display().to_string();
        let _ = writeln!(run.text, "trace saved to {}", file.display());
        let _ = writeln!(
            run.text,
            "replay it with: {} replay {} --provider {}{}",
            shell_word(&seam),
            shell_word(&file.display().to_string()),
            shell_word(name),
            replay_flags(args)
        );
        // A divergence is two answers: the same steps on the other side.
        if p.failure_kind == Some(seam_conformance::FailureKind::Differential)
            && let Some(reference) = &reference_name
        {
            let _ = writeln!(
                run.text,
                "and on the reference: {} replay {} --provider {}{}",
                shell_word(&seam),
                shell_word(&file.display().to_string()),
                shell_word(reference),
                replay_flags(args)
            );
        }
    }
    if shown {
        run.text.push('\n');
    }
    run.report = Some(report);
    Ok(run)
}

/// The command (this binary's) that runs `provider` again at `seed` with every flag of this check that changes
/// what runs (the properties, breadth, reference, message strictness, limits, fault).
fn reproduce(args: &CheckArgs, provider: &str, seed: u64) -> String {
    // Through this very binary, as the replay line is: a user who ran `cargo run` has no `seam`
    // on the PATH.
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("seam"));
    let mut cmd = format!(
        "{} check --provider {} --seed {seed}",
        shell_word(&exe.display().to_string()),
        shell_word(provider)
    );
    for p in &args.properties {
        cmd.push_str(&format!(" --property {}", shell_word(p)));
    }
    let defaults = SequenceConfig::default();
    if args.cases != defaults.cases {
        cmd.push_str(&format!(" --cases {}", args.cases));
    }
    if args.max_steps != defaults.max_steps {
        cmd.push_str(&format!(" --max-steps {}", args.max_steps));
    }
    if let Some(a) = &args.against {
        cmd.push_str(&format!(" --against {}", shell_word(a)));
    }
    let default = Timing::default();
    if args.timing.slow_after != default.slow_after {
        cmd.push_str(&format!(
            " --slow-call {}",
            args.timing.slow_after.as_secs_f64()
        ));
    }
    cmd.push_str(&replay_flags(args));
    cmd
}

/// The flags of this check a replay of its traces needs to see the same thing: the fault, how
/// messages are compared, and the hang and start limits where they are not the defaults.
fn replay_flags(args: &CheckArgs) -> String {
    let mut flags = String::new();
    if let Some(f) = &args.fault {
        flags.push_str(&format!(" --fault {f}"));
    }
    if args.messages == MessageCheck::CodeOnly {
        flags.push_str(" --messages code-only");
    }
    let default = Timing::default();
    if args.timing.hang_after != default.hang_after {
        flags.push_str(&format!(
            " --call-timeout {}",
            args.timing.hang_after.as_secs_f64()
        ));
    }
    if args.timing.start_after != default.start_after {
        flags.push_str(&format!(
            " --start-timeout {}",
            args.timing.start_after.as_secs_f64()
        ));
    }
    flags
}

/// A provider name as a short file name: a shipped provider's name as it is (`:` kept); a
/// server or an adapter command as its scheme, the file name of the script it runs, and a hash
/// of the whole name, so that two commands never share a file and no name grows with the
/// command (`exec-dict_backend.js-1b2c3d4e`). Anything but letters, digits, `-`, `_`, `.` and
/// `:` becomes `_`.
fn file_stem(provider: &str) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let Some((scheme, rest)) = provider
        .split_once(':')
        .filter(|(s, _)| matches!(*s, "exec" | "unix" | "tcp"))
    else {
        return safe(provider);
    };
    // The script the command runs (the first word with a script's extension), else the last
    // word that names a file (a socket), by its file name; never a flag.
    let words: Vec<&str> = rest
        .split_whitespace()
        .filter(|w| !w.starts_with('-'))
        .collect();
    const SCRIPTS: &[&str] = &[".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh", ".pl"];
    let named = words
        .iter()
        .find(|w| SCRIPTS.iter().any(|x| w.ends_with(x)))
        .or_else(|| {
            words
                .iter()
                .rev()
                .find(|w| w.contains('/') || w.contains('.'))
        })
        .and_then(|w| w.trim_end_matches('/').rsplit('/').next())
        .filter(|w| !w.is_empty())
        .unwrap_or(scheme);
    // FNV-1a: stable across runs and builds (a trace's name must not change between them).
    let hash = provider.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    // No `:` in the name part (`tcp://host:7000`): some artifact stores refuse it.
    let named: String = safe(named).replace(':', "_").chars().take(40).collect();
    format!("{scheme}-{named}-{:08x}", hash & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::file_stem;
    use seam_remote::shell_word;

    #[test]
    fn provider_names_become_safe_file_names_and_shell_words() {
        assert_eq!(file_stem("sandbox:read-only"), "sandbox:read-only");
        assert_eq!(file_stem("local"), "local");
        let a = file_stem("exec:python3 /very/long/path/to/a/b.py --test-control");
        assert!(
            a.starts_with("exec-b.py-") && a.len() == "exec-b.py-".len() + 8,
            "{a}"
        );
        // Two commands over the same script are two files.
        assert_ne!(a, file_stem("exec:python3 /other/b.py --test-control"));
        assert_eq!(
            a,
            file_stem("exec:python3 /very/long/path/to/a/b.py --test-control")
        );
        assert!(file_stem("unix:/tmp/my.sock").starts_with("unix-my.sock-"));
        assert!(file_stem("exec:sh -c run").starts_with("exec-exec-"));
        // The script, not a flag's file or a config.
        assert!(
            file_stem("exec:python3 /a/store.py --listen=/tmp/x.sock --config ./c.json")
                .starts_with("exec-store.py-")
        );
        assert!(
            file_stem("tcp://host:7000").starts_with("tcp-host_7000-"),
            "{}",
            file_stem("tcp://host:7000")
        );
        let long = file_stem(&format!("exec:node /x/{}.js", "n".repeat(300)));
        assert!(long.len() < 60, "{long}");
        assert_eq!(shell_word("local"), "local");
        assert_eq!(shell_word("exec:python3 a.py"), "'exec:python3 a.py'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
