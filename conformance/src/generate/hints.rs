//! What the world holds at this point of a sequence, so steps can be aimed at it: reads at files,
//! listings at directories, edits at words that occur, `read_bytes` caps around a file's size.
//! The generation model is a [`Model`] under a fixed root; only its state matters here.

use crate::step::{Op, Step, VersionRef};
use seam_model::{Model, Outline};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The root the generation model uses (paths are only hints there).
pub const GEN_ROOT: &str = "/seam-gen-root";

/// The generation state: a model of the world, and the paths written most recently (reads,
/// streams and edits aim at those often, so a file made with an edge content is read soon after).
#[derive(Clone, Debug)]
pub struct GenState {
    /// The model of the world. Private, as `recent` is: both change only through
    /// [`apply_hint`], and the hints kept in `last` are reused while the model's count of
    /// versions and `recent` are unchanged (another model with as many versions put in its place
    /// would be aimed with hints of the first).
    model: Model,
    /// Spellings of the last few files written, newest last.
    recent: Vec<String>,
    /// The steps of the aimed opening not generated yet (see `openings`).
    pub plan: Vec<Step>,
    /// The words of the files' heads, computed once per content.
    words: WordCache,
    /// The hints last drawn from this state.
    last: LastHints,
}

/// The hints last drawn from a state, with what they were drawn from: the model's count of
/// versions handed out (every change hands one out) and the recent writes. A step that changed
/// nothing — a read, a listing, a refused write — is aimed with the same hints, not with a new
/// outline of the whole tree. Each clone of a state keeps its own: two clones that went
/// different ways may have handed out as many versions.
#[derive(Debug, Default)]
struct LastHints(Mutex<Option<(u64, Vec<String>, Hints)>>);

impl Clone for LastHints {
    fn clone(&self) -> Self {
        LastHints(Mutex::new(
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        ))
    }
}

/// The words of each file's head by the file's version, so that a step's hints, which look at
/// every file, do not split again the heads that did not change since the last step (most did
/// not). An entry is used only for the very bytes it was computed from, so clones of a state
/// that went different ways may share it.
#[derive(Clone, Debug, Default)]
struct WordCache(Arc<Mutex<HashMap<u64, HeadWords>>>);

/// A file's head and its first distinct words. The head is a copy: holding the outline's view
/// would hold the whole file, for as long as the cache lives (while a failure is shrunk, that
/// is every file of every attempt).
type HeadWords = (Vec<u8>, Arc<[String]>);

impl WordCache {
    /// The first distinct words of `head` (at most 16: [`words_of`] into an empty list).
    fn words(&self, version: u64, head: &[u8]) -> Arc<[String]> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, words)) = map.get(&version)
            && seen.as_slice() == head
        {
            return Arc::clone(words);
        }
        let mut words = Vec::new();
        words_of(head, &mut words);
        let words: Arc<[String]> = words.into();
        map.insert(version, (head.to_vec(), Arc::clone(&words)));
        words
    }

    /// Adds a file's words to `words` as [`words_of`] would: each not there yet, until there
    /// are 16. A file's first 16 distinct words are enough for that: of the words it looks at
    /// before it stops, the ones it adds are at most 16 minus those already there, and the
    /// ones it skips are among those already there.
    fn add(&self, version: u64, head: &[u8], words: &mut Vec<String>) {
        if words.len() >= 16 {
            return;
        }
        for w in self.words(version, head).iter() {
            if words.len() >= 16 {
                break;
            }
            if !words.contains(w) {
                words.push(w.clone());
            }
        }
    }
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
            words: WordCache::default(),
            last: LastHints::default(),
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
    pub paths: Arc<[String]>,
    /// Relative paths of existing regular files, with their sizes.
    pub files: Arc<[(String, u64)]>,
    /// The same files' paths alone.
    pub file_names: Arc<[String]>,
    /// Relative paths of existing directories (and `.`).
    pub dirs: Arc<[String]>,
    /// Words that occur in existing text files.
    pub words: Arc<[String]>,
    /// Spellings of the files written most recently.
    pub recent: Arc<[String]>,
}

impl Hints {
    /// Hints from the generation state; words come first from the files written last. The
    /// same as the last drawn from this state when the state has not changed since.
    pub fn from_state(state: &GenState) -> Hints {
        let minted = state.model.minted();
        let mut last = state.last.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, recent, hints)) = last.as_ref()
            && *at == minted
            && *recent == state.recent
        {
            return hints.clone();
        }
        let hints = Self::drawn_from(state);
        *last = Some((minted, state.recent.clone(), hints.clone()));
        hints
    }

    /// Hints drawn afresh from the generation state's outline.
    fn drawn_from(state: &GenState) -> Hints {
        let outline = state.model.outline(WORDS_FROM);
        let mut hints = Self::from_outline(&outline, &state.words);
        let mut words = Vec::new();
        for path in state.recent.iter().rev() {
            let rel = path.trim_start_matches("./");
            if let Some(Outline::File { head, version, .. }) = outline.get(rel) {
                state.words.add(*version, head, &mut words);
            }
        }
        for w in hints.words.iter() {
            if !words.contains(w) && words.len() < 16 {
                words.push(w.clone());
            }
        }
        hints.words = words.into();
        hints.recent = state.recent.as_slice().into();
        hints
    }

    /// Hints from an outline of what exists (no file's content is copied).
    fn from_outline(
        outline: &std::collections::BTreeMap<String, Outline>,
        cache: &WordCache,
    ) -> Hints {
        let mut words: Vec<String> = Vec::new();
        for e in outline.values() {
            if let Outline::File { head, version, .. } = e {
                cache.add(*version, head, &mut words);
            }
        }
        let files: Arc<[(String, u64)]> = outline
            .iter()
            .filter_map(|(p, e)| match e {
                Outline::File { size, .. } => Some((p.clone(), *size)),
                _ => None,
            })
            .collect();
        Hints {
            file_names: files.iter().map(|(p, _)| p.clone()).collect(),
            files,
            dirs: std::iter::once(".".to_string())
                .chain(
                    outline
                        .iter()
                        .filter(|(_, e)| matches!(e, Outline::Dir))
                        .map(|(p, _)| p.clone()),
                )
                .collect(),
            paths: outline.keys().cloned().collect(),
            words: words.into(),
            recent: Arc::default(),
        }
    }

    /// The paths of existing files (shared: every strategy of a step draws from the same).
    pub fn file_paths(&self) -> Arc<[String]> {
        self.file_names.clone()
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
        // What the file then holds is all that is followed here: not the write's texts.
        Op::AgentWrite { path, content, .. } | Op::Write { path, content, .. }
            if model.write_text_untold(&p(path), content).is_ok() =>
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
            // What the file then holds is all that is followed here: not the edit's texts.
            let _ = model.edit_text_untold(&p(path), old, new, *replace_all);
        }
        Op::CreateDir {
            path,
            parents,
            exist_ok,
        } => {
            let _ = model.create_dir(&p(path), *parents, *exist_ok);
        }
        // A guard at the version just seen holds; one at an earlier version is taken as stale.
        Op::Remove {
            path,
            guard: None | Some(VersionRef::Target),
            directory,
        } => {
            let _ = model.remove(&p(path), None, *directory);
        }
        Op::Rename {
            from,
            to,
            guard: None | Some(VersionRef::Target),
            replace,
        } if matches!(replace, None | Some(VersionRef::Target)) => {
            let replace =
                replace.and_then(|_| model.lstat(&p(to)).ok().flatten().map(|i| i.version));
            let _ = model.rename(&p(from), &p(to), None, replace);
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

/// Whether a step keeps every link's text inside the root: the model knows nothing above the
/// root (the world never makes a link whose text climbs out of it), and a move can carry a link
/// whose text climbs one level (`../a`, fine in `d/`) up to the root, where it would lead out —
/// to whatever the storage holds beside the test root. Such a move is not generated. (Link
/// texts climb one level at most, so only a link itself moved to the top can lead out; a moved
/// directory keeps its links at least one level down.)
pub fn keeps_links_inside(state: &GenState, step: &Step) -> bool {
    let Op::Rename { from, to, .. } = &step.op else {
        return true;
    };
    let spelled = |path: &str| {
        let path = crate::step::render_path(path, GEN_ROOT);
        match &step.cwd {
            Some(cwd) if !path.trim().is_empty() && !path.starts_with('/') => {
                format!("{cwd}/{path}")
            }
            _ => path,
        }
    };
    let model = &state.model;
    let Ok(Some(source)) = model.entry(seam::Verb::Rename, &spelled(from)) else {
        return true;
    };
    let Some(seam_model::SnapEntry::Symlink { target }) = model.entry_at(&source.key) else {
        return true;
    };
    if target.starts_with('/') {
        return true;
    }
    let Ok(destination) = model.place(seam::Verb::Rename, &spelled(to)) else {
        return true;
    };
    // The depth of the directory the link would sit in, then its text walked from there.
    let mut depth = destination.key.0.len() as i64 - 1;
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => depth += 1,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;
    use seam_model::WorldOp;

    fn world(op: WorldOp) -> Step {
        Step::plain(Op::World(op))
    }

    proptest::proptest! {
        /// The cache adds what [`words_of`] adds, to any list it starts from, for heads with
        /// few and many words, repeats, long words and multi-byte spaces: each head first under
        /// a version of its own (drawn), then again under the same version (taken from the
        /// cache), then every head under one version (a version whose bytes changed is drawn
        /// again, never taken from the cache).
        #[test]
        fn cached_words_are_the_words_of_the_head(
            heads in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec!["a", "b", "cc", "ddd", " ", "\n", "\u{a0}", "\u{feff}", "\0", "wordlongerthantwelve", "é"]),
                    0..80,
                ).prop_map(|v| v.concat().into_bytes()),
                1..6,
            ),
            start in proptest::collection::vec(proptest::sample::select(vec!["a", "b", "cc", "x", "y"]), 0..18),
        ) {
            let cache = WordCache::default();
            let mut cached: Vec<String> = Vec::new();
            let mut plain: Vec<String> = Vec::new();
            for w in start {
                if !plain.contains(&w.to_string()) {
                    plain.push(w.to_string());
                    cached.push(w.to_string());
                }
            }
            let own = (0..heads.len() as u64).map(|i| i + 100);
            let passes = own.clone().chain(own).chain(std::iter::repeat_n(7, heads.len()));
            for (version, head) in passes.zip(heads.iter().cycle()) {
                // A fresh list for each head as well as the running one: a head's own words.
                let (mut alone_cached, mut alone_plain) = (Vec::new(), Vec::new());
                cache.add(version, head, &mut alone_cached);
                words_of(head, &mut alone_plain);
                proptest::prop_assert_eq!(&alone_cached, &alone_plain);
                cache.add(version, head, &mut cached);
                words_of(head, &mut plain);
                proptest::prop_assert_eq!(&cached, &plain);
            }
        }
    }

    /// A step that changed nothing is aimed with the hints drawn before it (the very same
    /// lists); a change has them drawn again. Two copies of a state that went different ways,
    /// each by one new directory (as many versions handed out), are each aimed at their own.
    #[test]
    fn hints_are_drawn_again_after_a_change_and_only_then() {
        let write = |path: &str| {
            world(WorldOp::Write {
                path: path.into(),
                bytes: bytes::Bytes::from_static(b"one two\n"),
                mode: 0o644,
            })
        };
        let mkdir = |path: &str| world(WorldOp::Mkdir { path: path.into() });
        let state = apply_hint(GenState::new(), &write("a"));
        let first = Hints::from_state(&state);
        assert_eq!(&first.paths[..], ["a"]);
        assert_eq!(&first.words[..], ["one", "two"]);
        let state = apply_hint(state, &Step::plain(Op::ReadText { path: "a".into() }));
        let again = Hints::from_state(&state);
        assert!(
            Arc::ptr_eq(&first.paths, &again.paths),
            "a read changes nothing"
        );
        let state = apply_hint(state, &write("b"));
        let changed = Hints::from_state(&state);
        assert_eq!(&changed.paths[..], ["a", "b"]);
        assert_eq!(&changed.recent[..], ["a", "b"]);
        let (x, y) = (
            apply_hint(state.clone(), &mkdir("x")),
            apply_hint(state.clone(), &mkdir("y")),
        );
        assert_eq!(x.model.minted(), y.model.minted());
        assert_eq!(&Hints::from_state(&x).dirs[..], [".", "x"]);
        assert_eq!(&Hints::from_state(&y).dirs[..], [".", "y"]);
        assert_eq!(&Hints::from_state(&state).dirs[..], ["."]);
    }

    fn rename(from: &str, to: &str) -> Step {
        Step::plain(Op::Rename {
            from: from.into(),
            to: to.into(),
            guard: None,
            replace: None,
        })
    }

    /// Found at a fresh seed: `d/B -> ../a` moved to the top led out of the root, where the
    /// model knows nothing (every provider departed from it the same way). Such a move is not
    /// generated; moves that keep the link's text inside are.
    #[test]
    fn a_move_that_would_carry_a_link_out_of_the_root_is_not_generated() {
        let mut state = GenState::new();
        for op in [
            WorldOp::Mkdir { path: "d".into() },
            WorldOp::Mkdir { path: "e".into() },
            WorldOp::Symlink {
                path: "d/B".into(),
                target: "../a".into(),
            },
            WorldOp::Symlink {
                path: "d/abs".into(),
                target: "/a".into(),
            },
        ] {
            state = apply_hint(state, &world(op));
        }
        assert!(!keeps_links_inside(&state, &rename("d/B", "dd")));
        assert!(!keeps_links_inside(&state, &rename("{root}/d/B", "./x")));
        let mut in_d = rename("B", "../top");
        in_d.cwd = Some("d".into());
        assert!(!keeps_links_inside(&state, &in_d));
        assert!(keeps_links_inside(&state, &rename("d/B", "d/C")));
        assert!(keeps_links_inside(&state, &rename("d/B", "e/B")));
        assert!(keeps_links_inside(&state, &rename("d/abs", "top")));
        assert!(keeps_links_inside(&state, &rename("d", "f")));
    }
}
