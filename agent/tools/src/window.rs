//! The read window: which lines of a file one `read` returns, computed from text that arrives
//! in chunks of any size.
//!
//! A read may stream a 1 GiB file, or a file that is one 1 GiB line, so nothing here may grow
//! with the file: only the selected lines are kept (at most `limit`, each at most
//! `max_line_chars + 1` characters while it is being collected, all of them within `max_bytes`),
//! and everything else is only counted. The whole file is always scanned, so the total line
//! count is exact.

/// What to select.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    /// 1-based number of the first line to return.
    pub offset: usize,
    /// At most this many lines.
    pub limit: usize,
    /// Characters (Unicode scalar values) kept per line; longer lines are truncated with a
    /// note.
    pub max_line_chars: usize,
    /// Cap on the UTF-8 bytes of the selected lines (plus one per line break between them).
    pub max_bytes: usize,
}

/// One selected line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// Its 1-based number in the file.
    pub number: usize,
    /// Its text, without the line break (and one trailing `\r`), truncated if too long.
    pub text: &'a str,
}

/// The result of windowing a whole file. The selected lines share one buffer (one allocation
/// per read, not one per line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The requested first line.
    pub offset: usize,
    /// Lines in the whole file (a trailing line break does not start another line).
    pub total_lines: usize,
    /// Selection stopped because the next line would have exceeded `max_bytes`.
    pub truncated_by_bytes: bool,
    /// The selected lines' texts, back to back.
    text: String,
    /// Per selected line: its number and where its text ends in `text`.
    ends: Vec<(usize, usize)>,
}

impl Window {
    /// A window from already selected lines (for rendering tests and other producers).
    pub fn from_lines<'a>(
        offset: usize,
        total_lines: usize,
        truncated_by_bytes: bool,
        lines: impl IntoIterator<Item = (usize, &'a str)>,
    ) -> Self {
        let mut text = String::new();
        let mut ends = Vec::new();
        for (number, t) in lines {
            text.push_str(t);
            ends.push((number, text.len()));
        }
        Self {
            offset,
            total_lines,
            truncated_by_bytes,
            text,
            ends,
        }
    }

    /// The selected lines, in order.
    pub fn lines(&self) -> impl ExactSizeIterator<Item = Line<'_>> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(number, end)| {
            let text = &self.text[start..end];
            start = end;
            Line { number, text }
        })
    }

    /// How many lines were selected.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no line was selected.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The number of the last selected line, or `offset - 1` when none was selected.
    pub fn end_line(&self) -> usize {
        self.ends
            .last()
            .map_or(self.offset.saturating_sub(1), |&(n, _)| n)
    }
}

/// Builds a [`Window`] from text pushed in chunks.
#[derive(Debug)]
pub struct Windower {
    spec: WindowSpec,
    /// The selected texts so far, followed by the current line's kept text (when it is
    /// selected: at most `max_line_chars + 1` characters).
    text: String,
    /// Where the current line starts in `text`.
    line_start: usize,
    ends: Vec<(usize, usize)>,
    /// Completed lines so far.
    total: usize,
    /// Bytes charged to the selection so far.
    bytes: usize,
    /// The byte cap was hit: nothing more is selected.
    capped: bool,
    /// Characters of the current line were dropped (it is longer than the buffer keeps).
    overflow: bool,
    /// The current line has at least one character.
    in_line: bool,
}

impl Windower {
    /// An empty window for `spec`.
    pub fn new(spec: WindowSpec) -> Self {
        Self {
            spec,
            text: String::new(),
            line_start: 0,
            ends: Vec::new(),
            total: 0,
            bytes: 0,
            capped: false,
            overflow: false,
            in_line: false,
        }
    }

    /// Whether selection is over: later lines are only counted.
    fn done_selecting(&self) -> bool {
        self.capped || self.ends.len() >= self.spec.limit
    }

    /// Whether the line being read now will be selected (if the byte cap allows).
    fn selecting_current(&self) -> bool {
        !self.done_selecting() && self.total + 1 >= self.spec.offset
    }

    /// Feeds the next piece of the file's text.
    pub fn push(&mut self, chunk: &str) {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.done_selecting() {
                // Only counting from here on: one pass over the bytes, nothing kept.
                let breaks = rest.bytes().filter(|&b| b == b'\n').count();
                if breaks > 0 {
                    self.total += breaks;
                    self.in_line = !rest.ends_with('\n');
                } else {
                    self.in_line = true;
                }
                return;
            }
            match rest.find('\n') {
                Some(i) => {
                    self.append(&rest[..i]);
                    self.end_line();
                    rest = &rest[i + 1..];
                }
                None => {
                    self.append(rest);
                    rest = "";
                }
            }
        }
    }

    /// Adds a piece of the current line (no line break in it).
    fn append(&mut self, piece: &str) {
        if piece.is_empty() {
            return;
        }
        self.in_line = true;
        if !self.selecting_current() || self.overflow {
            return;
        }
        // Keep one character more than the cap: a line of exactly `max_line_chars` followed by
        // `\r` must not count as too long.
        let cap = self.spec.max_line_chars + 1;
        let kept = self.text.len() - self.line_start;
        // A character is at least one byte, so while the bytes fit, the characters do: the
        // common case costs no counting at all.
        if kept + piece.len() <= cap {
            self.text.push_str(piece);
            return;
        }
        let room = cap.saturating_sub(self.text[self.line_start..].chars().count());
        match piece.char_indices().nth(room) {
            Some((cut, _)) => {
                self.text.push_str(&piece[..cut]);
                self.overflow = true;
            }
            None => self.text.push_str(piece),
        }
    }

    /// Ends the current line (at a line break, or at the end of the text).
    fn end_line(&mut self) {
        if self.selecting_current() {
            self.finish_line_text();
            let len = self.text.len() - self.line_start;
            let charge = len + usize::from(!self.ends.is_empty());
            if self.bytes + charge > self.spec.max_bytes {
                self.capped = true;
                self.text.truncate(self.line_start);
            } else {
                self.bytes += charge;
                self.ends.push((self.total + 1, self.text.len()));
                self.line_start = self.text.len();
            }
        }
        self.total += 1;
        self.overflow = false;
        self.in_line = false;
    }

    /// Turns the collected line into what is shown: one trailing `\r` dropped, truncated with a
    /// note when longer than the cap.
    fn finish_line_text(&mut self) {
        if !self.overflow && self.text[self.line_start..].ends_with('\r') {
            self.text.pop();
        }
        let max = self.spec.max_line_chars;
        let line = &self.text[self.line_start..];
        let too_long = self.overflow || (line.len() > max && line.chars().count() > max);
        if !too_long {
            return;
        }
        let cut = line.char_indices().nth(max).map_or(line.len(), |(i, _)| i);
        self.text.truncate(self.line_start + cut);
        self.text.push_str("... (line truncated to ");
        self.text.push_str(&max.to_string());
        self.text.push_str(" chars)");
    }

    /// Bytes held for the selected text, including the line being collected (for memory tests:
    /// bounded by the byte cap plus one capped line, whatever the file or the line's length).
    pub fn buffer_capacity(&self) -> usize {
        self.text.capacity()
    }

    /// Ends the text and returns the window.
    pub fn finish(mut self) -> Window {
        if self.in_line {
            self.end_line();
        }
        self.text.truncate(self.line_start);
        Window {
            offset: self.spec.offset,
            total_lines: self.total,
            truncated_by_bytes: self.capped,
            text: self.text,
            ends: self.ends,
        }
    }
}

/// Windows a whole text at once.
pub fn window(text: &str, spec: WindowSpec) -> Window {
    let mut w = Windower::new(spec);
    w.push(text);
    w.finish()
}
