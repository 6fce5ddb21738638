//! The client side of the protocol's test control: a case opened on a server over
//! `world/case` or `world/reopen` (its backend and its [`RemoteWorld`], the storage changed and
//! read back through `world/*`), and killable cases — an `exec:` process per case, killed by
//! the `crash` property and followed by a fresh one over the same case. Below the factories
//! that use it (the remote's, and the local and sandbox test worlds' crash children).

use seam_conformance::case_dirs::{CaseDir, spread};
use seam_conformance::{
    CaseDurability, CaseOptions, EntryMode, Killable, NotKillable, SUITE_DIFF_LIMIT, Subject, World,
};
use seam_model::{SnapEntry, WorldEffect};
use seam_remote::{Address, Connection, RemoteError, RemoteFileSystem};
use serde_json::{Value, json};
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
    if conn.hello().get("volatile") == Some(&Value::Bool(true)) {
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
        .unwrap_or(SUITE_DIFF_LIMIT);
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
                "configuration": hosted
                    .filter(|c| c.contains(&options.configuration))
                    .map(|_| options.configuration.as_str()),
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
    let (subject, _conn) = open_at(&address, None, None, &options, CaseAt::Reopen(root))?;
    Ok(subject.fs)
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
