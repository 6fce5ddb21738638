//! Parent directories: a write creates the missing ones on the way to its target, and removes
//! them again if it does not commit ("no trace" includes directories). A component that exists
//! but is not a directory — a file, or a link (dangling or not) that we would have to create
//! through — is `FS_NOT_FOUND`.

use crate::errors::os;
use crate::root::{Root, dir_flags};
use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use seam::{FsError, Verb};

fn not_a_dir_parent(verb: Verb, display: &str) -> FsError {
    FsError::parent_not_directory(verb, display)
}

/// Directories a mutation created on the way to its target; removed again on drop unless kept.
pub(crate) struct CreatedDirs<'r> {
    root: &'r Root,
    paths: Vec<String>,
    /// Descriptors of the directories that gained an entry, for fsync.
    gained: Vec<OwnedFd>,
    keep: bool,
}

impl CreatedDirs<'_> {
    pub fn keep(&mut self) {
        self.keep = true;
    }

    pub fn sync(&self) -> Result<(), Errno> {
        for fd in &self.gained {
            rustix::fs::fsync(fd)?;
        }
        Ok(())
    }
}

impl Drop for CreatedDirs<'_> {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for p in self.paths.iter().rev() {
            let _ = self.root.remove_dir(p);
        }
    }
}

/// Opens `parent` (an absolute path), creating missing directories (mode 0777 less the umask).
/// A component that exists but is not a directory — a file, or a link, dangling or not, that we
/// would have to create through — is `FS_NOT_FOUND`.
pub(crate) fn ensure_parent<'r>(
    root: &'r Root,
    parent: &str,
    verb: Verb,
    display: &str,
) -> Result<(OwnedFd, CreatedDirs<'r>), FsError> {
    let mut created = CreatedDirs {
        root,
        paths: Vec::new(),
        gained: Vec::new(),
        keep: false,
    };
    match root.open_dir(parent) {
        Ok(fd) => return Ok((fd, created)),
        Err(Errno::NOENT) => {}
        Err(Errno::NOTDIR) => return Err(not_a_dir_parent(verb, display)),
        Err(e) => return Err(os(e, verb, display)),
    }
    let comps: Vec<&str> = parent.split('/').filter(|c| !c.is_empty()).collect();
    let mut base = None;
    for i in (0..comps.len()).rev() {
        let prefix = format!("/{}", comps[..i].join("/"));
        match root.open_dir(&prefix) {
            Ok(fd) => {
                base = Some((i, fd, prefix));
                break;
            }
            Err(Errno::NOENT) => continue,
            Err(Errno::NOTDIR) => return Err(not_a_dir_parent(verb, display)),
            Err(e) => return Err(os(e, verb, display)),
        }
    }
    let Some((start, mut fd, mut path)) = base else {
        return Err(FsError::io(verb, display, "no existing ancestor"));
    };
    for comp in &comps[start..] {
        match rustix::fs::mkdirat(&fd, *comp, Mode::from_raw_mode(0o777)) {
            Ok(()) => {
                if !path.ends_with('/') {
                    path.push('/');
                }
                path.push_str(comp);
                created.paths.push(path.clone());
            }
            Err(Errno::EXIST) => {
                if !path.ends_with('/') {
                    path.push('/');
                }
                path.push_str(comp);
            }
            Err(e) => return Err(os(e, verb, display)),
        }
        let next =
            match rustix::fs::openat(&fd, *comp, dir_flags() | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::LOOP | Errno::NOTDIR) => return Err(not_a_dir_parent(verb, display)),
                Err(e) => return Err(os(e, verb, display)),
            };
        created.gained.push(fd);
        fd = next;
    }
    Ok((fd, created))
}
