//! `seam`: checks filesystem backends against the seam contract. It runs the conformance suite
//! against the shipped providers (`check`), replays saved counterexamples (`replay`), and hosts
//! the unprivileged child the permission property needs when run as root.

mod check;
mod mcp;
mod progress;
mod replay;
mod select;
mod serve;
mod soak;
mod workspace;

use clap::{Parser, Subcommand, ValueEnum};

/// The binary's allocator. `seam serve` streams a file as a ring of 256 KiB buffers allocated on
/// one thread and freed on another; glibc's malloc gives the pages back whenever the ring drains
/// and faults them in again on the next lap (thousands of page faults per 64 MiB stream), and
/// mimalloc keeps them. Measured in `docs/performance.md` ("Stream throughput"). Libraries stay
/// allocator-agnostic: only a binary chooses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use seam_cli::unprivileged;
use seam_conformance::MessageCheck;
use std::path::PathBuf;
use std::process::ExitCode;

/// Checks filesystem backends for AI-agent harnesses against the seam contract.
#[derive(Parser, Debug)]
#[command(name = "seam", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Messages {
    /// Error messages must equal the contract's texts.
    Exact,
    /// Only error codes are compared.
    CodeOnly,
}

impl From<Messages> for MessageCheck {
    fn from(m: Messages) -> Self {
        match m {
            Messages::Exact => MessageCheck::Exact,
            Messages::CodeOnly => MessageCheck::CodeOnly,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Mode {
    /// Nothing may change.
    ReadOnly,
    /// Only beneath the root may change.
    WorkspaceWrite,
    /// No fence.
    DangerFullAccess,
}

impl From<Mode> for seam::SandboxMode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::ReadOnly => seam::SandboxMode::ReadOnly,
            Mode::WorkspaceWrite => seam::SandboxMode::WorkspaceWrite,
            Mode::DangerFullAccess => seam::SandboxMode::DangerFullAccess,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the conformance suite against providers (all shipped ones by default).
    Check {
        /// A provider to check (repeatable); default: every shipped provider.
        #[arg(long = "provider", value_name = "NAME")]
        providers: Vec<String>,
        /// Generated sequences per provider.
        #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
        cases: u32,
        /// Longest generated sequence.
        #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        max_steps: u64,
        /// Seed of the run (same seed, same sequences, same shrunk trace); default: a fresh one,
        /// printed.
        #[arg(long, conflicts_with_all = ["seeds", "for_"])]
        seed: Option<u64>,
        /// A soak: run this many fresh seeds, one line per run, and list every run that was not
        /// a pass with the command that repeats it.
        #[arg(long, value_name = "N", conflicts_with = "for_", value_parser = clap::value_parser!(u64).range(1..))]
        seeds: Option<u64>,
        /// A soak for a time: fresh seeds until DURATION is spent (900, 90s, 15m, 2h); the seed
        /// under way when it runs out finishes.
        #[arg(long = "for", id = "for_", value_name = "DURATION")]
        for_: Option<String>,
        /// How many providers are checked at once (each report is still printed whole, in
        /// the order the providers were given); default: the machine's cores.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
        jobs: Option<u64>,
        /// Also write the report as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write the report as JUnit XML.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Where failing traces are saved.
        #[arg(long, value_name = "DIR", default_value = "seam-failures")]
        trace_dir: PathBuf,
        /// Run only this property (repeatable; a run without the core properties is incomplete).
        #[arg(long = "property", value_name = "NAME")]
        properties: Vec<String>,
        /// Compare each provider with this one, step by step (the `differential` property):
        /// any name `--provider` takes, e.g. `--provider exec:'…' --against local`.
        #[arg(long, value_name = "PROVIDER")]
        against: Option<String>,
        /// How strictly error messages are compared.
        #[arg(long, value_enum, default_value_t = Messages::Exact)]
        messages: Messages,
        /// Seconds a provider or world call may take before it is a hang and fails its
        /// property (the limit of an operation also grows to ten times its slowest call so far).
        #[arg(
            long,
            value_name = "SECS",
            default_value_t = 30.0,
            allow_negative_numbers = true
        )]
        call_timeout: f64,
        /// Seconds after which a call that returns is reported as slow (a warning, never a
        /// failure).
        #[arg(
            long,
            value_name = "SECS",
            default_value_t = 1.0,
            allow_negative_numbers = true
        )]
        slow_call: f64,
        /// Seconds making a subject may take (starting an `exec:` adapter, connecting, a
        /// server's world/case) before it is a hang.
        #[arg(
            long,
            value_name = "SECS",
            default_value_t = 60.0,
            allow_negative_numbers = true
        )]
        start_timeout: f64,
        /// Check a deliberately broken variant of the provider (a build with the `faults`
        /// feature only).
        #[cfg(feature = "faults")]
        #[arg(long, value_name = "FAULT")]
        fault: Option<String>,
    },
    /// Re-run a saved trace step by step and show where the provider departs from the model.
    Replay {
        /// The trace file.
        trace: PathBuf,
        /// The provider to replay against.
        #[arg(long, default_value = "local")]
        provider: String,
        /// Replay against a deliberately broken variant (a build with the `faults` feature only).
        #[cfg(feature = "faults")]
        #[arg(long, value_name = "FAULT")]
        fault: Option<String>,
        /// How strictly error messages are compared.
        #[arg(long, value_enum, default_value_t = Messages::Exact)]
        messages: Messages,
        /// Runs until the trace departs (each on a fresh subject); default 1, or 100 for a trace
        /// that runs steps at the same time.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
        attempts: Option<u32>,
        /// Seconds a call may take before the replay fails it as a hang.
        #[arg(
            long,
            value_name = "SECS",
            default_value_t = 30.0,
            allow_negative_numbers = true
        )]
        call_timeout: f64,
        /// Seconds making a subject may take (starting an `exec:` adapter, connecting).
        #[arg(
            long,
            value_name = "SECS",
            default_value_t = 60.0,
            allow_negative_numbers = true
        )]
        start_timeout: f64,
    },
    /// Serve the tools (read, write, edit, read_image, glob, grep, str_replace_editor, list,
    /// tree, info, read_many, roots, create_directory, move, delete) to an MCP client on stdio,
    /// with read-before-write, compare-and-swap edits, guarded moves and deletes, and
    /// containment in DIR.
    Mcp {
        /// The workspace: relative paths resolve against it; the only writable root under
        /// workspace-write.
        #[arg(long, value_name = "DIR", conflicts_with = "workspace")]
        root: Option<PathBuf>,
        /// A registered workspace (its id or root) instead of --root; a directory not
        /// registered yet is registered. Each call's mode and root come from the session.
        #[arg(long, value_name = "ID|PATH")]
        workspace: Option<String>,
        /// The workspace registry file (default: as `seam workspace`).
        #[arg(long, value_name = "FILE")]
        registry: Option<PathBuf>,
        /// The sandbox mode of the deployment (default workspace-write; not with a remote
        /// provider, whose server fences with its own).
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// The backend: local, or a server (unix:PATH, tcp://HOST:PORT with SEAM_TOKEN,
        /// exec:COMMAND); with a server, DIR is a directory in its world.
        #[arg(long, value_name = "NAME", default_value = "local")]
        provider: String,
        /// Let reads, listings and searches see outside the root (by default they are confined
        /// to it, as mutations are; danger-full-access reads anywhere regardless).
        #[arg(long)]
        read_anywhere: bool,
        /// Keep --root even when the MCP client names roots of its own (by default the
        /// client's roots replace it, and follow its roots/list_changed).
        #[arg(long)]
        ignore_client_roots: bool,
        /// The longest message accepted, in MiB; a longer one is answered with an error
        /// naming this limit, and the session goes on.
        #[arg(long, value_name = "MIB", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=4096))]
        max_message_mib: u64,
    },
    /// Host a provider over the wire protocol (docs/protocol.md) on a Unix socket, TCP or stdio.
    Serve {
        /// The directory served (with --test-control: where each test case's directory is made).
        #[arg(long, value_name = "DIR")]
        root: PathBuf,
        /// The provider hosted: local, sandbox:MODE (the sandbox's workspace is DIR) or memory
        /// (an empty in-memory store whose working directory DIR is made in it).
        #[arg(long, value_name = "NAME", default_value = "local")]
        provider: String,
        /// Where to listen: unix:PATH (created 0600), tcp:HOST:PORT (needs --token-file), or
        /// stdio.
        #[arg(long, value_name = "ADDRESS")]
        listen: String,
        /// A file whose content (trailing newline ignored) TCP clients must present.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// Offer the world/* methods `seam check` drives a server's storage with (testing only).
        #[arg(long)]
        test_control: bool,
        /// With --test-control: empty a case's directory when its case is done and hand it to
        /// a later case (4 kept, 16 cases each at most) instead of removing it — what `seam
        /// check` starts its own server with. Killed, the server leaves the kept ones, empty.
        #[arg(long, requires = "test_control")]
        reuse_case_dirs: bool,
        /// Connections served at once; more are refused with an error (default: the
        /// descriptor limit less 64 kept for the calls' own files, at most 1024).
        #[arg(long, value_name = "N")]
        max_connections: Option<usize>,
        /// MiB one connection may hold in the server (request payloads being served, answers
        /// it has not read) before its requests stop being read.
        #[arg(long, value_name = "MIB", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=65536))]
        answer_budget: u64,
        /// Seconds a connection has to complete `initialize` before it is closed.
        #[arg(long, value_name = "SECS", default_value_t = 10.0)]
        handshake_timeout: f64,
    },
    /// Manage the workspace registry: the directories agents may work in.
    Workspace {
        /// The registry file (default: $SEAM_REGISTRY, else $XDG_DATA_HOME/seam/workspaces.json,
        /// else ~/.local/share/seam/workspaces.json).
        #[arg(long, value_name = "FILE", global = true)]
        registry: Option<PathBuf>,
        #[command(subcommand)]
        action: WorkspaceCommand,
    },
    /// Internal: run permission cases as the current (unprivileged) user.
    #[command(name = "__unprivileged", hide = true)]
    Unprivileged {
        #[arg(long)]
        provider: String,
        #[arg(long)]
        root: String,
    },
}

#[derive(Subcommand, Debug)]
enum WorkspaceCommand {
    /// List the registered workspaces.
    List {
        /// Print JSON (an array of records) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Register a directory (links and `..` resolved); an existing root keeps its id.
    Add {
        /// The directory.
        path: PathBuf,
        /// A title for people (default: the directory's name; renames an existing record).
        #[arg(long)]
        title: Option<String>,
    },
    /// Forget a workspace by id or root; the directory itself is untouched.
    Remove {
        /// An id (ws-…) or a root.
        name: String,
    },
}

/// A usage problem: said in one line, exit status 2.
pub struct Usage(pub String);

fn usage(message: &str) -> ExitCode {
    eprintln!("seam: {message}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    // The shipped providers run in this binary when the suite kills them (`crash`).
    if let Ok(exe) = std::env::current_exe() {
        seam_local_testkit::set_host_binary(exe);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // clap's message up to its usage block, on one line: "the following required
            // arguments were not provided: <TRACE>".
            let text = e.to_string();
            let said: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .collect();
            let said = said.join(" ");
            let said = said.trim_start_matches("error: ");
            let said = if said.is_empty() {
                "bad arguments"
            } else {
                said
            };
            return usage(&format!("{said} (see seam --help)"));
        }
    };
    // The commands that make a run directory and start backends clean up when interrupted.
    if matches!(cli.command, Command::Check { .. } | Command::Replay { .. }) {
        seam_cli::interrupt::clean_up_when_interrupted();
    }
    let code = command(cli);
    // An interrupted command exits from its cleanup, with the signal's status, whatever the
    // calls it cut short made of the run meanwhile.
    seam_cli::interrupt::unless_interrupted(code)
}

/// Runs the command asked for.
fn command(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Check {
            providers,
            cases,
            max_steps,
            seed,
            seeds,
            for_,
            jobs,
            json,
            junit,
            trace_dir,
            properties,
            against,
            messages,
            call_timeout,
            slow_call,
            start_timeout,
            #[cfg(feature = "faults")]
            fault,
        } => {
            #[cfg(not(feature = "faults"))]
            let fault: Option<String> = None;
            let mut seconds = Vec::new();
            for (flag, value) in [
                ("--call-timeout", call_timeout),
                ("--slow-call", slow_call),
                ("--start-timeout", start_timeout),
            ] {
                if !(value.is_finite() && value > 0.0 && value < 1e9) {
                    return usage(&format!("{flag} must be a positive number of seconds"));
                }
                seconds.push(std::time::Duration::from_secs_f64(value));
            }
            let timing = seam_conformance::Timing {
                hang_after: seconds[0],
                slow_after: seconds[1],
                start_after: seconds[2],
                ..seam_conformance::Timing::default()
            };
            if let Err(e) = timing.validate() {
                return usage(&format!("--slow-call and --call-timeout: {e}"));
            }
            let seeds = match (seed, seeds, for_) {
                (Some(seed), _, _) => check::Seeds::One { seed, given: true },
                (None, Some(n), _) => check::Seeds::Count(n),
                (None, None, Some(d)) => match soak::parse_duration(&d) {
                    Ok(d) => check::Seeds::For(d),
                    Err(e) => return usage(&e),
                },
                (None, None, None) => check::Seeds::One {
                    seed: soak::fresh_seed(),
                    given: false,
                },
            };
            let args = check::CheckArgs {
                providers,
                cases,
                max_steps: usize::try_from(max_steps).unwrap_or(40),
                seeds,
                json,
                junit,
                trace_dir,
                properties,
                against,
                messages: messages.into(),
                timing,
                fault,
                jobs: jobs.map_or_else(
                    || std::thread::available_parallelism().map_or(1, |n| n.get()),
                    |n| usize::try_from(n).unwrap_or(1),
                ),
            };
            match check::run(&args) {
                Ok(code) => code,
                Err(Usage(e)) => usage(&e),
            }
        }
        Command::Replay {
            trace,
            provider,
            #[cfg(feature = "faults")]
            fault,
            messages,
            attempts,
            call_timeout,
            start_timeout,
        } => {
            #[cfg(not(feature = "faults"))]
            let fault: Option<String> = None;
            for (flag, value) in [
                ("--call-timeout", call_timeout),
                ("--start-timeout", start_timeout),
            ] {
                if !(value.is_finite() && value > 0.0 && value < 1e9) {
                    return usage(&format!("{flag} must be a positive number of seconds"));
                }
            }
            let timing = seam_conformance::Timing {
                hang_after: std::time::Duration::from_secs_f64(call_timeout),
                start_after: std::time::Duration::from_secs_f64(start_timeout),
                // A call is slow below the hang limit, whatever that is.
                slow_after: std::time::Duration::from_secs_f64(call_timeout / 2.0)
                    .min(seam_conformance::Timing::default().slow_after),
                ..seam_conformance::Timing::default()
            };
            let args = replay::ReplayArgs {
                path: &trace,
                provider: &provider,
                fault: fault.as_deref(),
                messages: messages.into(),
                attempts,
                timing,
            };
            match replay::run(&args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(Usage(e)) => usage(&e),
            }
        }
        Command::Mcp {
            root,
            workspace,
            registry,
            mode,
            provider,
            read_anywhere,
            ignore_client_roots,
            max_message_mib,
        } => match mcp::run(mcp::McpArgs {
            read_anywhere,
            ignore_client_roots,
            max_message: usize::try_from(max_message_mib * 1024 * 1024).unwrap_or(usize::MAX),
            root,
            workspace,
            registry,
            mode: mode.map(Into::into),
            provider,
        }) {
            Ok(code) => code,
            Err(e) => usage(&e),
        },
        Command::Serve {
            root,
            provider,
            listen,
            token_file,
            test_control,
            reuse_case_dirs,
            max_connections,
            answer_budget,
            handshake_timeout,
        } => {
            if !(handshake_timeout.is_finite()
                && handshake_timeout > 0.0
                && handshake_timeout < 1e9)
            {
                return usage("--handshake-timeout must be a positive number of seconds");
            }
            match serve::run(serve::ServeArgs {
                root,
                provider,
                listen,
                token_file,
                test_control,
                reuse_case_dirs,
                max_connections,
                answer_budget: answer_budget * 1024 * 1024,
                handshake_timeout: std::time::Duration::from_secs_f64(handshake_timeout),
            }) {
                Ok(code) => code,
                Err(e) => usage(&e),
            }
        }
        Command::Workspace { registry, action } => {
            let action = match action {
                WorkspaceCommand::List { json } => workspace::Action::List { json },
                WorkspaceCommand::Add { path, title } => workspace::Action::Add { path, title },
                WorkspaceCommand::Remove { name } => workspace::Action::Remove { name },
            };
            match workspace::run(registry.as_deref(), action) {
                Ok(code) => code,
                Err(e) => usage(&e),
            }
        }
        Command::Unprivileged { provider, root } => match unprivileged::child(&provider, &root) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("seam __unprivileged: {e}");
                ExitCode::from(match e {
                    unprivileged::ChildError::CannotStart(_) => unprivileged::CANNOT_START,
                    unprivileged::ChildError::Other(_) => 1,
                })
            }
        },
    }
}
