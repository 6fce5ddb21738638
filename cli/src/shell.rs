//! Quoting for a POSIX shell: the replay command a report prints, and the `exec:` command the
//! suite starts a shipped server with.

/// `word` quoted for a POSIX shell when it needs it.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
