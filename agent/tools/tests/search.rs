//! `glob` and `grep` against the real local provider (and the sandbox over it): the order, the
//! ignore policy, the caps and the spill file (read back from disk), the seed's texts, coded
//! errors for bad patterns, and a tree full of links out of the root that no search follows.

mod support;

use seam::FileSystem;
use seam_tools::{Exec, SpillStore, Tool, ToolResult, Toolset};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use support::{Harness, code, message, text};

/// A spill directory on disk (the composition's job; a test's real one here).
struct DirSpill(PathBuf);

#[async_trait::async_trait]
impl SpillStore for DirSpill {
    async fn save(&self, suggested: &str, text: String) -> Result<String, String> {
        let at = self.0.join(suggested);
        std::fs::write(&at, text).map_err(|e| e.to_string())?;
        Ok(at.to_string_lossy().into_owned())
    }
}

fn aged(h: &Harness, rel: &str, bytes: &str, age_s: u64) {
    h.put(rel, bytes);
    let f = std::fs::File::options()
        .write(true)
        .open(h.path(rel))
        .expect("open");
    f.set_modified(SystemTime::now() - Duration::from_secs(age_s))
        .expect("set mtime");
}

/// `tool` from a toolset whose over-cap results are spilled into `dir`: the text it answered.
async fn spilling(h: &Harness, dir: &Path, tool: &str, args: Value) -> String {
    let tools = Toolset::builder(h.fs.as_ref())
        .spill_store(Arc::new(DirSpill(dir.to_path_buf())))
        .build();
    let t = tools.get(tool).unwrap_or_else(|| panic!("no {tool}"));
    text(&t.execute(&args, &h.exec()).await)
}

async fn call(h: &Harness, tool: &str, args: Value) -> ToolResult {
    h.call(tool, args).await
}

#[tokio::test]
async fn glob_lists_files_newest_first_by_name_or_path_with_one_ignore_policy() {
    let h = Harness::bare();
    aged(&h, "old.rs", "", 300);
    aged(&h, "src/mid.rs", "", 200);
    aged(&h, "src/deep/new.rs", "", 100);
    aged(&h, "notes.md", "", 50);
    aged(&h, ".hidden/h.rs", "", 10);
    aged(&h, ".git/objects/x.rs", "", 5);
    aged(&h, "target/built.rs", "", 5);
    h.put(".gitignore", "target/\n");
    let glob = |pattern: &str, hidden: bool| {
        call(&h, "glob", json!({"pattern": pattern, "hidden": hidden}))
    };
    assert_eq!(
        text(&glob("*.rs", false).await),
        "src/deep/new.rs\nsrc/mid.rs\nold.rs",
        "names at any depth, newest first; ignored, hidden and VCS left out"
    );
    assert_eq!(
        text(&glob("*.rs", true).await),
        ".hidden/h.rs\nsrc/deep/new.rs\nsrc/mid.rs\nold.rs",
        "hidden on request; .git never"
    );
    assert_eq!(text(&glob("src/*.rs", false).await), "src/mid.rs");
    assert_eq!(
        text(&glob("**/*.rs", false).await),
        "src/deep/new.rs\nsrc/mid.rs\nold.rs",
        "**/ matches the top level too"
    );
    assert_eq!(text(&glob("*.none", false).await), "No files found");
    assert_eq!(
        text(&call(&h, "glob", json!({"pattern": "*.rs", "path": "src"})).await),
        "src/deep/new.rs\nsrc/mid.rs",
        "a search root beneath the cwd, shown from the cwd"
    );
    assert_eq!(
        text(
            &call(
                &h,
                "glob",
                json!({"pattern": "*", "path": ".git", "hidden": true})
            )
            .await
        ),
        "No files found",
        "nothing inside VCS metadata, even as the root"
    );
    // Files only: directories never appear.
    assert!(!text(&glob("*", true).await).lines().any(|l| l == "src"));
}

#[tokio::test]
async fn glob_over_the_cap_shows_a_page_and_spills_the_complete_list_to_disk() {
    let h = Harness::bare();
    for i in 0..120u64 {
        aged(&h, &format!("f{i:03}.txt"), "", 1000 - i);
    }
    let spill_dir = tempfile::tempdir().expect("spill dir");
    let out = spilling(&h, spill_dir.path(), "glob", json!({"pattern": "*.txt"})).await;
    let (page, footer) = out.split_once("\n\n").expect("a footer");
    let shown: Vec<&str> = page.lines().collect();
    assert_eq!(shown.len(), 100);
    assert_eq!(shown[0], "f119.txt", "newest first");
    let spilled = spill_dir.path().join("glob-results.txt");
    assert_eq!(
        footer,
        format!(
            "(Showing 100 of 120 paths. Full sorted result stored at: {}.)",
            spilled.display()
        )
    );
    let on_disk = std::fs::read_to_string(&spilled).expect("spill on disk");
    let all: Vec<&str> = on_disk.lines().collect();
    assert_eq!(all.len(), 120);
    assert_eq!(&all[..100], &shown[..]);
    assert_eq!(all[119], "f000.txt");
    // Without a spill store the model is told the rest could not be saved.
    let out = text(&call(&h, "glob", json!({"pattern": "*.txt"})).await);
    assert!(out.ends_with(
        "(Showing 100 of 120 paths. The complete result could not be saved; narrow pattern or path to see more.)"
    ));
}

#[tokio::test]
async fn grep_groups_matches_by_path_then_line_with_the_seed_texts() {
    let h = Harness::bare();
    h.put("b/two.txt", "alpha here\r\nnothing\nalpha again\n");
    h.put("a.txt", "alpha\n");
    h.put("notes.md", "alpha appears here too\n");
    h.put(".hidden/h.txt", "alpha\n");
    h.put("bin.dat", b"alpha\0binary\n");
    h.put("latin.txt", b"alpha \xe9t\xe9\n");
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "alpha"})).await),
        "Found 5 matches\n\na.txt\nLine 1: alpha\n\nb/two.txt\nLine 1: alpha here\nLine 3: alpha again\n\nlatin.txt\nLine 1: (line is not valid UTF-8)\n\nnotes.md\nLine 1: alpha appears here too",
        "by path then line; CRLF stripped; binary and hidden skipped; non-UTF-8 named"
    );
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "alpha", "path": "notes.md"})).await),
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too",
        "a single file as the target"
    );
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "alpha", "include": "*.md"})).await),
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too"
    );
    assert!(
        text(&call(&h, "grep", json!({"pattern": "alpha", "hidden": true})).await)
            .contains(".hidden/h.txt\nLine 1: alpha"),
    );
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "zeta"})).await),
        "No matches found"
    );
    // A pattern that starts with a dash is a pattern; whitespace is a legal one.
    h.put("dash.txt", "x -e y\n");
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "-e", "include": "dash.txt"})).await),
        "Found 1 match\n\ndash.txt\nLine 1: x -e y"
    );
    assert!(text(&call(&h, "grep", json!({"pattern": " "})).await).starts_with("Found "));
}

/// What agents expect of a grep beyond the seed's, each against the real provider: output modes,
/// context lines (with `--` between blocks), case-insensitive, multiline, a file type and a head
/// limit — and a bad type is a coded error.
#[tokio::test]
async fn grep_has_output_modes_context_case_multiline_type_and_a_head_limit() {
    let h = Harness::bare();
    h.put(
        "src/lib.rs",
        "use x;\nfn Alpha() {}\nlet y = 1;\n\n\n\nfn alpha_two() {\n}\n",
    );
    h.put("src/main.rs", "fn main() {\n    alpha();\n}\n");
    h.put("notes.md", "alpha in prose\n");
    let grep = |args: Value| {
        let h = &h;
        async move { text(&call(h, "grep", args).await) }
    };
    assert_eq!(
        grep(json!({"pattern": "alpha", "output_mode": "files_with_matches"})).await,
        "Found 3 files\n\nnotes.md\nsrc/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        grep(json!({"pattern": "alpha", "output_mode": "count", "-i": true})).await,
        "Found 4 matches in 3 files\n\nnotes.md: 1\nsrc/lib.rs: 2\nsrc/main.rs: 1"
    );
    assert_eq!(
        grep(json!({"pattern": "alpha", "type": "rust", "-A": 1, "-B": 1})).await,
        "Found 2 matches in 2 files\n\nsrc/lib.rs\nLine 5- \nLine 6- \nLine 7: fn alpha_two() {\nLine 8- }\n\nsrc/main.rs\nLine 1- fn main() {\nLine 2:     alpha();\nLine 3- }"
            .replace("Line 5- \nLine 6- \n", "Line 6- \n")
    );
    assert_eq!(
        grep(json!({"pattern": "Alpha\\(\\) \\{\\}\\nlet", "multiline": true})).await,
        // Each line of a match that spans lines is a matching line, as the seed counts them.
        "Found 2 matches\n\nsrc/lib.rs\nLine 2: fn Alpha() {}\nLine 3: let y = 1;"
    );
    assert_eq!(
        grep(json!({"pattern": "alpha", "-i": true, "-C": 1, "head_limit": 3})).await,
        "Found 4 matches in 3 files\n\nnotes.md\nLine 1: alpha in prose\n\nsrc/lib.rs\nLine 1- use x;\nLine 2: fn Alpha() {}\n\n(showing the first 3 of 10 rows (head_limit); raise it or narrow the search to see more)"
    );
    let r = call(
        &h,
        "grep",
        json!({"pattern": "alpha", "type": "no-such-type"}),
    )
    .await;
    assert_eq!(code(&r), "SEARCH_INVALID_PATTERN");
    assert!(message(&r).contains("unknown file type"), "{}", message(&r));
    let r = call(
        &h,
        "grep",
        json!({"pattern": "a", "output_mode": "count", "-C": 2}),
    )
    .await;
    assert!(message(&r).contains("\"content\" only"), "{}", message(&r));
}

#[tokio::test]
async fn grep_over_the_cap_shows_250_and_spills_every_match() {
    let h = Harness::bare();
    let body: String = (0..300).map(|i| format!("hit {i}\n")).collect();
    h.put("many.txt", &body);
    let spill_dir = tempfile::tempdir().expect("spill dir");
    let out = spilling(&h, spill_dir.path(), "grep", json!({"pattern": "hit"})).await;
    assert!(out.starts_with("Found 250 of 300 matches\n\nmany.txt\nLine 1: hit 0\n"));
    assert!(out.contains("\nLine 250: hit 249\n\n(Full grep result stored at: "));
    assert!(!out.contains("Line 251:"));
    let spilled =
        std::fs::read_to_string(spill_dir.path().join("grep-results.txt")).expect("spill on disk");
    assert_eq!(
        spilled.lines().filter(|l| l.starts_with("Line ")).count(),
        300
    );
    assert!(spilled.ends_with("Line 300: hit 299"));
}

#[tokio::test]
async fn bad_patterns_and_roots_are_coded_errors() {
    let h = Harness::bare();
    h.put("a.txt", "x\n");
    let glob = call(&h, "glob", json!({"pattern": "a[b"})).await;
    assert_eq!(code(&glob), "SEARCH_INVALID_PATTERN");
    assert!(message(&glob).starts_with("glob pattern rejected: "));
    let grep = call(&h, "grep", json!({"pattern": "(unclosed"})).await;
    assert_eq!(code(&grep), "SEARCH_INVALID_PATTERN");
    assert!(message(&grep).starts_with("grep pattern rejected: "));
    let include = call(&h, "grep", json!({"pattern": "x", "include": "a[b"})).await;
    assert_eq!(code(&include), "SEARCH_INVALID_PATTERN");
    assert_eq!(
        code(&call(&h, "glob", json!({"pattern": "*", "path": "missing"})).await),
        "FS_NOT_FOUND"
    );
    assert_eq!(
        code(&call(&h, "grep", json!({"pattern": "x", "path": "missing"})).await),
        "FS_NOT_FOUND"
    );
    assert_eq!(
        code(&call(&h, "glob", json!({"pattern": "*", "path": "a.txt"})).await),
        "FS_NOT_DIRECTORY"
    );
    for (tool, args, said) in [
        (
            "glob",
            json!({"pattern": " "}),
            "pattern must be a non-empty string",
        ),
        (
            "grep",
            json!({"pattern": ""}),
            "pattern must be a non-empty string",
        ),
        (
            "glob",
            json!({"pattern": "*", "path": " "}),
            "path must be a non-empty string when given",
        ),
        (
            "glob",
            json!({"pattern": "*", "hidden": "yes"}),
            "hidden must be a boolean",
        ),
        (
            "grep",
            json!({"pattern": "x", "include": " "}),
            "include must be a non-empty glob when given",
        ),
        (
            "grep",
            json!({"pattern": "x", "include": "!*.rs"}),
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
        ),
        (
            "grep",
            json!({"pattern": "x", "include": "*.rs,*.md"}),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
        ),
    ] {
        let r = call(&h, tool, args).await;
        assert_eq!(code(&r), "none");
        assert_eq!(message(&r), said);
    }
}

#[tokio::test]
async fn hostile_patterns_are_only_patterns() {
    let h = Harness::bare();
    h.put("a.txt", "$(touch pwned); rm -rf / #\n");
    let pwned = h.path("pwned");
    for (tool, args) in [
        (
            "grep",
            json!({"pattern": "$(touch pwned)", "include": "*.txt"}),
        ),
        ("grep", json!({"pattern": "--files", "path": "a.txt"})),
        ("glob", json!({"pattern": "$(touch pwned)"})),
        ("glob", json!({"pattern": "--no-ignore"})),
        ("grep", json!({"pattern": "\\$\\(touch pwned\\)"})),
    ] {
        let r = call(&h, tool, args).await;
        assert!(r.is_ok(), "{tool}: {r:?}");
    }
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "\\$\\(touch pwned\\)"})).await),
        "Found 1 match\n\na.txt\nLine 1: $(touch pwned); rm -rf / #"
    );
    // Flags are not flags: `--files` and `--no-ignore` searched as text and names.
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "--files", "path": "a.txt"})).await),
        "No matches found"
    );
    assert_eq!(
        text(&call(&h, "glob", json!({"pattern": "--no-ignore"})).await),
        "No files found"
    );
    assert!(!pwned.exists());
    assert_eq!(h.bytes("a.txt"), b"$(touch pwned); rm -rf / #\n");
}

/// Everything a search answered that is not a real file beneath `root`.
fn escapes(root: &Path, cwd: &Path, shown: &str) -> Vec<String> {
    shown
        .lines()
        .filter(|l| !l.is_empty())
        .filter(|l| {
            let p = cwd.join(l);
            let inside = p
                .canonicalize()
                .is_ok_and(|real| real.starts_with(root.canonicalize().expect("root")));
            let is_link = p
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
            !inside || is_link
        })
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn no_search_follows_a_link_out_of_its_root() {
    let h = Harness::bare();
    h.put("outside/secret.txt", "SECRET\n");
    h.put("outside/deep/more.txt", "SECRET\n");
    h.put("ws/inside.txt", "plain\n");
    let out = h.path("outside");
    let links: &[(&str, PathBuf)] = &[
        ("ws/abs_dir", out.clone()),
        ("ws/rel_dir", PathBuf::from("../outside")),
        ("ws/abs_file", out.join("secret.txt")),
        ("ws/rel_file", PathBuf::from("../outside/secret.txt")),
        ("ws/chain", PathBuf::from("rel_dir")),
        ("ws/dangling", PathBuf::from("../nowhere")),
        ("ws/root", PathBuf::from("/")),
        ("ws/.hidden_out", PathBuf::from("../outside")),
        ("ws/sub_in/up", PathBuf::from("../../outside/deep")),
    ];
    std::fs::create_dir_all(h.path("ws/sub_in")).expect("mkdir");
    for (at, to) in links {
        std::os::unix::fs::symlink(to, h.path(at)).expect("link");
    }
    let ws = h.path("ws");
    let exec = Exec::new(h.fs.clone()).with_cwd(h.display("ws"));
    let mut answered = 0;
    let mut escaped: Vec<String> = Vec::new();
    for (tool, args) in [
        ("glob", json!({"pattern": "*"})),
        ("glob", json!({"pattern": "*", "hidden": true})),
        ("glob", json!({"pattern": "**/*.txt", "hidden": true})),
        ("grep", json!({"pattern": "SECRET|plain"})),
        ("grep", json!({"pattern": "SECRET|plain", "hidden": true})),
    ] {
        let said = text(&h.call_with(tool, args, &exec).await);
        let listed: String = if tool == "grep" {
            said.lines()
                .filter(|l| !l.starts_with("Line ") && !l.starts_with("Found ") && !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            said.clone()
        };
        answered += listed.lines().count();
        escaped.extend(escapes(&ws, &ws, &listed));
        assert!(!said.contains("SECRET"), "{tool}: {said}");
    }
    println!(
        "searches answered {answered} paths; {} outside the root",
        escaped.len()
    );
    assert_eq!(answered, 5, "inside.txt, every time");
    assert!(escaped.is_empty(), "escaped: {escaped:?}");
}

#[tokio::test]
async fn the_sandbox_offers_the_same_search() {
    let h = Harness::build(false, |root| {
        Arc::new(seam_sandbox::SandboxFileSystem::new(
            seam_sandbox::SandboxConfig::new(root, seam::SandboxMode::ReadOnly)
                .with_temp_roots(Vec::new()),
        )) as Arc<dyn FileSystem>
    });
    h.put("src/a.rs", "fn main() {}\n");
    assert_eq!(
        h.tools.names(),
        ["read", "write", "edit", "glob", "grep"],
        "search reads, and reads are never fenced"
    );
    assert_eq!(
        text(&h.call("glob", json!({"pattern": "*.rs"})).await),
        "src/a.rs"
    );
    assert_eq!(
        text(&h.call("grep", json!({"pattern": "fn main"})).await),
        "Found 1 match\n\nsrc/a.rs\nLine 1: fn main() {}"
    );
}

#[tokio::test]
async fn a_backend_without_search_gets_no_search_tools_and_a_coded_error() {
    let h = Harness::bare();
    let fs: Arc<dyn FileSystem> = Arc::new(support::counting::Counting {
        inner: h.fs.clone(),
        counts: Arc::default(),
        hide_sizes: false,
        hide_search: true,
    });
    assert_eq!(
        Toolset::builder(fs.as_ref()).build().names(),
        ["read", "write", "edit"]
    );
    // A composition that registers the tool anyway is told why it cannot run.
    let exec = Exec::new(fs).with_cwd(h.root.clone());
    let r = seam_tools::GlobTool::new(None)
        .execute(&json!({"pattern": "*"}), &exec)
        .await;
    assert_eq!(code(&r), "SEARCH_FAILED");
    assert_eq!(
        message(&r),
        "glob is not available: this filesystem backend offers no search"
    );
}

#[tokio::test]
async fn crlf_lines_end_before_the_cr_and_dot_slash_globs_are_relative() {
    let h = Harness::bare();
    h.put("w.txt", "needle two\r\nneedle three\n");
    h.put("src/a.rs", "");
    assert_eq!(
        text(&call(&h, "grep", json!({"pattern": "two$"})).await),
        "Found 1 match\n\nw.txt\nLine 1: needle two"
    );
    assert_eq!(
        text(&call(&h, "glob", json!({"pattern": "./src/*.rs"})).await),
        "src/a.rs"
    );
}

/// Searches racing a directory that another thread keeps swapping for a link to outside and
/// back: the walker may be led out, but nothing outside is listed (`glob` confirms each file's
/// directory) or read (`grep` opens through the confined walk). Fails if either confirmation is
/// removed (the walker alone listed thousands of outside names in the review's probe).
#[test]
fn a_directory_swapped_for_a_link_mid_search_lists_and_reads_nothing_outside() {
    let h = Harness::bare();
    for i in 0..40 {
        h.put(&format!("outside/o{i:02}.txt"), "SECRET\n");
        h.put(&format!("ws/swap/f{i:02}.txt"), "plain\n");
    }
    // Beside the swapped directory: every answer must still find it.
    h.put("ws/stable.txt", "plain\n");
    let (swap, outside) = (h.path("ws/swap"), h.path("outside"));
    let parked = h.path("ws-parked");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swaps = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (swap, parked, outside) = (swap.clone(), parked.clone(), outside.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if std::fs::rename(&swap, &parked).is_ok() {
                    let _ = std::os::unix::fs::symlink(&outside, &swap);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&swap);
                    let _ = std::fs::rename(&parked, &swap);
                    swaps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        })
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let exec = Exec::new(h.fs.clone()).with_cwd(h.display("ws"));
    let (mut listed, mut escaped) = (0usize, Vec::new());
    for _ in 0..150 {
        for (tool, args) in [
            ("glob", json!({"pattern": "*.txt"})),
            ("grep", json!({"pattern": "SECRET|plain"})),
        ] {
            let Ok(out) = rt.block_on(h.call_with(tool, args, &exec)) else {
                continue;
            };
            let said = out.text();
            assert!(!said.contains("SECRET"), "{tool} read outside: {said}");
            assert!(
                said.contains("stable.txt"),
                "{tool} lost a stable file: {said}"
            );
            for line in said.lines() {
                if line.contains(".txt") && !line.starts_with("Line ") {
                    listed += 1;
                    let name = line.rsplit('/').next().unwrap_or(line);
                    if name.starts_with('o') {
                        escaped.push(line.to_string());
                    }
                }
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = swapper.join();
    let swaps = swaps.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{swaps} swaps; {listed} paths listed; {} outside",
        escaped.len()
    );
    assert!(swaps > 50, "the swapper barely ran ({swaps} swaps)");
    assert!(listed > 0);
    assert!(
        escaped.is_empty(),
        "listed outside: {:?}",
        &escaped[..escaped.len().min(5)]
    );
}

#[tokio::test]
async fn a_long_line_is_kept_and_shown_cut_on_a_character_boundary() {
    let h = Harness::bare();
    let line = format!("needle {}", "é".repeat(5_000)); // 10,007 bytes
    h.put("long.txt", format!("{line}\n"));
    let out = text(&call(&h, "grep", json!({"pattern": "needle"})).await);
    let shown = out
        .strip_prefix("Found 1 match\n\nlong.txt\nLine 1: ")
        .expect("one match");
    let kept = shown.strip_suffix(" (line truncated)").expect("cut");
    assert!(kept.len() <= 2000 && kept.len() >= 1999, "{}", kept.len());
    assert!(line.starts_with(kept));
}

#[tokio::test]
async fn a_cancelled_search_is_aborted() {
    let h = Harness::bare();
    h.put("a.txt", "alpha\n");
    let signal = seam::Signal::new();
    signal.cancel();
    let exec = h.exec().with_signal(signal);
    for (tool, args) in [
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "alpha"})),
        ("grep", json!({"pattern": "alpha", "path": "a.txt"})),
    ] {
        let r = h.call_with(tool, args, &exec).await;
        assert_eq!(code(&r), "FS_ABORTED", "{tool}");
    }
}
