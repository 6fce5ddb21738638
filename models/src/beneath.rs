//! Walking a key beneath a writable root that the walk may not leave, the way a confining
//! provider resolves it: one component at a time from the root, a link's text spliced in front
//! of what remains (relative text from the directory holding the link, absolute text only when
//! it names a place beneath the root), `..` never above the root, at most 40 links per walk.
//!
//! A rule about *leaving*, not about where a path ends up: a link `ws/a -> ../ws/b` leaves the
//! root on its way back in, and a confined walk refuses it. Containment is decided by the walk a
//! mutation makes when it looks at its key, before it decides anything else: the parents with
//! their links, and — when a link sits at the key itself — a second walk that follows it.

use crate::tree::{Node, Tree};
use crate::walk::MAX_LINKS;
use std::collections::VecDeque;

/// How a confined walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Confined {
    /// It would have left the root: `..` above it, or a link whose text leads out.
    Leaves,
    /// It stopped inside: a missing or non-directory component, a loop.
    Stopped,
    /// It reached the final component; `link` says whether a link sits there (only seen when
    /// the walk does not follow a final link).
    Reached {
        /// A link sits at the final component.
        link: bool,
    },
}

fn components(text: &str) -> Vec<String> {
    text.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_string)
        .collect()
}

/// Walks `rel` (components beneath `root`, a real directory of the tree), following links on
/// the way and, when `follow`, at the end.
pub(crate) fn walk(tree: &Tree, root: &[String], rel: &[String], follow: bool) -> Confined {
    let root_text = root.join("/");
    let mut stack: Vec<String> = root.to_vec();
    let mut queue: VecDeque<String> = rel.iter().cloned().collect();
    let mut links = 0usize;
    while let Some(name) = queue.pop_front() {
        if name == "." {
            continue;
        }
        if name == ".." {
            if stack.len() == root.len() {
                return Confined::Leaves;
            }
            stack.pop();
            continue;
        }
        let last = queue.is_empty();
        if last && !follow {
            let mut at = stack.clone();
            at.push(name);
            let link = matches!(tree.get(&at), Some(Node::Symlink { .. }));
            return Confined::Reached { link };
        }
        let Some(Node::Dir { entries, .. }) = tree.get(&stack) else {
            return Confined::Stopped;
        };
        match entries.get(&name) {
            None if last => return Confined::Reached { link: false },
            None => return Confined::Stopped,
            Some(Node::Symlink { target, .. }) => {
                links += 1;
                if links > MAX_LINKS {
                    return Confined::Stopped;
                }
                let mut next = match target.strip_prefix('/') {
                    // The model's absolute texts are root-relative (`/d/a` is the test root's
                    // `d/a`); the provider compares the text with its root's path, as text.
                    Some(abs) => {
                        let rest = if root_text.is_empty() {
                            Some(abs)
                        } else if abs == root_text {
                            Some("")
                        } else {
                            abs.strip_prefix(root_text.as_str())
                                .and_then(|r| r.strip_prefix('/'))
                        };
                        let Some(rest) = rest else {
                            return Confined::Leaves;
                        };
                        stack.truncate(root.len());
                        components(rest)
                    }
                    None => components(target),
                };
                next.extend(queue.drain(..));
                queue = next.into();
            }
            Some(Node::Dir { .. }) if !last => stack.push(name),
            Some(_) if last => return Confined::Reached { link: false },
            Some(_) => return Confined::Stopped,
        }
    }
    Confined::Reached { link: false }
}

/// Whether a mutation of `key` beneath `root` leaves it when it looks at its key: the walk to
/// the key without following a final link, then — a link being there — the walk through it.
pub(crate) fn mutation_leaves(tree: &Tree, root: &[String], key: &[String]) -> bool {
    let Some(rel) = key.strip_prefix(root) else {
        return true;
    };
    match walk(tree, root, rel, false) {
        Confined::Leaves => true,
        Confined::Stopped | Confined::Reached { link: false } => false,
        Confined::Reached { link: true } => walk(tree, root, rel, true) == Confined::Leaves,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::WorldOp;

    fn tree(ops: &[WorldOp]) -> Tree {
        let mut t = Tree::new();
        for op in ops {
            assert!(t.apply_world(op).is_some(), "{op:?} applies");
        }
        t
    }

    fn mkdir(p: &str) -> WorldOp {
        WorldOp::Mkdir { path: p.into() }
    }

    fn link(p: &str, target: &str) -> WorldOp {
        WorldOp::Symlink {
            path: p.into(),
            target: target.into(),
        }
    }

    fn comps(p: &str) -> Vec<String> {
        components(p)
    }

    #[test]
    fn every_way_out_leaves_and_every_way_in_stays() {
        let t = tree(&[
            mkdir("ws"),
            mkdir("ws/sub"),
            mkdir("out"),
            link("ws/rel_out", "../out"),
            link("ws/abs_out", "/out"),
            link("ws/abs_in", "/ws/sub"),
            link("ws/rel_in", "sub"),
            link("ws/sub/up_in", "../sub"),
            link("ws/back_in", "../ws/sub"),
            link("ws/dangling_out", "../nowhere"),
            link("ws/dangling_in", "missing"),
            link("ws/chain", "rel_out"),
            link("ws/root", "/"),
        ]);
        let ws = comps("ws");
        for way_out in [
            "ws/rel_out/x",
            "ws/abs_out/x",
            "ws/back_in/x",
            "ws/dangling_out",
            "ws/chain/x",
            "ws/chain",
            "ws/root/x",
        ] {
            assert!(mutation_leaves(&t, &ws, &comps(way_out)), "{way_out}");
        }
        for way_in in [
            "ws/x",
            "ws/sub/x",
            "ws/abs_in/x",
            "ws/rel_in/x",
            "ws/sub/up_in/x",
            "ws/dangling_in",
            "ws/missing/deeper/x",
            "ws",
        ] {
            assert!(!mutation_leaves(&t, &ws, &comps(way_in)), "{way_in}");
        }
        assert!(
            mutation_leaves(&t, &ws, &comps("out/x")),
            "a key outside the root"
        );
        assert!(
            !mutation_leaves(&t, &[], &comps("ws/back_in/x")),
            "beneath the test root, ws/../ws stays"
        );
    }

    #[test]
    fn a_loop_stops_inside() {
        let t = tree(&[mkdir("ws"), link("ws/a", "b"), link("ws/b", "a")]);
        assert!(!mutation_leaves(&t, &comps("ws"), &comps("ws/a/x")));
        assert!(!mutation_leaves(&t, &comps("ws"), &comps("ws/a")));
    }
}
