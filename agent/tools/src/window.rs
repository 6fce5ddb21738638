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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// Its 1-based number in the file.
    pub number: usize,
    /// Its text, without the line break (and one trailing `\r`), truncated if too long.
    pub text: String,
}

/// The result of windowing a whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The requested first line.
    pub offset: usize,
    /// The selected lines, in order.
    pub lines: Vec<Line>,
    /// Lines in the whole file (a trailing line break does not start another line).
    pub total_lines: usize,
    /// Selection stopped because the next line would have exceeded `max_bytes`.
    pub truncated_by_bytes: bool,
}

impl Window {
    /// The number of the last selected line, or `offset - 1` when none was selected.
    pub fn end_line(&self) -> usize {
        self.lines
            .last()
            .map_or(self.offset.saturating_sub(1), |l| l.number)
    }
}

/// Builds a [`Window`] from text pushed in chunks.
#[derive(Debug)]
pub struct Windower {
    spec: WindowSpec,
    lines: Vec<Line>,
    /// Completed lines so far.
    total: usize,
    /// Bytes charged to the selection so far.
    bytes: usize,
    /// The byte cap was hit: nothing more is selected.
    capped: bool,
    /// The current line's kept text (only when it is selected): at most `max_line_chars + 1`
    /// characters.
    line: String,
    /// Characters of the current line were dropped (it is longer than `line` can hold).
    overflow: bool,
    /// The current line has at least one character.
    in_line: bool,
}

impl Windower {
    /// An empty window for `spec`.
    pub fn new(spec: WindowSpec) -> Self {
        Self {
            spec,
            lines: Vec::new(),
            total: 0,
            bytes: 0,
            capped: false,
            line: String::new(),
            overflow: false,
            in_line: false,
        }
    }

    /// Whether selection is over: later lines are only counted.
    fn done_selecting(&self) -> bool {
        self.capped || self.lines.len() >= self.spec.limit
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
        // A character is at least one byte, so while the bytes fit, the characters do: the
        // common case costs no counting at all.
        if self.line.len() + piece.len() <= cap {
            self.line.push_str(piece);
            return;
        }
        let room = cap.saturating_sub(self.line.chars().count());
        match piece.char_indices().nth(room) {
            Some((cut, _)) => {
                self.line.push_str(&piece[..cut]);
                self.overflow = true;
            }
            None => self.line.push_str(piece),
        }
    }

    /// Ends the current line (at a line break, or at the end of the text).
    fn end_line(&mut self) {
        if self.selecting_current() {
            let text = self.finish_line_text();
            let charge = text.len() + usize::from(!self.lines.is_empty());
            if self.bytes + charge > self.spec.max_bytes {
                self.capped = true;
            } else {
                self.bytes += charge;
                self.lines.push(Line {
                    number: self.total + 1,
                    text,
                });
            }
        }
        self.total += 1;
        self.line.clear();
        self.overflow = false;
        self.in_line = false;
    }

    /// The collected line as it is shown: one trailing `\r` dropped, truncated with a note when
    /// longer than the cap. Hands over the buffer (no copy) when nothing is cut.
    fn finish_line_text(&mut self) -> String {
        if !self.overflow && self.line.ends_with('\r') {
            self.line.pop();
        }
        let max = self.spec.max_line_chars;
        let too_long = self.overflow || (self.line.len() > max && self.line.chars().count() > max);
        if !too_long {
            return std::mem::take(&mut self.line);
        }
        let cut = self
            .line
            .char_indices()
            .nth(max)
            .map_or(self.line.len(), |(i, _)| i);
        let mut text = String::with_capacity(cut + 40);
        text.push_str(&self.line[..cut]);
        text.push_str("... (line truncated to ");
        text.push_str(&max.to_string());
        text.push_str(" chars)");
        text
    }

    /// Bytes held for the line being collected (for memory tests: bounded by the per-line cap,
    /// whatever the line's length).
    pub fn line_buffer_capacity(&self) -> usize {
        self.line.capacity()
    }

    /// Ends the text and returns the window.
    pub fn finish(mut self) -> Window {
        if self.in_line {
            self.end_line();
        }
        Window {
            offset: self.spec.offset,
            lines: self.lines,
            total_lines: self.total,
            truncated_by_bytes: self.capped,
        }
    }
}

/// Windows a whole text at once.
pub fn window(text: &str, spec: WindowSpec) -> Window {
    let mut w = Windower::new(spec);
    w.push(text);
    w.finish()
}
