//! The client side of the protocol's test control: a case opened on a server over
//! `world/case` or `world/reopen` (its backend and its [`RemoteWorld`], the storage changed and
//! read back through `world/*`), and killable cases — an `exec:` process per case, killed by
//! the `crash` property and followed by a fresh one over the same case. Below the factories
//! that use it (the remote's, and the local and sandbox test worlds' crash children).

use seam_conformance::case_dirs::{CaseDir, spread};
use seam_conformance::{
    CaseDurability, CaseOptions, DiskWorld, EntryMode, Killable, NotKillable, SUITE_DIFF_LIMIT,
    Subject, World,
};
use seam_model::{SnapEntry, WorldEffect};
use seam_remote::protocol::test_control::{
    Abilities as WorldAbilities, CaseParams, Durability, Effect, Entry, EntryModeParams, NoParams,
    WorldApply, WorldCase, WorldEntryMode, WorldReopen, WorldSnapshot,
};
use seam_remote::protocol::values::PayloadRef;
use seam_remote::{Address, Connection, RemoteError, RemoteFileSystem};
use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

pub(crate) fn case_error(address: &Address, e: RemoteError) -> String {
    match e {
        RemoteError::Server { code: -32601, .. } => format!(
            "the server at {address} has no test control (world/case): start it with --test-control"
        ),
        other => format!("world/case at {address}: {other}"),
    }
}

/// The `exec:` command that runs `exe serve` on stdio with test control for `provider`, and the
/// directory (kept for as long as a case needs it) its cases are made in.
pub fn serve_stdio_command(
    exe: &std::path::Path,
    provider: &str,
) -> Result<(String, Option<Arc<CaseDir>>), NotKillable> {
    let base = CaseDir::new("crash-")
        .map_err(|e| NotKillable::Failed(format!("cannot create the cases' directory: {e}")))?;
    spread(base.path());
    let command = format!(
        "exec {} serve --listen stdio --test-control --provider {} --root {}",
        seam_remote::shell_word(&exe.display().to_string()),
        seam_remote::shell_word(provider),
        seam_remote::shell_word(&base.path().display().to_string())
    );
    Ok((command, Some(Arc::new(base))))
}

/// What a killable subject keeps alive: its connection (whose child is the process), the
/// command that starts another like it, and the directory its cases live in.
struct KillableCase {
    _conn: Arc<Connection>,
    command: String,
    hosted: Option<Vec<String>>,
    base: Option<Arc<CaseDir>>,
}

/// A killable subject started by `command`: a fresh case on a fresh process.
pub fn killable_at(
    command: String,
    base: Option<Arc<CaseDir>>,
    hosted: Option<Vec<String>>,
    options: &CaseOptions,
) -> Result<Killable, NotKillable> {
    let address = Address::Exec(command.clone());
    let (mut subject, conn) = open_at(&address, None, hosted.as_deref(), options, CaseAt::Fresh)
        .map_err(NotKillable::Failed)?;
    if conn.description().volatile {
        return Err(NotKillable::Volatile(
            "the backend says its storage dies with its process (\"volatile\": true in initialize): a crash loses the storage itself, which the contract allows".into(),
        ));
    }
    let killer = conn.clone();
    subject.keep_alive = Box::new(KillableCase {
        _conn: conn,
        command,
        hosted,
        base,
    });
    Ok(Killable {
        subject,
        kill: Arc::new(move || killer.kill_backend()),
    })
}

/// A fresh process over the case a killed one (made by [`killable_at`]) was working in.
pub fn recover_at(options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
    let case = (*killed.keep_alive)
        .downcast_ref::<KillableCase>()
        .ok_or("the subject was not made killable by this factory")?;
    let root = killed.world.root_display();
    let address = Address::Exec(case.command.clone());
    let (mut subject, conn) = open_at(
        &address,
        None,
        case.hosted.as_deref(),
        options,
        CaseAt::Reopen(&root),
    )?;
    subject.keep_alive = Box::new(KillableCase {
        _conn: conn,
        command: case.command.clone(),
        hosted: case.hosted.clone(),
        base: case.base.clone(),
    });
    Ok(subject)
}

/// `subject` — the shipped server's in a `seam serve` child, which the gate started on this
/// machine with its cases in the run directory — with its world read and written from this
/// process ([`DiskWorld`] on the directory the child answered with, spelled as the child spells
/// it) instead of through the child, a round trip per entry: the world is read back after every
/// step, the crash properties write and read back megabytes a round, and the storage is what
/// outlives a kill either way. The backend the child runs, which is what is called and checked,
/// is the same; what is compared with the model is the disk itself, not the server's account of
/// it. Only for a server the gate started: an adapter's storage may be anywhere.
pub fn on_this_disk(mut subject: Subject) -> Result<Subject, String> {
    let root = subject.world.root_display();
    let world = DiskWorld::through_link(std::path::Path::new(&root), &root)
        .map_err(|e| format!("the case directory {root} the child answered with: {e}"))?;
    subject.world = Arc::new(world);
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
pub(crate) fn open_at(
    address: &Address,
    token: Option<&str>,
    hosted: Option<&[String]>,
    options: &CaseOptions,
    at: CaseAt<'_>,
) -> Result<(Subject, Arc<Connection>), String> {
    let (existing, reopen) = match at {
        CaseAt::Fresh => (None, false),
        CaseAt::Reopen(root) => (Some(root), true),
        CaseAt::Placed(root) => (Some(root), false),
    };
    let conn = Arc::new(Connection::connect(address, token).map_err(|e| e.to_string())?);
    // A backend that has a diff-basis limit of its own declares it (`limits` in `initialize`) and
    // the gate predicts `before` with it; otherwise the gate gives one (small, so that contents
    // around it are generated).
    let diff_limit = conn
        .description()
        .limits
        .diff_basis_max_bytes
        .unwrap_or(SUITE_DIFF_LIMIT);
    let params = CaseParams {
        root: existing.map(str::to_string),
        workspace: Some(seam_conformance::DEPLOYMENT_WORKSPACE.to_string()),
        durability: match options.durability {
            CaseDurability::Full => Durability::Full,
            CaseDurability::Relaxed => Durability::None,
        },
        diff_basis_max_bytes: Some(diff_limit),
        seed: options.seed,
        confine_reads: options.confine_reads,
        // Only a configuration the hosted local provider has (a trace recorded elsewhere names
        // another); the server's default otherwise.
        configuration: hosted
            .filter(|c| c.contains(&options.configuration))
            .map(|_| options.configuration.clone()),
    };
    let answer = if reopen {
        conn.ask_blocking::<WorldReopen>(&params, Vec::new())
    } else {
        conn.ask_blocking::<WorldCase>(&params, Vec::new())
    };
    let (case, _) = answer.map_err(|e| case_error(address, e))?;
    let root = case.root.clone();
    if let CaseAt::Placed(asked) = at
        && root != asked
    {
        let prefix = if conn.description().volatile {
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
    let fs = RemoteFileSystem::described(conn.clone(), &case.description);
    Ok((
        Subject {
            fs: Arc::new(fs),
            world: Arc::new(RemoteWorld {
                conn: conn.clone(),
                root,
                abilities: Abilities::of(case.world.unwrap_or_default()),
            }),
            diff_basis_max_bytes: diff_limit,
            keep_alive: Box::new(conn.clone()),
        },
        conn,
    ))
}

/// How an answer to `world/case` with a `root` begins when the backend kept its case elsewhere
/// (a backend that does not take a root the gate chose).
pub(crate) const NOT_PLACED: &str =
    "the backend does not keep its case in a directory the gate names";

/// The same, from a backend that says its storage dies with its process.
pub(crate) const VOLATILE: &str =
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
    fn of(said: WorldAbilities) -> Self {
        Self {
            fifos: said.fifos.unwrap_or(true),
            restore_mtime: said.restore_mtime.unwrap_or(true),
            modes: said.modes.unwrap_or(true),
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
        let mut bytes = |b: &[u8]| {
            segments.push(b.to_vec());
            PayloadRef::to(segments.len() - 1)
        };
        let effect = match effect {
            WorldEffect::CreateFile {
                path,
                bytes: b,
                mode,
            } => Effect::CreateFile {
                path: path.clone(),
                bytes: bytes(b),
                // A storage without permission bits is never given one.
                mode: self.abilities.modes.then_some(*mode),
            },
            WorldEffect::RewriteFile {
                path,
                bytes: b,
                restore_mtime,
            } => Effect::RewriteFile {
                path: path.clone(),
                bytes: bytes(b),
                restore_mtime: *restore_mtime,
            },
            WorldEffect::CreateDir { path } => Effect::CreateDir { path: path.clone() },
            WorldEffect::Symlink { path, target } => Effect::Symlink {
                path: path.clone(),
                target: target.clone(),
            },
            WorldEffect::Remove { path } => Effect::Remove { path: path.clone() },
            WorldEffect::Chmod { path, .. } if !self.abilities.modes => {
                return Err(io::Error::other(format!(
                    "chmod {path:?}: the storage keeps no permission bits (\"modes\": false)"
                )));
            }
            WorldEffect::Chmod { path, mode } => Effect::Chmod {
                path: path.clone(),
                mode: *mode,
            },
            WorldEffect::Mkfifo { path } => Effect::Mkfifo { path: path.clone() },
        };
        self.conn
            .ask_blocking::<WorldApply>(&effect, segments)
            .map(|_| ())
            .map_err(io_error)
    }

    fn snapshot(&self) -> io::Result<BTreeMap<String, SnapEntry>> {
        let (snapshot, frame) = self
            .conn
            .ask_blocking::<WorldSnapshot>(&NoParams {}, Vec::new())
            .map_err(io_error)?;
        let bad =
            || io::Error::other("world/snapshot: a file's bytes name no segment of the frame");
        let mut out = BTreeMap::new();
        for (rel, entry) in snapshot.entries {
            let entry = match entry {
                Entry::File { bytes, mode } => SnapEntry::File {
                    bytes: frame.segment(bytes).ok_or_else(bad)?.into(),
                    mode,
                },
                Entry::Dir { mode } => SnapEntry::Dir { mode },
                Entry::Symlink { target } => SnapEntry::Symlink { target },
                Entry::Other => SnapEntry::Other,
            };
            out.insert(rel, entry);
        }
        Ok(out)
    }

    fn entry_mode(&self, path: &str) -> io::Result<Option<EntryMode>> {
        let params = EntryModeParams {
            path: path.to_string(),
        };
        let (mode, _) = self
            .conn
            .ask_blocking::<WorldEntryMode>(&params, Vec::new())
            .map_err(io_error)?;
        // A world without modes says none; no property asks it for one (they look at modes
        // only where the world keeps them).
        Ok(mode.map(|m| EntryMode {
            is_dir: m.is_dir,
            mode: m.mode.unwrap_or(0),
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
        let open = Effect::Chmod {
            path: ".".into(),
            mode: 0o755,
        };
        self.conn
            .ask_blocking::<WorldApply>(&open, Vec::new())
            .map(|_| ())
            .map_err(io_error)
    }
}

/// A second backend over the case at `root`, made by `exec:` `command` started here: the
/// permission property's unprivileged child reaches an adapter's case this way, as itself.
pub fn reopened_exec(command: &str, root: &str) -> Result<Arc<dyn seam::FileSystem>, String> {
    let options = CaseOptions::new(0, CaseDurability::Relaxed, String::new());
    let address = Address::Exec(command.to_string());
    let (subject, _conn) = open_at(&address, None, None, &options, CaseAt::Reopen(root))?;
    Ok(subject.fs)
}

#[cfg(test)]
mod tests {
    use super::Abilities;
    use seam_remote::protocol::test_control::CaseAnswer;
    use serde_json::json;

    /// A world that says nothing can do everything protocol 1 asked of every world (the shipped
    /// server says nothing); what it says it cannot do, it is not asked; a member that is not a
    /// boolean makes the answer malformed (it is reported, not guessed at).
    #[test]
    fn a_world_can_what_it_does_not_say_it_cannot() {
        let of = |case: serde_json::Value| {
            let answer: CaseAnswer = seam_remote::protocol::decode(&case).expect("an answer");
            let a = Abilities::of(answer.world.unwrap_or_default());
            (a.fifos, a.restore_mtime, a.modes)
        };
        assert_eq!(
            of(json!({"protocol": 1, "capabilities": [], "root": "/r"})),
            (true, true, true)
        );
        assert_eq!(
            of(json!({"protocol": 1, "capabilities": [], "root": "/r", "world": {}})),
            (true, true, true)
        );
        assert_eq!(
            of(
                json!({"protocol": 1, "capabilities": [], "root": "/r", "world": {"fifos": false, "restore_mtime": false}})
            ),
            (false, false, true)
        );
        assert_eq!(
            of(json!({"protocol": 1, "capabilities": [], "root": "/r", "world": {"fifos": false}})),
            (false, true, true)
        );
        assert_eq!(
            of(json!({"protocol": 1, "capabilities": [], "root": "/r", "world": {"modes": false}})),
            (true, true, false)
        );
        let said =
            json!({"protocol": 1, "capabilities": [], "root": "/r", "world": {"fifos": "no"}});
        assert!(seam_remote::protocol::decode::<CaseAnswer>(&said).is_err());
    }
}
