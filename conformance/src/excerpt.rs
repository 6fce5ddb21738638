//! Reports a person can read. A failure about a 530 KB text must not print it twice: a long
//! value in a message is cut to a bounded excerpt with its length and a digest (two values with
//! one digest are the same value), and where two values differ the excerpt is taken around
//! their first difference. The full values are in the saved trace, which replays them.

/// Values up to this many characters are shown whole.
const WHOLE: usize = 160;
/// Characters shown on each side of a cut.
const CONTEXT: usize = 48;
/// No failure message is longer than this (a net under every message, whatever built it).
pub(crate) const MESSAGE_MAX: usize = 4096;

/// A 64-bit digest to tell two long values apart (not a secure hash): eight bytes at a time,
/// each word mixed in with a multiply and a rotation, the length and a final avalanche last.
/// The gate digests every large content it shows, so a byte-at-a-time hash was a visible share
/// of a run.
pub(crate) fn fnv64(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    for b in words.remainder() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= bytes.len() as u64;
    // The finaliser of splitmix64: every input bit reaches every output bit.
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// [`fnv64`] as reports print it.
pub(crate) fn digest(bytes: &[u8]) -> String {
    format!("{:016x}", fnv64(bytes))
}

/// The char boundary at or before `at`.
fn floor(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The char boundary at or after `at`.
fn ceil(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// `s` whole when short; else its start and end, its length and its digest.
pub(crate) fn excerpt(s: &str) -> String {
    if s.chars().count() <= WHOLE {
        return s.to_string();
    }
    let head = &s[..floor(s, CONTEXT * 2)];
    let tail = &s[ceil(s, s.len().saturating_sub(CONTEXT)).max(head.len())..];
    format!(
        "{head}…{tail} [{} bytes, digest {}]",
        s.len(),
        digest(s.as_bytes())
    )
}

/// Two values that differ, readable however long they are: whole when both are short, else
/// their lengths and digests and a window around the first byte where they differ.
pub(crate) fn differ(expected: &str, actual: &str) -> (String, String) {
    if expected.chars().count() <= WHOLE && actual.chars().count() <= WHOLE {
        return (expected.to_string(), actual.to_string());
    }
    if expected == actual {
        // No difference to point at (the values were told apart by something else).
        return (excerpt(expected), excerpt(actual));
    }
    let first = expected
        .bytes()
        .zip(actual.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let window = |s: &str| {
        let from = floor(s, first.saturating_sub(CONTEXT));
        let to = ceil(s, (first + CONTEXT).min(s.len()));
        format!(
            "{}{}{} [{} bytes, digest {}, first difference at byte {first}]",
            if from > 0 { "…" } else { "" },
            &s[from..to],
            if to < s.len() { "…" } else { "" },
            s.len(),
            digest(s.as_bytes())
        )
    };
    (window(expected), window(actual))
}

/// A message cut to [`MESSAGE_MAX`] bytes, saying so.
pub(crate) fn bounded(message: String) -> String {
    if message.len() <= MESSAGE_MAX {
        return message;
    }
    // Room for the note that says so: the whole message stays within the bound.
    let cut = floor(&message, MESSAGE_MAX - 96);
    format!(
        "{}… [message cut: {} bytes, digest {}]",
        &message[..cut],
        message.len(),
        digest(message.as_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_whole_long_ones_are_cut_with_length_and_digest() {
        assert_eq!(excerpt("abc"), "abc");
        let long = "é".repeat(1000);
        let e = excerpt(&long);
        assert!(e.len() < 400, "{e}");
        assert!(e.contains("[2000 bytes, digest "), "{e}");
        assert_eq!(excerpt(&long), e, "the same value, the same excerpt");
        // The digest is of the value: a value that differs in its middle, hidden by the cut,
        // still shows as another one.
        let mut other = long.clone();
        other.replace_range(1000..1002, "e\u{301}");
        assert_ne!(excerpt(&other), e);
        assert_ne!(excerpt(&"é".repeat(1001)), e);
    }

    #[test]
    fn two_long_values_are_shown_around_their_first_difference() {
        let a = format!("{}X{}", "a".repeat(500_000), "b".repeat(30_000));
        let b = format!("{}Y{}", "a".repeat(500_000), "b".repeat(30_000));
        let (x, y) = differ(&a, &b);
        assert!(x.len() < 300 && y.len() < 300, "{x}\n{y}");
        assert!(x.contains("aX") && y.contains("aY"), "{x}\n{y}");
        assert!(x.contains("first difference at byte 500000"), "{x}");
        assert!(x.contains("530001 bytes"), "{x}");
        // One a prefix of the other: the difference is where the shorter ends.
        let (x, _) = differ(&"q".repeat(300), &"q".repeat(200));
        assert!(x.contains("first difference at byte 200"), "{x}");
        // Two equal long values: excerpts, and no difference claimed.
        let long = "z".repeat(400);
        let (x, y) = differ(&long, &long);
        assert_eq!(x, y);
        assert!(!x.contains("first difference"), "{x}");
    }

    #[test]
    fn a_message_never_runs_past_its_bound() {
        let m = bounded("é".repeat(10_000));
        assert!(m.len() <= MESSAGE_MAX, "{}", m.len());
        assert!(m.contains("[message cut: 20000 bytes"), "{m}");
        assert_eq!(bounded("short".into()), "short");
    }
}
