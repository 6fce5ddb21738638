//! What the world holds at this point of a sequence, so steps can be aimed at it: reads at files,
//! listings at directories, edits at words that occur, `read_bytes` caps around a file's size.
//! The generation model is a [`Model`] under a fixed root; only its state matters here.

use crate::step::{Op, Step};
use seam_model::{Interference, Model, Outline};

/// The root the generation model uses (paths are only hints there).
pub const GEN_ROOT: &str = "/seam-gen-root";

/// The generation state: a model of the world, and the paths written most recently (reads,
/// streams and edits aim at those often, so a file made with an edge content is read soon after).
#[derive(Clone, Debug)]
pub struct GenState {
    /// The model of the world.
    pub model: Model,
    /// Spellings of the last few files written, newest last.
    pub recent: Vec<String>,
    /// The steps of the aimed opening not generated yet (see `openings`).
    pub plan: Vec<Step>,
}

impl GenState {
    /// An empty world.
    pub fn new() -> Self {
        Self::with_plan(Vec::new())
    }

    /// An empty world and an opening to play first.
    pub fn with_plan(plan: Vec<Step>) -> Self {
        Self {
            model: Model::new(seam_model::ModelConfig::new(GEN_ROOT)),
            recent: Vec::new(),
            plan,
        }
    }
}

impl Default for GenState {
    fn default() -> Self {
        Self::new()
    }
}

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
    /// Spellings of the files written most recently.
    pub recent: Vec<String>,
}

impl Hints {
    /// Hints from the generation state; words come first from the files written last.
    pub fn from_state(state: &GenState) -> Hints {
        let outline = state.model.outline(WORDS_FROM);
        let mut hints = Self::from_outline(&outline);
        let mut words = Vec::new();
        for path in state.recent.iter().rev() {
            let rel = path.trim_start_matches("./");
            if let Some(Outline::File { head, .. }) = outline.get(rel) {
                words_of(head, &mut words);
            }
        }
        for w in hints.words {
            if !words.contains(&w) && words.len() < 16 {
                words.push(w);
            }
        }
        hints.words = words;
        hints.recent = state.recent.clone();
        hints
    }

    /// Hints from an outline of what exists (no file's content is copied).
    fn from_outline(outline: &std::collections::BTreeMap<String, Outline>) -> Hints {
        let mut words: Vec<String> = Vec::new();
        for e in outline.values() {
            if let Outline::File { head, .. } = e {
                words_of(head, &mut words);
            }
        }
        Hints {
            files: outline
                .iter()
                .filter_map(|(p, e)| match e {
                    Outline::File { size, .. } => Some((p.clone(), *size)),
                    _ => None,
                })
                .collect(),
            dirs: std::iter::once(".".to_string())
                .chain(
                    outline
                        .iter()
                        .filter(|(_, e)| matches!(e, Outline::Dir))
                        .map(|(p, _)| p.clone()),
                )
                .collect(),
            paths: outline.keys().cloned().collect(),
            words,
            recent: Vec::new(),
        }
    }

    /// The paths of existing files.
    pub fn file_paths(&self) -> Vec<String> {
        self.files.iter().map(|(p, _)| p.clone()).collect()
    }
}

/// How much of a file its words are taken from.
const WORDS_FROM: usize = 4096;

/// Adds the words of a file's first 4 KiB to `words` (at most 16 in all).
fn words_of(bytes: &[u8], words: &mut Vec<String>) {
    if words.len() >= 16 {
        return;
    }
    let head = &bytes[..bytes.len().min(WORDS_FROM)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => match std::str::from_utf8(&head[..e.valid_up_to()]) {
            Ok(t) => t,
            Err(_) => return,
        },
    };
    for w in text
        .split(|c: char| c.is_whitespace() || c == '\u{feff}' || c == '\0')
        .filter(|w| !w.is_empty() && w.len() <= 12)
    {
        if words.len() >= 16 {
            break;
        }
        if !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    }
}

/// How many recently written spellings the state keeps.
const RECENT: usize = 3;

/// Applies a step to the generation state, roughly: enough to know what exists next.
pub fn apply_hint(mut state: GenState, step: &Step) -> GenState {
    if state.plan.first() == Some(step) {
        state.plan.remove(0);
    }
    let p = |path: &str| crate::step::render_path(path, GEN_ROOT);
    let model = &mut state.model;
    let mut wrote = None;
    match &step.op {
        Op::World(op) => {
            if let (Some(_), seam_model::WorldOp::Write { path, .. }) = (model.world(op), op) {
                wrote = Some(path.clone());
            }
        }
        Op::AgentWrite { path, content, .. } | Op::Write { path, content, .. }
            if model
                .write_text(&p(path), content, None, &Interference::None)
                .outcome
                .is_ok() =>
        {
            wrote = Some(path.clone());
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
        Op::CreateDir {
            path,
            parents,
            exist_ok,
        } => {
            let _ = model.create_dir(&p(path), *parents, *exist_ok);
        }
        Op::Remove {
            path,
            guard: None,
            directory,
        } => {
            let _ = model.remove(&p(path), None, *directory);
        }
        Op::Rename {
            from,
            to,
            guard: None,
            replace: None,
        } => {
            let _ = model.rename(&p(from), &p(to), None, None);
        }
        _ => {}
    }
    if let Some(path) = wrote {
        state.recent.retain(|r| *r != path);
        state.recent.push(path);
        if state.recent.len() > RECENT {
            state.recent.remove(0);
        }
    }
    state
}
