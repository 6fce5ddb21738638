//! The broken text handling some variants need, written the wrong way on purpose.

use seam::text::{BOM, NUL_SAMPLE_BYTES};

/// The whole file rewritten in its dominant line-ending style (the seed's edit, which a
/// byte-faithful edit must not do). The BOM is kept, so only the endings differ.
pub(crate) fn normalise_endings(bytes: &[u8]) -> Option<Vec<u8>> {
    let (body, bom) = match bytes.strip_prefix(BOM) {
        Some(rest) => (rest, true),
        None => (bytes, false),
    };
    let text = std::str::from_utf8(body).ok()?;
    let crlf = text.matches("\r\n").count();
    let lf = text.matches('\n').count();
    let lf_text = text.replace("\r\n", "\n");
    let out = if crlf > lf - crlf {
        lf_text.replace('\n', "\r\n")
    } else {
        lf_text
    };
    let mut v = if bom { BOM.to_vec() } else { Vec::new() };
    v.extend_from_slice(out.as_bytes());
    Some(v)
}

/// Where a NUL stands in for a character the edit cannot see.
const STAND_IN: char = '\u{E000}';

/// The edit a provider that samples NUL like a read would make: a NUL past the window is
/// edited around as if it were text.
pub(crate) fn edit_ignoring_late_nul(bytes: &[u8], request: &seam::EditRequest) -> Option<Vec<u8>> {
    let first = bytes.iter().position(|b| *b == 0)?;
    if first < NUL_SAMPLE_BYTES {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let hidden = text.replace('\0', &STAND_IN.to_string());
    let edited = seam::edit::literal_edit(hidden.into_bytes(), request).ok()?;
    let out = String::from_utf8(edited.bytes()).ok()?;
    Some(out.replace(STAND_IN, "\0").into_bytes())
}

/// Whether a read that looks for NUL in one byte too many calls this binary.
pub(crate) fn nul_at_window_edge(bytes: &[u8]) -> bool {
    bytes.iter().position(|b| *b == 0) == Some(NUL_SAMPLE_BYTES)
}

/// Decodes every 64 KiB chunk on its own; `None` when a chunk boundary splits a character.
pub(crate) fn chunked_decode(bytes: &[u8]) -> Option<Vec<String>> {
    let body = bytes.strip_prefix(BOM).unwrap_or(bytes);
    body.chunks(64 * 1024)
        .map(|c| String::from_utf8(c.to_vec()).ok())
        .collect()
}
