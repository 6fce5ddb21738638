//! Runs one sequence of steps against a subject and the model side by side, checking after every
//! step: the outcome (error code and message, or the success shape), the version laws, key
//! identity, that a mutation's version equals a fresh `stat`, that staging is private while it
//! exists, the rule-based laws that do not trust the model (an edit's bytes, a write's bytes, a
//! listing's order), and that the raw bytes, kinds and modes on disk equal the model — with
//! nothing else (no temp litter) beside them. A step that agreed counts the rules it exercised.
//!
//! One file per job: reads and metadata (`ops`), writes and edits (`mutations`), path facts
//! (`facts`), calls with a cancelled signal (`cancel`), the checkpoint probe (`probe`), reading
//! the world back (`verify`), the rule-based laws (`laws`), and which rules a step exercised
//! (`classify`).

mod agent_ops;
mod cancel;
mod classify;
mod facts;
mod fence;
mod laws;
mod mutations;
mod namespace;
mod ops;
mod probe;
mod together;
mod verify;

use crate::agent::{Agent, AgentFactory};
use crate::factory::Subject;
use crate::failure::{Check, Failure, FailureKind, fail};
use crate::laws::Laws;
use crate::rules::Rule;
use crate::stats::Stats;
use crate::step::{Op, Step, VersionRef};
use crate::world::World;
use seam::{Capabilities, FileSystem, FsError, FsTarget, FsVersion, ResolveOptions};
use seam_model::{Key, Model, ModelConfig, ModelError, Observations, Resolved, SnapEntry, Version};
use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;
use tokio::runtime::Runtime;

pub(crate) use laws::PendingLaw;

/// How many checkpoints on one instance wait for readers the backend does not answer before
/// later ones stop waiting (a backend that serves one call at a time answers none; a loaded
/// machine may be late once).
const READER_PATIENCE: u8 = 2;

/// How strictly error messages are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MessageCheck {
    /// Exactly the contract's texts (with the provider's display paths).
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
    /// What the model expected (empty where the run did not ask for it:
    /// [`HarnessConfig::step_texts`]).
    pub expected: String,
    /// What the provider did (likewise).
    pub actual: String,
    /// What the provider did, in terms another provider can be compared on: its root written
    /// `{root}`, each version token as its class (`v0`, `v1`, ... in order of first sight).
    pub normal: String,
    /// The code the model expected (`None`: success).
    pub expected_code: Option<seam::FsErrorCode>,
    /// The first check that failed, if any.
    pub failure: Option<Failure>,
}

impl StepRecord {
    /// The record of a step that never finished (its case was given up while it ran, or
    /// before): its description only.
    pub fn unfinished(index: usize, step: &Step) -> Self {
        StepRecord {
            index,
            description: crate::step::describe(step),
            expected: String::new(),
            actual: String::new(),
            normal: String::new(),
            expected_code: None,
            failure: None,
        }
    }
}

/// Settings of a harness.
#[derive(Clone, Copy, Debug)]
pub struct HarnessConfig {
    /// Message strictness.
    pub messages: MessageCheck,
    /// How long a probe waits for the world to place a competitor inside a checkpoint before it
    /// concludes the provider holds a lock the world needs.
    pub checkpoint_wait: Duration,
    /// How long a mutation paused at a checkpoint waits for its readers before it concludes the
    /// backend does not serve a read meanwhile (it then goes on, and the reads are checked when
    /// they are answered; later checkpoints on that instance do not wait again).
    pub reader_wait: Duration,
    /// Whether each step's record carries what the model and the provider answered, as text
    /// ([`StepRecord::expected`], [`StepRecord::actual`], [`StepRecord::normal`]): a replay
    /// prints them and a comparison with a reference provider compares them. Without them a
    /// run formats nothing on its way (a failing step's message still says what differed).
    pub step_texts: bool,
}

impl Default for HarnessConfig {
    fn default() -> Self {
        Self {
            step_texts: true,
            messages: MessageCheck::Exact,
            checkpoint_wait: Duration::from_secs(2),
            reader_wait: Duration::from_secs(5),
        }
    }
}

/// A target resolved by an earlier step, kept for steps that reuse it.
#[derive(Clone)]
struct Earlier {
    target: FsTarget,
    model: Resolved,
    epoch: u64,
}

/// How a file changed behind the provider's back since its version was last observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    RestoredMtime,
    InPlace,
    Chmod,
}

/// One sequence in progress.
pub struct Harness {
    fs: Arc<dyn FileSystem>,
    world: Arc<dyn World>,
    _keep: Box<dyn Send + Sync>,
    model: Model,
    laws: Laws,
    history: Vec<(Version, FsVersion)>,
    /// Every distinct version token seen, in order of first sight (for [`StepRecord::normal`]).
    tokens: Vec<String>,
    latest: HashMap<Key, (Version, FsVersion)>,
    root: String,
    /// The working directory of the running step, relative to the root (`None`: the root).
    cwd: Option<String>,
    /// The working directory the provider is given: the root, or the root joined with `cwd`.
    cwd_abs: String,
    process_root: String,
    caps: Capabilities,
    config: HarnessConfig,
    last_expected_code: Option<seam::FsErrorCode>,
    /// The world as read back after the previous step.
    before: BTreeMap<String, SnapEntry>,
    /// The buffers the last read-back found equal (see [`verify::KnownEqual`]).
    known_equal: verify::KnownEqual,
    /// Targets by rendered spelling (joined to the step's working directory), for steps that
    /// reuse one.
    targets: HashMap<String, Earlier>,
    /// Bumped by every change of the world (a world step or a mutation).
    epoch: u64,
    /// Files changed behind the provider's back since their version was last observed.
    changed: HashMap<Key, Change>,
    /// The `entries` counter last observed per directory id.
    dir_entries: HashMap<u64, u64>,
    /// The first display path each key was resolved from (to notice aliases).
    displays: HashMap<Key, String>,
    /// Rules this step exercised; counted only if the step passes.
    pending: Vec<Rule>,
    /// Rule-based laws to check against the world after this step.
    pending_laws: Vec<PendingLaw>,
    /// The agent surface (tools and policy) over the provider, when the run has one.
    agent: Option<Arc<dyn Agent>>,
    /// What each agent session observed, as the model predicts it.
    observations: Observations,
    /// Each session's recent history with each file, for the policy's remedy law.
    tracks: HashMap<(u8, Key), agent_ops::Track>,
    /// Counts of what ran.
    pub stats: Stats,
    /// Set by a mutation the model's fence denies: the writable root of its call (`None`: no
    /// root at all), so that a change outside it is reported as an escape.
    denied_root: Option<Option<Key>>,
    /// A second instance over the same storage, for steps that name instance 1.
    second: Option<Arc<dyn FileSystem>>,
    /// Per instance: how many more times readers at a checkpoint are waited for (see
    /// [`probe::Readers::patience`]).
    patience: [Arc<AtomicU8>; 2],
    /// Told when the harness holds a call up itself (waiting for readers at a checkpoint), so
    /// that the call is not taken for slow.
    pause_log: Option<PauseLog>,
    /// Whether long streams are read slowly (see [`Harness::with_stream_window`]).
    slow_long_streams: bool,
}

/// Where the harness says it held calls up, from when to when.
pub(crate) type PauseLog = Arc<dyn Fn(std::time::Instant, std::time::Instant) + Send + Sync>;

fn show_err(e: &FsError) -> String {
    format!("{} {:?}", e.code(), e.message())
}

fn show_model_err(e: &ModelError) -> String {
    format!("{} {:?}", e.code, e.message)
}

pub(crate) fn show_bytes(b: &[u8]) -> String {
    // Every character is one to four bytes (an invalid byte shows as one replacement
    // character), so only the first 240 bytes can decide and show the head: a large content is
    // never decoded whole just to be shown by its first words.
    let text = String::from_utf8_lossy(&b[..b.len().min(240)]);
    if b.len() > 240 || text.chars().count() > 60 {
        let head: String = text.chars().take(57).collect();
        format!(
            "{head:?}... ({} bytes, digest {})",
            b.len(),
            crate::excerpt::digest(b)
        )
    } else {
        format!("{text:?}")
    }
}

/// Two contents that differ, readable: each whole (quoted) when short, else a window around the
/// first difference of their quoted text, with each one's length and digest.
pub(crate) fn show_two(a: &[u8], b: &[u8]) -> (String, String) {
    let (qa, qb) = (
        format!("{:?}", String::from_utf8_lossy(a)),
        format!("{:?}", String::from_utf8_lossy(b)),
    );
    if qa.chars().count() <= 62 && qb.chars().count() <= 62 {
        return (qa, qb);
    }
    let (wa, wb) = crate::excerpt::differ(&qa, &qb);
    (
        format!("{wa} ({} bytes)", a.len()),
        format!("{wb} ({} bytes)", b.len()),
    )
}

fn same<T: PartialEq + std::fmt::Debug>(
    kind: FailureKind,
    what: &str,
    expected: &T,
    actual: &T,
) -> Check {
    if expected == actual {
        Ok(())
    } else {
        let (e, a) = crate::excerpt::differ(&format!("{expected:?}"), &format!("{actual:?}"));
        Err(fail(kind, format!("{what}: expected {e}, got {a}")))
    }
}

/// The text of a panic payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

impl Harness {
    /// A harness over a fresh subject.
    pub fn new(subject: Subject, config: HarnessConfig) -> Self {
        Self::with_agent(subject, config, None)
    }

    /// A harness over a fresh subject, with an agent surface over its provider for agent steps.
    pub fn with_agent(
        subject: Subject,
        config: HarnessConfig,
        agent: Option<&dyn AgentFactory>,
    ) -> Self {
        let agent: Option<Arc<dyn Agent>> =
            agent.map(|a| Arc::from(a.agent(subject.fs.clone(), &subject.world.root_display())));
        let root = subject.world.root_display();
        let process_root = subject.world.process_root();
        let caps = subject.fs.capabilities();
        let model = Model::new(ModelConfig {
            root: root.clone(),
            diff_basis_max_bytes: subject.diff_basis_max_bytes,
            fence: subject.fs.sandbox_mode(),
            fence_workspace: crate::factory::DEPLOYMENT_WORKSPACE.to_string(),
        });
        Self {
            fs: subject.fs,
            world: subject.world,
            _keep: subject.keep_alive,
            model,
            laws: Laws::default(),
            history: Vec::new(),
            tokens: Vec::new(),
            latest: HashMap::new(),
            cwd: None,
            cwd_abs: root.clone(),
            root,
            process_root,
            caps,
            config,
            last_expected_code: None,
            before: BTreeMap::new(),
            known_equal: verify::KnownEqual::default(),
            targets: HashMap::new(),
            epoch: 0,
            changed: HashMap::new(),
            dir_entries: HashMap::new(),
            displays: HashMap::new(),
            pending: Vec::new(),
            pending_laws: Vec::new(),
            agent,
            observations: Observations::default(),
            tracks: HashMap::new(),
            stats: Stats::default(),
            denied_root: None,
            second: None,
            patience: [
                Arc::new(AtomicU8::new(READER_PATIENCE)),
                Arc::new(AtomicU8::new(READER_PATIENCE)),
            ],
            pause_log: None,
            slow_long_streams: true,
        }
    }

    /// The same harness, telling `log` when it holds a call up itself.
    pub(crate) fn with_pause_log(mut self, log: PauseLog) -> Self {
        self.pause_log = Some(log);
        self
    }

    /// The same harness, reading streams of more than 128 KiB slowly only if the provider's
    /// streams come through a window ([`crate::Factory::streams_through_a_window`]; a harness
    /// reads them slowly unless told there is none).
    pub(crate) fn with_stream_window(mut self, window: bool) -> Self {
        self.slow_long_streams = window;
        self
    }

    /// The same harness, with a second instance over the subject's storage for steps that name
    /// instance 1.
    pub fn with_second(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.second = Some(fs);
        self
    }

    /// The provider instance a step names: `0` the subject, `1` the second instance.
    fn instance(&self, n: u8) -> Result<Arc<dyn FileSystem>, Failure> {
        match (n, &self.second) {
            (0, _) => Ok(self.fs.clone()),
            (1, Some(fs)) => Ok(fs.clone()),
            (1, None) => Err(fail(
                FailureKind::Setup,
                "the step uses a second instance, and the factory gives none (Factory::reopen)",
            )),
            (n, _) => Err(fail(
                FailureKind::Setup,
                format!("the step uses instance {n}; a trace names instance 0 or 1"),
            )),
        }
    }

    /// The root's display path.
    pub fn root(&self) -> &str {
        &self.root
    }

    fn opts(&self) -> ResolveOptions<'_> {
        ResolveOptions {
            cwd: Some(&self.cwd_abs),
        }
    }

    /// `path` as the model takes it (against the root): a relative, non-blank spelling joined
    /// to the step's working directory, the way the contract's `raw_display` joins it.
    fn spelled(&self, path: &str) -> String {
        match &self.cwd {
            Some(cwd) if !path.trim().is_empty() && !path.starts_with('/') => {
                format!("{cwd}/{path}")
            }
            _ => path.to_string(),
        }
    }

    fn hit(&mut self, rule: Rule) {
        self.pending.push(rule);
    }

    fn compare_err(&mut self, expected: &ModelError, actual: &FsError) -> Check {
        self.stats.check();
        if expected.code != actual.code() {
            return Err(fail(
                FailureKind::Outcome,
                format!(
                    "expected {}, got {}",
                    show_model_err(expected),
                    show_err(actual)
                ),
            ));
        }
        if self.config.messages == MessageCheck::Exact && expected.message != actual.message() {
            return Err(fail(
                FailureKind::Message,
                format!(
                    "right code {}, wrong message: expected {:?}, got {:?}",
                    expected.code,
                    expected.message,
                    actual.message()
                ),
            ));
        }
        Ok(())
    }

    /// Compares a result shape by shape; `ok` checks two successes.
    fn outcome<M, A>(
        &mut self,
        expected: &Result<M, ModelError>,
        actual: &Result<A, FsError>,
        ok: impl FnOnce(&mut Self, &M, &A) -> Check,
    ) -> Check {
        self.last_expected_code = expected.as_ref().err().map(|e| e.code);
        match (expected, actual) {
            (Ok(m), Ok(a)) => {
                self.stats.check();
                ok(self, m, a)
            }
            (Err(m), Err(a)) => {
                self.compare_err(m, a)?;
                self.stats.code(a.code());
                Ok(())
            }
            (Ok(_), Err(a)) => Err(fail(
                FailureKind::Outcome,
                format!("expected success, got {}", show_err(a)),
            )),
            (Err(m), Ok(_)) => Err(fail(
                FailureKind::Outcome,
                format!("expected {}, got success", show_model_err(m)),
            )),
        }
    }

    /// Records a version observation: the laws, and the rules it exercised.
    fn observe(&mut self, v: &Version, token: &FsVersion, file: Option<&Key>) -> Check {
        self.stats.check();
        if !self.tokens.iter().any(|t| t == token.as_str()) {
            self.tokens.push(token.as_str().to_string());
        }
        self.laws
            .observe(v, token.as_str())
            .map_err(|e| fail(FailureKind::VersionLaw, e))?;
        if let Some(key) = file {
            self.history.push((*v, token.clone()));
            match self.changed.remove(key) {
                Some(Change::RestoredMtime) => self.hit(Rule::VersionRestoredMtime),
                Some(Change::InPlace) => self.hit(Rule::VersionInPlace),
                Some(Change::Chmod) => self.hit(Rule::VersionChmod),
                None => {}
            }
        }
        if let Version::Dir { id, entries, .. } = *v
            && let Some(prev) = self.dir_entries.insert(id, entries)
            && prev != entries
        {
            self.hit(Rule::VersionDirEntries);
        }
        Ok(())
    }

    fn recent(&self, r: VersionRef, target: Option<&Resolved>) -> (Version, FsVersion) {
        let never = (
            Version::Object { n: u64::MAX },
            FsVersion::new(NEVER_ISSUED),
        );
        match r {
            VersionRef::Target => target
                .and_then(|t| self.latest.get(&t.key).cloned())
                .unwrap_or(never),
            VersionRef::Recent(_) if self.history.is_empty() => never,
            VersionRef::Recent(k) => {
                let i = self.history.len() - 1 - (k as usize % self.history.len());
                self.history[i].clone()
            }
        }
    }

    /// Remembers the latest file version seen for the object a target names.
    fn note_latest(&mut self, r: &Resolved, v: &Version, token: &FsVersion) {
        self.latest.insert(r.key.clone(), (*v, token.clone()));
    }

    fn key_check(&mut self, r: &Resolved, target: &FsTarget) -> Check {
        self.stats.check();
        same(
            FailureKind::KeyIdentity,
            "display path",
            &r.display,
            &target.display_path,
        )?;
        self.laws
            .key(&r.key, target.key.as_str())
            .map_err(|e| fail(FailureKind::KeyIdentity, e))
    }

    /// The path of a model key relative to the root (`d/a`; empty for the root).
    fn rel(key: &Key) -> String {
        key.0.join("/")
    }

    /// Runs one step and checks it; the record's failure describes the first departure.
    pub fn step(&mut self, rt: &Runtime, index: usize, step: &Step) -> StepRecord {
        let mut record = StepRecord {
            index,
            description: crate::step::describe(step),
            expected: String::new(),
            actual: String::new(),
            normal: String::new(),
            expected_code: None,
            failure: None,
        };
        self.last_expected_code = None;
        self.pending.clear();
        self.pending_laws.clear();
        self.denied_root = None;
        // Relative paths resolve against the step's working directory.
        self.cwd = step.cwd.clone();
        self.cwd_abs = match &step.cwd {
            Some(cwd) => format!("{}/{cwd}", self.root),
            None => self.root.clone(),
        };
        // A step on the second instance runs with it in the subject's place.
        let swapped = match step.instance {
            0 => None,
            n => match self.instance(n) {
                Ok(fs) => Some(std::mem::replace(&mut self.fs, fs)),
                Err(f) => {
                    record.failure = Some(f);
                    return record;
                }
            },
        };
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            rt.block_on(self.run(step, &mut record))
                .and_then(|()| self.verify_world())
        }));
        if let Some(fs) = swapped {
            self.fs = fs;
        }
        let result = result.unwrap_or_else(|payload| {
            Err(fail(
                FailureKind::Panic,
                format!(
                    "the provider panicked during `{}`: {}",
                    record.description,
                    panic_text(payload.as_ref())
                ),
            ))
        });
        self.stats.steps += 1;
        if self.config.step_texts {
            record.normal = self.normalise(&record.actual);
        }
        record.expected_code = self.last_expected_code;
        if !matches!(step.op, Op::World(_)) {
            self.stats.outcome(step.op.kind(), record.expected_code);
        }
        match result {
            Ok(()) => {
                for rule in std::mem::take(&mut self.pending) {
                    self.stats.rule(rule);
                }
            }
            Err(e) => {
                let escape = self
                    .denied_root
                    .take()
                    .and_then(|root| self.escape(root.as_ref(), &e));
                record.failure = Some(escape.unwrap_or(e));
            }
        }
        record
    }

    /// `text` with the root written `{root}` — its display path and its process path alike (a
    /// case whose root is reached through a link is compared with one whose root is not; that
    /// `process_path` is the real path is `path-facts`' to check) — each quoted version token as
    /// its class, and no error sources (what the OS said underneath a coded error is the
    /// provider's business; it does not cross a wire).
    fn normalise(&self, text: &str) -> String {
        let mut out = without_sources(text);
        let mut roots = [&self.root, &self.process_root];
        // The longer first, should one spell the other's beginning.
        roots.sort_by_key(|path| std::cmp::Reverse(path.len()));
        for path in roots {
            out = out.replace(path.as_str(), "{root}");
        }
        // Longest first, so that a token that contains another is replaced whole.
        let mut order: Vec<usize> = (0..self.tokens.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.tokens[i].len()));
        for i in order {
            let quoted = format!("{:?}", self.tokens[i]);
            out = out.replace(&quoted, &format!("\"v{i}\""));
        }
        out
    }

    /// Compares the world, byte for byte, with the model (also before the first step).
    pub fn verify_world(&mut self) -> Check {
        self.verify()
    }
}

/// `text` without the `, source: "…"` members of debug-printed errors.
fn without_sources(text: &str) -> String {
    const MARK: &str = ", source: \"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let after = &rest[at + MARK.len()..];
        // The string ends at the first quote not escaped by a backslash.
        let mut escaped = false;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[end.min(after.len())..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod normal_tests {
    use super::without_sources;

    #[test]
    fn sources_are_left_out_of_the_normal_form() {
        assert_eq!(
            without_sources(
                r#"Err(FsError { code: IoError, message: "m", source: "a \"q\" (os error 40)" })"#
            ),
            r#"Err(FsError { code: IoError, message: "m" })"#
        );
        assert_eq!(without_sources("Ok(1)"), "Ok(1)");
    }
}
