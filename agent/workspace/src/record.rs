//! The registry file: one JSON document holding every record, with a format number first so a
//! newer file is refused by name instead of being misread or, worse, rewritten without the
//! fields this build does not know.

use crate::error::{WorkspaceError, WorkspaceErrorCode};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The format this build reads and writes.
pub const FORMAT: u64 = 1;

/// One registered workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    /// Stable for the life of the record (`ws-` and 16 hex digits); distinct from every other
    /// id in the file when it is made (a hash of the root, the time and the process).
    pub id: String,
    /// The canonical root: absolute, links resolved, `..` applied to the real directory —
    /// the provider's process path of the directory.
    pub root: String,
    /// A name for people (by default the root's last component).
    pub title: String,
    /// When the record was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When the record last changed (its title), in milliseconds since the Unix epoch.
    pub updated_at_ms: u64,
}

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RegistryFile {
    pub format: u64,
    pub workspaces: Vec<Workspace>,
}

impl RegistryFile {
    /// An empty registry of this build's format.
    pub fn empty() -> Self {
        Self {
            format: FORMAT,
            workspaces: Vec::new(),
        }
    }

    /// Parses the text of the registry file at `path`; never resets: anything it cannot read
    /// whole is an error that names the file.
    pub fn parse(path: &str, text: &str) -> Result<Self, WorkspaceError> {
        let corrupt = |why: String| {
            WorkspaceError::new(
                WorkspaceErrorCode::RegistryCorrupt,
                format!(
                    "the workspace registry {path} is not readable: {why}; nothing was changed (repair the file or move it away)"
                ),
            )
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| corrupt(format!("not JSON ({e})")))?;
        let format = value
            .get("format")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| corrupt("no \"format\" number".into()))?;
        if format > FORMAT {
            return Err(WorkspaceError::new(
                WorkspaceErrorCode::RegistryFormat,
                format!(
                    "the workspace registry {path} has format {format}, written by a newer seam; this one reads format {FORMAT}; nothing was changed"
                ),
            ));
        }
        if format != FORMAT {
            return Err(corrupt(format!("unknown format {format}")));
        }
        let file: RegistryFile =
            serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        let mut ids = HashSet::new();
        let mut roots = HashSet::new();
        for w in &file.workspaces {
            if !ids.insert(w.id.as_str()) {
                return Err(corrupt(format!("the id {} appears twice", w.id)));
            }
            if !roots.insert(w.root.as_str()) {
                return Err(corrupt(format!("the root {} appears twice", w.root)));
            }
            if !w.root.starts_with('/') {
                return Err(corrupt(format!("the root {:?} is not absolute", w.root)));
            }
        }
        Ok(file)
    }

    /// The file's text: pretty JSON and a final newline, so people can read and diff it.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{}"));
        text.push('\n');
        text
    }
}

/// A fresh id for `root`, distinct from every id in `taken`: a hash of the root, the time, the
/// process and a counter (no randomness needed: uniqueness within the file is what matters,
/// and it is checked).
pub(crate) fn fresh_id(root: &str, now_ms: u64, taken: &HashSet<&str>) -> String {
    let mut salt: u64 = 0;
    loop {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        feed(root.as_bytes());
        feed(&now_ms.to_le_bytes());
        feed(&std::process::id().to_le_bytes());
        feed(&salt.to_le_bytes());
        let id = format!("ws-{h:016x}");
        if !taken.contains(id.as_str()) {
            return id;
        }
        salt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_registry_parses_back_to_itself() {
        let file = RegistryFile {
            format: FORMAT,
            workspaces: vec![Workspace {
                id: "ws-0000000000000001".into(),
                root: "/srv/a b/é".into(),
                title: "é \"quoted\"".into(),
                created_at_ms: 1,
                updated_at_ms: 2,
            }],
        };
        assert_eq!(
            RegistryFile::parse("/r", &file.render()).expect("parse"),
            file
        );
    }

    #[test]
    fn an_older_or_missing_format_is_corrupt() {
        for text in [
            r#"{"format":0,"workspaces":[]}"#,
            r#"{"workspaces":[]}"#,
            "[]",
        ] {
            let err = RegistryFile::parse("/r", text).expect_err(text);
            assert_eq!(err.code(), WorkspaceErrorCode::RegistryCorrupt, "{err}");
        }
    }

    #[test]
    fn ids_avoid_the_taken_ones() {
        let first = fresh_id("/a", 5, &HashSet::new());
        let taken: HashSet<&str> = [first.as_str()].into_iter().collect();
        let second = fresh_id("/a", 5, &taken);
        assert_ne!(first, second);
        assert!(second.starts_with("ws-") && second.len() == 19, "{second}");
    }

    #[test]
    fn duplicate_roots_and_ids_and_relative_roots_are_corrupt() {
        let rec = |id: &str, root: &str| {
            format!(
                r#"{{"id":"{id}","root":"{root}","title":"t","created_at_ms":0,"updated_at_ms":0}}"#
            )
        };
        for body in [
            format!("[{},{}]", rec("ws-1", "/a"), rec("ws-1", "/b")),
            format!("[{},{}]", rec("ws-1", "/a"), rec("ws-2", "/a")),
            format!("[{}]", rec("ws-1", "a")),
        ] {
            let text = format!(r#"{{"format":1,"workspaces":{body}}}"#);
            let err = RegistryFile::parse("/r", &text).expect_err(&text);
            assert_eq!(err.code(), WorkspaceErrorCode::RegistryCorrupt, "{err}");
        }
    }
}
