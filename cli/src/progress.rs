//! Progress on a terminal: one line rewritten in place on stderr (with several providers checked
//! at once, their states side by side on that line); plain lines (one per property and every
//! tenth of the cases) when stderr is not a terminal, so CI logs stay readable.

use seam_conformance::{Progress, SuiteProgress};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

/// The progress line the providers of one run share.
pub struct Board {
    tty: bool,
    /// Each provider's state, by provider (several at once: all shown, side by side).
    states: Mutex<BTreeMap<String, String>>,
}

impl Board {
    /// A board for one run.
    pub fn new() -> Self {
        Board {
            tty: std::io::stderr().is_terminal(),
            states: Mutex::new(BTreeMap::new()),
        }
    }

    fn states(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.states.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Shows `text` as `provider`'s state.
    fn show(&self, provider: &str, text: String) {
        let mut states = self.states();
        let mut err = std::io::stderr().lock();
        if self.tty {
            states.insert(provider.to_string(), text);
            let line: Vec<&str> = states.values().map(String::as_str).collect();
            let _ = write!(err, "\r\x1b[2K{}", line.join("  |  "));
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    /// `provider` is done: its state leaves the line.
    fn done(&self, provider: &str) {
        let mut states = self.states();
        if states.remove(provider).is_some() && self.tty {
            let mut err = std::io::stderr().lock();
            let line: Vec<&str> = states.values().map(String::as_str).collect();
            let _ = write!(err, "\r\x1b[2K{}", line.join("  |  "));
            let _ = err.flush();
        }
    }

    /// Clears the line before something else is printed (a report on stdout, which may be the
    /// same terminal).
    pub fn clear(&self) {
        if self.tty && !self.states().is_empty() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// Shows one provider's suite progress on a [`Board`].
pub struct Display<'b> {
    board: &'b Board,
    provider: String,
    property: String,
    last_tenth: u64,
    shrinking_shown: bool,
}

impl<'b> Display<'b> {
    /// A display for one provider's run.
    pub fn new(provider: &str, board: &'b Board) -> Self {
        Self {
            board,
            provider: provider.to_string(),
            property: String::new(),
            last_tenth: 0,
            shrinking_shown: false,
        }
    }

    /// Shows one event.
    pub fn show(&mut self, p: &SuiteProgress) {
        let tty = self.board.tty;
        match p {
            SuiteProgress::Property(name) => {
                self.property = name.clone();
                self.last_tenth = 0;
                self.shrinking_shown = false;
                let text = format!("[{}] {name} ...", self.provider);
                self.board.show(&self.provider, text);
            }
            SuiteProgress::Sequences(Progress::Case { done, total, steps }) => {
                let tenth = if *total == 0 { 10 } else { done * 10 / total };
                if tty || tenth > self.last_tenth {
                    self.last_tenth = tenth;
                    let text = format!(
                        "[{}] {}: case {done}/{total}, {steps} steps",
                        self.provider, self.property
                    );
                    self.board.show(&self.provider, text);
                }
            }
            SuiteProgress::Sequences(Progress::Shrinking { attempt, len }) => {
                if tty || !self.shrinking_shown {
                    self.shrinking_shown = true;
                    let text = format!(
                        "[{}] {}: failure found, shrinking (attempt {attempt}, shortest {len} steps)",
                        self.provider, self.property
                    );
                    self.board.show(&self.provider, text);
                }
            }
        }
    }

    /// Ends this provider's part of the line.
    pub fn finish(&mut self) {
        self.board.done(&self.provider);
    }
}
