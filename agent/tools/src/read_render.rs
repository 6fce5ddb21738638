//! The model-facing text of a read: the seed's envelope and its three footers, exactly.
//!
//! The footer is what tells a model how to go on (`Use offset=N to continue.`), so its three
//! cases are kept apart: the byte cap cut the page short, more lines remain, or the file ended.

use crate::window::Window;

/// The footer for a window read with `limit`.
pub fn footer(window: &Window, limit: usize) -> String {
    let offset = window.offset;
    let end = window.end_line();
    let total = window.total_lines;
    // Recomputed from the page, as the seed's renderer does: fewer lines than asked for while
    // lines remain can only mean the byte cap.
    let capped = window.len() < limit && end < total;
    if capped {
        format!(
            "(Output capped. Showing lines {offset}-{end}. Use offset={} to continue.)",
            end + 1
        )
    } else if end < total {
        format!(
            "(Showing lines {offset}-{end} of {total}. Use offset={} to continue.)",
            end + 1
        )
    } else {
        format!("(End of file - total {total} lines)")
    }
}

/// Appends a decimal number without going through `fmt` (it is called once per line).
fn push_number(out: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// The whole envelope: path, type, numbered lines, a blank line, the footer.
pub fn render_read(path: &str, window: &Window, limit: usize) -> String {
    let footer = footer(window, limit);
    let text_len: usize = window.lines().map(|l| l.text.len() + 12).sum();
    let mut out = String::with_capacity(path.len() + text_len + footer.len() + 64);
    out.push_str("<path>");
    out.push_str(path);
    out.push_str("</path>\n<type>file</type>\n<content>\n");
    for line in window.lines() {
        push_number(&mut out, line.number);
        out.push_str(": ");
        out.push_str(line.text);
        out.push('\n');
    }
    if !window.is_empty() {
        out.push('\n');
    }
    out.push_str(&footer);
    out.push_str("\n</content>");
    out
}
