//! `process_path`, `file_url` and `contains`: facts other capabilities of the same world rely on
//! (a subprocess opens the process path; a sandbox asks whether a target lies beneath a root).
//! Garbage here passes every other property, so they get one of their own: each fact is checked
//! against the real path of the target in the world, through plain spellings, `..`, absolute
//! spellings, a sibling whose name extends a directory's (`d` and `dd`), and link aliases.

use super::{Context, Property, Run, scenario};
use crate::failure::Failure;
use crate::step::{Op, ROOT_TOKEN, Step};
use seam_model::WorldOp;

/// `path-facts`.
pub struct PathFacts;

impl Property for PathFacts {
    fn name(&self) -> &'static str {
        "path-facts"
    }

    fn summary(&self) -> &'static str {
        "process_path is the real path, file_url encodes it, contains is containment by identity and whole components"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let world = |op| Step::plain(Op::World(op));
        let facts = |path: &str, other: &str| {
            Step::plain(Op::Facts {
                path: path.into(),
                other: other.into(),
            })
        };
        let mut steps = vec![
            world(WorldOp::Write {
                path: "d/a".into(),
                bytes: b"a\n".to_vec().into(),
                mode: 0o644,
            }),
            world(WorldOp::Write {
                path: "dd/x y#%".into(),
                bytes: b"x\n".to_vec().into(),
                mode: 0o644,
            }),
            world(WorldOp::Write {
                path: "é/日本".into(),
                bytes: b"j\n".to_vec().into(),
                mode: 0o644,
            }),
            facts("d/a", "d"),
            facts("d", "dd/x y#%"),
            facts("dd", "d"),
            facts(".", "d/a"),
            facts(&format!("{ROOT_TOKEN}/é/日本"), "é"),
            facts("d/../dd/x y#%", "dd"),
            facts("d/missing", "d"),
        ];
        if cx.caps.symlinks {
            steps.push(world(WorldOp::Symlink {
                path: "l".into(),
                target: "d".into(),
            }));
            steps.push(facts("l/a", "d"));
            steps.push(facts("d/a", "l"));
        }
        scenario(cx, self.name(), steps, &[], out)
    }
}
