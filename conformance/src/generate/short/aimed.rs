//! The aimed cases: short sequences written by hand for what the enumeration of shapes does
//! not reach (rules a random walk rarely meets).

use super::steps::{world, write};
use super::{ShortCase, ShortConfig, TEXT, link};
use crate::step::{Op, Step, WriteGuard};
use seam_model::WorldOp;

/// The aimed cases: for every rule whose situation needs a particular content or layout (a
/// NUL at the last byte of the sniff window, half a megabyte of characters straddling every
/// chunk boundary, a file one byte under the diff-basis limit, a link after which `..` climbs),
/// the few steps that set it up and the call that exercises it — so that such a rule is reached
/// at every run by construction, not by the random sequences' luck. (With `--cases 1` a rule
/// may still wait for the breadth of the property it belongs to — a sandbox deployment's
/// default decision, for one; at the default breadth every rule is reached.)
pub(super) fn aimed(config: &ShortConfig) -> Vec<ShortCase> {
    use super::super::alphabet::{late_invalid, nul_at, sized, straddling_text, style_window_text};
    use seam::text::NUL_SAMPLE_BYTES;
    let caps = config.caps;
    let write_bytes = |path: &str, bytes: Vec<u8>| {
        world(WorldOp::Write {
            path: path.into(),
            bytes: bytes.into(),
            mode: 0o644,
        })
    };
    let text = |path: &str, t: String| write_bytes(path, t.into_bytes());
    let read = |path: &str| Step::plain(Op::ReadText { path: path.into() });
    let stream = |path: &str| Step::plain(Op::StreamText { path: path.into() });
    let edit_to = |old: &str, new: &str| {
        Step::plain(Op::Edit {
            path: "t".into(),
            old: old.into(),
            new: new.into(),
            replace_all: false,
            guard: None,
        })
    };
    let mut out: Vec<(&'static str, Vec<Step>)> = vec![
        (
            "a refused spelling with ./ and ..",
            vec![
                Step::plain(Op::Stat {
                    path: "./a\0b".into(),
                }),
                Step::plain(Op::Resolve {
                    path: format!("d/../{}/", "x".repeat(256)),
                }),
            ],
        ),
        (
            "a relative path in a working directory",
            vec![text("d/a", TEXT.into()), {
                let mut s = read("a");
                s.cwd = Some("d".into());
                s
            }],
        ),
        (
            "NULs around the sniff window",
            vec![
                text("w1", nul_at(NUL_SAMPLE_BYTES - 1)),
                read("w1"),
                text("w2", nul_at(NUL_SAMPLE_BYTES)),
                read("w2"),
                text("w3", nul_at(NUL_SAMPLE_BYTES + 100)),
                read("w3"),
                Step::plain(Op::Edit {
                    path: "w3".into(),
                    old: "tail".into(),
                    new: "b".into(),
                    replace_all: false,
                    guard: None,
                }),
            ],
        ),
        (
            "a BOM",
            vec![
                text("t", "\u{feff}bom\r\nline\r\n".into()),
                read("t"),
                edit_to("bom", "x"),
            ],
        ),
        (
            "a large stream",
            vec![text("big", straddling_text()), stream("big")],
        ),
        (
            "invalid UTF-8 past the first chunks",
            vec![write_bytes("bad", late_invalid()), stream("bad")],
        ),
        (
            "names whose byte order is not their case order",
            vec![
                text("B", TEXT.into()),
                text("a", TEXT.into()),
                world(WorldOp::Mkdir { path: "d".into() }),
                Step::plain(Op::ListDir { path: ".".into() }),
            ],
        ),
        (
            "a replaced file that was not text",
            vec![
                write_bytes("t", b"h\xFFi".to_vec()),
                Step::plain(write("t", WriteGuard::None)),
            ],
        ),
        (
            "mixed line endings",
            vec![
                text("t", "mixed\r\nlf\nlone\rcr\n".into()),
                edit_to("lf", "LF"),
            ],
        ),
        (
            "CRLF lines",
            vec![
                text("t", "one\r\ntwo\r\nthree\r\n".into()),
                edit_to("one\ntwo", "x"),
                edit_to("three", "3\n4"),
                edit_to("x", "$& $$"),
            ],
        ),
        (
            "a style window that disagrees with the file",
            vec![text("t", style_window_text()), edit_to("style", "s\nt")],
        ),
        (
            "a directory's version after its entries changed",
            vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                Step::plain(Op::Stat { path: "d".into() }),
                text("d/x", TEXT.into()),
                Step::plain(Op::Stat { path: "d".into() }),
            ],
        ),
        (
            "a target resolved earlier whose parent became a file",
            vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                text("d/t", TEXT.into()),
                read("d/t"),
                world(WorldOp::Remove { path: "d/t".into() }),
                world(WorldOp::Remove { path: "d".into() }),
                text("d", TEXT.into()),
                read("d/t").reusing(),
                Step::plain(write("d/t", WriteGuard::None)).reusing(),
                Step::plain(Op::Stat { path: "d/t".into() }).reusing(),
            ],
        ),
    ];
    if caps.read_bytes {
        out.push((
            "read_bytes around a size, of bytes not text",
            vec![
                text("t", TEXT.into()),
                Step::plain(Op::ReadBytes {
                    path: "t".into(),
                    max: TEXT.len() as u64 + 1,
                }),
                write_bytes("bin", b"h\xFFi".to_vec()),
                Step::plain(Op::ReadBytes {
                    path: "bin".into(),
                    max: 16,
                }),
            ],
        ));
    }
    if caps.symlinks {
        out.push((
            "links: .. after a link, a broken one listed, a parent through a dangling one",
            vec![
                world(WorldOp::Mkdir { path: "d".into() }),
                text("a", TEXT.into()),
                world(link("l", "d")),
                read("l/../a"),
                world(link("n", "nowhere")),
                Step::plain(Op::ListDir { path: ".".into() }),
                Step::plain(write("n/a", WriteGuard::None)),
            ],
        ));
        out.push((
            "a target whose key became a link",
            vec![
                text("t", TEXT.into()),
                text("f", TEXT.into()),
                Step::plain(Op::Stat { path: "t".into() }),
                world(WorldOp::Remove { path: "t".into() }),
                world(link("t", "f")),
                Step::plain(write("t", WriteGuard::None)).reusing(),
            ],
        ));
    }
    if caps.sandbox_modes {
        // A call's own workspace `d` below the test root: outside it, a way out of it, inside.
        let fenced = |path: &str| {
            Step::plain(write(path, WriteGuard::None)).fenced(crate::step::CallSandbox {
                mode: seam::SandboxMode::WorkspaceWrite,
                workspace: format!("{}/d", crate::step::ROOT_TOKEN),
            })
        };
        let mut steps = vec![
            world(WorldOp::Mkdir { path: "d".into() }),
            fenced("a"),
            fenced("d/x"),
            // No call policy, outside the deployment's workspace: its mode decides.
            Step::plain(write("b", WriteGuard::None)),
            // A call's workspace that does not exist matches nothing.
            Step::plain(write("b", WriteGuard::None)).fenced(crate::step::CallSandbox {
                mode: seam::SandboxMode::WorkspaceWrite,
                workspace: format!("{}/nowhere", crate::step::ROOT_TOKEN),
            }),
        ];
        if caps.symlinks {
            steps.push(world(link("d/dang", "../nowhere")));
            steps.push(fenced("d/dang"));
        }
        out.push(("a call's workspace below the root", steps));
    }
    let limit = config.diff_limit;
    if super::super::alphabet::diff_limit_generated(limit)
        && let Ok(l) = usize::try_from(limit)
    {
        for size in [l - 1, l, l + 1] {
            out.push((
                "contents around the diff-basis limit",
                vec![
                    text("t", "small\n".into()),
                    Step::plain(Op::Write {
                        path: "t".into(),
                        content: sized(size).into(),
                        guard: WriteGuard::None,
                    }),
                ],
            ));
        }
    }
    out.into_iter()
        .map(|(shape, steps)| ShortCase { shape, steps })
        .collect()
}
