//! Bad input: blank, NUL-bearing and over-long paths, a directory where a file is expected, a
//! file where a directory is, binary and invalid text, impossible edits. Every one must be a coded
//! error whose message names the path, and none may change anything on disk (the harness reads
//! the world back after each step).

use super::{Context, Intent, Property, Run, scenario};
use crate::failure::Failure;
use crate::step::{Op, Step, WriteGuard};
use seam::FsErrorCode;
use seam_model::WorldOp;

/// `bad-input`.
pub struct BadInput;

impl Property for BadInput {
    fn name(&self) -> &'static str {
        "bad-input"
    }

    fn summary(&self) -> &'static str {
        "bad paths and wrong kinds fail with a coded error naming the path and change nothing"
    }

    fn core(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let (steps, intents) = steps(cx);
        scenario(cx, self.name(), steps, &intents, out)
    }
}

fn steps(cx: &Context) -> (Vec<Step>, Vec<Intent>) {
    let mut steps = vec![
        Step::plain(Op::World(WorldOp::Write {
            path: "f".into(),
            bytes: b"text\n".to_vec().into(),
            mode: 0o644,
        })),
        Step::plain(Op::World(WorldOp::Mkdir { path: "d".into() })),
        Step::plain(Op::World(WorldOp::Write {
            path: "bin".into(),
            bytes: b"a\0b".to_vec().into(),
            mode: 0o644,
        })),
        Step::plain(Op::World(WorldOp::Write {
            path: "bad".into(),
            bytes: b"h\xFFi".to_vec().into(),
            mode: 0o644,
        })),
    ];
    let mut intents: Vec<Intent> = Vec::new();
    let mut add = |steps: &mut Vec<Step>, op: Op, code: FsErrorCode| {
        intents.push((steps.len(), Some(code)));
        steps.push(Step::plain(op));
    };
    let long = "n".repeat(seam::paths::NAME_MAX + 1);
    for bad in ["", "   ", "a\0b", long.as_str(), "d/a\0"] {
        let p = bad.to_string();
        add(
            &mut steps,
            Op::Resolve { path: p.clone() },
            FsErrorCode::NotFound,
        );
        add(
            &mut steps,
            Op::Stat { path: p.clone() },
            FsErrorCode::NotFound,
        );
        add(
            &mut steps,
            Op::Lstat { path: p.clone() },
            FsErrorCode::NotFound,
        );
        add(
            &mut steps,
            Op::ReadText { path: p.clone() },
            FsErrorCode::NotFound,
        );
        add(
            &mut steps,
            Op::ListDir { path: p.clone() },
            FsErrorCode::NotFound,
        );
        add(
            &mut steps,
            Op::Write {
                path: p.clone(),
                content: "x".into(),
                guard: WriteGuard::None,
            },
            FsErrorCode::NotFound,
        );
        add(
            &mut steps,
            Op::Edit {
                path: p,
                old: "a".into(),
                new: "b".into(),
                replace_all: false,
                guard: None,
            },
            FsErrorCode::NotFound,
        );
    }
    let edit = |path: &str, old: &str| Op::Edit {
        path: path.into(),
        old: old.into(),
        new: "z".into(),
        replace_all: false,
        guard: None,
    };
    add(
        &mut steps,
        Op::Write {
            path: "d".into(),
            content: "x".into(),
            guard: WriteGuard::None,
        },
        FsErrorCode::NotRegularFile,
    );
    add(
        &mut steps,
        Op::Write {
            path: "d".into(),
            content: "x".into(),
            guard: WriteGuard::CreateIfAbsent,
        },
        FsErrorCode::NotRegularFile,
    );
    add(&mut steps, edit("d", "a"), FsErrorCode::NotRegularFile);
    add(
        &mut steps,
        Op::ReadText { path: "d".into() },
        FsErrorCode::NotRegularFile,
    );
    add(
        &mut steps,
        Op::StreamText { path: "d".into() },
        FsErrorCode::NotRegularFile,
    );
    add(
        &mut steps,
        Op::ListDir { path: "f".into() },
        FsErrorCode::NotDirectory,
    );
    add(
        &mut steps,
        Op::ReadText { path: "bin".into() },
        FsErrorCode::NotText,
    );
    add(
        &mut steps,
        Op::StreamText { path: "bin".into() },
        FsErrorCode::NotText,
    );
    add(
        &mut steps,
        Op::ReadText { path: "bad".into() },
        FsErrorCode::NotText,
    );
    add(
        &mut steps,
        Op::StreamText { path: "bad".into() },
        FsErrorCode::NotText,
    );
    add(&mut steps, edit("bin", "a"), FsErrorCode::NotText);
    add(&mut steps, edit("bad", "h"), FsErrorCode::NotText);
    add(
        &mut steps,
        Op::Resolve { path: "f/x".into() },
        FsErrorCode::NotFound,
    );
    add(
        &mut steps,
        Op::Write {
            path: "f/x".into(),
            content: "x".into(),
            guard: WriteGuard::None,
        },
        FsErrorCode::NotFound,
    );
    add(
        &mut steps,
        Op::ReadText {
            path: "missing".into(),
        },
        FsErrorCode::NotFound,
    );
    add(
        &mut steps,
        Op::ListDir {
            path: "missing".into(),
        },
        FsErrorCode::NotFound,
    );
    add(&mut steps, edit("missing", "a"), FsErrorCode::StaleVersion);
    add(&mut steps, edit("f", ""), FsErrorCode::EditNotFound);
    add(&mut steps, edit("f", "zzz"), FsErrorCode::EditNotFound);
    add(
        &mut steps,
        Op::Write {
            path: "f".into(),
            content: "x".into(),
            guard: WriteGuard::CreateIfAbsent,
        },
        FsErrorCode::NotObserved,
    );
    if cx.caps.read_bytes {
        add(
            &mut steps,
            Op::ReadBytes {
                path: "f".into(),
                max: 1,
            },
            FsErrorCode::TooLarge,
        );
        add(
            &mut steps,
            Op::ReadBytes {
                path: "d".into(),
                max: 1,
            },
            FsErrorCode::NotRegularFile,
        );
    }
    // The longest valid name: it can be created, and resolves.
    let longest = "n".repeat(seam::paths::NAME_MAX);
    intents.push((steps.len(), None));
    steps.push(Step::plain(Op::Write {
        path: format!("d/{longest}"),
        content: "x".into(),
        guard: WriteGuard::None,
    }));
    intents.push((steps.len(), None));
    steps.push(Step::plain(Op::Stat {
        path: format!("d/{longest}"),
    }));
    (steps, intents)
}
