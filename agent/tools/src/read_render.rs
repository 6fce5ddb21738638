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
    let capped = window.lines.len() < limit && end < total;
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

/// The whole envelope: path, type, numbered lines, a blank line, the footer.
pub fn render_read(path: &str, window: &Window, limit: usize) -> String {
    let footer = footer(window, limit);
    let mut body = String::new();
    for (i, line) in window.lines.iter().enumerate() {
        if i > 0 {
            body.push('\n');
        }
        body.push_str(&line.number.to_string());
        body.push_str(": ");
        body.push_str(&line.text);
    }
    if !window.lines.is_empty() {
        body.push_str("\n\n");
    }
    body.push_str(&footer);
    format!("<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n</content>")
}
