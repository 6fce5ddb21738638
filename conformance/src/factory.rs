//! How the suite gets a fresh subject for every case, without knowing which provider it is.

use crate::world::World;
use seam::FileSystem;
use std::sync::Arc;

/// How much durability a case asks of the provider. Generated runs use `Relaxed` for speed and
/// run a share of their cases at `Full`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseDurability {
    /// fsync file and directory.
    Full,
    /// Whatever is fastest while still atomic.
    Relaxed,
}

/// What a case asks of its subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseOptions {
    /// Seed for every random choice the provider makes (staging names...). Two subjects made
    /// with the same seed should make the same choices.
    pub seed: u64,
    /// Durability for this case.
    pub durability: CaseDurability,
    /// Which of the factory's [`Factory::configurations`] to build (by name).
    pub configuration: String,
    /// Deploy the backend with its reads confined to its roots as well as its mutations, if it
    /// can ([`seam::Capability::ReadFence`]): the subject then claims the read fence, and
    /// `containment` and `swap-race` attack its reads. A backend that cannot confine reads
    /// ignores it (and does not claim the read fence). Only those properties ask for it.
    pub confine_reads: bool,
}

impl CaseOptions {
    /// Options for one configuration, reads not confined.
    pub fn new(seed: u64, durability: CaseDurability, configuration: impl Into<String>) -> Self {
        Self {
            seed,
            durability,
            configuration: configuration.into(),
            confine_reads: false,
        }
    }

    /// The same options, asking for a deployment whose reads are confined too.
    pub fn with_confined_reads(mut self) -> Self {
        self.confine_reads = true;
        self
    }
}

/// A provider under test and its world, fresh for one case.
pub struct Subject {
    /// The provider.
    pub fs: Arc<dyn FileSystem>,
    /// Out-of-band control of its storage.
    pub world: Arc<dyn World>,
    /// The provider's exclusive diff-basis limit, so the model predicts `before` exactly.
    pub diff_basis_max_bytes: u64,
    /// Anything that must live as long as the subject (a temporary directory, a server). A
    /// factory may look into it again in [`Factory::reopen`] (it is `Any` for that).
    pub keep_alive: Box<dyn std::any::Any + Send + Sync>,
}

/// The default workspace a fencing backend's factory deploys it with, relative to the case's
/// directory (`{root}/d`; it need not exist yet — a workspace that does not exist matches
/// nothing). Narrower than the case, so that a deployment's own `workspace-write` fence has an
/// outside the suite can see: a backend that ignored its default would write there. No other
/// writable root may lie inside the case.
pub const DEPLOYMENT_WORKSPACE: &str = "d";

/// The diff-basis limit the shipped providers' factories deploy them with: small, so that
/// generated contents cross it and `before: null` is exercised (the production default is
/// 10 MiB).
pub const SUITE_DIFF_LIMIT: u64 = 1024;

/// The name of the configuration a factory has when it declares none.
pub const DEFAULT_CONFIGURATION: &str = "default";

/// Makes subjects. A backend author implements this in their own tests.
pub trait Factory: Send + Sync {
    /// The provider's name, for reports.
    fn name(&self) -> String;

    /// The configurations worth checking separately (staging methods, storage layouts...), by
    /// name. Generated cases are spread over all of them, and the report says how many cases
    /// each one ran; a declared configuration that never ran leaves the run incomplete.
    fn configurations(&self) -> Vec<String> {
        vec![DEFAULT_CONFIGURATION.to_string()]
    }

    /// A fresh, empty subject.
    fn make(&self, options: &CaseOptions) -> Result<Subject, String>;

    /// Whether the provider's streams come through a window: a number of chunks in flight that
    /// the reader grants more of as it takes them (every backend over the wire protocol
    /// announces one, `stream_window`). The gate then reads every stream of more than 128 KiB
    /// slowly — it stops for 5 ms after the first chunk, so that a backend that sends past its
    /// window has the time to, and a client that counts credit (seam's remote client does)
    /// catches it. A provider read in the suite's own process (`false`) has no credit to keep,
    /// whatever it reads ahead: a pause there finds nothing and only idles, and its long
    /// streams are read at full speed. The default: there is a window.
    fn streams_through_a_window(&self) -> bool {
        true
    }

    /// A second provider instance over the storage of `subject` (made by this factory with
    /// `options`), as a second agent process would open it: its own caches, locks and
    /// connections, the same files. A backend that claims [`seam::Capability::SharedStorage`]
    /// must be able to give one; the suite then runs its compare-and-swap races and
    /// linearizability batches across the two instances. `None` (the default): not offered.
    fn reopen(
        &self,
        options: &CaseOptions,
        subject: &Subject,
    ) -> Option<Result<Arc<dyn FileSystem>, String>> {
        let _ = (options, subject);
        None
    }

    /// Whether the suite can check what this backend refuses an unprivileged user
    /// (`permission-denied`, for a backend that claims [`seam::Capability::Permissions`]): the
    /// backend must run as the user the cases run as — in the suite's own process, or built
    /// afresh by the unprivileged child ([`crate::Unprivileged`]). `Err(why)` when it
    /// runs as a user of its own (a server someone else started): the property reports it
    /// cannot run, with this reason. The default: it can.
    fn permissions_checkable(&self) -> Result<(), String> {
        Ok(())
    }

    /// A subject whose backend runs in a process the suite may kill with SIGKILL while it
    /// writes, for the `crash` property: an adapter the factory starts, a server it starts, a
    /// shipped provider run in a child process. The default: the factory offers none, and the
    /// property says it did not run, and why.
    fn killable(&self, options: &CaseOptions) -> Result<Killable, NotKillable> {
        let _ = options;
        Err(NotKillable::Cannot(
            "the factory offers no backend in a process it can kill (Factory::killable)".into(),
        ))
    }

    /// After the backend of `killed` (made by [`Factory::killable`]) was killed: a fresh
    /// backend over the same storage, with a world to look at it (the killed one's may have died
    /// with it), as the next process to open the files would.
    fn recover(&self, options: &CaseOptions, killed: &Subject) -> Result<Subject, String> {
        let _ = (options, killed);
        Err("the factory cannot recover a killed backend (Factory::recover)".into())
    }

    /// A subject whose backend keeps its storage in `dir` — an existing directory the suite
    /// chose, absolute — with a world over it, for the `power-loss` property: `dir` is first a
    /// mount that keeps what a power cut would leave (empty but for what the suite put there
    /// before), then a plain directory holding what survived the cut, for the fresh backend
    /// that looks at it. The backend must keep its files in `dir` itself, as it would in any
    /// directory it is given. The default: the factory offers none, and the property says it
    /// did not run, and why.
    fn in_directory(
        &self,
        options: &CaseOptions,
        dir: &std::path::Path,
    ) -> Result<Subject, NotPlaced> {
        let _ = (options, dir);
        Err(NotPlaced::Cannot(
            "the factory cannot put a backend's storage in a directory the gate chose (Factory::in_directory)".into(),
        ))
    }
}

/// Why a factory gives no subject over a directory the suite chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotPlaced {
    /// The storage is not a directory at all (an in-memory store, an object store): a power cut
    /// loses what the contract allows it to. The property does not apply.
    Volatile(String),
    /// The factory cannot place it (a server someone else started, an adapter that does not
    /// take a root): like a capability not claimed, reported with this reason.
    Cannot(String),
    /// Starting it failed.
    Failed(String),
}

/// A subject whose backend the suite can kill.
pub struct Killable {
    /// The subject. Its provider speaks to the process; its world reaches the storage through
    /// the process, or directly where the factory can (a directory on this machine: the shipped
    /// disk providers' cases) — the storage is what outlives the kill either way.
    pub subject: Subject,
    /// Kills the backend's process at once (SIGKILL): what it was doing stops where it is.
    /// `false` if it could not be killed.
    pub kill: Arc<dyn Fn() -> bool + Send + Sync>,
}

/// Why a factory gives no killable subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotKillable {
    /// Nothing of the storage outlives the backend's process (an in-memory store): a crash
    /// loses the storage itself, which the contract allows. The property does not apply.
    Volatile(String),
    /// The suite cannot kill it here (a server someone else started, a factory that offers no
    /// process): like a capability not claimed, the property reports `not claimed` with this
    /// reason, and its rules need a backend the gate can kill.
    Cannot(String),
    /// Starting it failed.
    Failed(String),
}
