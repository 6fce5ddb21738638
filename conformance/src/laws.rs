//! The version laws and key identity, checked across every observation of a run.
//!
//! Tokens and keys are opaque, so the suite never parses them: it maps each one to what the model
//! says it stands for and demands the mapping stay consistent.
//!
//! * Files, links, other objects: equal tokens iff no change between — a model version maps to
//!   exactly one token, and a token, once seen, never stands for another model version ("never
//!   reused after a change").
//! * Directories: a changed set of entries must change the token; a directory no mutation touched
//!   must keep it. (Whether an in-place rewrite of a child touches its directory is up to the
//!   backend.)
//! * Keys: two spellings share a key iff the model says they name one object.

use seam_model::{Key, Version};
use std::collections::HashMap;

/// Consistency of tokens and keys across a run.
#[derive(Clone, Debug, Default)]
pub struct Laws {
    token_of_object: HashMap<u64, String>,
    object_of_token: HashMap<String, u64>,
    dir_of_token: HashMap<String, u64>,
    dir_seen: HashMap<u64, Vec<(u64, u64, String)>>,
    key_of_model: HashMap<Key, String>,
    model_of_key: HashMap<String, Key>,
}

impl Laws {
    /// Records that `token` was observed for model version `v`.
    pub fn observe(&mut self, v: &Version, token: &str) -> Result<(), String> {
        match *v {
            Version::Object { n } => {
                if let Some(dir) = self.dir_of_token.get(token) {
                    return Err(format!(
                        "version {token:?} was issued to directory #{dir} and now to a file"
                    ));
                }
                if let Some(m) = self.object_of_token.get(token)
                    && *m != n
                {
                    return Err(format!(
                        "version {token:?} was reused: it stood for change #{m} and now for change #{n}, with a change between"
                    ));
                }
                if let Some(t) = self.token_of_object.get(&n)
                    && t != token
                {
                    return Err(format!(
                        "the version changed from {t:?} to {token:?} although nothing changed"
                    ));
                }
                self.token_of_object.insert(n, token.to_string());
                self.object_of_token.insert(token.to_string(), n);
            }
            Version::Dir { id, entries, touch } => {
                if self.object_of_token.contains_key(token) {
                    return Err(format!(
                        "version {token:?} was issued to a file and now to directory #{id}"
                    ));
                }
                if let Some(other) = self.dir_of_token.get(token)
                    && *other != id
                {
                    return Err(format!(
                        "version {token:?} was issued to directory #{other} and now to directory #{id}"
                    ));
                }
                let seen = self.dir_seen.entry(id).or_default();
                for (e, t, tok) in seen.iter() {
                    if *e != entries && tok == token {
                        return Err(format!(
                            "directory #{id} gained or lost entries but kept version {token:?}"
                        ));
                    }
                    if *t == touch && tok != token {
                        return Err(format!(
                            "directory #{id} changed version from {tok:?} to {token:?} although nothing touched it"
                        ));
                    }
                }
                seen.push((entries, touch, token.to_string()));
                self.dir_of_token.insert(token.to_string(), id);
            }
        }
        Ok(())
    }

    /// Records that the provider returned `key` where the model expects `model`.
    pub fn key(&mut self, model: &Key, key: &str) -> Result<(), String> {
        if let Some(k) = self.key_of_model.get(model)
            && k != key
        {
            return Err(format!(
                "one object got two keys: {k:?} and {key:?} (model /{})",
                model.0.join("/")
            ));
        }
        if let Some(m) = self.model_of_key.get(key)
            && m != model
        {
            return Err(format!(
                "key {key:?} names two objects: /{} and /{}",
                m.0.join("/"),
                model.0.join("/")
            ));
        }
        self.key_of_model.insert(model.clone(), key.to_string());
        self.model_of_key.insert(key.to_string(), model.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_may_not_survive_a_change_nor_change_without_one() {
        let mut l = Laws::default();
        l.observe(&Version::Object { n: 1 }, "t1").expect("first");
        l.observe(&Version::Object { n: 1 }, "t1").expect("same");
        assert!(l.observe(&Version::Object { n: 2 }, "t1").is_err(), "reuse");
        assert!(
            l.observe(&Version::Object { n: 1 }, "t9").is_err(),
            "spurious change"
        );
    }

    #[test]
    fn directories_follow_the_weaker_law() {
        let mut l = Laws::default();
        let v = |entries, touch| Version::Dir {
            id: 5,
            entries,
            touch,
        };
        l.observe(&v(1, 1), "d1").expect("first");
        l.observe(&v(1, 2), "d1").expect("touched may keep");
        l.observe(&v(1, 3), "d2").expect("touched may change");
        assert!(
            l.observe(&v(4, 4), "d2").is_err(),
            "entries changed, token kept"
        );
        assert!(l.observe(&v(1, 3), "d3").is_err(), "untouched but changed");
    }

    #[test]
    fn keys_are_a_bijection() {
        let mut l = Laws::default();
        let a = Key(vec!["a".into()]);
        let b = Key(vec!["b".into()]);
        l.key(&a, "/r/a").expect("first");
        assert!(l.key(&a, "/r/x").is_err());
        assert!(l.key(&b, "/r/a").is_err());
    }
}
