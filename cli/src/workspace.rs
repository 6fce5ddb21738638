//! `seam workspace list|add|remove`: the workspace registry from the shell, and the registry
//! `seam mcp --workspace` opens. The registry file is the same for both: `--registry FILE`,
//! else `$SEAM_REGISTRY`, else `$XDG_DATA_HOME/seam/workspaces.json`, else
//! `~/.local/share/seam/workspaces.json`.

use seam::Signal;
use seam_local::{LocalConfig, LocalFileSystem};
use seam_workspace::{Registry, Workspace, WorkspaceError, WorkspaceErrorCode};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// What `seam workspace` was asked to do.
#[derive(Debug)]
pub enum Action {
    /// Print the records (`json`: as a JSON array).
    List {
        /// Print JSON instead of a table.
        json: bool,
    },
    /// Register a directory (or retitle its record).
    Add {
        /// The directory.
        path: PathBuf,
        /// A title for people.
        title: Option<String>,
    },
    /// Forget a record; the directory stays.
    Remove {
        /// An id or a root.
        name: String,
    },
}

/// The registry file: the flag, else the environment, else the per-user data directory.
pub fn registry_file(flag: Option<&Path>) -> Result<PathBuf, String> {
    let chosen = if let Some(f) = flag {
        f.to_path_buf()
    } else if let Some(f) = std::env::var_os("SEAM_REGISTRY").filter(|v| !v.is_empty()) {
        PathBuf::from(f)
    } else if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|v| Path::new(v).is_absolute())
    {
        // The XDG rule: a relative value is ignored.
        PathBuf::from(d).join("seam").join("workspaces.json")
    } else if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        PathBuf::from(h)
            .join(".local")
            .join("share")
            .join("seam")
            .join("workspaces.json")
    } else {
        return Err(
            "no registry file: give --registry FILE, or set SEAM_REGISTRY, XDG_DATA_HOME or HOME"
                .into(),
        );
    };
    absolute(&chosen)
}

/// `path` made absolute against this process's cwd (not canonicalised: the registry does that
/// through the provider).
pub fn absolute(path: &Path) -> Result<PathBuf, String> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    Ok(cwd.join(path))
}

fn utf8(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{}: not valid UTF-8", path.display()))
}

/// The record `name` names: an id or a recorded root as given, else a path (relative to this
/// process's cwd) to a registered directory.
pub async fn find(
    registry: &Registry,
    name: &str,
    signal: &Signal,
) -> Result<Workspace, WorkspaceError> {
    match registry.lookup(name, signal).await {
        Err(e) if e.code() == WorkspaceErrorCode::NotFound && !name.starts_with('/') => {
            let Some(path) = absolute(Path::new(name))
                .ok()
                .and_then(|p| p.to_str().map(str::to_string))
            else {
                return Err(e);
            };
            registry.lookup(&path, signal).await.map_err(|_| e)
        }
        other => other,
    }
}

/// The registry in `file`, kept through the local provider.
pub fn open(file: &Path) -> Result<Registry, String> {
    let file = utf8(file)?.to_string();
    let fs = Arc::new(LocalFileSystem::new(LocalConfig::new("/")));
    Ok(Registry::new(fs, file))
}

/// A runtime for the registry's calls.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// `ID  ROOT  TITLE`, one record per line.
fn table(records: &[Workspace]) -> String {
    let root_width = records
        .iter()
        .map(|w| w.root.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!("{:<19}  {:<root_width$}  TITLE\n", "ID", "ROOT");
    for w in records {
        out.push_str(&format!(
            "{:<19}  {:<root_width$}  {}\n",
            w.id, w.root, w.title
        ));
    }
    out
}

fn failed(e: &WorkspaceError) -> ExitCode {
    eprintln!("seam workspace: {} [{}]", e.message(), e.code());
    ExitCode::from(1)
}

/// Runs one action. Usage problems come back as `Err` (exit 2); a refusal of the registry is
/// printed with its `WS_*` code (exit 1).
pub fn run(registry: Option<&Path>, action: Action) -> Result<ExitCode, String> {
    let file = registry_file(registry)?;
    let registry = open(&file)?;
    let rt = runtime()?;
    let signal = Signal::none();
    match action {
        Action::List { json } => match rt.block_on(registry.list(&signal)) {
            Ok(records) if json => {
                let text = serde_json::to_string_pretty(&records)
                    .map_err(|e| format!("cannot render JSON: {e}"))?;
                println!("{text}");
                Ok(ExitCode::SUCCESS)
            }
            Ok(records) if records.is_empty() => {
                println!("no workspaces registered in {}", file.display());
                Ok(ExitCode::SUCCESS)
            }
            Ok(records) => {
                print!("{}", table(&records));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => Ok(failed(&e)),
        },
        Action::Add { path, title } => {
            let path = absolute(&path)?;
            match rt.block_on(registry.add(utf8(&path)?, title.as_deref(), &signal)) {
                Ok(added) => {
                    let w = &added.workspace;
                    let verb = if added.created {
                        "added"
                    } else {
                        "already registered"
                    };
                    println!("{verb}: {} {} ({})", w.id, w.root, w.title);
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failed(&e)),
            }
        }
        Action::Remove { name } => {
            let found = match rt.block_on(find(&registry, &name, &signal)) {
                Ok(w) => w,
                Err(e) => return Ok(failed(&e)),
            };
            match rt.block_on(registry.remove(&found.id, &signal)) {
                Ok(w) => {
                    println!("removed: {} {} (the directory is untouched)", w.id, w.root);
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failed(&e)),
            }
        }
    }
}
