//! The directory handle every path operation of the provider runs beneath.
//!
//! Keys are absolute real paths, but the provider never hands one to the kernel from the
//! process's working directory: it opens the root once, holds the descriptor, and resolves each
//! key as a path relative to it (`openat`, `statx`, `unlinkat` on the held handle). Staging,
//! publication and sweeping then work on the parent directory's descriptor with
//! single-component names.
//!
//! For the local provider the root is `/`, so a relative path beneath the held handle is
//! resolved exactly as the absolute path would be (links, `..` and all) at the same cost: one
//! system call, the same as before. The handle is the seam a confining provider uses: the same
//! mechanics beneath a writable root's handle, with resolution that may not leave it.

use crate::version::{Probe, probe_at};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, StatxFlags};
use rustix::io::Errno;
use std::collections::VecDeque;

/// How a directory is opened for its descriptor (read-only, a directory or nothing, closed
/// on exec).
pub(crate) fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// Links followed in one resolution before it is a loop (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// The held root directory.
pub(crate) struct Root {
    /// `None` only if `/` could not be opened at all (a seccomp jail, say); absolute paths from
    /// the working directory then resolve exactly as paths beneath `/` would.
    fd: Option<OwnedFd>,
    /// For a root that resolution may not leave: its path (real, no trailing slash).
    confined: Option<String>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("held", &self.fd.is_some())
            .field("confined", &self.confined)
            .finish()
    }
}

fn path_handle() -> OFlags {
    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// How many times [`Root::probe_settled`] looks again before it answers what it saw last.
const SETTLE_TRIES: usize = 8;

impl Root {
    /// The host's root, `/`, opened as a path handle.
    pub fn host() -> Self {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Self {
            fd: rustix::fs::openat(rustix::fs::CWD, "/", flags, Mode::empty()).ok(),
            confined: None,
        }
    }

    /// The directory at `path` (a real, absolute path), as a root that no resolution beneath it
    /// may leave: not by `..`, not by a link (absolute, relative, chained or dangling), not by a
    /// directory swapped for a link while an operation runs. Leaving it is `EXDEV`.
    pub fn confined(path: &str) -> Result<Self, Errno> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(rustix::fs::CWD, path, flags, Mode::empty())?;
        let trimmed = path.trim_end_matches('/');
        Ok(Self {
            fd: Some(fd),
            confined: (!trimmed.is_empty()).then(|| trimmed.to_string()),
        })
    }

    /// Where the kernel should resolve `key` (an absolute path) beneath the host root: the held
    /// handle and the path relative to it (`.` for the root itself). Only for an unconfined
    /// root; a confined one resolves through [`Root::walk`].
    pub fn at<'k>(&self, key: &'k str) -> (BorrowedFd<'_>, &'k str) {
        match &self.fd {
            Some(fd) => {
                let rel = key.trim_start_matches('/');
                (fd.as_fd(), if rel.is_empty() { "." } else { rel })
            }
            None => (rustix::fs::CWD, key),
        }
    }

    /// `key` relative to the confining root; `EXDEV` when it is not beneath it.
    fn rel<'k>(root: &str, key: &'k str) -> Result<&'k str, Errno> {
        if key == root {
            return Ok(".");
        }
        match key.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
            Some("") => Ok("."),
            Some(rest) => Ok(rest),
            None => Err(Errno::XDEV),
        }
    }

    /// An absolute link text relative to the confining root: lexically beneath it, or beneath
    /// a spelling of the root through a link outside it — `/tmp/w/a` for a root whose real path
    /// is `/private/tmp/w`, as on macOS: the shortest prefix of the text whose real path is the
    /// root stands for the root. `EXDEV` for anything else. The rest is walked from the root's
    /// handle as any text is, so whatever the host says of the prefix, nothing outside the root
    /// is reached.
    fn rel_through(root: &str, absolute: &str) -> Result<String, Errno> {
        if let Ok(rest) = Self::rel(root, absolute) {
            return Ok(rest.to_string());
        }
        let comps: Vec<&str> = absolute.split('/').filter(|c| !c.is_empty()).collect();
        for i in 1..=comps.len() {
            let prefix = format!("/{}", comps[..i].join("/"));
            if crate::paths::real_path(&prefix).is_ok_and(|real| real.to_str() == Some(root)) {
                return Ok(comps[i..].join("/"));
            }
        }
        Err(Errno::XDEV)
    }

    /// Resolves `key` beneath the confining root, one component at a time from held
    /// descriptors, never letting the kernel follow a link: returns the directory holding the
    /// final component and its name (`.` for the root itself). A link is followed by reading its
    /// text and going on from the root (absolute text naming a place beneath it) or from the
    /// directory holding it (relative text); the final component's link only when `follow`.
    /// A missing final component is returned as is (the operation then finds nothing there).
    fn walk(&self, root: &str, key: &str, follow: bool) -> Result<(OwnedFd, String), Errno> {
        let Some(root_fd) = &self.fd else {
            return Err(Errno::XDEV);
        };
        let reopen = |fd: BorrowedFd<'_>| {
            rustix::fs::openat(
                fd,
                ".",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        let components = |text: &str| -> Vec<String> {
            text.split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .map(str::to_string)
                .collect()
        };
        let mut stack = vec![reopen(root_fd.as_fd())?];
        // A key is a real path, or — through a regular file — the path as spelled, which may
        // reach the root through a link.
        let mut queue: VecDeque<String> = components(&Self::rel_through(root, key)?).into();
        let mut links = 0;
        while let Some(name) = queue.pop_front() {
            if name == ".." {
                if stack.len() == 1 {
                    return Err(Errno::XDEV);
                }
                stack.pop();
                continue;
            }
            let last = queue.is_empty();
            let Some(dir) = stack.last() else {
                return Err(Errno::XDEV);
            };
            if last && !follow {
                let dir = reopen(dir.as_fd())?;
                return Ok((dir, name));
            }
            let fd = match rustix::fs::openat(dir, name.as_str(), path_handle(), Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) if last => {
                    let dir = reopen(dir.as_fd())?;
                    return Ok((dir, name));
                }
                Err(e) => return Err(e),
            };
            let kind = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::TYPE)
                .map(|st| FileType::from_raw_mode(st.stx_mode.into()))?;
            if kind == FileType::Symlink {
                links += 1;
                if links > MAX_LINKS {
                    return Err(Errno::LOOP);
                }
                let text = rustix::fs::readlinkat(&fd, "", Vec::new())?;
                let text = text.to_str().map_err(|_| Errno::ILSEQ)?;
                let mut next = if let Some(abs) = text.strip_prefix('/') {
                    // Absolute: from the root, if it names a place beneath it.
                    let absolute = format!("/{abs}");
                    let rest = Self::rel_through(root, &absolute)?;
                    stack.truncate(1);
                    components(&rest)
                } else {
                    components(text)
                };
                next.extend(queue.drain(..));
                queue = next.into();
                continue;
            }
            if last {
                let dir = reopen(dir.as_fd())?;
                return Ok((dir, name));
            }
            if kind != FileType::Directory {
                return Err(Errno::NOTDIR);
            }
            stack.push(fd);
        }
        // The key is the root itself (or `..` brought it back there).
        let top = stack.pop().ok_or(Errno::XDEV)?;
        Ok((top, ".".to_string()))
    }

    /// Opens `key` with `flags` (a final link is followed unless `flags` has `NOFOLLOW`).
    pub fn open(&self, key: &str, flags: OFlags) -> Result<OwnedFd, Errno> {
        match &self.confined {
            None => {
                let (dir, rel) = self.at(key);
                rustix::fs::openat(dir, rel, flags, Mode::empty())
            }
            Some(root) => {
                let (dir, name) = self.walk(root, key, !flags.contains(OFlags::NOFOLLOW))?;
                // The walk resolved every link; one swapped in since is refused, not followed.
                rustix::fs::openat(&dir, name.as_str(), flags | OFlags::NOFOLLOW, Mode::empty())
            }
        }
    }

    /// Whether resolution beneath this root may not leave it.
    pub fn is_confined(&self) -> bool {
        self.confined.is_some()
    }

    /// Opens the directory at `key` (following links on the way and at the end).
    pub fn open_dir(&self, key: &str) -> Result<OwnedFd, Errno> {
        self.open(key, dir_flags())
    }

    /// `statx` of `key`; absent is `Ok(None)`.
    pub fn probe(&self, key: &str, follow: bool) -> Result<Option<Probe>, Errno> {
        match &self.confined {
            None => {
                let (dir, rel) = self.at(key);
                probe_at(dir, rel, follow)
            }
            Some(root) => match self.walk(root, key, follow) {
                Ok((dir, name)) => probe_at(&dir, name.as_str(), false),
                Err(e) if crate::errors::is_absent(e) => Ok(None),
                Err(e) => Err(e),
            },
        }
    }

    /// [`Root::probe`] as one instant. A path lookup and the attributes read after it are not
    /// atomic in the kernel: a rename stamps the moved file's ctime before it moves the name,
    /// so a `statx` in between finds the file at its old name with the version the move gave
    /// it — an answer no moment ever had (two `statx` in a row can both land in that window).
    /// A rename holds its directories locked until the name has moved, and reading a directory
    /// takes that lock: so for an object changed lately (any change in flight stamped it just
    /// now), the directory is read once — waiting out a rename in flight — and the object
    /// looked at again; two looks that agree across that wait were both true at the instant of
    /// the wait. A pair that differs met a change, and is taken again (each retry needs another
    /// change to have landed). An object not changed lately has no change in flight: one look.
    pub fn probe_settled(&self, key: &str, follow: bool) -> Result<Option<Probe>, Errno> {
        let mut last = self.probe(key, follow)?;
        if !last.as_ref().is_some_and(Probe::changed_lately) {
            return Ok(last);
        }
        for _ in 0..SETTLE_TRIES {
            self.wait_out_renames(key);
            let now = self.probe(key, follow)?;
            if now == last {
                return Ok(now);
            }
            last = now;
        }
        Ok(last)
    }

    /// Reads the directory that holds `key` (one `getdents`), which waits until no rename holds
    /// it. Best effort: a directory that cannot be read is not waited on.
    fn wait_out_renames(&self, key: &str) {
        let (parent, _) = crate::paths::split_key(key);
        if let Ok(fd) = self.open_dir(parent)
            && let Ok(mut dir) = rustix::fs::Dir::read_from(&fd)
        {
            let _ = dir.read();
        }
    }

    /// Removes the empty directory at `key`.
    pub fn remove_dir(&self, key: &str) -> Result<(), Errno> {
        match &self.confined {
            None => {
                let (dir, rel) = self.at(key);
                rustix::fs::unlinkat(dir, rel, AtFlags::REMOVEDIR)
            }
            Some(root) => {
                let (dir, name) = self.walk(root, key, false)?;
                rustix::fs::unlinkat(&dir, name.as_str(), AtFlags::REMOVEDIR)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_resolve_beneath_the_held_root() {
        let root = Root::host();
        assert!(root.fd.is_some(), "/ opens as a path handle");
        assert_eq!(root.at("/a/b").1, "a/b");
        assert_eq!(root.at("/").1, ".");
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("f").to_string_lossy().into_owned();
        std::fs::write(&key, b"x").expect("write");
        let probe = root.probe(&key, true).expect("probe").expect("exists");
        assert!(probe.is_file());
        assert_eq!(probe.size, 1);
        assert!(
            root.probe(&format!("{key}/under"), true)
                .expect("probe")
                .is_none()
        );
        let sub = dir.path().join("d").to_string_lossy().into_owned();
        std::fs::create_dir(&sub).expect("mkdir");
        assert!(root.open_dir(&sub).is_ok());
        root.remove_dir(&sub).expect("rmdir");
        assert!(!std::path::Path::new(&sub).exists());
    }

    /// The confined walk, link by link: what stays beneath the root is followed (relative,
    /// absolute, chained, with `..` that stays in), what leaves it is `EXDEV` however it is
    /// spelled, and a loop is `ELOOP`.
    #[test]
    fn a_confined_root_follows_what_stays_in_and_refuses_what_leaves() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("real");
        let (ws, out) = (base.join("ws"), base.join("out"));
        std::fs::create_dir_all(ws.join("in/deep")).expect("mkdir");
        std::fs::create_dir_all(&out).expect("mkdir");
        std::fs::write(ws.join("in/deep/f"), b"in").expect("write");
        std::fs::write(out.join("f"), b"out").expect("write");
        let w = ws.to_string_lossy().into_owned();
        let links: [(&str, String); 9] = [
            ("rel-in", "in/deep".into()),
            ("abs-in", format!("{w}/in/deep")),
            ("up-in", "in/../in/deep".into()),
            ("chain-in", "rel-in".into()),
            ("rel-out", "../out".into()),
            ("deep-out", "in/../../out".into()),
            ("abs-out", out.to_string_lossy().into_owned()),
            ("abs-up-out", format!("{w}/../out")),
            ("chain-out", "rel-out".into()),
        ];
        for (name, text) in &links {
            symlink(text, ws.join(name)).expect("link");
        }
        symlink("loop-b", ws.join("loop-a")).expect("link");
        symlink("loop-a", ws.join("loop-b")).expect("link");
        let root = Root::confined(&w).expect("confined");
        for name in ["rel-in", "abs-in", "up-in", "chain-in"] {
            let p = root
                .probe(&format!("{w}/{name}/f"), true)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .unwrap_or_else(|| panic!("{name}: nothing there"));
            assert_eq!(p.size, 2, "{name}");
        }
        for name in ["rel-out", "deep-out", "abs-out", "abs-up-out", "chain-out"] {
            assert_eq!(
                root.probe(&format!("{w}/{name}/f"), true)
                    .map(|p| p.is_some()),
                Err(Errno::XDEV),
                "{name}"
            );
            assert_eq!(
                root.open(&format!("{w}/{name}/new"), OFlags::RDONLY)
                    .map(|_| ()),
                Err(Errno::XDEV),
                "{name}"
            );
            // Not followed at the end: the link itself is what is there.
            assert!(
                root.probe(&format!("{w}/{name}"), false)
                    .expect("lstat")
                    .is_some()
            );
        }
        assert_eq!(
            root.probe(&format!("{w}/in/../../out/f"), true)
                .map(|p| p.is_some()),
            Err(Errno::XDEV)
        );
        assert_eq!(
            root.probe(&format!("{}/f", out.to_string_lossy()), true)
                .map(|p| p.is_some()),
            Err(Errno::XDEV),
            "a key outside the root"
        );
        assert_eq!(
            root.probe(&format!("{w}/loop-a/f"), true)
                .map(|p| p.is_some()),
            Err(Errno::LOOP)
        );
    }
}
