//! Runs one sequence of steps against a subject and the model side by side, checking after every
//! step: the outcome (error code and message, or the success shape), the version laws, key
//! identity, that a mutation's version equals a fresh `stat`, that staging is private while it
//! exists, and that the raw bytes, kinds and modes on disk equal the model — with nothing else
//! (no temp litter) beside them.

use crate::factory::Subject;
use crate::laws::Laws;
use crate::stats::Stats;
use crate::step::{Interfere, Op, Step, VersionRef, WriteGuard, render_path};
use crate::world::World;
use futures_util::StreamExt;
use seam::{
    CancelPoint, Capabilities, EditRequest, FileSystem, FsError, FsTarget, FsVersion,
    ResolveOptions, Signal, WriteIntent,
};
use seam_model::{
    Guard, Interference, Model, ModelConfig, ModelError, SnapEntry, Version, WorldEffect,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::runtime::Runtime;

/// How strictly error messages are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MessageCheck {
    /// Exactly the seed's texts (with the provider's display paths).
    #[default]
    Exact,
    /// Only the code.
    CodeOnly,
}

/// The token a guard uses when no version has been seen yet: no backend ever issues it.
pub const NEVER_ISSUED: &str = "seam-conformance:never-issued";

/// What one step did, for replay and reports.
#[derive(Clone, Debug)]
pub struct StepRecord {
    /// Position in the sequence.
    pub index: usize,
    /// What the step was.
    pub description: String,
    /// What the model expected.
    pub expected: String,
    /// What the provider did.
    pub actual: String,
    /// The code the model expected (`None`: success).
    pub expected_code: Option<seam::FsErrorCode>,
    /// The first check that failed, if any.
    pub failure: Option<String>,
}

/// One sequence in progress.
pub struct Harness {
    fs: Arc<dyn FileSystem>,
    world: Arc<dyn World>,
    _keep: Box<dyn Send + Sync>,
    model: Model,
    laws: Laws,
    history: Vec<(Version, FsVersion)>,
    latest: std::collections::HashMap<seam_model::Key, (Version, FsVersion)>,
    root: String,
    caps: Capabilities,
    messages: MessageCheck,
    last_expected_code: Option<seam::FsErrorCode>,
    /// Counts of what ran.
    pub stats: Stats,
}

type Check = Result<(), String>;

fn show_err(e: &FsError) -> String {
    format!("{} {:?}", e.code(), e.message())
}

fn show_model_err(e: &ModelError) -> String {
    format!("{} {:?}", e.code, e.message)
}

fn show_bytes(b: &[u8]) -> String {
    let text = String::from_utf8_lossy(b);
    if text.chars().count() > 60 {
        let head: String = text.chars().take(57).collect();
        format!("{head:?}... ({} bytes)", b.len())
    } else {
        format!("{text:?}")
    }
}

fn show_entry(e: &SnapEntry) -> String {
    match e {
        SnapEntry::File { bytes, mode } => match mode {
            Some(m) => format!("file {} mode {m:o}", show_bytes(bytes)),
            None => format!("file {}", show_bytes(bytes)),
        },
        SnapEntry::Dir { mode: Some(m) } => format!("dir mode {m:o}"),
        SnapEntry::Dir { mode: None } => "dir".to_string(),
        SnapEntry::Symlink { target } => format!("symlink -> {target:?}"),
        SnapEntry::Other => "other".to_string(),
    }
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, expected: &T, actual: &T) -> Check {
    if expected == actual {
        Ok(())
    } else {
        Err(format!("{what}: expected {expected:?}, got {actual:?}"))
    }
}

/// Problems a probe saw inside a mutation.
#[derive(Default)]
struct ProbeLog {
    problems: Vec<String>,
    staged_seen: bool,
}

impl Harness {
    /// A harness over a fresh subject.
    pub fn new(subject: Subject, messages: MessageCheck) -> Self {
        let root = subject.world.root_display();
        let caps = subject.fs.capabilities();
        let model = Model::new(ModelConfig {
            root: root.clone(),
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
        });
        Self {
            fs: subject.fs,
            world: subject.world,
            _keep: subject.keep_alive,
            model,
            laws: Laws::default(),
            history: Vec::new(),
            latest: std::collections::HashMap::new(),
            root,
            caps,
            messages,
            last_expected_code: None,
            stats: Stats::default(),
        }
    }

    /// The root's display path.
    pub fn root(&self) -> &str {
        &self.root
    }

    fn opts(&self) -> ResolveOptions<'_> {
        ResolveOptions {
            cwd: Some(&self.root),
        }
    }

    fn compare_err(&self, expected: &ModelError, actual: &FsError) -> Check {
        if expected.code != actual.code() {
            return Err(format!(
                "expected {}, got {}",
                show_model_err(expected),
                show_err(actual)
            ));
        }
        if self.messages == MessageCheck::Exact && expected.message != actual.message() {
            return Err(format!(
                "right code {}, wrong message: expected {:?}, got {:?}",
                expected.code,
                expected.message,
                actual.message()
            ));
        }
        Ok(())
    }

    /// Compares a result shape-by-shape; `ok` checks two successes.
    fn outcome<M, A>(
        &mut self,
        expected: &Result<M, ModelError>,
        actual: &Result<A, FsError>,
        ok: impl FnOnce(&mut Self, &M, &A) -> Check,
    ) -> Check {
        self.last_expected_code = expected.as_ref().err().map(|e| e.code);
        match (expected, actual) {
            (Ok(m), Ok(a)) => ok(self, m, a),
            (Err(m), Err(a)) => {
                self.compare_err(m, a)?;
                self.stats.code(a.code());
                Ok(())
            }
            (Ok(_), Err(a)) => Err(format!("expected success, got {}", show_err(a))),
            (Err(m), Ok(_)) => Err(format!("expected {}, got success", show_model_err(m))),
        }
    }

    fn observe(&mut self, v: &Version, token: &FsVersion, file: bool) -> Check {
        self.laws.observe(v, token.as_str())?;
        if file {
            self.history.push((*v, token.clone()));
        }
        Ok(())
    }

    fn recent(&self, r: VersionRef, path: &str) -> (Version, FsVersion) {
        let never = (
            Version::Object { n: u64::MAX },
            FsVersion::new(NEVER_ISSUED),
        );
        match r {
            VersionRef::Target => self
                .model
                .resolve(path)
                .ok()
                .and_then(|t| self.latest.get(&t.key).cloned())
                .unwrap_or(never),
            VersionRef::Recent(_) if self.history.is_empty() => never,
            VersionRef::Recent(k) => {
                let i = self.history.len() - 1 - (k as usize % self.history.len());
                self.history[i].clone()
            }
        }
    }

    /// Remembers the latest file version seen for the object `path` names.
    fn note_latest(&mut self, path: &str, v: &Version, token: &FsVersion) {
        if let Ok(r) = self.model.resolve(path) {
            self.latest.insert(r.key, (*v, token.clone()));
        }
    }

    async fn resolved(&self, path: &str, signal: &Signal) -> Result<FsTarget, FsError> {
        self.fs.resolve(path, self.opts(), signal).await
    }

    fn key_check(&mut self, path: &str, target: &FsTarget) -> Check {
        if let Ok(r) = self.model.resolve(path) {
            same("display path", &r.display, &target.display_path)?;
            self.laws.key(&r.key, target.key.as_str())?;
        }
        Ok(())
    }

    /// Runs one step and checks it; `Err` describes the first departure from the model.
    pub fn step(&mut self, rt: &Runtime, index: usize, step: &Step) -> StepRecord {
        let description = crate::step::describe(step);
        let mut record = StepRecord {
            index,
            description,
            expected: String::new(),
            actual: String::new(),
            expected_code: None,
            failure: None,
        };
        self.last_expected_code = None;
        let result = rt
            .block_on(self.run(step, &mut record))
            .and_then(|()| self.verify_world());
        self.stats.steps += 1;
        record.expected_code = self.last_expected_code;
        if !matches!(step.op, Op::World(_)) {
            self.stats.outcome(step.op.kind(), record.expected_code);
        }
        if let Err(e) = result {
            record.failure = Some(e);
        }
        record
    }

    async fn run(&mut self, step: &Step, rec: &mut StepRecord) -> Check {
        if let Op::World(op) = &step.op {
            let effect = self.model.world(op);
            match &effect {
                Some(e) => {
                    self.world
                        .apply(e)
                        .map_err(|err| format!("the world could not carry out {e:?}: {err}"))?;
                    self.stats.world(true);
                    rec.expected = "applied".into();
                }
                None => {
                    self.stats.world(false);
                    rec.expected = "not applicable (skipped)".into();
                }
            }
            rec.actual = rec.expected.clone();
            return Ok(());
        }
        self.stats.op(step.op.kind());
        if step.interfere == Interfere::CancelledBeforeStart {
            return self.cancelled_before_start(step, rec).await;
        }
        let root = self.root.clone();
        match &step.op {
            Op::Resolve { path } => {
                let path = render_path(path, &root);
                let expected = self.model.resolve(&path);
                let actual = self.resolved(&path, &Signal::none()).await;
                rec.expected = format!("{:?}", expected.as_ref().map(|r| &r.display));
                rec.actual = format!("{:?}", actual.as_ref().map(|t| &t.display_path));
                self.outcome(&expected, &actual, |h, m, a| {
                    same("display path", &m.display, &a.display_path)?;
                    h.laws.key(&m.key, a.key.as_str())
                })
            }
            Op::Stat { path } => {
                let path = render_path(path, &root);
                let expected = self.model.stat(&path);
                let actual = match self.resolved(&path, &Signal::none()).await {
                    Ok(t) => {
                        self.key_check(&path, &t)?;
                        self.fs.stat(&t, &Signal::none()).await
                    }
                    Err(e) => Err(e),
                };
                rec.expected = format!("{expected:?}");
                rec.actual = format!("{actual:?}");
                self.outcome(&expected, &actual, |h, m, a| match (m, a) {
                    (None, None) => Ok(()),
                    (Some(m), Some(a)) => {
                        same("kind", &m.kind, &a.kind)?;
                        same("size", &m.size, &a.size)?;
                        let file = m.kind == seam::FsKind::File;
                        if file {
                            h.note_latest(&path, &m.version, &a.version);
                        }
                        h.observe(&m.version, &a.version, file)
                    }
                    (m, a) => Err(format!("expected {m:?}, got {a:?}")),
                })
            }
            Op::Lstat { path } => {
                let path = render_path(path, &root);
                let expected = self.model.lstat(&path);
                let actual = self.fs.lstat(&path, self.opts(), &Signal::none()).await;
                rec.expected = format!("{expected:?}");
                rec.actual = format!("{actual:?}");
                self.outcome(&expected, &actual, |h, m, a| match (m, a) {
                    (None, None) => Ok(()),
                    (Some(m), Some(a)) => {
                        same("kind", &m.kind, &a.kind)?;
                        same("size", &m.size, &a.size)?;
                        h.observe(&m.version, &a.version, m.kind == seam::FsPathKind::File)
                    }
                    (m, a) => Err(format!("expected {m:?}, got {a:?}")),
                })
            }
            Op::ReadText { path } | Op::StreamText { path } => {
                let stream = matches!(step.op, Op::StreamText { .. });
                let path = render_path(path, &root);
                let expected = self.model.read_text(&path);
                let actual = match self.resolved(&path, &Signal::none()).await {
                    Ok(t) if stream => match self.fs.stream_text(&t, &Signal::none()).await {
                        Ok(mut s) => {
                            let mut text = String::new();
                            let mut err = None;
                            while let Some(chunk) = s.next().await {
                                match chunk {
                                    Ok(c) => text.push_str(&c),
                                    Err(e) => {
                                        err = Some(e);
                                        break;
                                    }
                                }
                            }
                            err.map_or(Ok(text), Err)
                        }
                        Err(e) => Err(e),
                    },
                    Ok(t) => self.fs.read_text(&t, &Signal::none()).await,
                    Err(e) => Err(e),
                };
                rec.expected = format!("{:?}", expected.as_ref().map(|t| show_bytes(t.as_bytes())));
                rec.actual = format!("{:?}", actual.as_ref().map(|t| show_bytes(t.as_bytes())));
                self.outcome(&expected, &actual, |_, m, a| {
                    if m == a {
                        Ok(())
                    } else {
                        Err(format!(
                            "text differs: expected {}, got {}",
                            show_bytes(m.as_bytes()),
                            show_bytes(a.as_bytes())
                        ))
                    }
                })
            }
            Op::ReadBytes { path, max } => {
                let path = render_path(path, &root);
                let expected = self.model.read_bytes(&path, *max);
                let actual = match self.resolved(&path, &Signal::none()).await {
                    Ok(t) => self.fs.read_bytes(&t, *max, &Signal::none()).await,
                    Err(e) => Err(e),
                };
                rec.expected = format!("{:?}", expected.as_ref().map(|b| show_bytes(b)));
                rec.actual = format!("{:?}", actual.as_ref().map(|b| show_bytes(b)));
                self.outcome(&expected, &actual, |_, m, a| {
                    if m == a {
                        Ok(())
                    } else {
                        Err(format!(
                            "bytes differ: expected {}, got {}",
                            show_bytes(m),
                            show_bytes(a)
                        ))
                    }
                })
            }
            Op::ListDir { path } => {
                let path = render_path(path, &root);
                let expected = self.model.list_dir(&path);
                let actual = match self.resolved(&path, &Signal::none()).await {
                    Ok(t) => self.fs.list_dir(&t, &Signal::none()).await,
                    Err(e) => Err(e),
                };
                rec.expected = format!(
                    "{:?}",
                    expected
                        .as_ref()
                        .map(|v| v.iter().map(|e| (&e.name, e.kind)).collect::<Vec<_>>())
                );
                rec.actual = format!(
                    "{:?}",
                    actual
                        .as_ref()
                        .map(|v| v.iter().map(|e| (&e.name, e.kind)).collect::<Vec<_>>())
                );
                self.outcome(&expected, &actual, |h, m, a| {
                    let mn: Vec<&String> = m.iter().map(|e| &e.name).collect();
                    let an: Vec<&String> = a.iter().map(|e| &e.name).collect();
                    same("listing order", &mn, &an)?;
                    for (m, a) in m.iter().zip(a) {
                        same(&format!("{}: kind", m.name), &m.kind, &a.kind)?;
                        same(&format!("{}: size", m.name), &m.size, &a.size)?;
                        same(
                            &format!("{}: display path", m.name),
                            &m.display,
                            &a.target.display_path,
                        )?;
                        h.laws.key(&m.key, a.target.key.as_str())?;
                        match (&m.version, &a.version) {
                            (None, None) => {}
                            (Some(mv), Some(av)) => {
                                h.observe(mv, av, m.kind == seam::FsKind::File)?
                            }
                            (mv, av) => {
                                return Err(format!(
                                    "{}: version expected {}, got {}",
                                    m.name,
                                    if mv.is_some() { "present" } else { "absent" },
                                    if av.is_some() { "present" } else { "absent" }
                                ));
                            }
                        }
                    }
                    Ok(())
                })
            }
            Op::Write {
                path,
                content,
                guard,
            } => {
                let path = render_path(path, &root);
                let (model_guard, intent) = match guard {
                    WriteGuard::None => (None, None),
                    WriteGuard::CreateIfAbsent => (
                        Some(Guard::CreateIfAbsent),
                        Some(WriteIntent::CreateIfAbsent),
                    ),
                    WriteGuard::ReplaceIfVersion(r) => {
                        let (v, token) = self.recent(*r, &path);
                        (
                            Some(Guard::ReplaceIfVersion(v)),
                            Some(WriteIntent::ReplaceIfVersion { version: token }),
                        )
                    }
                };
                let interference = self.interference(&step.interfere);
                let result = self
                    .model
                    .write_text(&path, content, model_guard, &interference);
                let (signal, log) = self.probe(&step.interfere, result.competitor.clone());
                let actual = match self.resolved(&path, &signal).await {
                    Ok(t) => {
                        self.key_check(&path, &t)?;
                        let r = self
                            .fs
                            .write_text(&t, content, intent.as_ref(), None, &signal)
                            .await;
                        if let Ok(out) = &r {
                            self.fresh_stat(&t, &out.version).await?;
                        }
                        r
                    }
                    Err(e) => Err(e),
                };
                self.stats.op_committed(actual.is_ok());
                rec.expected = format!("{:?}", result.outcome);
                rec.actual = format!("{actual:?}");
                self.probe_problems(&log, result.outcome.is_ok())?;
                self.outcome(&result.outcome, &actual, |h, m, a| {
                    same("operation", &m.operation, &a.operation)?;
                    same("before", &m.before, &a.before)?;
                    same("after", &m.after, &a.after)?;
                    h.note_latest(&path, &m.version, &a.version);
                    h.observe(&m.version, &a.version, true)
                })
            }
            Op::Edit {
                path,
                old,
                new,
                replace_all,
                guard,
            } => {
                let path = render_path(path, &root);
                let (model_guard, expected_version) = match guard {
                    None => (None, None),
                    Some(r) => {
                        let (v, token) = self.recent(*r, &path);
                        (Some(v), Some(token))
                    }
                };
                let interference = self.interference(&step.interfere);
                let expected =
                    self.model
                        .edit_text(&path, old, new, *replace_all, model_guard, &interference);
                let (signal, log) = self.probe(&step.interfere, None);
                let request = EditRequest {
                    old_string: old.clone(),
                    new_string: new.clone(),
                    replace_all: *replace_all,
                };
                let actual = match self.resolved(&path, &signal).await {
                    Ok(t) => {
                        self.key_check(&path, &t)?;
                        let r = self
                            .fs
                            .edit_text(&t, &request, expected_version.as_ref(), None, &signal)
                            .await;
                        if let Ok(out) = &r {
                            self.fresh_stat(&t, &out.version).await?;
                        }
                        r
                    }
                    Err(e) => Err(e),
                };
                self.stats.op_committed(actual.is_ok());
                rec.expected = format!("{expected:?}");
                rec.actual = format!("{actual:?}");
                self.probe_problems(&log, expected.is_ok())?;
                self.outcome(&expected, &actual, |h, m, a| {
                    same("before", &m.1, &a.before)?;
                    same("after", &m.2, &a.after)?;
                    h.note_latest(&path, &m.0, &a.version);
                    h.observe(&m.0, &a.version, true)
                })
            }
            Op::World(_) => Ok(()),
        }
    }

    async fn cancelled_before_start(&mut self, step: &Step, rec: &mut StepRecord) -> Check {
        let signal = Signal::new();
        signal.cancel();
        let root = self.root.clone();
        let (verb, result): (&str, Result<(), FsError>) = match &step.op {
            Op::Lstat { path } => (
                "lstat",
                self.fs
                    .lstat(&render_path(path, &root), self.opts(), &signal)
                    .await
                    .map(|_| ()),
            ),
            Op::Resolve { path }
            | Op::Stat { path }
            | Op::ReadText { path }
            | Op::StreamText { path }
            | Op::ReadBytes { path, .. }
            | Op::ListDir { path }
            | Op::Write { path, .. }
            | Op::Edit { path, .. } => (
                "resolve",
                self.resolved(&render_path(path, &root), &signal)
                    .await
                    .map(|_| ()),
            ),
            Op::World(_) => return Ok(()),
        };
        let expected = ModelError {
            code: seam::FsErrorCode::Aborted,
            message: format!("{verb} aborted"),
        };
        rec.expected = show_model_err(&expected);
        rec.actual = format!("{result:?}");
        self.outcome(&Err::<(), _>(expected), &result, |_, _, _| Ok(()))
    }

    fn interference(&self, i: &Interfere) -> Interference {
        match i {
            Interfere::CancelAt(p) => Interference::Cancel(*p),
            Interfere::Competitor(c) => Interference::Competitor(c.clone()),
            _ => Interference::None,
        }
    }

    /// A signal whose probe plays the competitor, cancels where asked, and checks staging.
    fn probe(
        &self,
        interfere: &Interfere,
        competitor: Option<WorldEffect>,
    ) -> (Signal, Arc<Mutex<ProbeLog>>) {
        let log: Arc<Mutex<ProbeLog>> = Arc::default();
        let cancel_at = match interfere {
            Interfere::CancelAt(p) => Some(*p),
            _ => None,
        };
        let world = self.world.clone();
        let check_modes = self.caps.staging_probe && self.caps.permissions;
        let l = log.clone();
        let competitor = Mutex::new(competitor);
        let signal = Signal::with_probe(move |cp| {
            let mut log = l.lock().unwrap_or_else(|p| p.into_inner());
            match cp.point {
                CancelPoint::BeforeStage => {
                    let effect = competitor.lock().unwrap_or_else(|p| p.into_inner()).take();
                    if let Some(e) = effect
                        && let Err(err) = world.apply(&e)
                    {
                        log.problems
                            .push(format!("the competitor could not be placed: {err}"));
                    }
                }
                CancelPoint::Staged => {
                    log.staged_seen = true;
                    if check_modes {
                        for (i, path) in cp.staging.iter().enumerate() {
                            match world.entry_mode(path) {
                                Ok(Some(m)) => {
                                    let want = if m.is_dir { 0o700 } else { 0o600 };
                                    if m.mode != want {
                                        log.problems.push(format!(
                                            "staging {path:?} is mode {:o} while it exists (must be {want:o})",
                                            m.mode
                                        ));
                                    }
                                }
                                Ok(None) => log.problems.push(format!(
                                    "staging entry #{i} {path:?} reported at the staged point does not exist"
                                )),
                                Err(e) => log.problems.push(format!("cannot inspect staging {path:?}: {e}")),
                            }
                        }
                    }
                }
                CancelPoint::Committed => {}
            }
            cancel_at == Some(cp.point)
        });
        (signal, log)
    }

    fn probe_problems(&mut self, log: &Arc<Mutex<ProbeLog>>, _expected_ok: bool) -> Check {
        let log = log.lock().unwrap_or_else(|p| p.into_inner());
        if log.staged_seen {
            self.stats.staging_observed += 1;
        }
        match log.problems.first() {
            Some(p) => Err(p.clone()),
            None => Ok(()),
        }
    }

    async fn fresh_stat(&mut self, target: &FsTarget, version: &FsVersion) -> Check {
        self.stats.fresh_stats += 1;
        match self.fs.stat(target, &Signal::none()).await {
            Ok(Some(info)) if &info.version == version => Ok(()),
            Ok(Some(info)) => Err(format!(
                "the mutation returned version {:?} but a fresh stat says {:?}",
                version.as_str(),
                info.version.as_str()
            )),
            Ok(None) => Err("the mutation succeeded but a fresh stat finds nothing".into()),
            Err(e) => Err(format!(
                "a fresh stat after the mutation failed: {}",
                show_err(&e)
            )),
        }
    }

    /// Compares the world, byte for byte, with the model.
    pub fn verify_world(&mut self) -> Check {
        let expected = self.model.snapshot();
        let actual = self
            .world
            .snapshot()
            .map_err(|e| format!("cannot read the world back: {e}"))?;
        self.stats.world_checks += 1;
        let strip = |m: BTreeMap<String, SnapEntry>, perms: bool| -> BTreeMap<String, SnapEntry> {
            if perms {
                m
            } else {
                m.into_iter().map(|(k, v)| (k, v.without_mode())).collect()
            }
        };
        let expected = strip(expected, self.caps.permissions);
        let actual = strip(actual, self.caps.permissions);
        for (path, a) in &actual {
            match expected.get(path) {
                None => {
                    return Err(format!(
                        "unexpected entry {path:?} on disk ({}) — temp litter or a stray write",
                        show_entry(a)
                    ));
                }
                Some(e) if !e.admits(a) => {
                    return Err(format!(
                        "{path:?} on disk is {}, the model says {}",
                        show_entry(a),
                        show_entry(e)
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some((path, e)) = expected.iter().find(|(p, _)| !actual.contains_key(*p)) {
            return Err(format!(
                "{path:?} is missing on disk; the model says {}",
                show_entry(e)
            ));
        }
        Ok(())
    }
}
