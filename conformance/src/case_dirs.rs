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
//! longer than [`BUSY`] (one that may have made thousands of inodes) has it removed. A
//! directory that cannot be emptied (a case left something this process may not remove), or
//! that is found written into when it is taken again, is removed instead. Once a call has been
//! given up at its limit, no directory is kept any more ([`a_call_was_given_up`]): the call may
//! still be writing. A case starts in an empty directory either way (its name and inode may be
//! an earlier case's; nothing in it is). The suite's other directories ([`CaseDir::new`]) are
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
                if !is_empty(&spare.path) {
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

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// Empties `dir` (and makes it private to its owner again, as a fresh one is): what is in it is
/// removed, the directory itself stays.
fn emptied(dir: &Path) -> std::io::Result<()> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
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

    /// A fresh directory in the run directory's `private/`, its name starting with `prefix`,
    /// that [`CaseDir::through_link`] can spell through the run's link. (The directories that
    /// hold sockets stay in the run directory itself: a socket's path has room for 107 bytes.)
    pub fn aliased(prefix: &str) -> std::io::Result<Self> {
        CASES.make(prefix, true)
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
mod tests {
    use super::Registry;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_case_never_dropped_is_removed_at_the_end_and_a_dropped_one_is_not_listed() {
        static REGISTRY: Registry = Registry::new();
        let dropped = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let dropped_path = dropped.path().to_path_buf();
        let run = REGISTRY.run_dir().expect("a run directory");
        let cases = run.join(super::CASES_IN);
        assert_eq!(dropped_path.parent(), Some(cases.as_path()));
        assert_topdir_on_ext4(&cases);
        for dir in [&run, &cases] {
            let mode = std::fs::metadata(dir)
                .expect("run dir")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o711, "others pass through, never list");
        }
        // The same directory, spelled through the run directory's link.
        let aliased = dropped
            .through_link(&dropped_path.join("root"))
            .expect("in the case");
        assert_eq!(
            aliased,
            run.join("tmp")
                .join(dropped_path.file_name().expect("a name"))
                .join("root")
        );
        std::fs::create_dir(dropped_path.join("root")).expect("root");
        assert_eq!(
            std::fs::canonicalize(&aliased).expect("through the link"),
            std::fs::canonicalize(dropped_path.join("root")).expect("the directory")
        );
        assert_eq!(dropped.through_link(&run), None, "not in the case");
        let beside = REGISTRY.make("seam-case-dirs-test-", false).expect("a dir");
        assert_eq!(beside.path().parent(), Some(run.as_path()));
        assert_eq!(beside.through_link(beside.path()), None, "not in private/");
        drop(beside);
        drop(dropped);
        assert!(!dropped_path.exists());
        assert!(!run.exists(), "the run directory goes with its last case");
        let abandoned = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let path = abandoned.path().to_path_buf();
        std::fs::create_dir_all(path.join("d/e")).expect("content");
        std::fs::write(path.join("d/e/f"), b"x").expect("content");
        // What a thread given up on does with its case: never drops it.
        std::mem::forget(abandoned);
        assert!(path.exists());
        let run = REGISTRY.run_dir().expect("a run directory");
        assert_eq!(REGISTRY.remove_all(), 1);
        assert!(!path.exists(), "{} is left", path.display());
        assert!(!run.exists(), "{} is left", run.display());
        assert_eq!(REGISTRY.remove_all(), 0);
    }

    #[test]
    fn an_interrupted_command_loses_its_run_directory_held_or_not_and_makes_no_more() {
        static REGISTRY: Registry = Registry::new();
        let _held = REGISTRY.hold();
        let running = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let path = running.path().to_path_buf();
        std::fs::write(path.join("f"), b"x").expect("content");
        let run = REGISTRY.run_dir().expect("a run directory");
        REGISTRY.close();
        // Closed first (while the run's processes are stopped): nothing removed yet, nothing
        // new made.
        assert!(path.exists());
        assert_eq!(
            REGISTRY
                .make("seam-case-dirs-test-", true)
                .map(|_| ())
                .map_err(|e| e.kind()),
            Err(std::io::ErrorKind::Interrupted)
        );
        assert_eq!(REGISTRY.remove_everything(), 1);
        assert!(!run.exists(), "{} is left", run.display());
        let refused = REGISTRY.make("seam-case-dirs-test-", true).map(|_| ());
        assert_eq!(
            refused.map_err(|e| e.kind()),
            Err(std::io::ErrorKind::Interrupted)
        );
        assert!(REGISTRY.run_dir().is_none());
        // The case still running ends later: its drop finds nothing to remove.
        drop(running);
        assert!(!path.exists());
    }

    /// The run directory is spread (on ext2/3/4; elsewhere there is no flag to look at).
    fn assert_topdir_on_ext4(dir: &std::path::Path) {
        use rustix::fs::{IFlags, Mode, OFlags, ioctl_getflags, open, statfs};
        if statfs(dir).map(|fs| fs.f_type) != Ok(0xEF53) {
            return;
        }
        let fd = open(dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).expect("open");
        let flags = ioctl_getflags(&fd).expect("flags");
        assert!(
            flags.contains(IFlags::TOPDIR),
            "{} is not spread",
            dir.display()
        );
    }

    /// On ext2/3/4 (this machine's TMPDIR) the flag is set; elsewhere `spread` does nothing.
    #[test]
    fn spread_marks_a_directory_a_top_of_a_hierarchy_on_ext4() {
        use rustix::fs::{IFlags, Mode, OFlags, ioctl_getflags, open, statfs};
        let dir = tempfile::tempdir().expect("tempdir");
        let Ok(fs) = statfs(dir.path()) else {
            return;
        };
        // EXT2_SUPER_MAGIC, shared by ext2, ext3 and ext4.
        if fs.f_type != 0xEF53 {
            eprintln!("TMPDIR is not ext2/3/4: nothing to check");
            return;
        }
        let flags = || {
            let fd = open(
                dir.path(),
                OFlags::RDONLY | OFlags::DIRECTORY,
                Mode::empty(),
            )
            .expect("open");
            ioctl_getflags(&fd).expect("flags")
        };
        assert!(!flags().contains(IFlags::TOPDIR));
        super::spread(dir.path());
        assert!(flags().contains(IFlags::TOPDIR));
        // Twice is the same.
        super::spread(dir.path());
        assert!(flags().contains(IFlags::TOPDIR));
    }

    #[test]
    fn a_case_directory_is_emptied_and_used_again_then_removed_after_its_uses() {
        static REGISTRY: Registry = Registry::busy_after(std::time::Duration::from_secs(3600));
        let _held = REGISTRY.hold();
        let first = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let path = first.path().to_path_buf();
        std::fs::create_dir_all(path.join("d/e")).expect("content");
        std::fs::write(path.join("d/e/f"), b"x").expect("content");
        std::os::unix::fs::symlink("/", path.join("l")).expect("a link");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o711)).expect("mode");
        drop(first);
        assert!(path.is_dir(), "kept");
        // Only for a case asking for the same kind of directory.
        let other = REGISTRY.make("seam-case-dirs-other-", true).expect("a dir");
        assert_ne!(other.path(), path);
        let again = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_eq!(again.path(), path, "the kept one");
        assert_eq!(std::fs::read_dir(&path).expect("list").count(), 0, "empty");
        let mode = std::fs::metadata(&path).expect("dir").permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "private again, as a fresh one");
        drop(again);
        // Written into after its case ended: not handed to another case, and removed.
        std::fs::write(path.join("late"), b"x").expect("a late write");
        let fresh = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_ne!(fresh.path(), path);
        assert!(!path.exists(), "the littered one is removed");
        let path = fresh.path().to_path_buf();
        drop(fresh);
        // Used USES times, a directory is removed rather than kept.
        for _ in 1..super::USES {
            let dir = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
            assert_eq!(dir.path(), path, "one directory serves every case");
        }
        assert!(!path.exists(), "removed after its last use");
        // Once a call was given up, nothing is kept, and what was kept goes.
        let kept = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let kept_path = kept.path().to_path_buf();
        drop(kept);
        assert!(kept_path.exists(), "kept");
        REGISTRY.with(|s| s.given_up = true);
        let after = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_ne!(after.path(), kept_path);
        assert!(
            !kept_path.exists(),
            "a kept directory outlived a call given up"
        );
        let after_path = after.path().to_path_buf();
        drop(after);
        assert!(!after_path.exists(), "kept after a call was given up");
        REGISTRY.with(|s| s.given_up = false);
        // The suite's other directories are never kept (a mount in one is unmounted by path).
        let plain = REGISTRY.make("seam-case-dirs-test-", false).expect("a dir");
        let path = plain.path().to_path_buf();
        drop(plain);
        assert!(!path.exists(), "{} is kept", path.display());
        drop(other);
    }

    #[test]
    fn a_directory_held_longer_than_the_busy_limit_is_removed_not_kept() {
        static REGISTRY: Registry = Registry::busy_after(std::time::Duration::from_millis(100));
        let _held = REGISTRY.hold();
        let quick = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let quick_path = quick.path().to_path_buf();
        drop(quick);
        // (A machine so busy that make and drop took 100 ms would fail this line, not the next.)
        assert!(quick_path.exists(), "a short case's directory is kept");
        let busy = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_eq!(busy.path(), quick_path, "the kept one");
        std::thread::sleep(std::time::Duration::from_millis(150));
        drop(busy);
        assert!(!quick_path.exists(), "a busy case's directory was kept");
    }

    #[test]
    fn a_hold_keeps_one_run_directory_for_cases_made_one_after_another() {
        static REGISTRY: Registry = Registry::new();
        let hold = REGISTRY.hold();
        let first = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        let run = REGISTRY.run_dir().expect("a run directory");
        drop(first);
        assert!(run.exists(), "held");
        let second = REGISTRY.make("seam-case-dirs-test-", true).expect("a dir");
        assert_eq!(
            second.path().parent(),
            Some(run.join(super::CASES_IN).as_path()),
            "the same one"
        );
        drop(second);
        drop(hold);
        assert!(!run.exists(), "{} is left", run.display());
        assert_eq!(REGISTRY.run_dir(), None);
    }
}
