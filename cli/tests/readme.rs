//! Every command the README shows is tested. A `seam check` of an adapter (`--provider
//! exec:…`, the kits' examples) is run here as the README writes it, from the repository, and
//! must pass; each of the others — the two main commands and the kit's install — is in a short
//! list that names the test (or the CI script) that runs it, and that test is checked to be
//! there. A command in neither group fails: a command in the README that nothing runs is a
//! promise nobody keeps. Blocks that are not commands are fenced `text` (or their language), so
//! that nothing escapes this test by its label; the Rust example is a doctest of `seam-cli`.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/interpreters.rs"]
mod interpreters;
use interpreters::{node_or_skip, python_or_skip};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository")
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo().join(relative))
        .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}

/// A command the README shows that this test does not run: who runs it, and what in that file
/// shows it does.
struct Documented {
    /// The command, word for word as the README gives it.
    command: &'static str,
    /// The file that runs it, from the repository's root.
    file: &'static str,
    /// Texts that file must contain: the test's name and the call that runs the command.
    evidence: &'static [&'static str],
    /// Who runs it, for the failure message.
    by: &'static str,
}

/// The README's commands that other tests run. Keep it short: a command belongs here only when
/// running it again here would repeat a test (or is what CI itself runs).
const DOCUMENTED: &[Documented] = &[
    Documented {
        command: "cargo run --release -p seam-cli -- check",
        file: "cli/tests/cli.rs",
        evidence: &[
            "fn the_default_check_passes_on_every_shipped_provider_at_a_fresh_seed()",
            "seam(&[\"check\"], dir.path())",
        ],
        by: "cli/tests/cli.rs, the_default_check_passes_on_every_shipped_provider_at_a_fresh_seed \
             (`seam check` with no flags, at a fresh seed, every shipped provider must pass)",
    },
    Documented {
        command: "cargo test --workspace",
        file: ".ci/run",
        evidence: &["\ncargo test --workspace\n"],
        by: ".ci/run, which CI runs (it ends with exactly this command)",
    },
    Documented {
        command: "pip install conformance/kits/python",
        file: "cli/tests/kits.rs",
        evidence: &[
            "fn the_python_kit_installs_with_pip_and_works_from_there()",
            "\"pip\", \"install\"",
            ".arg(repo().join(\"conformance/kits/python\"))",
        ],
        by: "cli/tests/kits.rs, the_python_kit_installs_with_pip_and_works_from_there \
             (pip installs the kit's folder, and the example passes from the installed kit)",
    },
];

/// A fenced block of the README.
struct Fence {
    /// The line of its opening fence (1-based).
    line: usize,
    /// What follows the opening backticks.
    info: String,
    /// Its lines, with their numbers.
    body: Vec<(usize, String)>,
}

fn fences(text: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut open: Option<Fence> = None;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        match open.take() {
            None => {
                if let Some(info) = line.trim_start().strip_prefix("```") {
                    open = Some(Fence {
                        line: number,
                        info: info.trim().to_string(),
                        body: Vec::new(),
                    });
                }
            }
            Some(mut fence) => {
                if line.trim() == "```" {
                    out.push(fence);
                } else {
                    fence.body.push((number, line.to_string()));
                    open = Some(fence);
                }
            }
        }
    }
    assert!(open.is_none(), "a fence is never closed");
    out
}

/// The languages a fence may be labelled with. Commands go in `sh` blocks, and only there; an
/// unlabelled block would be compiled by rustdoc as Rust.
const LANGUAGES: &[&str] = &["sh", "text", "rust", "json", "toml", "python", "js", "ts"];

/// A command line of an `sh` block: where it is, as written, and its words.
struct Line {
    number: usize,
    text: String,
    words: Vec<String>,
}

/// Every command of the README's `sh` blocks, continuation lines joined, comments dropped.
fn commands(text: &str) -> (Vec<Line>, Vec<String>) {
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for fence in fences(text) {
        let language = fence
            .info
            .split([' ', ','])
            .next()
            .unwrap_or_default()
            .to_string();
        if !LANGUAGES.contains(&language.as_str()) {
            problems.push(format!(
                "line {}: a block fenced {:?}: label commands `sh` (so that they are tested) and \
                 anything else with its language or `text`",
                fence.line, fence.info
            ));
            continue;
        }
        if language != "sh" {
            continue;
        }
        let mut pending: Option<(usize, String)> = None;
        for (number, line) in fence.body {
            let (start, mut joined) = match pending.take() {
                Some((start, before)) => (start, before + " " + line.trim()),
                None => (number, line.trim().to_string()),
            };
            if let Some(rest) = joined.strip_suffix('\\') {
                joined = rest.trim_end().to_string();
                pending = Some((start, joined));
                continue;
            }
            match words(&joined) {
                Ok(w) if w.is_empty() => {}
                Ok(w) => lines.push(Line {
                    number: start,
                    text: joined,
                    words: w,
                }),
                Err(why) => problems.push(format!("line {start}: `{joined}`: {why}")),
            }
        }
        if let Some((start, joined)) = pending {
            problems.push(format!(
                "line {start}: `{joined}`: the block ends inside a continued line"
            ));
        }
    }
    (lines, problems)
}

/// The words of a simple shell command: blanks separate words, quotes and backslashes as the
/// shell reads them, `#` at the start of a word begins a comment. Anything the shell would do
/// more with — pipes, redirections, lists, substitutions, globs — is refused: such a line is not
/// one command this test could run or name.
fn words(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q),
                        None => return Err("a single quote is never closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("a double quote is never closed".into()),
                        },
                        Some(e @ ('$' | '`')) => {
                            return Err(format!("`{e}` in double quotes is an expansion"));
                        }
                        Some(q) => word.push(q),
                        None => return Err("a double quote is never closed".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(e) => {
                    in_word = true;
                    word.push(e);
                }
                None => return Err("a trailing backslash".into()),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' | ']' | '{'
            | '}' | '~' | '!' => {
                return Err(format!(
                    "`{c}` makes it more than one simple command this test could run"
                ));
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    Ok(out)
}

/// What this test does with a README command.
enum Kind {
    /// Another test (or CI) runs it.
    Documented(&'static Documented),
    /// A `seam check` of adapters: run here with these arguments (after `seam`), each adapter's
    /// interpreter first looked for.
    Run {
        args: Vec<String>,
        interpreters: Vec<String>,
    },
}

/// The ways the README spells the `seam` binary.
const SEAM: &[&[&str]] = &[
    &["cargo", "run", "--release", "-p", "seam-cli", "--"],
    &["seam"],
];

/// The interpreters an `exec:` adapter of the README may be started with.
const INTERPRETERS: &[&str] = &["python3", "node"];

fn classify(words: &[String]) -> Result<Kind, String> {
    if let Some(entry) = DOCUMENTED.iter().find(|d| {
        d.command
            .split_whitespace()
            .eq(words.iter().map(String::as_str))
    }) {
        return Ok(Kind::Documented(entry));
    }
    let args = SEAM
        .iter()
        .find_map(|prefix| {
            (words.len() > prefix.len() && words.iter().zip(prefix.iter()).all(|(w, p)| w == p))
                .then(|| words[prefix.len()..].to_vec())
        })
        .ok_or(
            "neither run here (a `seam check` of adapters) nor in the list of commands other \
             tests run",
        )?;
    if args[0] != "check" {
        return Err(format!(
            "`seam {}` is not a `seam check` this test runs, nor in the list of commands other \
             tests run",
            args[0]
        ));
    }
    let mut providers = Vec::new();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        if arg == "--provider" {
            providers.push(rest.next().ok_or("`--provider` without a value")?.clone());
        } else if let Some(value) = arg.strip_prefix("--provider=") {
            providers.push(value.to_string());
        }
    }
    if providers.is_empty() {
        return Err(
            "a `seam check` of the shipped providers other than the README's first command: \
             neither run here nor in the list of commands other tests run"
                .into(),
        );
    }
    let mut interpreters = Vec::new();
    for provider in &providers {
        let command = provider.strip_prefix("exec:").ok_or_else(|| {
            format!("`--provider {provider}`: this test runs `exec:` adapters only")
        })?;
        let mut parts = command.split_whitespace();
        let interpreter = parts.next().unwrap_or_default();
        if !INTERPRETERS.contains(&interpreter) {
            return Err(format!(
                "`exec:{command}`: an adapter this test can start is run by one of \
                 {INTERPRETERS:?}"
            ));
        }
        let script = parts.next().unwrap_or_default();
        if !repo().join(script).is_file() {
            return Err(format!(
                "`exec:{command}`: {script:?} is not a file of the repository"
            ));
        }
        interpreters.push(interpreter.to_string());
    }
    Ok(Kind::Run { args, interpreters })
}

#[test]
fn every_command_in_the_readme_is_run_or_named_with_its_test() {
    let readme = read("README.md");
    let (lines, mut problems) = commands(&readme);
    let mut runs = 0;
    let mut shown = Vec::new();
    for line in &lines {
        match classify(&line.words) {
            Ok(Kind::Documented(entry)) => shown.push(entry.command),
            Ok(Kind::Run { .. }) => runs += 1,
            Err(why) => problems.push(format!("line {}: `{}`: {why}", line.number, line.text)),
        }
    }
    for entry in DOCUMENTED {
        if !shown.contains(&entry.command) {
            problems.push(format!(
                "`{}` is in the list of commands other tests run, but not in the README: take \
                 it off the list",
                entry.command
            ));
        }
        let file = read(entry.file);
        for evidence in entry.evidence {
            if !file.contains(evidence) {
                problems.push(format!(
                    "`{}` is said to be run by {}, but {} no longer contains {evidence:?}",
                    entry.command, entry.by, entry.file
                ));
            }
        }
    }
    assert!(
        runs > 0,
        "the README shows no `seam check --provider exec:…` of a kit's example"
    );
    assert!(
        problems.is_empty(),
        "README.md: every command must be run by cli/tests/readme.rs (a `seam check` of \
         adapters) or be in its list of commands other tests run (DOCUMENTED), with the test \
         that runs it:\n  {}",
        problems.join("\n  ")
    );
}

/// The kits' examples are gated as the README writes the command: from the repository, at a
/// fresh seed (the run prints it), and the run must pass with every rule reached.
#[test]
fn the_readmes_seam_check_commands_pass_as_written() {
    let readme = read("README.md");
    let (lines, _) = commands(&readme);
    let mut ran = 0;
    for line in &lines {
        let Ok(Kind::Run { args, interpreters }) = classify(&line.words) else {
            continue;
        };
        let present = interpreters.iter().all(|i| match i.as_str() {
            "python3" => python_or_skip(),
            "node" => node_or_skip(),
            other => panic!("no rule for skipping without {other}"),
        });
        if !present {
            continue;
        }
        // A failing trace goes to a directory of the test's own, not into the repository.
        let traces = tempfile::tempdir().expect("tempdir");
        let out = Command::new(env!("CARGO_BIN_EXE_seam"))
            .args(&args)
            .arg("--trace-dir")
            .arg(traces.path())
            .current_dir(repo())
            .output()
            .expect("run seam");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let seed = stdout
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("seed "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or("?");
        let said = format!(
            "README.md line {}: `{}` (seed {seed}: add --seed {seed} to repeat it)\n{stdout}\n{stderr}",
            line.number, line.text
        );
        println!("README.md line {}: seed {seed}", line.number);
        assert_eq!(out.status.code(), Some(0), "{said}");
        assert!(stdout.contains("RESULT: pass"), "{said}");
        assert!(!stdout.contains("UNREACHED"), "{said}");
        ran += 1;
    }
    println!("ran {ran} of the README's commands");
}

/// The test above is only as good as its refusals: lines that are neither run here nor named
/// are refused, and the README's own forms are accepted.
#[test]
fn a_command_in_neither_group_is_refused() {
    let kind = |line: &str| classify(&words(line).expect("simple"));
    for refused in [
        "cargo build --release",
        "cargo run --release -p seam-cli -- replay trace.json --provider local",
        "cargo run --release -p seam-cli -- check --seed 24228",
        "seam check --provider local",
        "seam check --provider exec:'ruby my_adapter.rb'",
        "seam check --provider exec:'python3 no/such/adapter.py'",
        "npm install /path/to/seam/conformance/kits/js",
        "pip install seam-kit",
    ] {
        assert!(kind(refused).is_err(), "{refused} was accepted");
    }
    for not_simple in [
        "seam check --provider exec:'node x.js' | tee out",
        "cd conformance && seam check",
        "seam check --seed $SEED",
        "echo \"unterminated",
    ] {
        assert!(
            words(not_simple).is_err(),
            "{not_simple} was read as one command"
        );
    }
    assert!(matches!(
        kind(
            "cargo run --release -p seam-cli -- check --provider exec:'python3 conformance/kits/python/examples/dict_backend.py'"
        ),
        Ok(Kind::Run { .. })
    ));
    assert!(matches!(
        kind(
            "seam check --provider exec:'node conformance/kits/js/examples/dict_backend.js' --seed 7"
        ),
        Ok(Kind::Run { .. })
    ));
    assert!(matches!(
        kind("cargo   test --workspace   # the tests"),
        Ok(Kind::Documented(_))
    ));
    assert_eq!(
        words("pip install 'a b' c\\ d \"e\\\"f\" # comment").expect("simple"),
        ["pip", "install", "a b", "c d", "e\"f"]
    );
    // A block labelled anything but its language is refused, and `sh` lines are joined.
    let (_, problems) = commands("```bash\nseam check\n```\n");
    assert_eq!(problems.len(), 1, "{problems:?}");
    let (lines, problems) = commands("```sh\ncargo test \\\n  --workspace\n```\n");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].words, ["cargo", "test", "--workspace"]);
}
