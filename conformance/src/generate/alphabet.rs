//! The alphabets generation draws from. They are small on purpose — a handful of names, contents
//! and link targets make operations collide on the same files again and again — and they contain
//! on purpose the situations that tell a right backend from a wrong one: a NUL one byte inside and
//! one byte outside the sniff window, contents one under, at and one over the diff-basis limit, a
//! large file whose multi-byte characters straddle every power-of-two chunk boundary up to
//! 512 KiB, invalid UTF-8 past the first 256 KiB, a file whose dominant line ending flips after the 4096-character
//! style window, a 255-byte name.

use bytes::Bytes;
use seam::paths::NAME_MAX;
use seam::text::NUL_SAMPLE_BYTES;
use std::sync::{Arc, Mutex, OnceLock};

/// Names, with weights: lower and upper case (byte order vs locale order), a multi-byte name in
/// its two Unicode spellings — precomposed (NFC) and decomposed, `e` and a combining acute
/// (NFD): two names to the contract, one to a store that normalises (some macOS volumes, several
/// object stores) — the names that directories and links tend to get, a sibling whose name
/// extends a directory's (`d`, `dd`: a string prefix that is not containment), and one of
/// exactly 255 bytes.
pub(crate) const NAMES: &[(u32, &str)] = &[
    (8, "a"),
    (2, "b"),
    (3, "B"),
    (1, "é"),
    (1, "e\u{301}"),
    (4, "d"),
    (1, "dd"),
    (2, "e"),
    (3, "l"),
    (2, "m"),
];

/// A name of exactly [`NAME_MAX`] bytes: valid, one byte short of refused.
pub(crate) fn longest_name() -> String {
    "n".repeat(NAME_MAX)
}

/// Link texts: to files and directories, relative and root-absolute, climbing with `..`,
/// dangling, and to each other (loops).
pub(crate) const LINK_TARGETS: &[&str] = &[
    "a", "d", "d/a", "../a", "../d", "/a", "/d", "/d/a", "nowhere", "l", "m", "e/a",
];

/// Permission bits the world sets.
pub(crate) const MODES: &[u32] = &[0o600, 0o644, 0o640, 0o755, 0o444];

/// Fixed caps for `read_bytes` (caps around a file's size are drawn from the file itself).
pub(crate) const CAPS: &[u64] = &[0, 1, 3, 4, 5, 16, 64, 1 << 20];

/// The power-of-two boundaries a chunked reader may split a stream at (4 KiB to 512 KiB).
pub(crate) const BOUNDARIES: [usize; 8] = [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288];

/// The hand-written text corpus (also in `fixtures/corpus/`): endings of every kind, a BOM,
/// multi-byte characters, replacement patterns, early and late NUL, and text past small diff
/// limits.
pub fn text_corpus() -> Vec<String> {
    let mut late_nul = "a".repeat(8300);
    late_nul.push('\0');
    late_nul.push_str("tail\n");
    vec![
        String::new(),
        "a".into(),
        "a a a".into(),
        "hello\n".into(),
        "one\r\ntwo\r\n".into(),
        "mixed\r\nlf\nlone\rcr\n".into(),
        "\u{feff}bom\r\nline\r\n".into(),
        "\u{feff}a\n".into(),
        "é日本🦀\n".into(),
        "$& $$ $1 $'".into(),
        "x\0y".into(),
        late_nul,
        "a\r\r\nb\r".into(),
        "a\r\nb\r\nc\nd\r\n".into(),
        "line a\n".repeat(300),
    ]
}

/// Raw byte contents that are not UTF-8 (for the world only: a provider writes text).
pub(crate) fn binary_corpus() -> Vec<Vec<u8>> {
    vec![
        b"h\xFFi".to_vec(),
        b"ok\n\xC3".to_vec(),
        b"\xEF\xBB\xBF".to_vec(),
    ]
}

/// Text with its first NUL at byte `at` (and a little text after it).
pub(crate) fn nul_at(at: usize) -> String {
    let mut s = String::with_capacity(at + 8);
    for i in 0..at {
        s.push(if i % 61 == 60 { '\n' } else { 'a' });
    }
    s.push('\0');
    s.push_str("tail\n");
    s
}

/// [`nul_at`] shared: each text built once, and a case that writes it copies none of it.
pub(crate) fn nul_at_shared(at: usize) -> Arc<str> {
    static BUILT: Mutex<Vec<(usize, Arc<str>)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, text)) = built.iter().find(|(a, _)| *a == at) {
        return Arc::clone(text);
    }
    let text: Arc<str> = nul_at(at).into();
    built.push((at, Arc::clone(&text)));
    text
}

/// [`straddling_text`] shared: built once, and a case that writes it copies none of it (it is
/// half a megabyte, and an opening that writes it is made twice for every case drawn).
pub(crate) fn straddling_shared() -> Arc<str> {
    static TEXT: OnceLock<Arc<str>> = OnceLock::new();
    Arc::clone(TEXT.get_or_init(|| straddling_text().into()))
}

/// [`late_invalid`] shared: built once (300 KiB), and a case that writes it copies none of it.
pub(crate) fn late_invalid_shared() -> Bytes {
    static BYTES: OnceLock<Bytes> = OnceLock::new();
    BYTES.get_or_init(|| late_invalid().into()).clone()
}

/// [`style_window_text`] shared: built once, and a case that writes it copies none of it.
pub(crate) fn style_window_shared() -> Arc<str> {
    static TEXT: OnceLock<Arc<str>> = OnceLock::new();
    Arc::clone(TEXT.get_or_init(|| style_window_text().into()))
}

/// About 520 KiB of text whose 4-byte characters straddle every boundary of [`BOUNDARIES`]
/// (starting 1, 2 or 3 bytes before it), with words and line breaks in between.
pub(crate) fn straddling_text() -> String {
    // Built once: it is half a megabyte, and generation asks for it at every step.
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(build_straddling_text).clone()
}

fn build_straddling_text() -> String {
    let size = BOUNDARIES[BOUNDARIES.len() - 1] + 9 * 1024;
    // The character at boundary #i starts 1 + i % 3 bytes before it.
    let starts: Vec<usize> = BOUNDARIES
        .iter()
        .enumerate()
        .map(|(i, b)| b - 1 - i % 3)
        .collect();
    let mut out = String::with_capacity(size + 8);
    let mut k = 0usize;
    while out.len() < size {
        if starts.contains(&out.len()) {
            out.push('🦀');
            continue;
        }
        out.push(match k % 40 {
            39 => '\n',
            7 | 19 => ' ',
            _ => 'w',
        });
        k += 1;
    }
    out.push('\n');
    out
}

/// Valid text for the first 300 KiB, then a byte that is not UTF-8.
pub(crate) fn late_invalid() -> Vec<u8> {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(build_late_invalid).clone()
}

fn build_late_invalid() -> Vec<u8> {
    let mut b = vec![b'v'; 300 * 1024];
    b.push(0xFF);
    b.extend_from_slice(b"\n");
    b
}

/// Text of exactly `len` bytes (lines of `z`).
pub(crate) fn sized(len: usize) -> String {
    (0..len)
        .map(|i| if i % 50 == 49 { '\n' } else { 'z' })
        .collect()
}

/// LF lines for the whole 4096-character style window (after a unique first word an edit can
/// aim at), then more CRLF lines than that: the window says LF, the whole file says CRLF.
pub(crate) fn style_window_text() -> String {
    let mut s = String::from("style\n");
    s.push_str(&"a\n".repeat(seam::edit::STYLE_SAMPLE_CHARS / 2));
    s.push_str(&"b\r\n".repeat(3000));
    s
}

/// The largest diff-basis limit the suite writes contents around (larger files on every step's
/// read-back would make a case take seconds).
pub(crate) const MAX_GENERATED_DIFF_LIMIT: u64 = 1 << 20;

/// Whether contents around a diff-basis limit of `limit` bytes are generated.
pub(crate) fn diff_limit_generated(limit: u64) -> bool {
    (2..=MAX_GENERATED_DIFF_LIMIT).contains(&limit)
}

/// The generated edge contents for a backend whose diff-basis limit is `limit`.
pub(crate) fn edge_texts(limit: u64) -> Vec<String> {
    let mut v = vec![
        nul_at(NUL_SAMPLE_BYTES - 1),
        nul_at(NUL_SAMPLE_BYTES),
        nul_at(NUL_SAMPLE_BYTES + 1),
        straddling_text(),
        style_window_text(),
    ];
    // Contents around the diff-basis limit, when it is small enough to write in a test.
    if diff_limit_generated(limit)
        && let Ok(limit) = usize::try_from(limit)
    {
        v.extend([sized(limit - 1), sized(limit), sized(limit + 1)]);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared edge text is the text, and the very same one every time it is asked for.
    #[test]
    fn shared_edge_texts_are_the_texts_built_once() {
        for at in [8192, 8292] {
            assert_eq!(&*nul_at_shared(at), nul_at(at));
            assert!(Arc::ptr_eq(&nul_at_shared(at), &nul_at_shared(at)));
        }
        assert_ne!(nul_at_shared(8192), nul_at_shared(8292));
        assert_eq!(&*straddling_shared(), straddling_text());
        assert!(Arc::ptr_eq(&straddling_shared(), &straddling_shared()));
        assert_eq!(&*style_window_shared(), style_window_text());
        assert!(Arc::ptr_eq(&style_window_shared(), &style_window_shared()));
        assert_eq!(late_invalid_shared(), late_invalid());
        assert_eq!(
            late_invalid_shared().as_ptr(),
            late_invalid_shared().as_ptr()
        );
    }

    #[test]
    fn edge_contents_sit_exactly_where_they_claim() {
        for at in [8191, 8192, 8193] {
            let s = nul_at(at);
            assert_eq!(s.as_bytes().iter().position(|b| *b == 0), Some(at));
        }
        let s = straddling_text();
        assert!(s.len() > BOUNDARIES[BOUNDARIES.len() - 1]);
        for b in BOUNDARIES {
            assert!(!s.is_char_boundary(b), "a character straddles byte {b}");
        }
        assert_eq!(sized(1024).len(), 1024);
        assert!(std::str::from_utf8(&late_invalid()).is_err());
        assert_eq!(
            std::str::from_utf8(&late_invalid()).map_err(|e| e.valid_up_to()),
            Err(300 * 1024)
        );
        assert_eq!(longest_name().len(), 255);
    }
}

/// The alphabets as generation draws from them at every step: built once per run (per
/// diff-basis limit) and shared, so that a step clones only the content it draws — the edge
/// contents are megabytes, and building them for every step was most of the gate's time.
#[derive(Clone)]
pub(crate) struct Corpora {
    /// [`text_corpus`].
    pub texts: Arc<[Arc<str>]>,
    /// [`edge_texts`] for the limit.
    pub edges: Arc<[Arc<str>]>,
    /// What the world writes: the edge contents as bytes and [`late_invalid`].
    pub world_edges: Arc<[Bytes]>,
    /// [`binary_corpus`].
    pub binary: Arc<[Bytes]>,
    /// What the stream rules need: the straddling text and the NULs at the window's edge.
    pub stream_edges: Arc<[Arc<str>]>,
    /// Around a diff-basis limit small enough to write (empty otherwise): prior contents (not
    /// text, one byte under, at and over the limit, small) and the contents written over them.
    pub diff_priors: Arc<[Bytes]>,
    /// See [`Corpora::diff_priors`].
    pub diff_contents: Arc<[Arc<str>]>,
}

/// A text's bytes as [`Bytes`] without a copy: the world writes the very buffer a step holds.
pub(crate) fn shared_bytes(text: &Arc<str>) -> Bytes {
    struct Owner(Arc<str>);
    impl AsRef<[u8]> for Owner {
        fn as_ref(&self) -> &[u8] {
            self.0.as_bytes()
        }
    }
    Bytes::from_owner(Owner(Arc::clone(text)))
}

/// The shared alphabets for a backend whose diff-basis limit is `limit`.
pub(crate) fn corpora(limit: u64) -> Corpora {
    static BUILT: Mutex<Vec<(u64, Corpora)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, c)) = built.iter().find(|(l, _)| *l == limit) {
        return c.clone();
    }
    let edges: Arc<[Arc<str>]> = edge_texts(limit).into_iter().map(Arc::from).collect();
    let mut world_edges: Vec<Bytes> = edges.iter().map(shared_bytes).collect();
    world_edges.push(late_invalid().into());
    let (mut diff_priors, mut diff_contents) = (Vec::new(), Vec::new());
    if let Ok(l) = usize::try_from(limit)
        && diff_limit_generated(limit)
    {
        diff_priors = [binary_corpus(), binary_corpus()].concat();
        diff_priors.extend(
            [sized(l - 1), sized(l), sized(l + 1), "small\n".to_string()].map(String::into_bytes),
        );
        diff_contents = vec![sized(l - 1), sized(l), sized(l + 1), "x\n".to_string()];
    }
    let c = Corpora {
        texts: text_corpus().into_iter().map(Arc::from).collect(),
        edges,
        world_edges: world_edges.into(),
        binary: binary_corpus().into_iter().map(Bytes::from).collect(),
        stream_edges: [
            straddling_text(),
            nul_at(NUL_SAMPLE_BYTES - 1),
            nul_at(NUL_SAMPLE_BYTES),
        ]
        .into_iter()
        .map(Arc::from)
        .collect(),
        diff_priors: diff_priors.into_iter().map(Bytes::from).collect(),
        diff_contents: diff_contents.into_iter().map(Arc::from).collect(),
    };
    // A run checks a handful of backends; a limit is kept for the life of the process.
    if built.len() >= 16 {
        built.remove(0);
    }
    built.push((limit, c.clone()));
    c
}
