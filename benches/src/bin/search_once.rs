//! One search in a fresh process, as `rg` runs one: the search bench spawns it to measure the
//! cost of a cold process (runtime, provider, thread pool, walk) beside `rg`'s.
//!
//! `search_once glob PATTERN DIR` prints every hit's path, one per line (newest first);
//! `search_once grep PATTERN DIR` prints `path:line:text` per match (by path, then line).

use seam::search::{GlobQuery, GrepQuery};
use seam::{FileSystem, ResolveOptions, Signal};
use seam_local::{LocalConfig, LocalFileSystem};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [verb, pattern, dir] = args.as_slice() else {
        eprintln!("usage: search_once glob|grep PATTERN DIR");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("search_once: {e}");
            return ExitCode::FAILURE;
        }
    };
    let fs = LocalFileSystem::new(LocalConfig::new(dir.clone()));
    let out = runtime.block_on(async {
        let root = fs
            .resolve(dir, ResolveOptions::default(), &Signal::none())
            .await
            .map_err(|e| e.to_string())?;
        let search = fs.search().ok_or("no search")?;
        let mut out = Vec::new();
        if verb == "glob" {
            let query = GlobQuery {
                pattern: pattern.clone(),
                hidden: false,
            };
            for f in search
                .glob(&root, &query, &Signal::none())
                .await
                .map_err(|e| e.to_string())?
            {
                out.extend_from_slice(f.path.as_bytes());
                out.push(b'\n');
            }
        } else {
            let query = GrepQuery {
                limit: usize::MAX,
                max_line_bytes: usize::MAX,
                ..GrepQuery::new(pattern.clone())
            };
            for m in search
                .grep(&root, &query, &Signal::none())
                .await
                .map_err(|e| e.to_string())?
                .matches
            {
                out.extend_from_slice(format!("{}:{}:", m.path, m.line).as_bytes());
                out.extend_from_slice(&m.text);
                out.push(b'\n');
            }
        }
        Ok::<_, String>(out)
    });
    match out {
        Ok(bytes) => match std::io::stdout().lock().write_all(&bytes) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("search_once: {e}");
            ExitCode::FAILURE
        }
    }
}
