//! What the world holds at this point of a sequence, so steps can be aimed at it: reads at files,
//! listings at directories, edits at words that occur, `read_bytes` caps around a file's size.
//! The generation model is a [`Model`] under a fixed root; only its state matters here.

use crate::step::{Op, Step};
use seam_model::{Interference, Model, SnapEntry};

/// The root the generation model uses (paths are only hints there).
pub const GEN_ROOT: &str = "/seam-gen-root";

/// What exists at this point of a sequence.
#[derive(Clone, Debug, Default)]
pub struct Hints {
    /// Relative paths of existing entries.
    pub paths: Vec<String>,
    /// Relative paths of existing regular files, with their sizes.
    pub files: Vec<(String, u64)>,
    /// Relative paths of existing directories (and `.`).
    pub dirs: Vec<String>,
    /// Words that occur in existing text files.
    pub words: Vec<String>,
}

impl Hints {
    /// Hints from the generation model's state.
    pub fn from_model(model: &Model) -> Hints {
        let snap = model.snapshot();
        let mut words: Vec<String> = Vec::new();
        for e in snap.values() {
            if let SnapEntry::File { bytes, .. } = e
                && let Ok(text) = std::str::from_utf8(&bytes[..bytes.len().min(4096)])
            {
                for w in text
                    .split([' ', '\n'])
                    .filter(|w| !w.is_empty() && w.len() <= 12)
                {
                    if !words.iter().any(|x| x == w) && words.len() < 16 {
                        words.push(w.to_string());
                    }
                }
            }
        }
        Hints {
            files: snap
                .iter()
                .filter_map(|(p, e)| match e {
                    SnapEntry::File { bytes, .. } => Some((p.clone(), bytes.len() as u64)),
                    _ => None,
                })
                .collect(),
            dirs: std::iter::once(".".to_string())
                .chain(
                    snap.iter()
                        .filter(|(_, e)| matches!(e, SnapEntry::Dir { .. }))
                        .map(|(p, _)| p.clone()),
                )
                .collect(),
            paths: snap.keys().cloned().collect(),
            words,
        }
    }

    /// The paths of existing files.
    pub fn file_paths(&self) -> Vec<String> {
        self.files.iter().map(|(p, _)| p.clone()).collect()
    }
}

/// Applies a step to the generation model, roughly: enough to know what exists next.
pub fn apply_hint(mut model: Model, step: &Step) -> Model {
    let p = |path: &str| crate::step::render_path(path, GEN_ROOT);
    match &step.op {
        Op::World(op) => {
            let _ = model.world(op);
        }
        Op::Write { path, content, .. } => {
            let _ = model.write_text(&p(path), content, None, &Interference::None);
        }
        Op::Edit {
            path,
            old,
            new,
            replace_all,
            ..
        } => {
            let _ = model.edit_text(&p(path), old, new, *replace_all, None, &Interference::None);
        }
        _ => {}
    }
    model
}
