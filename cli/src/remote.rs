//! The remote provider as the suite sees it: a server reached over the protocol, one connection
//! and one fresh case directory (`world/case`) per case, and the case's storage changed and read
//! back through the server's `world/*` methods — so the same factory gates `seam serve` and a
//! backend written in any language.

use seam_conformance::{
    CaseDurability, CaseOptions, EntryMode, Factory, Killable, NotKillable, NotPlaced, Subject,
    World,
};
use seam_model::{SnapEntry, WorldEffect};
use seam_remote::{Address, Connection, RemoteError, RemoteFileSystem};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// Where the factory's server comes from.
enum Source {
    /// `seam serve --test-control` on a Unix socket in a temporary directory, started on first
    /// use by this process and stopped with the factory.
    Own {
        exe: PathBuf,
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
pub(crate) enum Shared {
    /// Not started yet.
    Untried,
    /// It listens.
    Serving(Box<Listening>),
    /// It did not offer (or could not be started that way): a process per case.
    PerCase,
}

/// An adapter serving the run: it listens at `socket` for as long as `control`, the connection
/// to its stdin and stdout, stays open.
pub(crate) struct Listening {
    _control: Connection,
    socket: PathBuf,
    _dir: crate::case_dirs::CaseDir,
}

impl Shared {
    /// Starts `command` and offers it the run.
    fn start(command: &str) -> Shared {
        let Ok(dir) = crate::case_dirs::CaseDir::new("exec-") else {
            return Shared::PerCase;
        };
        let socket = dir.path().join("adapter.sock");
        let mut offer = serde_json::Map::new();
        offer.insert("listen".into(), json!(socket.display().to_string()));
        let address = Address::Exec(command.to_string());
        match Connection::connect_offering(&address, None, offer) {
            Ok(control) if control.hello().get("listening") == Some(&Value::Bool(true)) => {
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
    _dir: crate::case_dirs::CaseDir,
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
    /// `remote`: starts `exe serve` itself (exe is the `seam` binary).
    pub fn own(exe: PathBuf) -> Self {
        Self {
            name: "remote".into(),
            source: Source::Own {
                exe,
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
            Source::Own { exe, started } => {
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
    let dir = crate::case_dirs::CaseDir::new("serve-")
        .map_err(|e| format!("cannot create the server's directory: {e}"))?;
    let socket = dir.path().join("seam.sock");
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).map_err(|e| format!("cannot create {}: {e}", cases.display()))?;
    // The server makes and removes a directory per case in it (see `case_dirs`).
    crate::case_dirs::spread(&cases);
    // Tracked before a command interrupted meanwhile can look (see `children::starting`).
    let starting = seam_remote::children::starting().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("serve")
        .arg("--root")
        .arg(&cases)
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--test-control")
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

fn case_error(address: &Address, e: RemoteError) -> String {
    match e {
        RemoteError::Server { code: -32601, .. } => format!(
            "the server at {address} has no test control (world/case): start it with --test-control"
        ),
        other => format!("world/case at {address}: {other}"),
    }
}

impl Factory for RemoteFactory {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn configurations(&self) -> Vec<String> {
        match &self.source {
            // The hosted local provider's, so the differential against local compares like
            // with like.
            Source::Own { .. } => crate::providers::LocalFactory.configurations(),
            Source::External { .. } => vec![seam_conformance::DEFAULT_CONFIGURATION.into()],
        }
    }

    fn make(&self, options: &CaseOptions) -> Result<Subject, String> {
        self.open(options, None)
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
        killable_at(
            command,
            base,
            matches!(self.source, Source::Own { .. }),
            options,
        )
    }

    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        recover_at(options, killed)
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
        let own = matches!(self.source, Source::Own { .. });
        match open_at(
            &address,
            token.as_deref(),
            own,
            options,
            CaseAt::Placed(dir),
        ) {
            Ok((subject, conn)) => {
                if conn.hello().get("volatile") == Some(&Value::Bool(true)) {
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
    /// A connection with a fresh case (`world/case`), or with a second backend over the case at
    /// `existing` (`world/reopen`).
    fn open(&self, options: &CaseOptions, existing: Option<&str>) -> Result<Subject, String> {
        let (address, token) = self.address()?;
        let own = matches!(self.source, Source::Own { .. });
        let case = match existing {
            Some(root) => CaseAt::Reopen(root),
            None => CaseAt::Fresh,
        };
        let (subject, _) = open_at(&address, token.as_deref(), own, options, case)?;
        Ok(subject)
    }

    /// How a killable backend of this factory is started: an `exec:` command (the adapter's
    /// own, or `seam serve` on stdio for the shipped server) and, for the latter, the directory
    /// its cases live in. `Err` when the suite cannot kill it.
    fn killable_command(
        &self,
    ) -> Result<(String, Option<Arc<crate::case_dirs::CaseDir>>), NotKillable> {
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

/// The `exec:` command that runs `exe serve` on stdio with test control for `provider`, and the
/// directory (kept for as long as a case needs it) its cases are made in.
pub(crate) fn serve_stdio_command(
    exe: &std::path::Path,
    provider: &str,
) -> Result<(String, Option<Arc<crate::case_dirs::CaseDir>>), NotKillable> {
    let base = crate::case_dirs::CaseDir::new("crash-")
        .map_err(|e| NotKillable::Failed(format!("cannot create the cases' directory: {e}")))?;
    crate::case_dirs::spread(base.path());
    let command = format!(
        "exec {} serve --listen stdio --test-control --provider {} --root {}",
        crate::shell::shell_word(&exe.display().to_string()),
        crate::shell::shell_word(provider),
        crate::shell::shell_word(&base.path().display().to_string())
    );
    Ok((command, Some(Arc::new(base))))
}

/// What a killable subject keeps alive: its connection (whose child is the process), the
/// command that starts another like it, and the directory its cases live in.
struct KillableCase {
    _conn: Arc<Connection>,
    command: String,
    own: bool,
    base: Option<Arc<crate::case_dirs::CaseDir>>,
}

/// A killable subject started by `command`: a fresh case on a fresh process.
pub(crate) fn killable_at(
    command: String,
    base: Option<Arc<crate::case_dirs::CaseDir>>,
    own: bool,
    options: &CaseOptions,
) -> Result<Killable, NotKillable> {
    let address = Address::Exec(command.clone());
    let (mut subject, conn) =
        open_at(&address, None, own, options, CaseAt::Fresh).map_err(NotKillable::Failed)?;
    if conn.hello().get("volatile") == Some(&Value::Bool(true)) {
        return Err(NotKillable::Volatile(
            "the backend says its storage dies with its process (\"volatile\": true in initialize): a crash loses the storage itself, which the contract allows".into(),
        ));
    }
    let killer = conn.clone();
    subject.keep_alive = Box::new(KillableCase {
        _conn: conn,
        command,
        own,
        base,
    });
    Ok(Killable {
        subject,
        kill: Arc::new(move || killer.kill_backend()),
    })
}

/// A fresh process over the case a killed one (made by [`killable_at`]) was working in.
pub(crate) fn recover_at(options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
    let case = (*killed.keep_alive)
        .downcast_ref::<KillableCase>()
        .ok_or("the subject was not made killable by this factory")?;
    let root = killed.world.root_display();
    let address = Address::Exec(case.command.clone());
    let (mut subject, conn) = open_at(&address, None, case.own, options, CaseAt::Reopen(&root))?;
    subject.keep_alive = Box::new(KillableCase {
        _conn: conn,
        command: case.command.clone(),
        own: case.own,
        base: case.base.clone(),
    });
    Ok(subject)
}

/// Which case a connection asks for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CaseAt<'a> {
    /// A fresh case directory the server makes (`world/case`).
    Fresh,
    /// A second backend over the case at this root (`world/reopen`).
    Reopen(&'a str),
    /// A case in this existing directory the gate chose (`world/case` with `root`).
    Placed(&'a str),
}

/// A connection to `address` with the case `case` asks for: the subject, and the connection.
fn open_at(
    address: &Address,
    token: Option<&str>,
    own: bool,
    options: &CaseOptions,
    at: CaseAt<'_>,
) -> Result<(Subject, Arc<Connection>), String> {
    let (existing, method) = match at {
        CaseAt::Fresh => (None, "world/case"),
        CaseAt::Reopen(root) => (Some(root), "world/reopen"),
        CaseAt::Placed(root) => (Some(root), "world/case"),
    };
    let conn = Arc::new(Connection::connect(address, token).map_err(|e| e.to_string())?);
    // A backend that has a diff-basis limit of its own declares it (`limits` in `initialize`) and
    // the gate predicts `before` with it; otherwise the gate gives one (small, so that contents
    // around it are generated).
    let diff_limit = conn
        .hello()
        .get("limits")
        .and_then(|l| l.get("diff_basis_max_bytes"))
        .and_then(Value::as_u64)
        .unwrap_or(crate::providers::SUITE_DIFF_LIMIT);
    let (case, _) = conn
        .request_blocking(
            method,
            json!({
                "root": existing,
                "workspace": seam_conformance::DEPLOYMENT_WORKSPACE,
                "durability": match options.durability {
                    CaseDurability::Full => "full",
                    CaseDurability::Relaxed => "none",
                },
                "diff_basis_max_bytes": diff_limit,
                "seed": options.seed,
                "confine_reads": options.confine_reads,
                // Only a configuration the hosted local provider has (a trace recorded
                // elsewhere names another); the server's default otherwise.
                "configuration": own
                    .then(|| {
                        crate::providers::LocalFactory
                            .configurations()
                            .contains(&options.configuration)
                            .then_some(options.configuration.as_str())
                    })
                    .flatten(),
            }),
            Vec::new(),
        )
        .map_err(|e| case_error(address, e))?;
    let root = case
        .get("root")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("world/case at {address}: no root in the answer"))?
        .to_string();
    if let CaseAt::Placed(asked) = at
        && root != asked
    {
        let prefix = if conn.hello().get("volatile") == Some(&Value::Bool(true)) {
            VOLATILE
        } else {
            NOT_PLACED
        };
        return Err(format!(
            "{prefix}: asked for its case in {asked}, it answered with {root}"
        ));
    }
    // A server someone else runs keeps its `permissions` claim; the factory says why the
    // gate cannot check it (`RemoteFactory::permissions_checkable`).
    let fs = RemoteFileSystem::described(conn.clone(), &case);
    Ok((
        Subject {
            fs: Arc::new(fs),
            world: Arc::new(RemoteWorld {
                conn: conn.clone(),
                root,
                abilities: Abilities::of(&case),
            }),
            diff_basis_max_bytes: diff_limit,
            keep_alive: Box::new(conn.clone()),
        },
        conn,
    ))
}

/// How an answer to `world/case` with a `root` begins when the backend kept its case elsewhere
/// (a backend that does not take a root the gate chose).
const NOT_PLACED: &str = "the backend does not keep its case in a directory the gate names";

/// The same, from a backend that says its storage dies with its process.
const VOLATILE: &str =
    "the backend says its storage dies with its process (\"volatile\": true in initialize)";

/// A case's storage through `world/*`.
pub struct RemoteWorld {
    conn: Arc<Connection>,
    root: String,
    abilities: Abilities,
}

/// What a world over the wire can do, from the `world` member of the `world/case` answer
/// (`{"fifos": bool, "restore_mtime": bool, "modes": bool}`); a member left out means it can
/// (what protocol 1 asked of every world before the member existed).
#[derive(Clone, Copy, Debug)]
struct Abilities {
    fifos: bool,
    restore_mtime: bool,
    /// Whether the storage keeps permission bits (`"modes": false`: an object store).
    modes: bool,
}

impl Abilities {
    fn of(case: &Value) -> Self {
        let can = |what: &str| {
            case.get("world")
                .and_then(|w| w.get(what))
                .and_then(Value::as_bool)
                .unwrap_or(true)
        };
        Self {
            fifos: can("fifos"),
            restore_mtime: can("restore_mtime"),
            modes: can("modes"),
        }
    }
}

fn io_error(e: RemoteError) -> io::Error {
    io::Error::other(e.to_string())
}

impl World for RemoteWorld {
    fn root_display(&self) -> String {
        self.root.clone()
    }

    fn apply(&self, effect: &WorldEffect) -> io::Result<()> {
        let mut segments = Vec::new();
        let params = match effect {
            WorldEffect::CreateFile { path, bytes, .. } if !self.abilities.modes => {
                // A storage without permission bits is never given one.
                segments.push(bytes.clone());
                json!({"effect": "create_file", "path": path, "bytes": {"$payload": 0}})
            }
            WorldEffect::CreateFile { path, bytes, mode } => {
                segments.push(bytes.clone());
                json!({"effect": "create_file", "path": path, "bytes": {"$payload": 0}, "mode": mode})
            }
            WorldEffect::RewriteFile {
                path,
                bytes,
                restore_mtime,
            } => {
                segments.push(bytes.clone());
                json!({"effect": "rewrite_file", "path": path, "bytes": {"$payload": 0}, "restore_mtime": restore_mtime})
            }
            WorldEffect::CreateDir { path } => json!({"effect": "create_dir", "path": path}),
            WorldEffect::Symlink { path, target } => {
                json!({"effect": "symlink", "path": path, "target": target})
            }
            WorldEffect::Remove { path } => json!({"effect": "remove", "path": path}),
            WorldEffect::Chmod { path, .. } if !self.abilities.modes => {
                return Err(io::Error::other(format!(
                    "chmod {path:?}: the storage keeps no permission bits (\"modes\": false)"
                )));
            }
            WorldEffect::Chmod { path, mode } => {
                json!({"effect": "chmod", "path": path, "mode": mode})
            }
            WorldEffect::Mkfifo { path } => json!({"effect": "mkfifo", "path": path}),
        };
        self.conn
            .request_blocking("world/apply", params, segments)
            .map(|_| ())
            .map_err(io_error)
    }

    fn snapshot(&self) -> io::Result<BTreeMap<String, SnapEntry>> {
        let (v, mut frame) = self
            .conn
            .request_blocking("world/snapshot", json!({}), Vec::new())
            .map_err(io_error)?;
        let bad = || io::Error::other("world/snapshot: malformed answer");
        let mut out = BTreeMap::new();
        for item in v.get("entries").and_then(Value::as_array).ok_or_else(bad)? {
            let rel = item.get(0).and_then(Value::as_str).ok_or_else(bad)?;
            let e = item.get(1).ok_or_else(bad)?;
            let mode = e
                .get("mode")
                .and_then(Value::as_u64)
                .and_then(|m| u32::try_from(m).ok());
            let entry = match e.get("kind").and_then(Value::as_str) {
                Some("file") => SnapEntry::File {
                    bytes: e
                        .get("bytes")
                        .and_then(|r| frame.take(r))
                        .ok_or_else(bad)?
                        .into(),
                    mode,
                },
                Some("dir") => SnapEntry::Dir { mode },
                Some("symlink") => SnapEntry::Symlink {
                    target: e
                        .get("target")
                        .and_then(Value::as_str)
                        .ok_or_else(bad)?
                        .to_string(),
                },
                Some("other") => SnapEntry::Other,
                _ => return Err(bad()),
            };
            out.insert(rel.to_string(), entry);
        }
        Ok(out)
    }

    fn entry_mode(&self, path: &str) -> io::Result<Option<EntryMode>> {
        let (v, _) = self
            .conn
            .request_blocking("world/entry_mode", json!({ "path": path }), Vec::new())
            .map_err(io_error)?;
        if v.is_null() {
            return Ok(None);
        }
        Ok(Some(EntryMode {
            is_dir: v.get("is_dir").and_then(Value::as_bool).unwrap_or(false),
            mode: v
                .get("mode")
                .and_then(Value::as_u64)
                .and_then(|m| u32::try_from(m).ok())
                .unwrap_or(0),
        }))
    }

    fn supports_fifos(&self) -> bool {
        self.abilities.fifos
    }

    fn restores_mtime(&self) -> bool {
        self.abilities.restore_mtime
    }

    fn keeps_modes(&self) -> bool {
        self.abilities.modes
    }

    /// The case root opened to other users (0755, a `chmod` of `.`), for the permission
    /// property's unprivileged child; the backend's own directories above it must let others
    /// through (docs/protocol.md, section 7).
    fn open_to_others(&self) -> io::Result<()> {
        self.conn
            .request_blocking(
                "world/apply",
                json!({"effect": "chmod", "path": ".", "mode": 0o755}),
                Vec::new(),
            )
            .map(|_| ())
            .map_err(io_error)
    }
}

/// A second backend over the case at `root`, made by `exec:` `command` started here: the
/// permission property's unprivileged child reaches an adapter's case this way, as itself.
pub fn reopened_exec(command: &str, root: &str) -> Result<Arc<dyn seam::FileSystem>, String> {
    let options = CaseOptions::new(0, CaseDurability::Relaxed, String::new());
    let address = Address::Exec(command.to_string());
    let (subject, _conn) = open_at(&address, None, false, &options, CaseAt::Reopen(root))?;
    Ok(subject.fs)
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

#[cfg(test)]
mod tests {
    use super::Abilities;
    use serde_json::json;

    /// A world that says nothing can do everything protocol 1 asked of every world (the shipped
    /// server says nothing); what it says it cannot do, it is not asked; a member that is not a
    /// boolean is read as not said.
    #[test]
    fn a_world_can_what_it_does_not_say_it_cannot() {
        let of = |case| {
            let a = Abilities::of(&case);
            (a.fifos, a.restore_mtime)
        };
        assert_eq!(of(json!({"root": "/r"})), (true, true));
        assert_eq!(of(json!({"root": "/r", "world": {}})), (true, true));
        assert_eq!(
            of(json!({"world": {"fifos": false, "restore_mtime": false}})),
            (false, false)
        );
        assert_eq!(of(json!({"world": {"fifos": false}})), (false, true));
        assert_eq!(
            of(json!({"world": {"restore_mtime": false}})),
            (true, false)
        );
        assert_eq!(of(json!({"world": {"fifos": "no"}})), (true, true));
    }
}
