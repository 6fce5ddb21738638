//! Argument validation, before any I/O, with the seed's texts.
//!
//! Arguments arrive as JSON from a model, so every shape is possible; each accessor names the
//! one rule it enforces in its error.

use crate::output::ToolError;
use serde_json::{Map, Value};

/// The arguments of one call. A non-object is treated as an object with no fields.
pub(crate) struct Args<'a> {
    fields: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    pub(crate) fn new(value: &'a Value) -> Self {
        Self {
            fields: value.as_object(),
        }
    }

    /// A field that is present and not `null`.
    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields
            .and_then(|m| m.get(name))
            .filter(|v| !v.is_null())
    }

    /// `file_path`: a path (see [`Args::path`]).
    pub(crate) fn file_path(&self) -> Result<&'a str, ToolError> {
        self.path("file_path")
    }

    /// A path: a string that is not blank and whose every name fits a file system's
    /// ([`seam::paths::NAME_MAX`] bytes). A longer name could name nothing anywhere, so it is
    /// refused as the argument it is — `<name> has a name of <n> bytes ("abc…"), longer than the
    /// 255 bytes a file name may have` — before any I/O, rather than left to the provider's
    /// `FS_NOT_FOUND`.
    pub(crate) fn path(&self, name: &str) -> Result<&'a str, ToolError> {
        let path = self.non_empty_string(name)?;
        if let Some(long) = path
            .split(['/', '\\'])
            .find(|c| c.len() > seam::paths::NAME_MAX)
        {
            let shown: String = long.chars().take(24).collect();
            return Err(ToolError::arguments(format!(
                "{name} has a name of {} bytes (\"{shown}…\"), longer than the {} bytes a file name may have",
                long.len(),
                seam::paths::NAME_MAX
            )));
        }
        Ok(path)
    }

    /// A string with at least one non-whitespace character: `<name> must be a non-empty string`.
    pub(crate) fn non_empty_string(&self, name: &str) -> Result<&'a str, ToolError> {
        match self.get(name).and_then(Value::as_str) {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(ToolError::arguments(format!(
                "{name} must be a non-empty string"
            ))),
        }
    }

    /// Any string, the empty one included: `<name> must be a string`.
    pub(crate) fn string(&self, name: &str) -> Result<&'a str, ToolError> {
        self.get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::arguments(format!("{name} must be a string")))
    }

    /// An optional boolean: `<name> must be a boolean`.
    pub(crate) fn optional_bool(&self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| ToolError::arguments(format!("{name} must be a boolean"))),
        }
    }

    /// An optional count from 0 to `max` (`3` or `3.0`): `<name> must be an integer from 0 to
    /// <max>`.
    pub(crate) fn optional_count(
        &self,
        name: &str,
        max: usize,
    ) -> Result<Option<usize>, ToolError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let bad = || ToolError::arguments(format!("{name} must be an integer from 0 to {max}"));
        let n = match (v.as_u64(), v.as_f64()) {
            (Some(n), _) => n,
            (None, Some(f)) if f.is_finite() && f.fract() == 0.0 && f >= 0.0 => f as u64,
            _ => return Err(bad()),
        };
        match usize::try_from(n) {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(bad()),
        }
    }

    /// An optional finite positive integer (`3` or `3.0`): `<name> must be a positive integer`.
    pub(crate) fn optional_positive_integer(&self, name: &str) -> Result<Option<usize>, ToolError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let bad = || ToolError::arguments(format!("{name} must be a positive integer"));
        let n = match (v.as_u64(), v.as_f64()) {
            (Some(n), _) => n,
            (None, Some(f)) if f.is_finite() && f.fract() == 0.0 && f >= 1.0 => f as u64,
            _ => return Err(bad()),
        };
        if n == 0 {
            return Err(bad());
        }
        Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn positive_integers_accept_integral_numbers_only() {
        let v = json!({"a": 3, "b": 3.0, "c": 0, "d": -1, "e": 1.5, "f": "3", "g": null});
        let a = Args::new(&v);
        assert_eq!(a.optional_positive_integer("a"), Ok(Some(3)));
        assert_eq!(a.optional_positive_integer("b"), Ok(Some(3)));
        assert_eq!(a.optional_positive_integer("g"), Ok(None));
        assert_eq!(a.optional_positive_integer("missing"), Ok(None));
        for bad in ["c", "d", "e", "f"] {
            assert_eq!(
                a.optional_positive_integer(bad)
                    .map_err(|e| e.message().to_string()),
                Err(format!("{bad} must be a positive integer"))
            );
        }
    }

    #[test]
    fn counts_run_from_zero_to_their_cap() {
        let v = json!({"a": 0, "b": 5.0, "c": 6, "d": -1, "e": "2"});
        let a = Args::new(&v);
        assert_eq!(a.optional_count("a", 5), Ok(Some(0)));
        assert_eq!(a.optional_count("b", 5), Ok(Some(5)));
        assert_eq!(a.optional_count("missing", 5), Ok(None));
        for bad in ["c", "d", "e"] {
            assert_eq!(
                a.optional_count(bad, 5)
                    .map_err(|e| e.message().to_string()),
                Err(format!("{bad} must be an integer from 0 to 5"))
            );
        }
    }

    #[test]
    fn a_name_longer_than_a_file_system_allows_is_refused_with_its_length() {
        let long = "x".repeat(300);
        let v = serde_json::json!({"file_path": format!("a/{long}/b"), "ok": format!("a/{}", "y".repeat(255))});
        let a = Args::new(&v);
        assert_eq!(
            a.file_path().map_err(|e| e.message().to_string()),
            Err(format!(
                "file_path has a name of 300 bytes (\"{}…\"), longer than the 255 bytes a file name may have",
                "x".repeat(24)
            ))
        );
        assert!(a.path("ok").is_ok(), "255 bytes is a name");
    }

    #[test]
    fn blank_strings_are_not_paths() {
        let v = json!({"a": "  ", "b": "x", "c": 3});
        let a = Args::new(&v);
        assert!(a.non_empty_string("a").is_err());
        assert!(a.non_empty_string("c").is_err());
        assert_eq!(a.non_empty_string("b"), Ok("x"));
        assert_eq!(
            Args::new(&json!("not an object"))
                .file_path()
                .map_err(|e| e.message().to_string()),
            Err("file_path must be a non-empty string".to_string())
        );
    }
}
