//! Which rules a step exercised. A rule counts only in the situation that tells a right backend
//! from a wrong one — a read of a file whose first NUL is at byte 8191, not any read — and only
//! when the step then agreed with the model (the harness drops the pending rules of a failed
//! step). The situation is judged on the model's state *before* the step.

use super::Harness;
use crate::rules::Rule;
use crate::step::{Interfere, WriteGuard};
use seam::text::NUL_SAMPLE_BYTES;
use seam::{CancelPoint, FsErrorCode, FsKind};
use seam_model::{
    Entry, Info, ModelError, MutationResult, Resolved, SnapEntry, Version, WriteResult,
};
use std::borrow::Cow;

const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Streams of files at least this large have several chunks at any chunk size up to 256 KiB.
const MULTI_CHUNK: usize = 512 * 1024;
/// The power-of-two boundaries a chunked reader may split at.
const BOUNDARIES: [usize; 8] = [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288];

/// What a write found before it ran.
pub(super) struct WriteSituation {
    at_key: Option<SnapEntry>,
    through_link: bool,
    missing_parents: usize,
    content_len: usize,
    limit: u64,
}

/// What an edit found before it ran.
pub(super) struct EditSituation {
    file: Option<bytes::Bytes>,
    mode: Option<u32>,
    is_dir: bool,
    through_link: bool,
    old: String,
    new: String,
    replace_all: bool,
    guard_stale: bool,
}

/// A text's LF view: borrowed when it has no `\r` (most texts — files run to megabytes, and
/// every edit step is classified), made otherwise.
fn lf(s: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', s.as_bytes()).is_none() {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(seam_model::lf_normalize(s))
    }
}

/// A text's line breaks: how many are CRLF, and how many are a `\n` alone.
fn line_breaks(text: &str) -> (usize, usize) {
    let crlf = if memchr::memchr(b'\r', text.as_bytes()).is_none() {
        0
    } else {
        occurrences(text, "\r\n", usize::MAX)
    };
    let lf = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    (crlf, lf - crlf)
}

/// Whether CRLF is the style of line breaks `(crlf, bare)`: more of them than bare `\n`.
fn crlf_dominant((crlf, bare): (usize, usize)) -> bool {
    crlf > bare
}

/// Where a file's first NUL is.
fn first_nul(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(0, bytes)
}

/// How many times `needle` (not empty) occurs in `text`, matches not overlapping, counted up
/// to `up_to`: `matches`' count, by `memmem` (files run to megabytes, and every edit step is
/// classified). Whether there is one match, or more than one, is told by the first two: a
/// short word of a large file can occur tens of thousands of times, each a search of its own.
fn occurrences(text: &str, needle: &str, up_to: usize) -> usize {
    memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes())
        .take(up_to)
        .count()
}

impl Harness {
    fn through_link(&self, r: &Resolved) -> bool {
        r.display != self.model.key_display(&r.key)
    }

    pub(super) fn classify_resolved(&mut self, path: &str, r: &Resolved) {
        if path.split('/').any(|c| c.len() == seam::paths::NAME_MAX) {
            self.hit(Rule::PathNameMax);
        }
        let through = self.through_link(r);
        match self.displays.get(&r.key) {
            // Different display paths for one key exist only through a link.
            Some(d) if *d != r.display => self.hit(Rule::KeyAlias),
            Some(_) => {}
            None => {
                self.displays.insert(r.key.clone(), r.display.clone());
            }
        }
        if through && self.model.entry_at(&r.key).is_none() {
            self.hit(Rule::KeyMissingUnderLink);
        }
        // `..` right after a component that is a link: lexical and physical answers differ.
        let parts: Vec<&str> = path.split('/').collect();
        for i in 1..parts.len() {
            if parts[i] == ".." && !matches!(parts[i - 1], "" | "." | "..") {
                let prefix = parts[..i].join("/");
                if let Ok(Some(info)) = self.model.lstat(&prefix)
                    && info.kind == seam::FsPathKind::Symlink
                {
                    self.hit(Rule::PathDotDotLexical);
                }
            }
        }
    }

    /// A target resolved earlier, used after the world changed: what became of its key.
    pub(super) fn classify_reused(&mut self, step: &crate::step::Step, r: &Resolved) {
        let key = &r.key.0;
        let parent_is_file = (1..key.len()).any(|n| {
            matches!(
                self.model.entry_at(&seam_model::Key(key[..n].to_vec())),
                Some(SnapEntry::File { .. })
            )
        });
        if parent_is_file {
            self.hit(Rule::TargetParentNowFile);
        }
        let mutation = matches!(
            step.op,
            crate::step::Op::Write { .. } | crate::step::Op::Edit { .. }
        );
        if mutation
            && matches!(self.model.entry_at(&r.key), Some(SnapEntry::Symlink { .. }))
            && matches!(
                self.model.followed_entry(&r.key),
                Some(SnapEntry::File { .. })
            )
        {
            self.hit(Rule::TargetKeyNowLink);
        }
    }

    pub(super) fn classify_resolve_error(&mut self, path: &str, e: &ModelError) {
        let refused =
            path.contains('\0') || path.split('/').any(|c| c.len() > seam::paths::NAME_MAX);
        let raw = seam::paths::raw_display(path, &self.cwd_abs);
        if refused && !path.trim().is_empty() && seam::paths::lexical(&raw) != raw {
            self.hit(Rule::PathRefusedAsGiven);
        }
        let rule = if path.trim().is_empty() {
            Rule::PathBlank
        } else if path.contains('\0') {
            Rule::PathNul
        } else if path.split('/').any(|c| c.len() > seam::paths::NAME_MAX) {
            Rule::PathNameTooLong
        } else if e.code == FsErrorCode::NotFound {
            Rule::PathParentIsFile
        } else {
            Rule::PathLoop
        };
        self.hit(rule);
    }

    pub(super) fn classify_stat(
        &mut self,
        r: &Resolved,
        expected: &Result<Option<Info>, ModelError>,
    ) {
        match expected {
            Ok(Some(info)) => {
                if info.kind == FsKind::Directory {
                    self.hit(Rule::StatDirNoSize);
                }
                if self.through_link(r) {
                    self.hit(Rule::StatFollows);
                }
            }
            Ok(None) => {
                if matches!(self.model.entry_at(&r.key), Some(SnapEntry::Symlink { .. })) {
                    self.hit(Rule::StatDanglingAbsent);
                }
            }
            Err(_) => {}
        }
    }

    pub(super) fn classify_read(
        &mut self,
        r: &Resolved,
        expected: &Result<String, ModelError>,
        stream: bool,
    ) {
        let followed = self.model.followed_entry(&r.key);
        let code = expected.as_ref().err().map(|e| e.code);
        match (&followed, code) {
            (None, Some(FsErrorCode::NotFound)) => {
                if matches!(self.model.entry_at(&r.key), Some(SnapEntry::Symlink { .. })) {
                    self.hit(Rule::ReadDanglingLink);
                } else {
                    self.hit(Rule::ReadMissing);
                }
            }
            (Some(SnapEntry::Dir { .. }), Some(FsErrorCode::NotRegularFile)) => {
                self.hit(Rule::ReadNotRegular)
            }
            (Some(SnapEntry::Other), Some(FsErrorCode::NotRegularFile)) => self.hit(Rule::ReadFifo),
            _ => {}
        }
        let Some(SnapEntry::File { bytes, .. }) = followed else {
            return;
        };
        match first_nul(&bytes) {
            Some(i) if i < NUL_SAMPLE_BYTES => {
                self.hit(Rule::ReadNulInWindow);
                if i == NUL_SAMPLE_BYTES - 1 {
                    self.hit(Rule::ReadNulWindowLastByte);
                }
            }
            Some(i) if code.is_none() => {
                self.hit(Rule::ReadNulPastWindow);
                if i == NUL_SAMPLE_BYTES {
                    self.hit(Rule::ReadNulFirstPastWindow);
                }
            }
            _ => {}
        }
        if code == Some(FsErrorCode::NotText) && std::str::from_utf8(&bytes).is_err() {
            self.hit(Rule::ReadInvalidUtf8);
            if stream
                && let Err(e) = std::str::from_utf8(&bytes)
                && e.valid_up_to() >= 256 * 1024
            {
                self.hit(Rule::StreamLateInvalid);
            }
        }
        if code.is_none() {
            if bytes.starts_with(BOM) {
                self.hit(Rule::ReadBomHidden);
            }
            if stream {
                self.hit(Rule::StreamEqualsRead);
                if bytes.len() >= MULTI_CHUNK {
                    self.hit(Rule::StreamMultiChunk);
                }
                let split = BOUNDARIES
                    .iter()
                    .all(|&b| bytes.get(b).is_some_and(|x| x & 0xC0 == 0x80));
                if split {
                    self.hit(Rule::StreamSplitChar);
                }
            }
        }
    }

    pub(super) fn classify_bytes(
        &mut self,
        r: &Resolved,
        max: u64,
        expected: &Result<Vec<u8>, ModelError>,
    ) {
        let Some(SnapEntry::File { bytes, .. }) = self.model.followed_entry(&r.key) else {
            return;
        };
        let size = bytes.len() as u64;
        match expected {
            Ok(_) => {
                if size == max {
                    self.hit(Rule::BytesAtCap);
                }
                if size + 1 == max {
                    self.hit(Rule::BytesOneBelowCap);
                }
                if bytes.contains(&0) || std::str::from_utf8(&bytes).is_err() {
                    self.hit(Rule::BytesBinary);
                }
            }
            Err(e) if e.code == FsErrorCode::TooLarge && size == max + 1 => {
                self.hit(Rule::BytesOneOverCap);
            }
            Err(_) => {}
        }
    }

    pub(super) fn classify_list(&mut self, expected: &Result<Vec<Entry>, ModelError>) {
        match expected {
            Ok(entries) => {
                let bytes: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
                let mut folded = bytes.clone();
                folded.sort_by_key(|n| n.to_lowercase());
                if bytes != folded {
                    self.hit(Rule::ListByteOrder);
                }
                if entries.iter().any(|e| e.version.is_none()) {
                    self.hit(Rule::ListBrokenLink);
                }
                if entries.iter().any(|e| e.kind == FsKind::Directory) {
                    self.hit(Rule::ListDirNoSize);
                }
            }
            Err(e) if e.code == FsErrorCode::NotDirectory => self.hit(Rule::ListNotDirectory),
            Err(e) if e.code == FsErrorCode::NotFound => self.hit(Rule::ListMissing),
            Err(_) => {}
        }
    }

    pub(super) fn write_situation(&self, r: &Resolved, content: &str) -> WriteSituation {
        WriteSituation {
            at_key: self.model.entry_at(&r.key),
            through_link: self.through_link(r)
                && matches!(
                    self.model.followed_entry(&r.key),
                    Some(SnapEntry::File { .. })
                ),
            missing_parents: self.model.missing_parents(r),
            content_len: content.len(),
            limit: self.model.config().diff_basis_max_bytes,
        }
    }

    pub(super) fn classify_write(
        &mut self,
        s: &WriteSituation,
        guard: WriteGuard,
        interfere: &Interfere,
        result: &MutationResult<WriteResult>,
    ) {
        if matches!(interfere, Interfere::ChangeAt(..)) && result.competitor.is_some() {
            // The file changed under the write: its own rule (`write.changed-mid-write`).
            return;
        }
        let code = result.outcome.as_ref().err().map(|e| e.code);
        let ok = code.is_none();
        match (&s.at_key, code) {
            (None, None) => self.hit(Rule::WriteCreate),
            (None, Some(FsErrorCode::StaleVersion)) => self.hit(Rule::WriteStaleMissing),
            (Some(SnapEntry::File { .. }), None) if guard == WriteGuard::None => {
                self.hit(Rule::WriteReplace)
            }
            (Some(SnapEntry::File { .. }), None)
                if matches!(guard, WriteGuard::ReplaceIfVersion(_)) =>
            {
                self.hit(Rule::WriteReplaceAtVersion)
            }
            (Some(SnapEntry::File { .. }), Some(FsErrorCode::NotObserved)) => {
                self.hit(Rule::WriteCreateIfAbsentExists)
            }
            (Some(SnapEntry::File { .. }), Some(FsErrorCode::StaleVersion)) => {
                self.hit(Rule::WriteStale)
            }
            (Some(SnapEntry::Dir { .. }), Some(FsErrorCode::NotRegularFile)) => {
                self.hit(Rule::WriteDirectory)
            }
            (Some(SnapEntry::Symlink { .. }), Some(FsErrorCode::NotRegularFile)) => {
                self.hit(Rule::WriteDanglingLink)
            }
            (None, Some(FsErrorCode::NotFound)) => self.hit(Rule::WriteParentNotDir),
            _ => {}
        }
        if ok {
            if s.through_link {
                self.hit(Rule::WriteThroughLink);
            }
            if s.missing_parents > 0 {
                self.hit(Rule::WriteParents);
            }
            match &s.at_key {
                None => self.hit(Rule::WriteNewMode),
                Some(SnapEntry::File { bytes, mode }) => {
                    if mode.is_some_and(|m| m != 0o600) {
                        self.hit(Rule::WriteKeepsMode);
                    }
                    let limit = s.limit;
                    for size in [s.content_len as u64, bytes.len() as u64] {
                        if size + 1 == limit {
                            self.hit(Rule::WriteDiffBelow);
                        } else if size == limit {
                            self.hit(Rule::WriteDiffAt);
                        } else if size == limit + 1 {
                            self.hit(Rule::WriteDiffAbove);
                        }
                    }
                    let small = (s.content_len as u64) < limit && (bytes.len() as u64) < limit;
                    if small && (bytes.contains(&0) || std::str::from_utf8(bytes).is_err()) {
                        self.hit(Rule::WriteBeforeBinary);
                    }
                }
                Some(_) => {}
            }
        }
        if let Some(effect) = &result.competitor {
            use seam_model::WorldEffect;
            match (effect, code) {
                (WorldEffect::CreateFile { .. }, Some(FsErrorCode::NotObserved)) => {
                    self.hit(Rule::WriteCompetitorFile)
                }
                (WorldEffect::CreateDir { .. }, Some(FsErrorCode::NotRegularFile)) => {
                    self.hit(Rule::WriteCompetitorDir)
                }
                (WorldEffect::Symlink { .. }, Some(FsErrorCode::NotRegularFile)) => {
                    self.hit(Rule::WriteCompetitorLink)
                }
                _ => {}
            }
        }
        self.classify_cancel(interfere, code, s.missing_parents > 0);
    }

    fn classify_cancel(
        &mut self,
        interfere: &Interfere,
        code: Option<FsErrorCode>,
        made_parents: bool,
    ) {
        if let Interfere::CancelAt(point) = interfere {
            match (point, code) {
                (CancelPoint::BeforeStage, Some(FsErrorCode::Aborted)) => {
                    self.hit(Rule::CancelBeforeStage)
                }
                (CancelPoint::Staged, Some(FsErrorCode::Aborted)) => {
                    self.hit(Rule::CancelStaged);
                    if made_parents {
                        self.hit(Rule::CancelCreatedParents);
                    }
                }
                (CancelPoint::Committed, None) => self.hit(Rule::CancelCommitted),
                _ => {}
            }
        }
    }

    pub(super) fn edit_situation(
        &self,
        r: &Resolved,
        request: &seam::EditRequest,
        guard: Option<Version>,
    ) -> EditSituation {
        let followed = self.model.followed_entry(&r.key);
        let guard_stale = match (&followed, guard, self.model.stat_target(r)) {
            (Some(SnapEntry::File { .. }), Some(g), Ok(Some(info))) => info.version != g,
            _ => false,
        };
        let (file, mode) = match &followed {
            Some(SnapEntry::File { bytes, mode }) => (Some(bytes.clone()), *mode),
            _ => (None, None),
        };
        EditSituation {
            is_dir: matches!(followed, Some(SnapEntry::Dir { .. })),
            file,
            mode,
            through_link: self.through_link(r),
            old: request.old_string.clone(),
            new: request.new_string.clone(),
            replace_all: request.replace_all,
            guard_stale,
        }
    }

    pub(super) fn classify_edit(
        &mut self,
        s: &EditSituation,
        interfere: &Interfere,
        expected: &Result<seam_model::EditOutcomeModel, ModelError>,
    ) {
        let code = expected.as_ref().err().map(|e| e.code);
        let Some(bytes) = &s.file else {
            match code {
                Some(FsErrorCode::StaleVersion) if !s.is_dir => self.hit(Rule::EditMissing),
                Some(FsErrorCode::NotRegularFile) if s.is_dir => self.hit(Rule::EditDirectory),
                _ => {}
            }
            return;
        };
        let text = std::str::from_utf8(bytes).ok();
        match code {
            Some(FsErrorCode::StaleVersion) if s.guard_stale => {
                self.hit(Rule::EditStale);
                let absent = text.is_some_and(|t| occurrences(&lf(t), &lf(&s.old), 1) == 0);
                if absent && !s.old.is_empty() {
                    self.hit(Rule::EditVersionBeforeMatch);
                }
            }
            Some(FsErrorCode::NotText) => match first_nul(bytes) {
                // Reached where the NUL is the only reason: the edit would otherwise apply.
                Some(i)
                    if i >= NUL_SAMPLE_BYTES
                        && text.is_some_and(|t| {
                            let n = occurrences(&lf(t), &lf(&s.old), 2);
                            !s.old.is_empty() && (n == 1 || (n > 1 && s.replace_all))
                        }) =>
                {
                    self.hit(Rule::EditNulPastWindow)
                }
                Some(_) => {}
                None => self.hit(Rule::EditInvalidUtf8),
            },
            Some(FsErrorCode::EditNotFound) if s.old.is_empty() => self.hit(Rule::EditEmptyOld),
            Some(FsErrorCode::EditNotFound) => self.hit(Rule::EditNotFound),
            Some(FsErrorCode::AmbiguousEdit) => self.hit(Rule::EditAmbiguous),
            None => {
                let Some(text) = text else { return };
                let body = text.strip_prefix('\u{feff}').unwrap_or(text);
                if s.replace_all && occurrences(&lf(body), &lf(&s.old), 2) > 1 {
                    self.hit(Rule::EditReplaceAll);
                }
                let breaks = line_breaks(body);
                let (crlf, bare) = breaks;
                if crlf > 0 && bare > 0 {
                    self.hit(Rule::EditMixedEndings);
                }
                if lf(&s.old).contains('\n') && crlf > 0 {
                    self.hit(Rule::EditCrlfMatch);
                }
                if lf(&s.new).contains('\n') {
                    // The window the contract takes the style from: its first characters.
                    let end = body
                        .char_indices()
                        .nth(seam::edit::STYLE_SAMPLE_CHARS)
                        .map_or(body.len(), |(i, _)| i);
                    let window = crlf_dominant(line_breaks(&body[..end]));
                    if window {
                        self.hit(Rule::EditInsertedStyle);
                    }
                    if window != crlf_dominant(breaks) {
                        self.hit(Rule::EditStyleWindow);
                    }
                }
                if bytes.starts_with(BOM) {
                    self.hit(Rule::EditKeepsBom);
                }
                if s.new.contains('$') {
                    self.hit(Rule::EditLiteral);
                }
                if s.through_link {
                    self.hit(Rule::EditThroughLink);
                }
            }
            _ => {}
        }
        if code.is_none() && s.mode.is_some_and(|m| m != 0o600) {
            self.hit(Rule::EditKeepsMode);
        }
        self.classify_cancel(interfere, code, false);
    }
}

#[cfg(test)]
mod tests {
    use super::occurrences;

    /// Matches do not overlap, and the count stops at its bound: one match or more than one is
    /// told without counting the rest.
    #[test]
    fn occurrences_do_not_overlap_and_stop_at_the_bound() {
        assert_eq!(occurrences("aaa", "aa", usize::MAX), 1);
        assert_eq!(occurrences("aaaa", "aa", usize::MAX), 2);
        assert_eq!(occurrences(&"w ".repeat(1000), "w", usize::MAX), 1000);
        assert_eq!(occurrences(&"w ".repeat(1000), "w", 2), 2);
        assert_eq!(occurrences("a\r\nb\r\n", "\r\n", usize::MAX), 2);
        assert_eq!(occurrences("abc", "x", 1), 0);
        assert_eq!(occurrences("abc", "c", 2), 1);
    }
}
