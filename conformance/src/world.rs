//! The side channel to a backend's storage.
//!
//! The suite must see the world without asking the provider under test: it sets up fixtures,
//! plays the person or linter who edits a file behind the agent's back, and reads every byte back
//! after every step. For local and sandboxed providers that is plain `std::fs` on the test root
//! ([`DiskWorld`]); a remote backend exposes the same operations through its test-control channel.

use seam_model::{SnapEntry, WorldEffect};
use std::collections::BTreeMap;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

/// The kind and permission bits of one entry, as seen out of band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryMode {
    /// A directory?
    pub is_dir: bool,
    /// Permission bits.
    pub mode: u32,
}

/// Out-of-band control of the storage under one test root.
///
/// Paths in effects and snapshots are relative to the root (`d/a`). A link's text is stored and
/// reported exactly as the effect gives it: the model spells an absolute link to a path under
/// the root with the root's display path, as any absolute link in that world must.
pub trait World: Send + Sync {
    /// The display path of the root in the provider's world (absolute, no trailing slash).
    fn root_display(&self) -> String;

    /// The path of the root as a subprocess in the provider's world opens it: what
    /// `process_path` of the root must return. The same as the display path unless the
    /// provider's world maps paths for processes.
    fn process_root(&self) -> String {
        self.root_display()
    }

    /// Carries out a change the model decided on.
    fn apply(&self, effect: &WorldEffect) -> io::Result<()>;

    /// Every entry under the root by relative path, with raw bytes and permission bits.
    ///
    /// A snapshot is the world *as it was*: its bytes never change once taken. The harness
    /// keeps one as the next step's world before, and does not compare again a file whose
    /// buffer is the very one it found equal to the model's at the last read-back — so a world
    /// may hand out the buffers it keeps (shared, like the in-memory store's), never a view of
    /// storage that changes under it (a mapped file).
    fn snapshot(&self) -> io::Result<BTreeMap<String, SnapEntry>>;

    /// The kind and mode of an entry named by an absolute path in the provider's world, without
    /// following a final link; `None` when nothing is there.
    fn entry_mode(&self, path: &str) -> io::Result<Option<EntryMode>>;

    /// Whether this world can make FIFOs.
    fn supports_fifos(&self) -> bool {
        false
    }

    /// Whether this world can put a file's mtime back exactly after rewriting it in place (the
    /// rewrite a version token built from size and mtime alone misses). A world that cannot is
    /// given no such rewrite, and the report says so.
    fn restores_mtime(&self) -> bool {
        true
    }

    /// Whether the storage keeps permission bits at all. One that keeps none (an object store)
    /// says so: it is then never asked to set a mode, its snapshots report none, the backend
    /// cannot claim [`seam::Capability::Modes`], and the report says why no permission bits were
    /// generated. `claims` holds both answers to the world's snapshots: a world that keeps
    /// modes reads back the mode it was given, one that keeps none reports none.
    fn keeps_modes(&self) -> bool {
        true
    }

    /// Lets other users traverse the root (for running cases as an unprivileged user).
    fn open_to_others(&self) -> io::Result<()> {
        Ok(())
    }
}

/// The real path of `path`, as `realpath(3)` gives it, in three calls rather than a `readlink`
/// of every prefix of the path (a world is made for every case): the path opened for its place
/// alone (`O_PATH`, links followed), then its descriptor's name in `/proc/self/fd` —
/// `realpath(3)` itself wherever the two could differ (the open refused but for a missing
/// component, not a directory, a loop or a path too long; no `/proc`; the path removed
/// meanwhile, named `… (deleted)`). The local provider's `seam_local::real_path`, which the
/// suite does not name.
fn real_path(path: &Path) -> io::Result<PathBuf> {
    use rustix::fs::{Mode, OFlags, open};
    use rustix::io::Errno;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let fd = match open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(e @ (Errno::NOENT | Errno::NOTDIR | Errno::LOOP | Errno::NAMETOOLONG)) => {
            return Err(e.into());
        }
        Err(_) => return std::fs::canonicalize(path),
    };
    match std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
        Ok(real) if real.is_absolute() && !real.as_os_str().as_bytes().ends_with(b" (deleted)") => {
            Ok(real)
        }
        _ => std::fs::canonicalize(path),
    }
}

/// A [`World`] on the local disk: a root directory reached with `std::fs`.
#[derive(Debug)]
pub struct DiskWorld {
    root: PathBuf,
    display: String,
    real: String,
}

impl DiskWorld {
    /// A world rooted at `root`, whose display path is its canonical form.
    pub fn new(root: &Path) -> io::Result<Self> {
        let real = real_path(root)?;
        let display = real
            .to_str()
            .ok_or_else(|| io::Error::other("the test root is not valid UTF-8"))?
            .to_string();
        Ok(Self {
            root: real,
            real: display.clone(),
            display,
        })
    }

    /// A world rooted at `root` whose display path is `alias`, an absolute path that leads to
    /// `root` through a symbolic link (macOS's `/tmp` is `/private/tmp`; a home directory may be
    /// reached through a link). The backend is given `alias` as its root: every path it is
    /// asked about is then spelled differently from the real path it leads to, without any link
    /// of the case's own, so a backend whose messages or display paths name its key (the real
    /// path) rather than the path as the caller wrote it is seen at the first failed call.
    /// `process_path` stays the real path ([`World::process_root`] is `root`'s canonical form).
    pub fn through_link(root: &Path, alias: &str) -> io::Result<Self> {
        let mut world = Self::new(root)?;
        if !alias.starts_with('/') || alias.ends_with('/') {
            return Err(io::Error::other(format!(
                "the alias {alias:?} of the test root must be absolute, without a trailing slash"
            )));
        }
        if real_path(Path::new(alias))? != world.root {
            return Err(io::Error::other(format!(
                "the alias {alias:?} does not lead to the test root {}",
                world.root.display()
            )));
        }
        world.display = alias.to_string();
        Ok(world)
    }

    /// The real root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn at(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn create_parents(&self, rel: &str) -> io::Result<()> {
        let mut cur = self.root.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            cur.push(part);
            if std::fs::symlink_metadata(&cur).is_err() {
                std::fs::create_dir(&cur)?;
                std::fs::set_permissions(&cur, std::fs::Permissions::from_mode(0o755))?;
            }
        }
        Ok(())
    }
}

impl World for DiskWorld {
    fn root_display(&self) -> String {
        self.display.clone()
    }

    fn process_root(&self) -> String {
        self.real.clone()
    }

    fn apply(&self, effect: &WorldEffect) -> io::Result<()> {
        match effect {
            WorldEffect::CreateFile { path, bytes, mode } => {
                self.create_parents(path)?;
                let p = self.at(path);
                if std::fs::symlink_metadata(&p).is_ok() {
                    std::fs::remove_file(&p)?;
                }
                std::fs::write(&p, bytes)?;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode))
            }
            WorldEffect::RewriteFile {
                path,
                bytes,
                restore_mtime,
            } => {
                let p = self.at(path);
                let before = std::fs::metadata(&p)?.modified()?;
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&p)?;
                io::Write::write_all(&mut f, bytes)?;
                if *restore_mtime {
                    f.set_modified(before)?;
                }
                Ok(())
            }
            WorldEffect::CreateDir { path } => {
                let p = self.at(path);
                std::fs::create_dir(&p)?;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
            }
            WorldEffect::Symlink { path, target } => symlink(target, self.at(path)),
            WorldEffect::Remove { path } => {
                let p = self.at(path);
                let meta = std::fs::symlink_metadata(&p)?;
                if meta.is_dir() {
                    std::fs::remove_dir_all(&p)
                } else {
                    std::fs::remove_file(&p)
                }
            }
            WorldEffect::Chmod { path, mode } => {
                std::fs::set_permissions(self.at(path), std::fs::Permissions::from_mode(*mode))
            }
            WorldEffect::Mkfifo { path } => rustix::fs::mknodat(
                rustix::fs::CWD,
                self.at(path).as_path(),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .map_err(io::Error::from),
        }
    }

    /// Every entry under the root, each read relative to its directory's descriptor (one
    /// lookup per entry, where a path from `/` walks the case's whole depth again for every
    /// stat, link and read: the read-back runs after every step).
    fn snapshot(&self) -> io::Result<BTreeMap<String, SnapEntry>> {
        use rustix::fs::{AtFlags, Dir, Mode, OFlags, openat, readlinkat, statat};
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let mut out = BTreeMap::new();
        let root = rustix::fs::open(&self.root, flags | OFlags::DIRECTORY, Mode::empty())?;
        let mut stack = vec![(root, self.root.clone(), String::new())];
        while let Some((fd, dir, prefix)) = stack.pop() {
            // A duplicate to read the entries from: `Dir::read_from` would open the directory
            // again by `.`, which needs search permission where listing needs only read.
            let listing = rustix::io::fcntl_dupfd_cloexec(&fd, 0)?;
            for entry in Dir::new(listing)? {
                let entry = entry?;
                let raw = entry.file_name();
                if raw.to_bytes() == b"." || raw.to_bytes() == b".." {
                    continue;
                }
                let name = String::from_utf8_lossy(raw.to_bytes()).into_owned();
                let rel = if prefix.is_empty() {
                    name
                } else {
                    format!("{prefix}/{name}")
                };
                let stat = statat(&fd, raw, AtFlags::SYMLINK_NOFOLLOW)?;
                let kind = rustix::fs::FileType::from_raw_mode(stat.st_mode);
                let mode = stat.st_mode & 0o7777;
                let snap = match kind {
                    rustix::fs::FileType::Symlink => {
                        let text = readlinkat(&fd, raw, Vec::new())?;
                        SnapEntry::Symlink {
                            target: text.to_string_lossy().into_owned(),
                        }
                    }
                    rustix::fs::FileType::Directory => {
                        let sub = openat(&fd, raw, flags | OFlags::DIRECTORY, Mode::empty())?;
                        let path = dir.join(std::ffi::OsStr::from_bytes(raw.to_bytes()));
                        stack.push((sub, path, rel.clone()));
                        SnapEntry::Dir { mode: Some(mode) }
                    }
                    rustix::fs::FileType::RegularFile => {
                        let bytes = if mode & 0o400 == 0 && !is_root() {
                            read_privileged(&dir.join(std::ffi::OsStr::from_bytes(raw.to_bytes())))?
                        } else {
                            let file = std::fs::File::from(openat(&fd, raw, flags, Mode::empty())?);
                            let mut bytes = Vec::new();
                            // Room for the size stat gave, where there is room (a sparse file
                            // may claim more than the machine has).
                            let _ = bytes.try_reserve_exact(stat.st_size.try_into().unwrap_or(0));
                            io::Read::read_to_end(&mut &file, &mut bytes)?;
                            bytes
                        };
                        SnapEntry::File {
                            bytes: bytes.into(),
                            mode: Some(mode),
                        }
                    }
                    _ => SnapEntry::Other,
                };
                out.insert(rel, snap);
            }
        }
        Ok(out)
    }

    fn entry_mode(&self, path: &str) -> io::Result<Option<EntryMode>> {
        // The root's alias is a link: the entry it names is the root itself.
        let path = match path.strip_prefix(self.display.as_str()) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", self.real)
            }
            _ => path.to_string(),
        };
        match std::fs::symlink_metadata(&path) {
            Ok(m) => Ok(Some(EntryMode {
                is_dir: m.is_dir(),
                mode: m.permissions().mode() & 0o7777,
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn supports_fifos(&self) -> bool {
        true
    }

    fn open_to_others(&self) -> io::Result<()> {
        std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(0o755))
    }
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Reads a file whose owner-read bit is off by lending ourselves the bit for a moment.
fn read_privileged(path: &Path) -> io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    let mode = meta.permissions().mode();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o400))?;
    let bytes = std::fs::read(path);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    bytes
}

#[cfg(test)]
mod tests {
    /// The disk world's real paths are `realpath(3)`'s: through links, chains, `..` after a
    /// link, and its errors.
    #[test]
    fn a_world_finds_real_paths_as_realpath_does() {
        use super::World;
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path();
        std::fs::create_dir_all(base.join("d/e")).expect("dirs");
        std::fs::write(base.join("d/e/f"), b"x").expect("file");
        symlink("d/e", base.join("to-e")).expect("link");
        symlink(base.join("to-e/f"), base.join("abs-f")).expect("link");
        symlink("nowhere", base.join("dangling")).expect("link");
        symlink("loop", base.join("loop")).expect("link");
        for p in ["", "d", "to-e", "to-e/f", "abs-f", "to-e/../e/f"] {
            let path = base.join(p);
            let real = std::fs::canonicalize(&path).expect("realpath");
            assert_eq!(super::real_path(&path).expect("real_path"), real, "{p:?}");
        }
        for p in ["missing", "dangling", "d/e/f/g", "loop"] {
            let path = base.join(p);
            let want = std::fs::canonicalize(&path).expect_err("realpath fails");
            let got = super::real_path(&path).expect_err("real_path fails");
            assert_eq!(got.raw_os_error(), want.raw_os_error(), "{p:?}");
        }
        // The world over a root spelled through a link is the root's real path.
        let world = super::DiskWorld::new(&base.join("to-e")).expect("a world");
        assert_eq!(
            world.process_root(),
            std::fs::canonicalize(base.join("d/e"))
                .expect("real")
                .to_str()
                .expect("utf-8")
        );
    }
}
