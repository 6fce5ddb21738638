//! The floor of the gate: the steps of generated sequences replayed through the reference model
//! alone — no provider, no world, no comparison — with the model's own view of the world taken
//! after every step, as the gate takes it to check the disk against. What the gate costs beyond
//! this is its own overhead (generation, the harness, the provider, the read-back).

use seam::CancelPoint;
use seam_conformance::{Interfere, Op, Step, VersionRef, WriteGuard, render_path};
use seam_model::{Guard, Interference, Model, ModelConfig, Version};

/// The root the replay's model lives under.
const ROOT: &str = "/seam-floor";

fn interference(i: &Interfere) -> Interference {
    match i {
        Interfere::CancelAt(p) => Interference::Cancel(*p),
        Interfere::Competitor(c) => Interference::Competitor(c.clone()),
        Interfere::ChangeAt(p, c) => Interference::Change(*p, c.clone()),
        Interfere::CancelledBeforeStart => Interference::Cancel(CancelPoint::BeforeStage),
        _ => Interference::None,
    }
}

/// The version a guard names: the entry's version now for `target`, one never issued for an
/// earlier version (so the guard is stale, as it mostly is in a run).
fn version(model: &Model, path: &str, r: VersionRef) -> Version {
    match r {
        VersionRef::Target => match model.lstat(path) {
            Ok(Some(info)) => info.version,
            _ => Version::Object { n: u64::MAX },
        },
        VersionRef::Recent(_) => Version::Object { n: u64::MAX },
    }
}

/// Replays one case through a fresh model; returns the steps replayed.
pub fn replay_case(steps: &[Step]) -> u64 {
    let mut model = Model::new(ModelConfig::new(ROOT));
    let mut n = 0;
    for step in steps {
        let p = |path: &str| render_path(path, ROOT);
        let i = interference(&step.interfere);
        match &step.op {
            Op::World(op) => {
                let _ = model.world(op);
            }
            Op::Resolve { path } => {
                let _ = model.resolve(&p(path));
            }
            Op::Stat { path } => {
                let _ = model.stat(&p(path));
            }
            Op::Lstat { path } => {
                let _ = model.lstat(&p(path));
            }
            Op::ReadText { path } | Op::StreamText { path } => {
                let _ = model.read_text(&p(path));
            }
            Op::ReadBytes { path, max } => {
                let _ = model.read_bytes(&p(path), *max);
            }
            Op::ListDir { path } => {
                let _ = model.list_dir(&p(path));
            }
            Op::Write {
                path,
                content,
                guard,
            } => {
                let g = match guard {
                    WriteGuard::None => None,
                    WriteGuard::CreateIfAbsent => Some(Guard::CreateIfAbsent),
                    WriteGuard::ReplaceIfVersion(r) => {
                        Some(Guard::ReplaceIfVersion(version(&model, &p(path), *r)))
                    }
                };
                let _ = model.write_text(&p(path), content, g, &i);
            }
            Op::Edit {
                path,
                old,
                new,
                replace_all,
                guard,
            } => {
                let g = guard.map(|r| version(&model, &p(path), r));
                let _ = model.edit_text(&p(path), old, new, *replace_all, g, &i);
            }
            Op::CreateDir {
                path,
                parents,
                exist_ok,
            } => {
                let _ = model.create_dir(&p(path), *parents, *exist_ok);
            }
            Op::Remove {
                path,
                guard,
                directory,
            } => {
                let g = guard.map(|r| version(&model, &p(path), r));
                let _ = model.remove(&p(path), g, *directory);
            }
            Op::Rename {
                from,
                to,
                guard,
                replace,
            } => {
                let g = guard.map(|r| version(&model, &p(from), r));
                let rep = replace.map(|r| version(&model, &p(to), r));
                let _ = model.rename(&p(from), &p(to), g, rep);
            }
            // Path facts, tool calls and groups: not in a plain `sequences` run's floor.
            _ => {}
        }
        // The gate reads the world back after every step and compares it with this.
        let _ = model.snapshot();
        n += 1;
    }
    n
}

/// Replays every case; returns the steps replayed.
pub fn replay(cases: &[Vec<Step>]) -> u64 {
    cases.iter().map(|c| replay_case(c)).sum()
}
