//! `seam check`: the suite against one or more providers, with a readable report, optional JSON
//! and JUnit files, and every failing trace saved with the command that replays it.

use crate::progress::Display;
use crate::providers::{SHIPPED, factory};
use crate::unprivileged::SelfExec;
use seam_conformance::{
    MessageCheck, Report, SequenceConfig, Status, SuiteConfig, junit_document, run_suite,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `seam check` was asked to do.
pub struct CheckArgs {
    pub providers: Vec<String>,
    pub cases: u32,
    pub max_steps: usize,
    pub seed: u64,
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub trace_dir: PathBuf,
    pub properties: Vec<String>,
    pub messages: MessageCheck,
    pub fault: Option<String>,
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs the check; returns whether everything passed.
pub fn run(args: &CheckArgs) -> Result<bool, String> {
    let names: Vec<String> = if args.providers.is_empty() {
        SHIPPED.iter().map(|s| s.to_string()).collect()
    } else {
        args.providers.clone()
    };
    let factories = names
        .iter()
        .map(|n| factory(n, args.fault.as_deref()).map(|f| (n.clone(), f)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut reports: Vec<Report> = Vec::new();
    for (name, factory) in &factories {
        let config = SuiteConfig {
            sequences: SequenceConfig {
                cases: args.cases,
                max_steps: args.max_steps,
                seed: args.seed,
                messages: args.messages,
                ..SequenceConfig::default()
            },
            unprivileged: Some(Arc::new(SelfExec {
                provider: name.clone(),
            })),
            only: args.properties.clone(),
        };
        let mut display = Display::new(&factory.name());
        let report = run_suite(factory.as_ref(), &config, &mut |p| display.show(&p));
        display.finish();
        let report = report?;
        print!("{}", report.render());
        for p in report
            .properties
            .iter()
            .filter(|p| p.status == Status::Failed)
        {
            if let Some(trace) = &p.trace {
                let file = args
                    .trace_dir
                    .join(format!("{}-{}.json", report.provider, p.name));
                write_file(&file, &trace.to_json())?;
                println!("trace saved to {}", file.display());
                println!(
                    "replay it with: cargo run --release -p seam-cli -- replay {} --provider {name}{}",
                    file.display(),
                    args.fault
                        .as_deref()
                        .map(|f| format!(" --fault {f}"))
                        .unwrap_or_default()
                );
            }
        }
        println!();
        reports.push(report);
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?;
        write_file(path, &json)?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &junit_document(&reports))?;
    }
    Ok(reports.iter().all(Report::passed))
}
