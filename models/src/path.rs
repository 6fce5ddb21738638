//! Paths in the model: component lists under the test root, and how the provider's path strings
//! map onto them. The model only knows its root's display path; anything outside the root is
//! not modelled (generators never produce it).

use serde::{Deserialize, Serialize};

/// A canonical identity in the model: the components of the real path from the root.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Key(pub Vec<String>);

/// Why a path string is not a modelled path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PathProblem {
    /// Empty or only white space.
    Blank,
    /// Contains a NUL byte.
    Nul,
    /// A component longer than 255 bytes.
    NameTooLong,
    /// Leaves the test root.
    Outside,
}

/// The longest name a component may have (Linux NAME_MAX).
pub(crate) const NAME_MAX: usize = 255;

/// Lexically normalises `path` (relative to the root, or absolute under it) into components.
pub(crate) fn lexical(root: &str, path: &str) -> Result<Vec<String>, PathProblem> {
    if path.trim().is_empty() {
        return Err(PathProblem::Blank);
    }
    if path.contains('\0') {
        return Err(PathProblem::Nul);
    }
    let rest = if let Some(abs) = path.strip_prefix('/') {
        let root_rel = root.trim_start_matches('/');
        if abs == root_rel {
            ""
        } else if let Some(r) = abs.strip_prefix(root_rel).and_then(|r| r.strip_prefix('/')) {
            r
        } else {
            return Err(PathProblem::Outside);
        }
    } else {
        path
    };
    let mut comps: Vec<String> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if comps.pop().is_none() {
                    return Err(PathProblem::Outside);
                }
            }
            name => {
                if name.len() > NAME_MAX {
                    return Err(PathProblem::NameTooLong);
                }
                comps.push(name.to_string());
            }
        }
    }
    Ok(comps)
}

/// The display path of components under the root.
pub(crate) fn display(root: &str, comps: &[String]) -> String {
    let mut s = root.to_string();
    for c in comps {
        s.push('/');
        s.push_str(c);
    }
    s
}

/// The display path for a message about a path that could not be normalised.
pub(crate) fn raw_display(root: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{root}/{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn relative_and_absolute_spellings_normalise_lexically() {
        assert_eq!(lexical("/r", "a/./b"), Ok(v(&["a", "b"])));
        assert_eq!(lexical("/r", "d/../a"), Ok(v(&["a"])));
        assert_eq!(lexical("/r", "/r/d/a/"), Ok(v(&["d", "a"])));
        assert_eq!(lexical("/r", "/r"), Ok(v(&[])));
        assert_eq!(lexical("/r", "/rx/a"), Err(PathProblem::Outside));
        assert_eq!(lexical("/r", ".."), Err(PathProblem::Outside));
        assert_eq!(lexical("/r", "  "), Err(PathProblem::Blank));
        assert_eq!(lexical("/r", "a\0"), Err(PathProblem::Nul));
        assert_eq!(
            lexical("/r", &"x".repeat(256)),
            Err(PathProblem::NameTooLong)
        );
        assert_eq!(display("/r", &v(&["d", "a"])), "/r/d/a");
    }
}
