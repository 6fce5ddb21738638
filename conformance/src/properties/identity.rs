//! Symlink identity: one key and one version through every alias, writes land on the real file
//! and leave the link a link, and a stale write through one alias is caught through another.

use super::{Applicability, Context, Intent, Property, Run, scenario};
use crate::failure::Failure;
use crate::step::{Op, ROOT_TOKEN, Step, VersionRef, WriteGuard};
use seam::Capability;
use seam::FsErrorCode;
use seam_model::WorldOp;

/// `symlink-identity`.
pub struct SymlinkIdentity;

impl Property for SymlinkIdentity {
    fn name(&self) -> &'static str {
        "symlink-identity"
    }

    fn summary(&self) -> &'static str {
        "aliases share one key and one version; writes go through links; staleness is seen through every alias"
    }

    fn applies(&self, cx: &Context) -> Applicability {
        Applicability::needs(&cx.caps, &[Capability::Symlinks])
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let (steps, intents) = steps();
        scenario(cx, self.name(), steps, &intents, out)
    }
}

fn world(op: WorldOp) -> Step {
    Step::plain(Op::World(op))
}

fn stat(path: &str) -> Step {
    Step::plain(Op::Stat { path: path.into() })
}

fn steps() -> (Vec<Step>, Vec<Intent>) {
    let steps = vec![
        world(WorldOp::Write {
            path: "a".into(),
            bytes: b"v1\n".to_vec().into(),
            mode: 0o644,
        }),
        world(WorldOp::Write {
            path: "d/x".into(),
            bytes: b"x1\r\n".to_vec().into(),
            mode: 0o640,
        }),
        world(WorldOp::Symlink {
            path: "l".into(),
            target: "a".into(),
        }),
        world(WorldOp::Symlink {
            path: "dl".into(),
            target: "d".into(),
        }),
        world(WorldOp::Symlink {
            path: "abs".into(),
            target: "/d/x".into(),
        }),
        // 5..: one key through every spelling.
        Step::plain(Op::Resolve { path: "a".into() }),
        Step::plain(Op::Resolve { path: "l".into() }),
        Step::plain(Op::Resolve {
            path: format!("{ROOT_TOKEN}/l"),
        }),
        Step::plain(Op::Resolve {
            path: "d/../l".into(),
        }),
        Step::plain(Op::Resolve {
            path: "dl/x".into(),
        }),
        Step::plain(Op::Resolve { path: "abs".into() }),
        // 11..: one version through every alias (history: va, va).
        stat("a"),
        stat("l"),
        // 13: write through the link at that version.
        Step::plain(Op::Write {
            path: "l".into(),
            content: "v2\n".into(),
            guard: WriteGuard::ReplaceIfVersion(VersionRef::Recent(0)),
        }),
        // 14: the old version, through the other alias, is stale.
        Step::plain(Op::Write {
            path: "a".into(),
            content: "v3\n".into(),
            guard: WriteGuard::ReplaceIfVersion(VersionRef::Recent(1)),
        }),
        // 15..: edits through a linked directory and an absolute link.
        stat("d/x"),
        Step::plain(Op::Edit {
            path: "dl/x".into(),
            old: "x1".into(),
            new: "x2".into(),
            replace_all: false,
            guard: Some(VersionRef::Recent(0)),
        }),
        Step::plain(Op::Edit {
            path: "abs".into(),
            old: "x2".into(),
            new: "x3".into(),
            replace_all: false,
            guard: Some(VersionRef::Recent(1)),
        }),
        Step::plain(Op::ListDir { path: "dl".into() }),
        Step::plain(Op::ListDir { path: "d".into() }),
        Step::plain(Op::Lstat { path: "l".into() }),
        Step::plain(Op::ReadText { path: "abs".into() }),
    ];
    let intents: Vec<Intent> = vec![
        (5, None),
        (9, None),
        (13, None),
        (14, Some(FsErrorCode::StaleVersion)),
        (16, None),
        (17, Some(FsErrorCode::StaleVersion)),
    ];
    (steps, intents)
}
