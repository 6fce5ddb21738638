//! The seed's `read-render.spec.ts` (buildWindow) and the `formatReadOutput` footer cases: the
//! window and the envelope, without I/O. Plus the memory bound on a giant line.

use seam_tools::read_render::{footer, render_read};
use seam_tools::window::{Window, WindowSpec, Windower, window};

fn spec(offset: usize, limit: usize) -> WindowSpec {
    WindowSpec {
        offset,
        limit,
        max_line_chars: 2000,
        max_bytes: 51200,
    }
}

fn texts(w: &Window) -> Vec<(usize, &str)> {
    w.lines().map(|l| (l.number, l.text)).collect()
}

fn nth_text(w: &Window, i: usize) -> &str {
    w.lines().nth(i).expect("a selected line").text
}

#[test]
fn numbers_lines_and_reports_total_for_a_whole_file_read() {
    let w = window("one\ntwo\nthree\n", spec(1, 2000));
    assert_eq!(texts(&w), [(1, "one"), (2, "two"), (3, "three")]);
    assert_eq!((w.total_lines, w.truncated_by_bytes), (3, false));
}

#[test]
fn applies_offset_and_limit() {
    let w = window("a\nb\nc\nd\ne\n", spec(2, 2));
    assert_eq!(texts(&w), [(2, "b"), (3, "c")]);
    assert_eq!(w.total_lines, 5);
    assert_eq!(w.end_line(), 3);
}

#[test]
fn strips_one_trailing_cr_per_line_and_keeps_others() {
    let w = window("a\r\nb\r\r\nc\rd\ne\r", spec(1, 2000));
    assert_eq!(texts(&w), [(1, "a"), (2, "b\r"), (3, "c\rd"), (4, "e")]);
}

#[test]
fn truncates_an_over_long_line() {
    let long = "x".repeat(2500);
    let w = window(&format!("{long}\nshort\n"), spec(1, 2000));
    assert_eq!(
        nth_text(&w, 0),
        format!("{}... (line truncated to 2000 chars)", "x".repeat(2000))
    );
    assert_eq!(nth_text(&w, 1), "short");
}

#[test]
fn a_line_of_exactly_the_cap_with_crlf_is_not_truncated() {
    let exact = "é".repeat(2000);
    let w = window(&format!("{exact}\r\n"), spec(1, 2000));
    assert_eq!(nth_text(&w, 0), exact);
    let over = "é".repeat(2001);
    let w = window(&format!("{over}\r\n"), spec(1, 2000));
    assert!(nth_text(&w, 0).ends_with("... (line truncated to 2000 chars)"));
    assert!(nth_text(&w, 0).starts_with(&exact));
}

#[test]
fn caps_output_bytes_and_reports_truncated_by_bytes() {
    let line = "y".repeat(100);
    let text: String = (0..2000).map(|_| format!("{line}\n")).collect();
    let w = window(&text, spec(1, 2000));
    // 100 bytes for the first line, 101 for each after it: 506 lines fit in 51200 (100 + 505 × 101 = 51105; one more is 51206).
    assert_eq!(w.len(), 506);
    assert!(w.truncated_by_bytes);
    assert_eq!(w.total_lines, 2000, "the whole file is still counted");
}

#[test]
fn reads_an_empty_file_at_offset_one_as_zero_lines() {
    let w = window("", spec(1, 2000));
    assert_eq!((w.len(), w.total_lines, w.end_line()), (0, 0, 0));
}

#[test]
fn an_offset_past_the_end_selects_nothing() {
    // The tool turns this into FS_NOT_FOUND (tests/read.rs); the window just reports it.
    let w = window("a\nb\n", spec(5, 2000));
    assert_eq!((w.len(), w.total_lines, w.end_line()), (0, 2, 4));
}

#[test]
fn flushes_a_final_line_with_no_trailing_newline() {
    let w = window("one\ntwo", spec(1, 2000));
    assert_eq!(texts(&w), [(1, "one"), (2, "two")]);
}

#[test]
fn a_trailing_newline_adds_no_dangling_empty_line() {
    assert_eq!(window("one\ntwo\n", spec(1, 2000)).total_lines, 2);
    assert_eq!(window("\n", spec(1, 2000)).total_lines, 1);
    assert_eq!(texts(&window("\n", spec(1, 2000))), [(1, "")]);
    assert_eq!(window("\n\n", spec(1, 2000)).total_lines, 2);
}

#[test]
fn per_request_caps() {
    let w = window(
        "abcdefgh\n",
        WindowSpec {
            offset: 1,
            limit: 10,
            max_line_chars: 5,
            max_bytes: 100,
        },
    );
    assert_eq!(nth_text(&w, 0), "abcde... (line truncated to 5 chars)");
    let w = window(
        "aaaa\nbbbb\ncccc\n",
        WindowSpec {
            offset: 1,
            limit: 10,
            max_line_chars: 100,
            max_bytes: 9,
        },
    );
    assert_eq!(texts(&w), [(1, "aaaa"), (2, "bbbb")]);
    assert!(w.truncated_by_bytes);
}

fn chunked(text: &str, size: usize, spec: WindowSpec) -> Window {
    let mut w = Windower::new(spec);
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        w.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    w.finish()
}

#[test]
fn windows_identically_when_text_arrives_in_small_chunks() {
    let text = "alpha\r\nbéta\n\ngamma 日本語\r\n\rdelta\nlast";
    for limit in [1, 3, 100] {
        for offset in [1, 2, 4, 7] {
            let whole = window(text, spec(offset, limit));
            for size in 1..8 {
                assert_eq!(
                    chunked(text, size, spec(offset, limit)),
                    whole,
                    "size {size}"
                );
            }
        }
    }
}

#[test]
fn caps_a_newline_free_giant_line_split_across_chunks() {
    let spec = WindowSpec {
        offset: 1,
        limit: 10,
        max_line_chars: 10,
        max_bytes: 1000,
    };
    let w = chunked(&"z".repeat(1000), 7, spec);
    assert_eq!(
        nth_text(&w, 0),
        "zzzzzzzzzz... (line truncated to 10 chars)"
    );
    assert_eq!(w.total_lines, 1);
}

#[test]
fn caps_output_bytes_mid_stream_and_still_counts_every_line() {
    let line = "y".repeat(100);
    let text: String = (0..2000).map(|_| format!("{line}\n")).collect();
    let w = chunked(&text, 4096, spec(1, 2000));
    assert_eq!((w.len(), w.total_lines), (506, 2000));
}

#[test]
fn flushes_a_final_newline_terminated_line_across_a_chunk_boundary() {
    let mut w = Windower::new(spec(1, 2000));
    w.push("one\ntw");
    w.push("o\n");
    let w = w.finish();
    assert_eq!(texts(&w), [(1, "one"), (2, "two")]);
    assert_eq!(w.total_lines, 2);
}

#[test]
fn counting_after_the_page_is_exact_across_chunk_boundaries() {
    let text = "a\nb\nc\nd\ne\nf";
    for size in 1..6 {
        let w = chunked(text, size, spec(1, 2));
        assert_eq!((w.len(), w.total_lines), (2, 6), "size {size}");
    }
}

/// A 64 MiB line fed in 64 KiB chunks (the provider's stream chunk): the line buffer never
/// holds more than the per-line cap (2001 characters of at most 4 bytes), and the page is one
/// truncated line.
#[test]
fn a_giant_line_is_never_buffered_whole() {
    let chunk = "é".repeat(32 * 1024); // 64 KiB
    let mut w = Windower::new(spec(1, 2000));
    let mut peak = 0;
    for _ in 0..1024 {
        w.push(&chunk);
        peak = peak.max(w.buffer_capacity());
    }
    assert!(peak <= 2001 * 4 * 2, "line buffer grew to {peak} bytes");
    let window = w.finish();
    assert_eq!(window.total_lines, 1);
    assert_eq!(
        nth_text(&window, 0),
        format!("{}... (line truncated to 2000 chars)", "é".repeat(2000))
    );
}

fn page(offset: usize, numbers: &[usize], total: usize) -> Window {
    let texts: Vec<String> = numbers.iter().map(|n| format!("line {n}")).collect();
    Window::from_lines(
        offset,
        total,
        false,
        numbers
            .iter()
            .copied()
            .zip(texts.iter().map(String::as_str)),
    )
}

#[test]
fn footers() {
    // Byte-capped: fewer lines than the limit while lines remain.
    assert_eq!(
        footer(&page(1, &[1, 2], 10), 2000),
        "(Output capped. Showing lines 1-2. Use offset=3 to continue.)"
    );
    // More remaining.
    assert_eq!(
        footer(&page(2, &[2, 3], 4), 2),
        "(Showing lines 2-3 of 4. Use offset=4 to continue.)"
    );
    // End of file.
    assert_eq!(
        footer(&page(1, &[1, 2], 2), 2000),
        "(End of file - total 2 lines)"
    );
}

#[test]
fn the_envelope_exactly() {
    assert_eq!(
        render_read("/w/a.txt", &page(1, &[1, 2], 2), 2000),
        "<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: line 1\n2: line 2\n\n(End of file - total 2 lines)\n</content>"
    );
    // An empty file is just the footer, with no blank line.
    assert_eq!(
        render_read("/w/e.txt", &page(1, &[], 0), 2000),
        "<path>/w/e.txt</path>\n<type>file</type>\n<content>\n(End of file - total 0 lines)\n</content>"
    );
}
