//! The namespace operations on the tree: `create_dir`, guarded `remove`, atomic guarded
//! `rename`. Each is called twice: `dry`, to give the early failures and reach the checkpoint
//! with the lock let go (the world acts inside a checkpoint), and then for real, whole under the
//! tree lock — the guard, every check again and the change one critical section against every
//! other call and instance.

use crate::tree::{DIR_MODE, Node, Tree, WalkError, components, join, token};
use seam::{CreateDirOptions, FsError, FsPathKind, FsVersion, RemoveOptions, RenameOptions, Verb};

pub(crate) fn path_kind(n: &Node) -> FsPathKind {
    match n {
        Node::File { .. } => FsPathKind::File,
        Node::Dir { .. } => FsPathKind::Directory,
        Node::Symlink { .. } => FsPathKind::Symlink,
        Node::Other { .. } => FsPathKind::Other,
    }
}

/// The lexical components of a display path, refusing the root (it is nobody's entry).
fn named(verb: Verb, display: &str) -> Result<Vec<String>, FsError> {
    let comps = components(display);
    if comps.is_empty() {
        return Err(FsError::io(
            verb,
            display,
            "the root of the tree is not an entry",
        ));
    }
    Ok(comps)
}

/// The real location of the entry a path names (its real parent plus its name): `Ok(None)`
/// when the parent is missing or not a directory.
fn entry(tree: &Tree, verb: Verb, display: &str) -> Result<Option<Vec<String>>, FsError> {
    let comps = named(verb, display)?;
    match tree.parent_of(&comps) {
        Ok(Some((mut real, name))) => {
            real.push(name.clone());
            Ok(Some(real))
        }
        Ok(None) => Ok(None),
        Err(_) => Err(FsError::symlink_loop(verb, display)),
    }
}

/// Where something may be put: the parent must exist and be a directory.
fn place(tree: &Tree, verb: Verb, display: &str) -> Result<Vec<String>, FsError> {
    let comps = named(verb, display)?;
    let Some((name, parent)) = comps.split_last() else {
        return Err(FsError::parent_missing(verb, display));
    };
    match tree.realpath(parent) {
        Ok(mut real) if matches!(tree.get(&real), Some(Node::Dir { .. })) => {
            real.push(name.clone());
            Ok(real)
        }
        Ok(_) | Err(WalkError::NotDir) => Err(FsError::parent_not_directory(verb, display)),
        Err(WalkError::NotFound) => Err(FsError::parent_missing(verb, display)),
        Err(WalkError::Loop) => Err(FsError::symlink_loop(verb, display)),
    }
}

/// `create_dir`: the new (or existing) directory's version, and whether this call made it.
pub(crate) fn create_dir(
    tree: &mut Tree,
    display: &str,
    request: CreateDirOptions,
    dry: bool,
) -> Result<(bool, FsVersion), FsError> {
    let verb = Verb::Mkdir;
    let comps = named(verb, display)?;
    let Some((name, parent)) = comps.split_last() else {
        return Err(FsError::parent_missing(verb, display));
    };
    let not_dir = || FsError::parent_not_directory(verb, display);
    let parent_key = match tree.key_of(parent) {
        Ok(k) => k,
        Err(WalkError::Loop) => return Err(FsError::symlink_loop(verb, display)),
        Err(WalkError::NotDir) => return Err(not_dir()),
        Err(WalkError::NotFound) => return Err(FsError::parent_missing(verb, display)),
    };
    let mut missing = Vec::new();
    for i in 1..=parent_key.len() {
        match tree.get(&parent_key[..i]) {
            None => missing.push(parent_key[..i].to_vec()),
            Some(Node::Dir { .. }) if missing.is_empty() => {}
            Some(_) => return Err(not_dir()),
        }
    }
    if !missing.is_empty() && !request.parents {
        return Err(FsError::parent_missing(verb, display));
    }
    let mut key = parent_key;
    key.push(name.clone());
    match tree.get(&key) {
        Some(n @ Node::Dir { .. }) if request.exist_ok => return Ok((false, token(n.version()))),
        Some(Node::Dir { .. }) => return Err(FsError::directory_exists(display)),
        Some(_) => return Err(FsError::not_directory_in_the_way(display)),
        None => {}
    }
    if dry {
        return Ok((true, FsVersion::new("")));
    }
    for dir in missing {
        let node = tree.new_dir(DIR_MODE);
        tree.put(&dir, node).map_err(|()| not_dir())?;
    }
    let node = tree.new_dir(DIR_MODE);
    let version = node.version();
    tree.put(&key, node).map_err(|()| not_dir())?;
    Ok((true, token(version)))
}

/// `remove`: the kind removed.
pub(crate) fn remove(
    tree: &mut Tree,
    display: &str,
    request: &RemoveOptions,
    dry: bool,
) -> Result<FsPathKind, FsError> {
    let verb = Verb::Remove;
    // Nothing there: not found — or stale, for a caller who saw something at a version.
    let absent = || match request.if_version {
        Some(_) => FsError::changed_since_read(verb, display),
        None => FsError::not_found(verb, display),
    };
    let Some(at) = entry(tree, verb, display)? else {
        return Err(absent());
    };
    let Some(node) = tree.get(&at) else {
        return Err(absent());
    };
    if let Some(v) = &request.if_version
        && *v != token(node.version())
    {
        return Err(FsError::changed_since_read(verb, display));
    }
    if let Node::Dir { entries, .. } = node {
        if !request.directory {
            return Err(FsError::is_a_directory(verb, display));
        }
        if !entries.is_empty() {
            return Err(FsError::directory_not_empty(display));
        }
    }
    let kind = path_kind(node);
    if !dry {
        tree.remove(&at);
    }
    Ok(kind)
}

/// `rename`: what moved, whether it replaced something, and its version now.
pub(crate) fn rename(
    tree: &mut Tree,
    from: &str,
    to: &str,
    request: &RenameOptions,
    dry: bool,
) -> Result<(FsPathKind, bool, FsVersion), FsError> {
    let verb = Verb::Rename;
    named(verb, to)?;
    let absent = || match request.if_version {
        Some(_) => FsError::changed_since_read(verb, from),
        None => FsError::not_found(verb, from),
    };
    let Some(source) = entry(tree, verb, from)? else {
        return Err(absent());
    };
    let Some(node) = tree.get(&source) else {
        return Err(absent());
    };
    if let Some(v) = &request.if_version
        && *v != token(node.version())
    {
        return Err(FsError::changed_since_read(verb, from));
    }
    let source_is_dir = matches!(node, Node::Dir { .. });
    let dest = place(tree, verb, to)?;
    if dest.starts_with(&source) {
        return Err(FsError::rename_into_itself(from, to));
    }
    let existing = tree.get(&dest);
    let replaced = existing.is_some();
    match (existing, &request.replace) {
        (Some(_), None) => return Err(FsError::destination_exists(to)),
        (Some(Node::Dir { .. }), Some(_)) => return Err(FsError::is_a_directory(verb, to)),
        (Some(_), Some(_)) if source_is_dir => return Err(FsError::is_a_directory(verb, from)),
        (Some(n), Some(v)) if token(n.version()) != *v => {
            return Err(FsError::changed_since_read(verb, to));
        }
        (None, Some(_)) => return Err(FsError::changed_since_read(verb, to)),
        _ => {}
    }
    if dry {
        return Ok((path_kind(node), replaced, FsVersion::new("")));
    }
    let Some(mut moved) = tree.remove(&source) else {
        return Err(FsError::not_found(verb, from));
    };
    // The moved entry is a new state of itself: a file, link or other object gets a version
    // never issued before; a directory keeps its own (its entries did not change).
    let fresh = tree.mint();
    match &mut moved {
        Node::File { version, .. }
        | Node::Symlink { version, .. }
        | Node::Other { version, .. } => {
            *version = fresh;
        }
        Node::Dir { .. } => {}
    }
    let kind = path_kind(&moved);
    let version = moved.version();
    tree.put(&dest, moved)
        .map_err(|()| FsError::io(verb, &join(&dest), "the destination's parent vanished"))?;
    Ok((kind, replaced, token(version)))
}
