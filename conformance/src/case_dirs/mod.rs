//! The temporary directories the shipped disk providers' cases live in.
//!
//! **One run directory.** Every case directory of a process is made inside one run directory in
//! TMPDIR (`seam-check-…`), which lives while a case does or while a command [`hold`]s it, and
//! is removed after. A run makes thousands of case directories and removes each when its case
//! ends; made side by side in TMPDIR they all land in TMPDIR's block group, and on ext4 without
//! a journal every new inode is then found by scanning past every inode freed there in the last
//! minute or so (`recently_deleted` in the kernel's allocator: up to 60 % of a local check's
//! time on the machine the gate is measured on). The run directory is marked a top of a
//! directory hierarchy (`FS_TOPDIR_FL`, `chattr +T`), so the allocator spreads the case
//! directories in it over the whole disk, as it would home directories — see [`spread`]. It is
//! `0711`: others may pass through to a case opened to them (the `permission-denied`
//! property's unprivileged child) but not list it.
//!
//! **One link for every case.** The cases' directories live in the run directory's `private/`,
//! and beside it `tmp` is a link to `private` — the layout of macOS's `/tmp` — so that a case
//! can be handed its root spelled through a link ([`CaseDir::through_link`]) without making a
//! link, and two directories, of its own: on a journal-less ext4 each inode a case makes is paid for
//! again by every inode made after it (above), and the links and directories of a per-case
//! layout were most of what the short cases made.
//!
//! **A case's directory is used again.** Making a directory in the spread run directory costs
//! the allocator a look at every block group of the disk (the price of spreading), and removing
//! one costs as much again: together most of what a short case spent of its own. So a case's
//! directory ([`CaseDir::aliased`], the one a provider's case lives in), once its case ends, is
//! emptied and kept ([`SPARES_KEPT`] at most) for the next case that asks for one with the same
//! prefix — [`USES`] cases at most, after which it is removed and a fresh one is spread
//! elsewhere, so that the inodes a directory's cases free (which the allocator scans past for a
//! while) never pile up in one block group; for the same reason a case that held its directory
//! longer than [`BUSY`] (one that may have made thousands of inodes) has it removed. Its
//! root ([`CaseDir::root`], the directory the provider is given) is kept with it, emptied, for
//! the same reason: a directory made and removed per case costs an inode, a block and, on a
//! disk mounted with `discard`, a wait for the device to discard that block. A
//! directory that cannot be emptied (a case left something this process may not remove), or
//! that is found written into when it is taken again, is removed instead. Once a call has been
//! given up at its limit, no directory is kept any more ([`a_call_was_given_up`]): the call may
//! still be writing (a call that answered left nothing running: the local provider's blocking
//! work is awaited by its call). A case starts in an empty directory either way (its name and
//! inode may be an earlier case's; nothing in it is), with a root that has what a fresh one
//! has — its owner and group, mode `0755`, no extended attributes (no ACL) — or a fresh one:
//! a kept root that differs in any of these is removed and made again, as one is on a
//! filesystem whose every directory carries a label (SELinux). The suite's other directories ([`CaseDir::new`]) are
//! never used again: a FUSE layer mounted in one is unmounted *by its path* when its session
//! ends, which may be after the directory's next case mounted its own there.
//!
//! **Nothing left behind.** A case is dropped with its directory when it ends — unless a call
//! into it hung: the suite then gives the call up with its thread, and what the thread holds is
//! never dropped. So every case directory is listed here while it lives, and a command that
//! gives calls up removes what is left with [`remove_abandoned`] before it exits (as it stops
//! the processes, `seam_remote::children`), leaving TMPDIR as it found it — when the command
//! ends. The directories of the processes the gate starts (the remote server's, the crash
//! children's, an adapter's socket) are made here too, so one run directory holds everything a
//! command made. A command interrupted (SIGINT, SIGTERM: the CLI's `interrupt`) removes it with
//! [`interrupted`] on its way out; only a command killed outright (SIGKILL) leaves it behind.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Marks `dir` as the top of a directory hierarchy (`FS_TOPDIR_FL`), where the filesystem
/// knows the flag (ext2/3/4): the directories made in it are then spread over the disk's block
/// groups instead of packed into the group of `dir`. Best effort: a filesystem without the
/// flag (tmpfs, xfs, btrfs), or a directory this process may not flag, is left as it is — the
/// flag changes where inodes go, never what any call sees.
pub fn spread(dir: &Path) {
    use rustix::fs::{IFlags, Mode, OFlags, ioctl_getflags, ioctl_setflags, open};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(fd) = open(dir, flags, Mode::empty()) else {
        return;
    };
    if let Ok(now) = ioctl_getflags(&fd)
        && !now.contains(IFlags::TOPDIR)
    {
        let _ = ioctl_setflags(&fd, now | IFlags::TOPDIR);
    }
}

/// A call was given up at its limit (see [`crate::watch`]): it may still be running — a disk
/// provider's write on a thread of its own, finishing later — and writing into its case's
/// directory after that case ended. A directory kept for another case could then be written
/// into under it, so none is kept from here on; each case gets a fresh one, and what a late
/// write reaches is a directory removed.
pub(crate) fn a_call_was_given_up() {
    CASES.with(|s| s.given_up = true);
}

/// The directory of the run directory the case directories are made in.
const CASES_IN: &str = "private";
/// The link beside it, to it: [`CASES_IN`] spelled another way.
const LINK: &str = "tmp";
/// The directory in an aliased case directory that its case is rooted at.
const ROOT: &str = "root";
/// The mode a case's root is handed out with, kept or fresh (whatever the umask).
const ROOT_MODE: u32 = 0o755;
/// The mode of an aliased case directory, kept or fresh: others may pass through to its root
/// (the `permission-denied` property's unprivileged child) but not list it.
const ALIASED_MODE: u32 = 0o711;

/// How many emptied case directories are kept for cases to come.
const SPARES_KEPT: usize = 8;
/// How many cases one directory serves before it is removed.
const USES: u32 = 16;
/// A case that held its directory this long is not a short one: it may have made and freed
/// thousands of inodes there (`swap-race` does, `big-directories` does), which the allocator
/// would make the next cases in the same block group scan past. Its directory is removed.
const BUSY: std::time::Duration = std::time::Duration::from_millis(250);

/// An emptied case directory, kept for the next case asking for one like it.
struct Spare {
    path: PathBuf,
    prefix: String,
    aliased: bool,
    uses: u32,
}

/// The run directory, its holders and the case directories alive in it.
#[derive(Default)]
struct State {
    run: Option<PathBuf>,
    holds: usize,
    live: Vec<PathBuf>,
    /// Emptied case directories, in the run directory, for cases to come.
    spares: Vec<Spare>,
    /// A call was given up: no directory is kept any more ([`a_call_was_given_up`]).
    given_up: bool,
    /// The command is on its way out (interrupted): no directory is made any more.
    closed: bool,
}

impl State {
    /// The run directory, made when there is none.
    fn run(&mut self) -> std::io::Result<PathBuf> {
        if let Some(run) = &self.run {
            return Ok(run.clone());
        }
        let made = tempfile::Builder::new()
            .prefix("seam-check-")
            .tempdir()?
            .keep();
        // Its real path, so that every directory made in it is spelled as its key is (a TMPDIR
        // written with `.`, `..`, `//` or through a link is not).
        let run = match std::fs::canonicalize(&made) {
            Ok(real) => real,
            Err(e) => {
                let _ = std::fs::remove_dir(&made);
                return Err(e);
            }
        };
        let cases = run.join(CASES_IN);
        let laid_out = std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o711))
            .and_then(|()| std::fs::create_dir(&cases))
            .and_then(|()| std::fs::set_permissions(&cases, std::fs::Permissions::from_mode(0o711)))
            .and_then(|()| std::os::unix::fs::symlink(CASES_IN, run.join(LINK)));
        if let Err(e) = laid_out {
            let _ = std::fs::remove_dir_all(&run);
            return Err(e);
        }
        spread(&run);
        spread(&cases);
        self.run = Some(run.clone());
        Ok(run)
    }

    /// Removes the run directory once nothing is in it or holds it.
    fn settle(&mut self) {
        if self.holds == 0
            && self.live.is_empty()
            && let Some(run) = self.run.take()
        {
            self.spares.clear();
            let _ = std::fs::remove_dir_all(run);
        }
    }
}

/// The registry of a process.
struct Registry(Mutex<Option<State>>, std::time::Duration);

impl Registry {
    const fn new() -> Self {
        Self(Mutex::new(None), BUSY)
    }

    /// With another limit than [`BUSY`] (a test's, so that a busy machine does not decide it).
    #[cfg(test)]
    const fn busy_after(busy: std::time::Duration) -> Self {
        Self(Mutex::new(None), busy)
    }

    fn state(&self) -> MutexGuard<'_, Option<State>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(self.state().get_or_insert_with(State::default))
    }

    fn make(&'static self, prefix: &str, aliased: bool) -> std::io::Result<CaseDir> {
        self.with(|s| {
            if s.closed {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Interrupted,
                    "the command was interrupted",
                ));
            }
            if s.given_up {
                for spare in s.spares.drain(..) {
                    let _ = std::fs::remove_dir_all(&spare.path);
                }
            }
            let kept = s
                .spares
                .iter()
                .position(|d| d.prefix == prefix && d.aliased == aliased);
            if let Some(i) = kept {
                let spare = s.spares.swap_remove(i);
                // Written into after its case ended (by what the case left running): not
                // handed to another case.
                if !is_empty(&spare.path) || rooted(&spare.path).is_err() {
                    let _ = std::fs::remove_dir_all(&spare.path);
                    return self.fresh(s, prefix, aliased);
                }
                s.live.push(spare.path.clone());
                return Ok(CaseDir {
                    path: Some(spare.path),
                    prefix: prefix.to_string(),
                    aliased,
                    uses: spare.uses + 1,
                    since: std::time::Instant::now(),
                    registry: self,
                });
            }
            self.fresh(s, prefix, aliased)
        })
    }

    /// A directory made for a case, not one kept.
    fn fresh(
        &'static self,
        s: &mut State,
        prefix: &str,
        aliased: bool,
    ) -> std::io::Result<CaseDir> {
        let run = s.run()?;
        let parent = if aliased { run.join(CASES_IN) } else { run };
        let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(parent);
        let dir = match dir {
            Ok(dir) => dir.keep(),
            Err(e) => {
                s.settle();
                return Err(e);
            }
        };
        if aliased && let Err(e) = set_mode(&dir, ALIASED_MODE).and_then(|()| rooted(&dir)) {
            let _ = std::fs::remove_dir_all(&dir);
            s.settle();
            return Err(e);
        }
        s.live.push(dir.clone());
        Ok(CaseDir {
            path: Some(dir),
            prefix: prefix.to_string(),
            aliased,
            uses: 1,
            since: std::time::Instant::now(),
            registry: self,
        })
    }

    /// A case is done with `dir`: kept, emptied, for another case while it has uses left and
    /// room is left among the spares; removed otherwise.
    fn retire(&self, dir: &CaseDir, path: PathBuf) {
        let wanted = || {
            self.with(|s| {
                dir.aliased
                    && !s.given_up
                    && !s.closed
                    && s.run.is_some()
                    && dir.uses < USES
                    && dir.since.elapsed() < self.1
                    && s.spares.len() < SPARES_KEPT
            })
        };
        // Emptied and removed outside the lock: cases on other threads end meanwhile.
        let kept = wanted() && emptied(&path).is_ok();
        let left = match kept {
            true => self.with(|s| {
                if s.closed || s.given_up || s.run.is_none() || s.spares.len() >= SPARES_KEPT {
                    return Some(path);
                }
                s.live.retain(|p| p != &path);
                s.spares.push(Spare {
                    path,
                    prefix: dir.prefix.clone(),
                    aliased: dir.aliased,
                    uses: dir.uses,
                });
                None
            }),
            false => Some(path),
        };
        if let Some(path) = left {
            // The directory first, then the run directory if this was its last case.
            let _ = std::fs::remove_dir_all(&path);
            self.with(|s| s.live.retain(|p| p != &path));
        }
        self.with(State::settle);
    }

    fn hold(&'static self) -> Hold {
        self.with(|s| s.holds += 1);
        Hold { registry: self }
    }

    fn release(&self) {
        self.with(|s| {
            s.holds = s.holds.saturating_sub(1);
            s.settle();
        });
    }

    fn remove_all(&self) -> usize {
        self.with(|s| {
            let paths = std::mem::take(&mut s.live);
            for path in &paths {
                let _ = std::fs::remove_dir_all(path);
            }
            s.settle();
            paths.len()
        })
    }

    /// Makes no directory any more.
    fn close(&self) {
        self.with(|s| s.closed = true);
    }

    /// Removes every case directory and the run directory, held or not. Cases may still be
    /// running on other threads and writing in their directories meanwhile: a removal then
    /// finds a directory not empty, and a write after it makes the directories it writes into
    /// again (a write makes missing parents), the run directory with them. So it goes on until
    /// the run directory has stayed gone for 50 ms, for a second at most.
    fn remove_everything(&self) -> usize {
        self.with(|s| {
            let paths = std::mem::take(&mut s.live);
            s.spares.clear();
            if let Some(run) = s.run.take() {
                let mut gone_for = 0;
                for _ in 0..100 {
                    match std::fs::remove_dir_all(&run) {
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => gone_for += 1,
                        _ => gone_for = 0,
                    }
                    if gone_for >= 5 {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
            paths.len()
        })
    }

    fn run_dir(&self) -> Option<PathBuf> {
        self.with(|s| s.run.clone())
    }
}

static CASES: Registry = Registry::new();

/// Whether a kept directory is as it was left: nothing in it but, at most, its empty root.
fn is_empty(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.into_iter().all(|entry| {
        entry.is_ok_and(|entry| {
            entry.file_name() == ROOT
                && entry.file_type().is_ok_and(|t| t.is_dir())
                && std::fs::read_dir(entry.path()).is_ok_and(|mut e| e.next().is_none())
        })
    })
}

/// Gives an aliased case directory its empty root, with [`ROOT_MODE`]: made when missing,
/// kept when there.
fn rooted(dir: &Path) -> std::io::Result<()> {
    let root = dir.join(ROOT);
    match std::fs::create_dir(&root) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    set_mode(&root, ROOT_MODE)
}

/// Gives `path` the permission bits `mode`, unless it has them already (a case seldom changes
/// them, and a change of mode is an inode written).
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    if std::fs::metadata(path)?.permissions().mode() & 0o7777 == mode {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Empties `dir` (and gives it its mode again, as a fresh one has it): what is in it is
/// removed, the directory itself stays — and so does its root, emptied, when it is a directory
/// with this directory's owner and group and no extended attribute (a case may have replaced
/// it, handed it to another user, or given it an ACL that the next case's files would inherit).
fn emptied(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    set_mode(dir, ALIASED_MODE)?;
    let own = std::fs::metadata(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let (kind, path) = (entry.file_type()?, entry.path());
        let meta = entry.metadata()?;
        let as_fresh = meta.uid() == own.uid() && meta.gid() == own.gid() && !has_xattrs(&path);
        if entry.file_name() == ROOT && kind.is_dir() && as_fresh {
            // Its owner may remove what is in it (the mode it is handed out with is restored
            // when it is).
            if meta.mode() & 0o700 != 0o700 {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
            }
            cleared(&path)?;
        } else if kind.is_dir() {
            std::fs::remove_dir_all(path)?;
        } else {
            std::fs::remove_file(path)?;
        }
    }
    Ok(())
}

/// Whether `path` carries an extended attribute (an ACL is one); a filesystem without them has
/// none.
fn has_xattrs(path: &Path) -> bool {
    match rustix::fs::llistxattr_query(path) {
        Ok(len) => len > 0,
        Err(e) => e != rustix::io::Errno::NOTSUP,
    }
}

/// Removes everything in `dir`.
fn cleared(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// A case's temporary directory: emptied for another case or removed when dropped (see the
/// module's docs), or removed by [`remove_abandoned`] if never dropped.
pub struct CaseDir {
    path: Option<PathBuf>,
    prefix: String,
    aliased: bool,
    /// How many cases it served, this one included.
    uses: u32,
    /// When this case took it.
    since: std::time::Instant,
    registry: &'static Registry,
}

impl CaseDir {
    /// A fresh directory in the run directory, its name starting with `prefix`.
    pub fn new(prefix: &str) -> std::io::Result<Self> {
        CASES.make(prefix, false)
    }

    /// A directory in the run directory's `private/`, its name starting with `prefix`, that
    /// [`CaseDir::through_link`] can spell through the run's link, mode `0711` (others may pass
    /// through to its root, never list it), with an empty directory in
    /// it for the case to be rooted at ([`CaseDir::root`], mode `0755`) — so that `..` from the
    /// root is still the case's own. Fresh, or emptied after an earlier case (see the module's
    /// docs). (The directories that hold sockets stay in the run directory itself: a socket's
    /// path has room for 107 bytes.)
    pub fn aliased(prefix: &str) -> std::io::Result<Self> {
        CASES.make(prefix, true)
    }

    /// The directory a case made [`CaseDir::aliased`] is rooted at: `root` in it.
    pub fn root(&self) -> PathBuf {
        self.path().join(ROOT)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        match &self.path {
            Some(dir) => dir,
            None => Path::new(""),
        }
    }

    /// `path` — the directory or a path in it — spelled through the run directory's link:
    /// `…/seam-check-…/tmp/case-…/…` for `…/seam-check-…/private/case-…/…`. `None` for a path
    /// outside the directory, or a directory not made [`CaseDir::aliased`].
    pub fn through_link(&self, path: &Path) -> Option<PathBuf> {
        let own = self.path.as_deref()?;
        let rest = path.strip_prefix(own).ok()?;
        let name = own.file_name()?;
        let parent = own.parent()?;
        if parent.file_name()? != CASES_IN {
            return None;
        }
        Some(parent.parent()?.join(LINK).join(name).join(rest))
    }
}

impl Drop for CaseDir {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            self.registry.retire(self, path);
        }
    }
}

impl crate::ScratchDir for CaseDir {
    fn path(&self) -> &Path {
        CaseDir::path(self)
    }
}

/// The suite's own directories ([`crate::Scratch`]), made in the run directory like
/// the cases': an interrupted command removes them with it.
pub struct RunScratch;

impl crate::Scratch for RunScratch {
    fn make(&self, prefix: &str) -> std::io::Result<Box<dyn crate::ScratchDir>> {
        Ok(Box::new(CaseDir::new(prefix)?))
    }
}

/// Keeps the run directory for as long as it lives, so that a command's cases, made and
/// removed one after another, share one (spread) run directory rather than each making its
/// own. Without a hold the run directory goes with the last case alive.
pub struct Hold {
    registry: &'static Registry,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.registry.release();
    }
}

/// Holds the run directory until the returned guard drops (see [`Hold`]).
pub fn hold() -> Hold {
    CASES.hold()
}

/// Removes every case directory still listed (their cases were given up on) and forgets them;
/// returns how many there were. Only for the end of a command: a case still running would lose
/// its directory.
pub fn remove_abandoned() -> usize {
    CASES.remove_all()
}

/// The command was interrupted: no directory is made from here on, so nothing the run stops is
/// started again meanwhile (a server found stopped is restarted in a directory of its own).
pub fn closing() {
    CASES.close();
}

/// The command was interrupted, and what it started is stopped: removes the run directory with
/// everything in it — cases still running included; returns how many directories were alive
/// in it.
pub fn interrupted() -> usize {
    CASES.close();
    CASES.remove_everything()
}

/// The run directory, while there is one.
pub fn run_dir() -> Option<PathBuf> {
    CASES.run_dir()
}

#[cfg(test)]
mod tests;
