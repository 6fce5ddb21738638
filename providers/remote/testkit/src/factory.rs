//! The remote provider as the suite sees it: a server reached over the protocol, one connection
//! and one fresh case directory (`world/case`) per case, and the case's storage changed and read
//! back through the server's `world/*` methods — so the same factory gates `seam serve` and a
//! backend written in any language.
//!
//! The one exception is the server this factory starts itself (`remote` in `seam check`): the
//! cases it makes ([`Factory::make`], and the crash properties' killable ones) are directories
//! of this machine, so their storage is changed and read back in the gate's process
//! ([`on_this_disk`]) — the disk itself rather than the server's account of it, and no round
//! trip per entry after every step. A case placed in a directory the gate chose
//! ([`Factory::in_directory`], `power-loss`) still goes through `world/*`. The shipped server's
//! `world/*` methods are gated where it is given by address, as any server someone else
//! started is (`seam check --provider unix:PATH`; `cli/tests/remote.rs` runs `sequences` so
//! against `seam serve --test-control`).

use crate::world_client::{
    CaseAt, NOT_PLACED, VOLATILE, killable_at, on_this_disk, open_at, recover_at,
    serve_stdio_command,
};
use seam_conformance::case_dirs::{CaseDir, spread};
use seam_conformance::{CaseOptions, Factory, Killable, NotKillable, NotPlaced, Subject};
use seam_remote::{Address, Connection};
use serde_json::json;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// Where the factory's server comes from.
enum Source {
    /// `seam serve --test-control` on a Unix socket in a temporary directory, started on first
    /// use by this process and stopped with the factory.
    Own {
        exe: PathBuf,
        /// The hosted local provider's configurations, which its cases may name.
        configurations: Vec<String>,
        started: Mutex<Option<Started>>,
    },
    /// A server someone else started, or an adapter the gate starts (`exec:`): one process for
    /// the whole run if it offers to serve one ([`Shared`]), else a process per case.
    External {
        address: Address,
        token: Option<String>,
        shared: Mutex<Shared>,
    },
}

/// Whether an `exec:` adapter serves the whole run from one process. On first use the gate
/// starts it and offers, in `initialize`, a socket path to listen on (`"listen"`); an adapter
/// that answers `"listening": true` accepts a connection per case there — each its own
/// `world/case`, `world/reopen` a second backend in the same process — until its stdin closes
/// with the run. One that does not is started afresh for every case, as protocol 1 began.
/// (`crash` and `permission-denied` start processes of their own either way: one to kill, one
/// as another user.)
enum Shared {
    /// Not started yet.
    Untried,
    /// It listens.
    Serving(Box<Listening>),
    /// It did not offer (or could not be started that way): a process per case.
    PerCase,
}

/// An adapter serving the run: it listens at `socket` for as long as `control`, the connection
/// to its stdin and stdout, stays open.
struct Listening {
    _control: Connection,
    socket: PathBuf,
    _dir: CaseDir,
}

impl Shared {
    /// Starts `command` and offers it the run.
    fn start(command: &str) -> Shared {
        let Ok(dir) = CaseDir::new("exec-") else {
            return Shared::PerCase;
        };
        let socket = dir.path().join("adapter.sock");
        let mut offer = serde_json::Map::new();
        offer.insert("listen".into(), json!(socket.display().to_string()));
        let address = Address::Exec(command.to_string());
        match Connection::connect_offering(&address, None, offer) {
            Ok(control) if control.description().listening => {
                eprintln!("seam: exec:{command} serves the whole run from one process");
                Shared::Serving(Box::new(Listening {
                    _control: control,
                    socket,
                    _dir: dir,
                }))
            }
            // It did not take the offer, or did not start: each case starts it afresh (and
            // says why, if it cannot start at all).
            _ => Shared::PerCase,
        }
    }
}

struct Started {
    child: Child,
    address: Address,
    _dir: CaseDir,
}

impl Drop for Started {
    fn drop(&mut self) {
        seam_remote::children::forget(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Makes remote subjects.
pub struct RemoteFactory {
    name: String,
    source: Source,
}

impl RemoteFactory {
    /// `remote`: starts `exe serve` itself (exe is the `seam` binary), hosting the local
    /// provider, whose `configurations` its cases may name (the local test world's, so that the
    /// differential against local compares like with like).
    pub fn own(exe: PathBuf, configurations: Vec<String>) -> Self {
        Self {
            name: "remote".into(),
            source: Source::Own {
                exe,
                configurations,
                started: Mutex::new(None),
            },
        }
    }

    /// A server at `address` (`unix:PATH`, `tcp://HOST:PORT`, `exec:COMMAND`); over TCP the token
    /// comes from `SEAM_TOKEN`.
    pub fn external(address: Address) -> Self {
        Self {
            name: address.to_string(),
            source: Source::External {
                address,
                token: std::env::var("SEAM_TOKEN").ok(),
                shared: Mutex::new(Shared::Untried),
            },
        }
    }

    fn address(&self) -> Result<(Address, Option<String>), String> {
        match &self.source {
            Source::External {
                address: Address::Exec(command),
                token,
                shared,
            } => {
                let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
                if matches!(*shared, Shared::Untried) {
                    *shared = Shared::start(command);
                }
                match &*shared {
                    Shared::Serving(l) => Ok((Address::Unix(l.socket.clone()), None)),
                    _ => Ok((Address::Exec(command.clone()), token.clone())),
                }
            }
            Source::External { address, token, .. } => Ok((address.clone(), token.clone())),
            Source::Own { exe, started, .. } => {
                let mut started = started.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(s) = started.as_mut()
                    && let Ok(None) = s.child.try_wait()
                {
                    return Ok((s.address.clone(), None));
                }
                let s = start(exe)?;
                let address = s.address.clone();
                *started = Some(s);
                Ok((address, None))
            }
        }
    }
}

/// Starts `seam serve --test-control` on a socket in a fresh temporary directory and waits
/// until it listens.
fn start(exe: &PathBuf) -> Result<Started, String> {
    let dir =
        CaseDir::new("serve-").map_err(|e| format!("cannot create the server's directory: {e}"))?;
    let socket = dir.path().join("seam.sock");
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).map_err(|e| format!("cannot create {}: {e}", cases.display()))?;
    // The server makes and removes a directory per case in it (see `case_dirs`).
    spread(&cases);
    // Tracked before a command interrupted meanwhile can look (see `children::starting`).
    let starting = seam_remote::children::starting().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("serve")
        .arg("--root")
        .arg(&cases)
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--test-control")
        .arg("--reuse-case-dirs")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {} serve: {e}", exe.display()))?;
    // Stopped when the factory drops, or — if a hung call keeps it alive — by the command
    // before it exits (`seam_remote::children::stop_all`).
    starting.track(child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !socket.exists() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("seam serve exited before listening ({status})"));
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            return Err("seam serve did not listen within 20 s".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Ok(Started {
        child,
        address: Address::Unix(socket),
        _dir: dir,
    })
}

impl Factory for RemoteFactory {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn configurations(&self) -> Vec<String> {
        match &self.source {
            // The hosted local provider's, so the differential against local compares like
            // with like.
            Source::Own { configurations, .. } => configurations.clone(),
            Source::External { .. } => vec![seam_conformance::DEFAULT_CONFIGURATION.into()],
        }
    }

    /// A connection and a fresh case; for the server started here, its world on this disk.
    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        let subject = self.open(options, None)?;
        match self.started_here() {
            true => on_this_disk(subject),
            false => Ok(subject),
        }
    }

    /// The permission property runs its cases as another user in a child process over a
    /// provider that child builds itself (`providers::provider_at`): for `remote` the local
    /// provider behind an in-process server; for an `exec:` adapter the same command, started
    /// by that child (so as that user), reopening the case (`world/reopen`). A server someone
    /// else started runs as whoever started it: nothing the gate does makes it that user.
    fn permissions_checkable(&self) -> Result<(), String> {
        match &self.source {
            Source::External {
                address: address @ (Address::Unix(_) | Address::Tcp(_)),
                ..
            } => Err(format!(
                "{address} is a server someone else started, running as its own user: the gate cannot run it as another user to see what that user is refused (gate the same backend through exec: to check permissions)"
            )),
            _ => Ok(()),
        }
    }

    /// A second connection, with a backend of its own over the same case directory
    /// (`world/reopen`).
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn seam::FileSystem>, String>> {
        let root = subject.world.root_display();
        let seed = options.seed ^ 0x5EC0_17D0;
        let options = CaseOptions {
            seed,
            ..options.clone()
        };
        Some(self.open(&options, Some(&root)).map(|s| s.fs))
    }

    /// An `exec:` adapter, or `seam serve` on stdio for `remote`: a process per subject, which
    /// the suite may kill; a server given by address cannot be.
    fn killable(&self, options: &CaseOptions) -> Result<Killable, NotKillable> {
        let (command, base) = self.killable_command()?;
        let mut killable = killable_at(command, base, self.hosted(), options)?;
        if self.started_here() {
            killable.subject = on_this_disk(killable.subject).map_err(NotKillable::Failed)?;
        }
        Ok(killable)
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        let subject = recover_at(options, killed)?;
        match self.started_here() {
            true => on_this_disk(subject),
            false => Ok(subject),
        }
    }

    /// A case in the gate's directory (`world/case` with `root`): for the shipped server, and
    /// for an adapter that takes one. A server someone else started may run where the gate's
    /// directory is not (another host, another mount namespace): it is asked all the same, and
    /// one that keeps its case elsewhere is reported as not taking one.
    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        let dir = dir
            .to_str()
            .ok_or_else(|| NotPlaced::Failed(format!("{} is not UTF-8", dir.display())))?;
        let (address, token) = self.address().map_err(NotPlaced::Failed)?;
        let hosted = self.hosted();
        match open_at(
            &address,
            token.as_deref(),
            hosted.as_deref(),
            options,
            CaseAt::Placed(dir),
        ) {
            Ok((subject, conn)) => {
                if conn.description().volatile {
                    return Err(NotPlaced::Volatile(VOLATILE.into()));
                }
                Ok(subject)
            }
            Err(e) if e.starts_with(NOT_PLACED) => Err(NotPlaced::Cannot(e)),
            Err(e) if e.starts_with(VOLATILE) => Err(NotPlaced::Volatile(e)),
            Err(e) => Err(NotPlaced::Failed(e)),
        }
    }
}

impl RemoteFactory {
    /// Whether its killable backends are the shipped server, which the gate starts on this
    /// machine with its cases in the run directory ([`on_this_disk`]).
    fn started_here(&self) -> bool {
        matches!(self.source, Source::Own { .. })
    }

    /// The configurations of the server this factory starts itself (the hosted local
    /// provider's), which its cases may name; `None` for a server of someone else's, which is
    /// left its default.
    fn hosted(&self) -> Option<Vec<String>> {
        match &self.source {
            Source::Own { configurations, .. } => Some(configurations.clone()),
            Source::External { .. } => None,
        }
    }

    /// A connection with a fresh case (`world/case`), or with a second backend over the case at
    /// `existing` (`world/reopen`).
    fn open(&self, options: &CaseOptions, existing: Option<&str>) -> Result<Subject, String> {
        let (address, token) = self.address()?;
        let hosted = self.hosted();
        let case = match existing {
            Some(root) => CaseAt::Reopen(root),
            None => CaseAt::Fresh,
        };
        let (subject, _) = open_at(&address, token.as_deref(), hosted.as_deref(), options, case)?;
        Ok(subject)
    }

    /// How a killable backend of this factory is started: an `exec:` command (the adapter's
    /// own, or `seam serve` on stdio for the shipped server) and, for the latter, the directory
    /// its cases live in. `Err` when the suite cannot kill it.
    fn killable_command(&self) -> Result<(String, Option<Arc<CaseDir>>), NotKillable> {
        match &self.source {
            Source::External {
                address: Address::Exec(command),
                ..
            } => Ok((command.clone(), None)),
            Source::External { address, .. } => Err(NotKillable::Cannot(format!(
                "{address} is a server the gate did not start, so it cannot kill it; give the adapter as exec:'COMMAND' to check what a crash leaves"
            ))),
            Source::Own { exe, .. } => serve_stdio_command(exe, "local"),
        }
    }
}

/// Waits until a server someone else started (`unix:PATH`, `tcp://HOST:PORT`) accepts a
/// connection, for at most `within` (`--start-timeout`): a server started just before the gate
/// (`adapter --listen PATH & seam check --provider unix:PATH`) may not listen yet. Says once, on
/// stderr, that it waits. Any other address is left alone.
pub fn wait_listening(address: &Address, within: std::time::Duration) -> Result<(), String> {
    let attempt = || -> std::io::Result<()> {
        match address {
            Address::Unix(path) => std::os::unix::net::UnixStream::connect(path).map(drop),
            Address::Tcp(at) => std::net::TcpStream::connect(at.as_str()).map(drop),
            Address::Exec(_) => Ok(()),
        }
    };
    let started = std::time::Instant::now();
    let mut said = false;
    loop {
        let e = match attempt() {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if started.elapsed() >= within {
            return Err(format!(
                "nothing accepted a connection at {address} within {} s (--start-timeout): {e}",
                within.as_secs_f64()
            ));
        }
        if !said {
            eprintln!(
                "waiting for {address} to accept a connection (up to {} s, --start-timeout): {e}",
                within.as_secs_f64()
            );
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
