//! Big directories and deep trees. Generated cases keep directories small on purpose (a handful
//! of names collide again and again), so a backend that pages its listings and keeps only the
//! first page, or cuts long names or deep paths, would pass them all. This property builds what
//! an agent meets in a real repository — a directory of 3,000 entries whose names sort
//! differently as bytes and as numbers, a directory of 200 names of 193 bytes, a file 64
//! directories deep — through the world, and checks the listings whole, in byte order, each
//! entry with its kind and size, and the last entry of each statted and read.

use super::{Applicability, Context, Property, Run};
use crate::failure::{Failure, FailureKind, fail};
use crate::rules::Rule;
use seam::{FileSystem, FsDirEntry, FsKind, ResolveOptions, Signal};
use seam_model::WorldEffect;

/// Files in the big directory, beside [`BIG_DIRS`] directories.
const BIG_FILES: usize = 3_000;
/// Directories in the big directory.
const BIG_DIRS: usize = 30;
/// Entries with long names, and how long their names are.
const LONG_NAMES: usize = 200;
const LONG_NAME_BYTES: usize = 193;
/// Directories above the deep file.
const DEPTH: usize = 64;

/// `big-directories`.
pub struct BigDirectories;

impl Property for BigDirectories {
    fn name(&self) -> &'static str {
        "big-directories"
    }

    fn summary(&self) -> &'static str {
        "a directory of 3,030 entries and one of 200 long names list whole, in byte order, with kinds and sizes; the last entries and a file 64 directories deep are statted and read"
    }

    fn applies(&self, _cx: &Context) -> Applicability {
        Applicability::Runs
    }

    fn core(&self) -> bool {
        false
    }

    fn run(&self, cx: &Context, out: &mut Run) -> Result<(), Failure> {
        let rt = cx.runtime()?;
        let subject = cx
            .factory
            .make(&cx.options())
            .map_err(|e| fail(FailureKind::Setup, e))?;
        let (fs, world) = (subject.fs.clone(), subject.world.clone());
        let apply = |e: WorldEffect| {
            world
                .apply(&e)
                .map_err(|err| fail(FailureKind::Setup, format!("world: {e:?}: {err}")))
        };
        let root = world.root_display();
        let check = Checker {
            fs: fs.as_ref(),
            root: &root,
            rt: &rt,
        };

        // The big directory: files `f0`…`f2999` (as bytes `f10` comes before `f2`) and
        // directories `g0`…`g29`.
        let mut big: Vec<Made> = (0..BIG_FILES)
            .map(|i| Made::file(format!("f{i}")))
            .chain((0..BIG_DIRS).map(|i| Made::dir(format!("g{i}"))))
            .collect();
        apply(WorldEffect::CreateDir { path: "big".into() })?;
        for m in &big {
            apply(m.effect("big"))?;
        }
        big.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        check.listing("big", &big, out)?;
        out.stats.rule(Rule::ListBig);

        // Long names: 200 of 193 bytes, differing only at their end.
        let mut long: Vec<Made> = (0..LONG_NAMES)
            .map(|i| Made::file(format!("{}{i:03}", "n".repeat(LONG_NAME_BYTES - 3))))
            .collect();
        apply(WorldEffect::CreateDir {
            path: "long".into(),
        })?;
        for m in &long {
            apply(m.effect("long"))?;
        }
        long.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        check.listing("long", &long, out)?;
        out.stats.rule(Rule::ListLongNames);

        // A file 64 directories deep (its parents made by the world on the way).
        let deep_dir = (0..DEPTH)
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join("/");
        let leaf = Made::file("leaf".into());
        apply(leaf.effect(&deep_dir))?;
        check.listing(&deep_dir, std::slice::from_ref(&leaf), out)?;
        out.stats.rule(Rule::ResolveDeep);
        Ok(())
    }
}

/// An entry the world made, and what a listing must show of it.
struct Made {
    name: String,
    /// Its content, for a file.
    content: Option<String>,
}

impl Made {
    fn file(name: String) -> Self {
        let content = format!("{name}\n");
        Self {
            name,
            content: Some(content),
        }
    }

    fn dir(name: String) -> Self {
        Self {
            name,
            content: None,
        }
    }

    fn effect(&self, parent: &str) -> WorldEffect {
        let path = format!("{parent}/{}", self.name);
        match &self.content {
            Some(c) => WorldEffect::CreateFile {
                path,
                bytes: c.clone().into_bytes().into(),
                mode: 0o644,
            },
            None => WorldEffect::CreateDir { path },
        }
    }
}

/// Checks listings and entries through the provider.
struct Checker<'a> {
    fs: &'a dyn FileSystem,
    root: &'a str,
    rt: &'a tokio::runtime::Runtime,
}

impl Checker<'_> {
    /// `dir` lists exactly `expected` (in byte order), and the first and last of them are
    /// statted and, if files, read through the listed path.
    fn listing(&self, dir: &str, expected: &[Made], out: &mut Run) -> Result<(), Failure> {
        let none = Signal::none();
        let opts = ResolveOptions {
            cwd: Some(self.root),
        };
        let outcome = |m: String| fail(FailureKind::Outcome, m);
        let listed: Vec<FsDirEntry> = self
            .rt
            .block_on(async {
                let t = self.fs.resolve(dir, opts, &none).await?;
                self.fs.list_dir(&t, &none).await
            })
            .map_err(|e| outcome(format!("list_dir {dir:?}: {} {:?}", e.code(), e.message())))?;
        out.stats.check();
        let shown = |n: &str| crate::excerpt::excerpt(n);
        if listed.len() != expected.len() {
            let missing = expected
                .iter()
                .find(|m| !listed.iter().any(|l| l.name == m.name))
                .map_or_else(String::new, |m| {
                    format!("; the first missing, in byte order: {:?}", shown(&m.name))
                });
            return Err(fail(
                FailureKind::ListingLaw,
                format!(
                    "list_dir {dir:?} shows {} entries; the directory has {}{missing}",
                    listed.len(),
                    expected.len()
                ),
            ));
        }
        for (i, (l, m)) in listed.iter().zip(expected).enumerate() {
            let kind = if m.content.is_some() {
                FsKind::File
            } else {
                FsKind::Directory
            };
            let size = m.content.as_ref().map(|c| c.len() as u64);
            if l.name != m.name || l.kind != kind || l.size != size {
                return Err(fail(
                    FailureKind::ListingLaw,
                    format!(
                        "list_dir {dir:?}: entry {i} is {:?} ({:?}, size {:?}); in byte order it is {:?} ({kind:?}, size {size:?})",
                        shown(&l.name),
                        l.kind,
                        l.size,
                        shown(&m.name)
                    ),
                ));
            }
        }
        let ends = [expected.first(), expected.last()];
        for m in ends.into_iter().flatten() {
            let path = format!("{dir}/{}", m.name);
            let got = self.rt.block_on(async {
                let t = self.fs.resolve(&path, opts, &none).await?;
                let info = self.fs.stat(&t, &none).await?;
                let text = match &m.content {
                    Some(_) => Some(self.fs.read_text(&t, &none).await?),
                    None => None,
                };
                Ok::<_, seam::FsError>((info, text))
            });
            out.stats.check();
            let (info, text) = got.map_err(|e| {
                outcome(format!(
                    "the listed {:?}: {} {:?}",
                    shown(&path),
                    e.code(),
                    e.message()
                ))
            })?;
            let kind = info.as_ref().map(|i| i.kind);
            let want = if m.content.is_some() {
                FsKind::File
            } else {
                FsKind::Directory
            };
            if kind != Some(want) || text != m.content {
                return Err(outcome(format!(
                    "the listed {:?} stats as {kind:?} and reads {:?}; it is {want:?} holding {:?}",
                    shown(&path),
                    text,
                    m.content
                )));
            }
        }
        Ok(())
    }
}
