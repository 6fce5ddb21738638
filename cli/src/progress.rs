//! Progress on a terminal: one line rewritten in place on stderr; plain lines (one per property
//! and every tenth of the cases) when stderr is not a terminal, so CI logs stay readable.

use seam_conformance::{Progress, SuiteProgress};
use std::io::{IsTerminal, Write};

/// Shows suite progress.
pub struct Display {
    tty: bool,
    provider: String,
    property: String,
    last_tenth: u64,
    shrinking_shown: bool,
    dirty: bool,
}

impl Display {
    /// A display for one provider's run.
    pub fn new(provider: &str) -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            provider: provider.to_string(),
            property: String::new(),
            last_tenth: 0,
            shrinking_shown: false,
            dirty: false,
        }
    }

    fn line(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{text}");
            self.dirty = true;
        } else {
            let _ = writeln!(err, "{text}");
        }
        let _ = err.flush();
    }

    /// Shows one event.
    pub fn show(&mut self, p: &SuiteProgress) {
        match p {
            SuiteProgress::Property(name) => {
                self.property = name.clone();
                self.last_tenth = 0;
                self.shrinking_shown = false;
                let text = format!("[{}] {name} ...", self.provider);
                self.line(&text);
            }
            SuiteProgress::Sequences(Progress::Case { done, total, steps }) => {
                let tenth = if *total == 0 { 10 } else { done * 10 / total };
                if self.tty || tenth > self.last_tenth {
                    self.last_tenth = tenth;
                    let text = format!(
                        "[{}] {}: case {done}/{total}, {steps} steps",
                        self.provider, self.property
                    );
                    self.line(&text);
                }
            }
            SuiteProgress::Sequences(Progress::Shrinking { attempt, len }) => {
                if self.tty || !self.shrinking_shown {
                    self.shrinking_shown = true;
                    let text = format!(
                        "[{}] {}: failure found, shrinking (attempt {attempt}, shortest {len} steps)",
                        self.provider, self.property
                    );
                    self.line(&text);
                }
            }
        }
    }

    /// Ends the progress line.
    pub fn finish(&mut self) {
        if self.tty && self.dirty {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
