//! What a cut runs: the tree the calls start from, the calls drawn from the seed, where the
//! power is cut, and what each call leaves (contents, modes), as the judge compares.

use super::SIZES;
use std::collections::BTreeMap;

/// What the model holds at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Node {
    File(Vec<u8>),
    Dir,
}

/// Paths (relative to the case, `/`-separated) to what is there.
pub(super) type Tree = BTreeMap<String, Node>;

/// One call of a cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Call {
    Write {
        path: String,
        text: String,
    },
    Edit {
        path: String,
        old: String,
        new: String,
    },
    Remove {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    Mkdir {
        path: String,
    },
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Call::Write { path, text } => write!(f, "write {path:?} ({} bytes)", text.len()),
            Call::Edit { path, old, new } => write!(f, "edit {path:?} ({old:?} -> {new:?})"),
            Call::Remove { path } => write!(f, "remove {path:?}"),
            Call::Rename { from, to } => write!(f, "rename {from:?} -> {to:?}"),
            Call::Mkdir { path } => write!(f, "create_dir {path:?}"),
        }
    }
}

/// Where the power goes: `within` layer operations into call `call` — or, `by_syncs`, right
/// after the `within`-th sync of that call (the only points where what survives changes) —
/// or, when `call` is the number of calls, after the last one answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CutAt {
    pub(super) call: usize,
    pub(super) within: u64,
    pub(super) by_syncs: bool,
}

/// One cut's plan: the calls and where the power goes.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    pub(super) calls: Vec<Call>,
    pub(super) cut: CutAt,
}

impl Plan {
    pub(super) fn describe(&self) -> String {
        let calls: Vec<String> = self
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {c}", i + 1))
            .collect();
        let cut = if self.cut.call >= self.calls.len() {
            "the power cut after every call answered".to_string()
        } else if self.cut.by_syncs {
            format!(
                "the power cut right after sync {} of call {}",
                self.cut.within,
                self.cut.call + 1
            )
        } else {
            format!(
                "the power cut {} file-system operations into call {}",
                self.cut.within,
                self.cut.call + 1
            )
        };
        format!("calls [{}], {cut}", calls.join("; "))
    }
}

/// A small deterministic generator (splitmix64): the cuts are the seed's.
pub(super) struct Draw(pub(super) u64);

impl Draw {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    pub(super) fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            items.get(self.below(items.len() as u64) as usize)
        }
    }
}

/// A text of about `size` bytes whose first line is a marker an edit can replace.
pub(super) fn text(tag: &str, size: usize) -> String {
    let mut t = format!("MARKER {tag}\n");
    let line = format!("{tag} ........................................................\n");
    while t.len() < size {
        t.push_str(&line);
    }
    t
}

/// What every cut starts from (durable before the mount).
pub(super) fn initial() -> Tree {
    let mut t = Tree::new();
    t.insert("a".into(), Node::File(text("a0", 700).into_bytes()));
    t.insert("b".into(), Node::File(text("b0", 24).into_bytes()));
    t.insert("d".into(), Node::Dir);
    t.insert("d/c".into(), Node::File(text("c0", 9_000).into_bytes()));
    t
}

/// Permission bits by path, of the files the model holds.
pub(super) type Modes = BTreeMap<String, u32>;

/// The bits the starting files have (distinct, so a file that comes back with a new file's
/// 0600 has lost them).
pub(super) fn initial_modes() -> Modes {
    [("a", 0o640), ("b", 0o644), ("d/c", 0o660)]
        .into_iter()
        .map(|(p, m)| (p.to_string(), m))
        .collect()
}

/// `modes` after `call` on `tree` (the tree before it): a new file is 0600, a rewritten or
/// edited one keeps its bits, a renamed one takes them along.
pub(super) fn apply_modes(modes: &Modes, tree: &Tree, call: &Call) -> Modes {
    let mut m = modes.clone();
    match call {
        Call::Write { path, .. } => {
            if !matches!(tree.get(path), Some(Node::File(_))) {
                m.insert(path.clone(), 0o600);
            }
        }
        Call::Remove { path } => {
            m.remove(path);
        }
        Call::Rename { from, to } => {
            if let Some(bits) = m.remove(from) {
                m.insert(to.clone(), bits);
            }
        }
        Call::Edit { .. } | Call::Mkdir { .. } => {}
    }
    m
}

pub(super) fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
}

pub(super) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `tree` after `call`.
pub(super) fn apply(tree: &Tree, call: &Call) -> Tree {
    let mut t = tree.clone();
    match call {
        Call::Write { path, text } => {
            // The parents a write makes.
            let mut parent = parent_of(path);
            while !parent.is_empty() && !t.contains_key(parent) {
                t.insert(parent.to_string(), Node::Dir);
                parent = parent_of(parent);
            }
            t.insert(path.clone(), Node::File(text.as_bytes().to_vec()));
        }
        Call::Edit { path, old, new } => {
            if let Some(Node::File(bytes)) = t.get(path) {
                let s = String::from_utf8_lossy(bytes).replacen(old.as_str(), new, 1);
                t.insert(path.clone(), Node::File(s.into_bytes()));
            }
        }
        Call::Remove { path } => {
            t.remove(path);
        }
        Call::Rename { from, to } => {
            if let Some(n) = t.remove(from) {
                t.insert(to.clone(), n);
            }
        }
        Call::Mkdir { path } => {
            t.insert(path.clone(), Node::Dir);
        }
    }
    t
}

/// Draws a cut's calls (each valid where the previous ones leave the model) and its point.
pub(super) fn draw_plan(
    draw: &mut Draw,
    namespace: bool,
    per_call: (u64, u64),
    serial: &mut u64,
) -> Plan {
    let mut tree = initial();
    let n = 1 + draw.below(6) as usize;
    let mut calls = Vec::with_capacity(n);
    for _ in 0..n {
        let files: Vec<String> = tree
            .iter()
            .filter(|(_, n)| matches!(n, Node::File(_)))
            .map(|(p, _)| p.clone())
            .collect();
        let mut dirs: Vec<String> = vec![String::new()];
        dirs.extend(
            tree.iter()
                .filter(|(_, n)| matches!(n, Node::Dir))
                .map(|(p, _)| p.clone()),
        );
        *serial += 1;
        let tag = format!("v{serial}");
        let fresh = |draw: &mut Draw, dirs: &[String], stem: &str| {
            let dir = draw.pick(dirs).cloned().unwrap_or_default();
            join(&dir, &format!("{stem}{serial}"))
        };
        let roll = draw.below(if namespace { 10 } else { 6 });
        let call = match (roll, draw.pick(&files).cloned()) {
            (0..=2, Some(path)) => Call::Write {
                path,
                text: text(&tag, SIZES[draw.below(4) as usize]),
            },
            (3, _) | (0..=2, None) => Call::Write {
                // Now and then into a directory that does not exist yet: the write makes it,
                // and must sync the directory that gained it too.
                path: if draw.below(4) == 0 {
                    join(&fresh(draw, &dirs, "p"), &format!("n{serial}"))
                } else {
                    fresh(draw, &dirs, "n")
                },
                text: text(&tag, SIZES[draw.below(4) as usize]),
            },
            (4 | 5, Some(path)) => {
                let old = match tree.get(&path) {
                    Some(Node::File(b)) => String::from_utf8_lossy(b)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                    _ => String::new(),
                };
                Call::Edit {
                    path,
                    old,
                    new: format!("MARKER {tag} edited"),
                }
            }
            (6, Some(path)) => Call::Remove { path },
            (7 | 8, Some(from)) => Call::Rename {
                to: fresh(draw, &dirs, "r"),
                from,
            },
            _ => Call::Mkdir {
                path: join("", &format!("e{serial}")),
            },
        };
        tree = apply(&tree, &call);
        calls.push(call);
    }
    let call = draw.below(n as u64 + 1) as usize;
    let by_syncs = draw.below(2) == 0;
    let within = if by_syncs {
        1 + draw.below(per_call.1.max(1))
    } else {
        draw.below(per_call.0.max(1))
    };
    Plan {
        calls,
        cut: CutAt {
            call,
            within,
            by_syncs,
        },
    }
}
