//! The steps of a generated sequence, as they appear in a JSON trace.
//!
//! Paths are written relative to the test root (`d/../a`), or absolute with a `{root}` prefix
//! (`{root}/d/a`) that is replaced by the root's display path when the step runs, so a trace
//! replays against any provider in any directory.

use seam::{CancelPoint, SandboxMode};
use seam_model::{Change, Competitor, WorldOp};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The placeholder for the root's display path in a traced path.
pub const ROOT_TOKEN: &str = "{root}";

/// A version seen earlier in the sequence. With none seen yet it is a token no backend ever
/// issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionRef {
    /// The k-th most recent file version any step returned (`0` is the latest; wraps around).
    Recent(u8),
    /// The latest version seen of the file the step targets (as a careful agent would use).
    Target,
}

/// A write's guard in a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteGuard {
    /// No guard.
    None,
    /// Create only if absent.
    CreateIfAbsent,
    /// Replace only at a version seen earlier.
    ReplaceIfVersion(VersionRef),
}

/// What happens to an operation while it runs.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interfere {
    /// Nothing.
    #[default]
    None,
    /// The operation itself is called with an already-cancelled signal (the target, when it
    /// needs one, is resolved normally first): it must fail `FS_ABORTED` and change nothing.
    CancelledBeforeStart,
    /// Cancelled when the mutation reaches this point.
    CancelAt(CancelPoint),
    /// Something appears at the target between the guard check and publication.
    Competitor(Competitor),
    /// Someone else changes the file a version-guarded write or an edit works on, at this
    /// checkpoint (`before_stage` or `staged`): after the check, before publication. A guarded
    /// mutation must then fail `FS_STALE_VERSION`, an unguarded edit be made again on what is
    /// there now, and the change be kept.
    ChangeAt(CancelPoint, Change),
    /// At each checkpoint of the mutation (the backend claims cancel points), while the
    /// mutation is paused there, readers read the target — `read_text`, `stream_text` and
    /// `read_bytes` where claimed — through instance `0` (the subject) or `1` (a second
    /// instance over the same storage, [`crate::Factory::reopen`]): before publication they
    /// must see the file as it was, at `committed` as it is now. A read not answered while the
    /// mutation is paused is checked when it is answered: the old file or the new one, whole.
    ReadersAtCheckpoints(u8),
}

impl Interfere {
    fn is_none(&self) -> bool {
        *self == Interfere::None
    }
}

/// One operation of a sequence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// `resolve`.
    Resolve {
        /// Path as spelled.
        path: String,
    },
    /// `resolve` then `stat`.
    Stat {
        /// Path as spelled.
        path: String,
    },
    /// `lstat`.
    Lstat {
        /// Path as spelled.
        path: String,
    },
    /// `resolve` then `read_text`.
    ReadText {
        /// Path as spelled.
        path: String,
    },
    /// `resolve` then `stream_text`, chunks concatenated.
    StreamText {
        /// Path as spelled.
        path: String,
    },
    /// `resolve` then `read_bytes`.
    ReadBytes {
        /// Path as spelled.
        path: String,
        /// The inclusive cap.
        max: u64,
    },
    /// `resolve` then `list_dir`.
    ListDir {
        /// Path as spelled.
        path: String,
    },
    /// `resolve` then `write_text`.
    Write {
        /// Path as spelled.
        path: String,
        /// The content (shared: a case, its clones and its shrinking copy no text).
        content: Arc<str>,
        /// The guard.
        guard: WriteGuard,
    },
    /// `resolve` then `edit_text`.
    Edit {
        /// Path as spelled.
        path: String,
        /// Text to find.
        old: String,
        /// Replacement.
        new: String,
        /// Replace every match.
        replace_all: bool,
        /// Version guard, if any.
        guard: Option<VersionRef>,
    },
    /// `resolve` both paths, then `process_path`, `file_url` and `contains` both ways.
    Facts {
        /// Path as spelled.
        path: String,
        /// The other path, for `contains`.
        other: String,
    },
    /// The `read` tool, as session `owner` (an agent surface must be configured).
    AgentRead {
        /// The session.
        owner: u8,
        /// Path as spelled.
        path: String,
        /// Read a window of three lines instead of the default.
        #[serde(default, skip_serializing_if = "is_false")]
        window: bool,
    },
    /// The `write` tool, as session `owner`.
    AgentWrite {
        /// The session.
        owner: u8,
        /// Path as spelled.
        path: String,
        /// The content (shared).
        content: Arc<str>,
    },
    /// The `edit` tool, as session `owner`.
    AgentEdit {
        /// The session.
        owner: u8,
        /// Path as spelled.
        path: String,
        /// Text to find (never empty, never equal to `new`).
        old: String,
        /// Replacement.
        new: String,
        /// Replace every match.
        replace_all: bool,
    },
    /// `create_dir` (the backend claims the namespace operations).
    CreateDir {
        /// Path as spelled.
        path: String,
        /// Make missing parents.
        #[serde(default, skip_serializing_if = "is_false")]
        parents: bool,
        /// An existing directory is a success.
        #[serde(default, skip_serializing_if = "is_false")]
        exist_ok: bool,
    },
    /// `remove` of the entry a path names.
    Remove {
        /// Path as spelled.
        path: String,
        /// Remove only at this version of the entry (`target`: its version as `lstat` shows it
        /// just before the call, the careful agent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guard: Option<VersionRef>,
        /// Also an empty directory.
        #[serde(default, skip_serializing_if = "is_false")]
        directory: bool,
    },
    /// `rename` of the entry `from` names to `to`.
    Rename {
        /// Source path as spelled.
        from: String,
        /// Destination path as spelled.
        to: String,
        /// Move only at this version of the source entry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guard: Option<VersionRef>,
        /// Replace the destination, only at this version of it (`None`: never replace).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replace: Option<VersionRef>,
    },
    /// A change behind the provider's back.
    World(WorldOp),
    /// Steps that run at the same time: every lane starts on one barrier and runs its steps in
    /// order on a thread (or a task) of its own. What they return must be explained by some
    /// sequential order of the model that respects real time (see [`Lane`]).
    Together {
        /// The lanes.
        lanes: Vec<Lane>,
        /// How the lanes run.
        #[serde(default, skip_serializing_if = "Spawn::is_threads")]
        on: Spawn,
    },
}

/// One lane of a [`Op::Together`] group: reads, stats, writes and edits, each with its own path
/// (resolved before the group starts); guards name versions seen before it started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lane {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The instance that runs them: `0` the subject, `1` a second instance over the same
    /// storage ([`crate::Factory::reopen`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub instance: u8,
    /// Run the steps again and again until every other lane is done (a reader that reads while
    /// the writes go on). Only reads and stats repeat.
    #[serde(default, skip_serializing_if = "is_false")]
    pub repeat: bool,
}

impl Lane {
    /// A lane of `steps` on the subject, run once.
    pub fn of(steps: Vec<Step>) -> Self {
        Lane {
            steps,
            instance: 0,
            repeat: false,
        }
    }
}

/// How the lanes of a group run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spawn {
    /// Each on a thread of its own with its own runtime.
    #[default]
    Threads,
    /// Each as a task of one multi-threaded runtime.
    Tasks,
}

impl Spawn {
    fn is_threads(&self) -> bool {
        *self == Spawn::Threads
    }
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

impl Op {
    /// A short name for counting.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Resolve { .. } => "resolve",
            Op::Stat { .. } => "stat",
            Op::Lstat { .. } => "lstat",
            Op::ReadText { .. } => "read_text",
            Op::StreamText { .. } => "stream_text",
            Op::ReadBytes { .. } => "read_bytes",
            Op::ListDir { .. } => "list_dir",
            Op::Write { .. } => "write_text",
            Op::Edit { .. } => "edit_text",
            Op::Facts { .. } => "path_facts",
            Op::AgentRead { .. } => "agent_read",
            Op::AgentWrite { .. } => "agent_write",
            Op::AgentEdit { .. } => "agent_edit",
            Op::CreateDir { .. } => "create_dir",
            Op::Remove { .. } => "remove",
            Op::Rename { .. } => "rename",
            Op::World(_) => "world",
            Op::Together { .. } => "together",
        }
    }

    /// Whether the step goes through the agent surface (tools and policy).
    pub fn is_agent(&self) -> bool {
        matches!(
            self,
            Op::AgentRead { .. } | Op::AgentWrite { .. } | Op::AgentEdit { .. }
        )
    }

    /// The path the operation is about (`None` for a world change).
    pub fn path(&self) -> Option<&str> {
        match self {
            Op::Resolve { path }
            | Op::Stat { path }
            | Op::Lstat { path }
            | Op::ReadText { path }
            | Op::StreamText { path }
            | Op::ReadBytes { path, .. }
            | Op::ListDir { path }
            | Op::Write { path, .. }
            | Op::Edit { path, .. }
            | Op::Facts { path, .. }
            | Op::AgentRead { path, .. }
            | Op::AgentWrite { path, .. }
            | Op::AgentEdit { path, .. }
            | Op::CreateDir { path, .. }
            | Op::Remove { path, .. }
            | Op::Rename { from: path, .. } => Some(path),
            Op::World(_) | Op::Together { .. } => None,
        }
    }

    /// Whether the operation takes a target (so a step may reuse one resolved earlier).
    pub fn takes_target(&self) -> bool {
        matches!(
            self,
            Op::Stat { .. }
                | Op::ReadText { .. }
                | Op::StreamText { .. }
                | Op::ReadBytes { .. }
                | Op::ListDir { .. }
                | Op::Write { .. }
                | Op::Edit { .. }
        )
    }

    /// Whether the operation mutates through the provider.
    pub fn is_mutation(&self) -> bool {
        matches!(
            self,
            Op::Write { .. }
                | Op::Edit { .. }
                | Op::CreateDir { .. }
                | Op::Remove { .. }
                | Op::Rename { .. }
        )
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The per-call sandbox policy of a mutation step (read by a fencing backend, ignored by any
/// other): a mode and the workspace root, spelled like a step's path (`{root}/d`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSandbox {
    /// The call's mode.
    pub mode: SandboxMode,
    /// The call's workspace root.
    pub workspace: String,
}

impl CallSandbox {
    /// `workspace-write` on the test root: what a property about mutation mechanics asks for,
    /// so that a read-only deployment's fence does not hide them.
    pub fn case_root() -> Self {
        CallSandbox {
            mode: SandboxMode::WorkspaceWrite,
            workspace: ROOT_TOKEN.to_string(),
        }
    }
}

/// One step: an operation and what interferes with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The operation.
    #[serde(flatten)]
    pub op: Op,
    /// Interference, if any.
    #[serde(default, skip_serializing_if = "Interfere::is_none")]
    pub interfere: Interfere,
    /// Use the target this spelling resolved to the last time a step resolved it, instead of
    /// resolving it again: the contract says a target stays usable after the world changed
    /// under it. (With no earlier resolution of the spelling, it is resolved now.)
    #[serde(default, skip_serializing_if = "is_false")]
    pub reuse: bool,
    /// The per-call sandbox policy of a mutation (`None`: the deployment's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<CallSandbox>,
    /// The instance the step runs on: `0` the subject, `1` a second instance over the same
    /// storage ([`crate::Factory::reopen`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub instance: u8,
    /// The working directory the step's relative paths resolve against
    /// ([`seam::ResolveOptions::cwd`]), relative to the test root (`d`, `l`); `None`: the root
    /// itself. A backend that resolves against its own working directory instead departs here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl Step {
    /// A step with no interference.
    pub fn plain(op: Op) -> Self {
        Step {
            op,
            interfere: Interfere::None,
            reuse: false,
            sandbox: None,
            instance: 0,
            cwd: None,
        }
    }

    /// The same step, on instance `n` (see [`Step::instance`]).
    pub fn on(mut self, n: u8) -> Self {
        self.instance = n;
        self
    }

    /// The same step, under a per-call sandbox policy.
    pub fn fenced(mut self, sandbox: CallSandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The same step, on a target resolved earlier.
    pub fn reusing(mut self) -> Self {
        self.reuse = true;
        self
    }

    /// Whether the step uses a second provider instance over the same storage.
    pub fn uses_second_instance(&self) -> bool {
        self.instance > 0
            || matches!(self.interfere, Interfere::ReadersAtCheckpoints(n) if n > 0)
            || matches!(&self.op, Op::Together { lanes, .. }
                if lanes.iter().any(|l| l.instance > 0 || l.steps.iter().any(Step::uses_second_instance)))
    }
}

/// Replaces a leading `{root}` with the root's display path.
pub fn render_path(path: &str, root: &str) -> String {
    match path.strip_prefix(ROOT_TOKEN) {
        Some(rest) => format!("{root}{rest}"),
        None => path.to_string(),
    }
}

/// A one-line description of a step, for reports and replay.
pub fn describe(step: &Step) -> String {
    let op = match &step.op {
        Op::Resolve { path } => format!("resolve {path:?}"),
        Op::Stat { path } => format!("stat {path:?}"),
        Op::Lstat { path } => format!("lstat {path:?}"),
        Op::ReadText { path } => format!("read_text {path:?}"),
        Op::StreamText { path } => format!("stream_text {path:?}"),
        Op::ReadBytes { path, max } => format!("read_bytes {path:?} max={max}"),
        Op::ListDir { path } => format!("list_dir {path:?}"),
        Op::Write {
            path,
            content,
            guard,
        } => format!("write_text {path:?} {:?} guard={guard:?}", short(content)),
        Op::Edit {
            path,
            old,
            new,
            replace_all,
            guard,
        } => format!(
            "edit_text {path:?} {:?} -> {:?}{} guard={guard:?}",
            short(old),
            short(new),
            if *replace_all { " (all)" } else { "" }
        ),
        Op::Facts { path, other } => format!("path facts {path:?} / {other:?}"),
        Op::AgentRead {
            owner,
            path,
            window,
        } => format!(
            "agent {owner}: read {path:?}{}",
            if *window { " (window)" } else { "" }
        ),
        Op::AgentWrite {
            owner,
            path,
            content,
        } => format!("agent {owner}: write {path:?} {:?}", short(content)),
        Op::AgentEdit {
            owner,
            path,
            old,
            new,
            replace_all,
        } => format!(
            "agent {owner}: edit {path:?} {:?} -> {:?}{}",
            short(old),
            short(new),
            if *replace_all { " (all)" } else { "" }
        ),
        Op::CreateDir {
            path,
            parents,
            exist_ok,
        } => format!(
            "create_dir {path:?}{}{}",
            if *parents { " parents" } else { "" },
            if *exist_ok { " exist_ok" } else { "" }
        ),
        Op::Remove {
            path,
            guard,
            directory,
        } => format!(
            "remove {path:?} guard={guard:?}{}",
            if *directory { " (directory)" } else { "" }
        ),
        Op::Rename {
            from,
            to,
            guard,
            replace,
        } => format!("rename {from:?} -> {to:?} guard={guard:?} replace={replace:?}"),
        Op::World(w) => describe_world(w),
        Op::Together { lanes, on } => {
            let lanes: Vec<String> = lanes
                .iter()
                .map(|l| {
                    let steps: Vec<String> = l.steps.iter().map(describe).collect();
                    // A long lane by its first step and its length: the trace has them all.
                    let shown = match steps.as_slice() {
                        [first, _, _, ..] => format!("{first}; … ({} steps)", steps.len()),
                        _ => steps.join("; "),
                    };
                    format!(
                        "{}{}{}",
                        shown,
                        if l.instance > 0 {
                            format!(" on instance {}", l.instance)
                        } else {
                            String::new()
                        },
                        if l.repeat { " (repeated)" } else { "" }
                    )
                })
                .collect();
            format!(
                "together on {}: [{}]",
                match on {
                    Spawn::Threads => "threads",
                    Spawn::Tasks => "tasks",
                },
                lanes.join(" | ")
            )
        }
    };
    let op = if step.instance > 0 {
        format!("{op} on instance {}", step.instance)
    } else {
        op
    };
    let op = match &step.cwd {
        Some(cwd) => format!("{op} in {ROOT_TOKEN}/{cwd}"),
        None => op,
    };
    let op = if step.reuse {
        format!("{op} (earlier target)")
    } else {
        op
    };
    let op = match &step.sandbox {
        Some(s) => format!("{op} under {} on {:?}", s.mode.as_str(), s.workspace),
        None => op,
    };
    match &step.interfere {
        Interfere::None => op,
        other => format!("{op} [{other:?}]"),
    }
}

fn describe_world(w: &WorldOp) -> String {
    let bytes = short_bytes;
    match w {
        WorldOp::Write {
            path,
            bytes: b,
            mode,
        } => {
            format!("world: write {path:?} {:?} mode {mode:o}", bytes(b))
        }
        WorldOp::Scribble {
            path,
            restore_mtime,
        } => format!(
            "world: same-size rewrite of {path:?}{}",
            if *restore_mtime {
                ", mtime restored"
            } else {
                ""
            }
        ),
        WorldOp::Append { path, bytes: b } => format!("world: append {:?} to {path:?}", bytes(b)),
        WorldOp::Mkdir { path } => format!("world: mkdir {path:?}"),
        WorldOp::Symlink { path, target } => format!("world: symlink {path:?} -> {target:?}"),
        WorldOp::Remove { path } => format!("world: remove {path:?}"),
        WorldOp::Chmod { path, mode } => format!("world: chmod {mode:o} {path:?}"),
        WorldOp::Mkfifo { path } => format!("world: mkfifo {path:?}"),
    }
}

/// `s` whole up to 40 characters, else its first 37 and its length (steps carry megabytes; the
/// description is made for every step, shown for few).
fn short(s: &str) -> String {
    if s.chars().nth(40).is_some() {
        let head: String = s.chars().take(37).collect();
        format!("{head}... ({} bytes)", s.len())
    } else {
        s.to_string()
    }
}

/// Bytes as [`short`] shows text (invalid UTF-8 as U+FFFD), decoding only the head: no
/// character takes more than four bytes, so 41 characters are in the first 164.
fn short_bytes(b: &[u8]) -> String {
    let head = String::from_utf8_lossy(&b[..b.len().min(41 * 4)]);
    if head.chars().nth(40).is_some() {
        let head: String = head.chars().take(37).collect();
        format!("{head}... ({} bytes)", b.len())
    } else {
        head.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_described_as_their_text_is() {
        let long = "é".repeat(30) + &"x".repeat(200);
        for text in [
            "",
            "short\n",
            "forty characters, not one more: 12345678",
            &long,
        ] {
            let whole = short(text);
            assert_eq!(short_bytes(text.as_bytes()), whole, "{text:?}");
        }
        assert_eq!(
            short(&long),
            format!("{}... (260 bytes)", "é".repeat(30) + "xxxxxxx")
        );
        assert_eq!(short_bytes(b"ab\xffc"), "ab\u{fffd}c");
        // The length is the bytes', not their decoding's.
        let invalid = [0xffu8; 100];
        assert_eq!(
            short_bytes(&invalid),
            format!("{}... (100 bytes)", "\u{fffd}".repeat(37))
        );
    }

    #[test]
    fn steps_round_trip_through_json_and_stay_readable() {
        let step = Step {
            op: Op::Write {
                path: "{root}/d/a".into(),
                content: "x\r\n".into(),
                guard: WriteGuard::ReplaceIfVersion(VersionRef::Recent(1)),
            },
            interfere: Interfere::CancelAt(CancelPoint::Staged),
            reuse: true,
            sandbox: None,
            instance: 0,
            cwd: None,
        };
        let json = serde_json::to_string(&step).expect("json");
        assert_eq!(
            json,
            r#"{"op":"write","path":"{root}/d/a","content":"x\r\n","guard":{"replace_if_version":{"recent":1}},"interfere":{"cancel_at":"staged"},"reuse":true}"#
        );
        let back: Step = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, step);
        let plain = Step::plain(Op::Stat { path: "a".into() });
        assert_eq!(
            serde_json::to_string(&plain).expect("json"),
            r#"{"op":"stat","path":"a"}"#
        );
        assert_eq!(render_path("{root}/a", "/tmp/x"), "/tmp/x/a");
        let fenced = Step::plain(Op::Edit {
            path: "d/a".into(),
            old: "a".into(),
            new: "b".into(),
            replace_all: false,
            guard: None,
        })
        .fenced(CallSandbox {
            mode: SandboxMode::WorkspaceWrite,
            workspace: "{root}/d".into(),
        });
        let json = serde_json::to_string(&fenced).expect("json");
        assert!(
            json.ends_with(r#""sandbox":{"mode":"workspace-write","workspace":"{root}/d"}}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Step>(&json).expect("parse"), fenced);
        assert!(describe(&fenced).ends_with(r#"under workspace-write on "{root}/d""#));
    }

    /// A world write's shared bytes are a string in a trace when they are UTF-8 and an array
    /// of numbers when not, and read back into the same step.
    #[test]
    fn world_writes_round_trip_as_text_or_as_numbers() {
        let world = |bytes: &'static [u8]| {
            Step::plain(Op::World(WorldOp::Write {
                path: "a".into(),
                bytes: bytes::Bytes::from_static(bytes),
                mode: 0o644,
            }))
        };
        let (text, binary) = (world(b"one\r\n"), world(b"h\xffi"));
        let json = serde_json::to_string(&text).expect("json");
        assert_eq!(
            json,
            r#"{"op":"world","world":"write","path":"a","bytes":"one\r\n","mode":420}"#
        );
        assert_eq!(serde_json::from_str::<Step>(&json).expect("parse"), text);
        let json = serde_json::to_string(&binary).expect("json");
        assert!(json.contains(r#""bytes":[104,255,105]"#), "{json}");
        assert_eq!(serde_json::from_str::<Step>(&json).expect("parse"), binary);
    }
}
