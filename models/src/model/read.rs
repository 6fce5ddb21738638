//! Reads and listings: `read_text` (and what `stream_text` must concatenate to), `read_bytes`,
//! `list_dir`.

use super::{Entry, Model, ModelError, Resolved, err, kind_of, size_of, version_of};
use crate::path::Key;
use crate::text::{NotText, decode_for_read};
use crate::tree::Node;
use crate::walk::{key_of, realpath, stat_follow};
use seam::{FsError, FsKind, Verb};

impl Model {
    fn regular_file(&self, r: &Resolved) -> Result<bytes::Bytes, ModelError> {
        let node = stat_follow(&self.tree, &r.key.0)
            .map_err(|_| Self::loop_error(Verb::Read, &r.display))?;
        match node {
            None => Err(err(FsError::not_found(Verb::Read, &r.display))),
            Some(Node::File { bytes, .. }) => Ok(bytes.clone()),
            Some(_) => Err(err(FsError::not_regular_file(Verb::Read, &r.display))),
        }
    }

    /// `read_text(resolve(path))`.
    pub fn read_text(&self, path: &str) -> Result<String, ModelError> {
        let r = self.resolve(path)?;
        self.read_text_target(&r)
    }

    /// `read_text(target)`, and what `stream_text(target)` must concatenate to.
    pub fn read_text_target(&self, r: &Resolved) -> Result<String, ModelError> {
        let bytes = self.regular_file(r)?;
        decode_for_read(&bytes).map_err(|e| {
            err(match e {
                NotText::Binary => FsError::binary(Verb::Read, &r.display),
                NotText::InvalidUtf8 => FsError::invalid_utf8(Verb::Read, &r.display),
            })
        })
    }

    /// `read_bytes(resolve(path), max)`.
    pub fn read_bytes(&self, path: &str, max: u64) -> Result<Vec<u8>, ModelError> {
        let r = self.resolve(path)?;
        self.read_bytes_target(&r, max)
    }

    /// `read_bytes(target, max)`: the cap is inclusive.
    pub fn read_bytes_target(&self, r: &Resolved, max: u64) -> Result<Vec<u8>, ModelError> {
        let bytes = self.regular_file(r)?;
        if bytes.len() as u64 > max {
            return Err(err(FsError::too_large(&r.display, bytes.len() as u64, max)));
        }
        Ok(bytes.to_vec())
    }

    /// `list_dir(resolve(path))`.
    pub fn list_dir(&self, path: &str) -> Result<Vec<Entry>, ModelError> {
        let r = self.resolve(path)?;
        self.list_dir_target(&r)
    }

    /// `list_dir(target)`: children in byte order of their names (the tree's `BTreeMap` of
    /// `String`s orders by bytes).
    pub fn list_dir_target(&self, r: &Resolved) -> Result<Vec<Entry>, ModelError> {
        let node = stat_follow(&self.tree, &r.key.0)
            .map_err(|_| Self::loop_error(Verb::List, &r.display))?;
        let entries = match node {
            None => return Err(err(FsError::not_found(Verb::List, &r.display))),
            Some(Node::Dir { entries, .. }) => entries,
            Some(_) => return Err(err(FsError::not_a_directory(&r.display))),
        };
        let real =
            realpath(&self.tree, &r.key.0).map_err(|_| Self::loop_error(Verb::List, &r.display))?;
        let mut out = Vec::new();
        for name in entries.keys() {
            let mut child = real.clone();
            child.push(name.clone());
            let key = key_of(&self.tree, &child).unwrap_or_else(|_| child.clone());
            let followed = stat_follow(&self.tree, &child).ok().flatten();
            out.push(Entry {
                name: name.clone(),
                kind: followed.map_or(FsKind::Other, kind_of),
                display: format!("{}/{}", r.display, name),
                key: Key(key),
                version: followed.map(version_of),
                size: followed.and_then(size_of),
            });
        }
        Ok(out)
    }
}
