//! Quoting for a POSIX shell: an `exec:` address is a command `sh -c` runs, so a program that
//! builds one from paths and names (the gate starting `seam serve` on stdio, a report printing
//! the command that repeats a run) quotes each word with this.

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

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_plain_word_stays_and_anything_else_is_quoted_so_sh_reads_it_back() {
        for word in [
            "abc",
            "/tmp/a-b_c.d",
            "",
            "a b",
            "it's",
            "$HOME",
            "a\nb",
            "*",
        ] {
            let quoted = shell_word(word);
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {quoted}"))
                .output()
                .expect("sh runs");
            assert_eq!(out.stdout, word.as_bytes(), "{word:?} quoted as {quoted}");
        }
        assert_eq!(shell_word("abc"), "abc");
        assert_eq!(shell_word("a b"), "'a b'");
    }
}
