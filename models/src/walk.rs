//! Path walking with symlinks, the way realpath(3) and the kernel do it: one component at a
//! time, a link's text spliced in front of what remains, `..` applied to the real directory
//! reached so far, and at most 40 links per walk.

use crate::tree::{Node, Tree};
use std::collections::VecDeque;

/// How many links one walk may follow before it is a loop (Linux MAXSYMLINKS).
pub(crate) const MAX_LINKS: usize = 40;

/// Why a walk stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WalkError {
    /// A component does not exist (ENOENT).
    NotFound,
    /// A non-directory was used as a directory (ENOTDIR).
    NotDir,
    /// Too many links (ELOOP).
    Loop,
}

/// Splits a link's text into components; a leading `/` means the root of the model.
pub(crate) fn link_components(target: &str) -> (bool, Vec<String>) {
    let absolute = target.starts_with('/');
    let comps = target
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    (absolute, comps)
}

/// The canonical components of `comps`, following every link including a final one.
pub(crate) fn realpath(tree: &Tree, comps: &[String]) -> Result<Vec<String>, WalkError> {
    let mut stack: Vec<String> = Vec::new();
    let mut queue: VecDeque<String> = comps.iter().cloned().collect();
    let mut links = 0usize;
    while let Some(c) = queue.pop_front() {
        if c == "." {
            continue;
        }
        if c == ".." {
            stack.pop();
            continue;
        }
        let Some(Node::Dir { entries, .. }) = tree.get(&stack) else {
            return Err(WalkError::NotDir);
        };
        match entries.get(&c) {
            None => return Err(WalkError::NotFound),
            Some(Node::Dir { .. }) => stack.push(c),
            Some(Node::File { .. }) | Some(Node::Other { .. }) => {
                if !queue.is_empty() {
                    return Err(WalkError::NotDir);
                }
                stack.push(c);
            }
            Some(Node::Symlink { target, .. }) => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(WalkError::Loop);
                }
                let (absolute, parts) = link_components(target);
                if absolute {
                    stack.clear();
                }
                for p in parts.into_iter().rev() {
                    queue.push_front(p);
                }
            }
        }
    }
    Ok(stack)
}

/// The node `comps` leads to, following every link (stat(2)): `None` when absent, including a
/// path through a regular file.
pub(crate) fn stat_follow<'t>(
    tree: &'t Tree,
    comps: &[String],
) -> Result<Option<&'t Node>, WalkError> {
    match realpath(tree, comps) {
        Ok(real) => Ok(tree.get(&real)),
        Err(WalkError::NotFound) | Err(WalkError::NotDir) => Ok(None),
        Err(WalkError::Loop) => Err(WalkError::Loop),
    }
}

/// The node `comps` names without following its final link (lstat(2)).
pub(crate) fn lstat<'t>(tree: &'t Tree, comps: &[String]) -> Result<Option<&'t Node>, WalkError> {
    let Some((name, parent)) = comps.split_last() else {
        return Ok(Some(&tree.root));
    };
    let real_parent = match realpath(tree, parent) {
        Ok(p) => p,
        Err(WalkError::NotFound) | Err(WalkError::NotDir) => return Ok(None),
        Err(WalkError::Loop) => return Err(WalkError::Loop),
    };
    match tree.get(&real_parent) {
        Some(Node::Dir { entries, .. }) => Ok(entries.get(name)),
        _ => Ok(None),
    }
}

/// The key of a lexical path: its real path, or — when something is missing — the real path of
/// the nearest existing ancestor (by display prefix) followed by the rest of the display path.
pub(crate) fn key_of(tree: &Tree, display: &[String]) -> Result<Vec<String>, WalkError> {
    match realpath(tree, display) {
        Ok(real) => Ok(real),
        Err(WalkError::NotFound) => {
            for i in (0..display.len()).rev() {
                if let Ok(mut base) = realpath(tree, &display[..i]) {
                    base.extend_from_slice(&display[i..]);
                    return Ok(base);
                }
            }
            Ok(display.to_vec())
        }
        Err(e) => Err(e),
    }
}
