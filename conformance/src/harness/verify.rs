//! Reading the world back after every step: every entry, its bytes, kind and mode, compared
//! with the model — nothing missing, nothing extra (staging left behind, a stray write) — and
//! then the rule-based laws of the step, against the world as it was before and after.

use super::Harness;
use crate::failure::{Check, FailureKind, fail};
use bytes::Bytes;
use seam_model::SnapEntry;
use std::collections::HashSet;

/// The pairs of buffers — the model's file and the world's — that the last read-back found
/// byte for byte equal, each buffer held so that its memory cannot be freed and used again.
/// A snapshot's bytes never change once taken (the harness keeps one as the next step's
/// world before, [`crate::World::snapshot`]), so the very same two buffers again are the same
/// bytes again, and are not compared again: a world that hands out the buffers it keeps (the
/// in-memory store) is compared once per change, not once per step. A world that reads its
/// files afresh gives new buffers every time, and every file of it is compared every time.
#[derive(Default)]
pub(super) struct KnownEqual(Vec<(Bytes, Bytes)>);

/// Where a buffer is and how long: with the buffer held, no other buffer is there.
pub(super) fn place(b: &Bytes) -> (usize, usize) {
    (b.as_ptr() as usize, b.len())
}

/// The places of the pairs a [`KnownEqual`] holds, for one read-back's lookups.
type Places = HashSet<((usize, usize), (usize, usize))>;

impl KnownEqual {
    fn places(&self) -> Places {
        self.0.iter().map(|(e, a)| (place(e), place(a))).collect()
    }
}

/// Whether the model's buffer and the world's hold the same bytes: vouched for when they are
/// the very pair found equal last time (`known`, its buffers still held), compared otherwise.
fn same_bytes(known: &Places, model: &Bytes, world: &Bytes) -> bool {
    known.contains(&(place(model), place(world))) || model == world
}

fn show_entry(e: &SnapEntry) -> String {
    match e {
        SnapEntry::File { bytes, mode } => match mode {
            Some(m) => format!("file {} mode {m:o}", super::show_bytes(bytes)),
            None => format!("file {}", super::show_bytes(bytes)),
        },
        SnapEntry::Dir { mode: Some(m) } => format!("dir mode {m:o}"),
        SnapEntry::Dir { mode: None } => "dir".to_string(),
        SnapEntry::Symlink { target } => format!("symlink -> {target:?}"),
        SnapEntry::Other => "other".to_string(),
    }
}

impl Harness {
    pub(super) fn verify(&mut self) -> Check {
        let expected = self.model.snapshot();
        let actual = self.world.snapshot().map_err(|e| {
            fail(
                FailureKind::Setup,
                format!("cannot read the world back: {e}"),
            )
        })?;
        self.stats.world_checks += 1;
        let perms = self.caps.modes;
        // A backend that does not claim permissions is compared, and shown, without modes
        // (only a failure's entries are copied for that).
        let admits = |e: &SnapEntry, a: &SnapEntry| match (e, a) {
            (SnapEntry::File { bytes: be, .. }, SnapEntry::File { bytes: ba, .. }) if !perms => {
                be == ba
            }
            (SnapEntry::Dir { .. }, SnapEntry::Dir { .. }) if !perms => true,
            _ => e.admits(a),
        };
        let shown = |e: &SnapEntry| {
            if perms { e.clone() } else { e.without_mode() }
        };
        let (exp, act) = (&expected, &actual);
        let known = self.known_equal.places();
        let mut equal = Vec::new();
        for (path, a) in act {
            self.stats.check();
            if let (
                Some(SnapEntry::File {
                    bytes: be,
                    mode: me,
                }),
                SnapEntry::File {
                    bytes: ba,
                    mode: ma,
                },
            ) = (exp.get(path), a)
            {
                let modes_agree = !perms || me.is_none() || ma.is_none() || me == ma;
                if modes_agree && same_bytes(&known, be, ba) {
                    equal.push((be.clone(), ba.clone()));
                    continue;
                }
            }
            match exp.get(path) {
                None => {
                    return Err(fail(
                        FailureKind::Litter,
                        format!(
                            "unexpected entry {path:?} on disk ({}) — temp litter or a stray write",
                            show_entry(&shown(a))
                        ),
                    ));
                }
                Some(e) if !admits(e, a) => {
                    let (a, e) = (&shown(a), &shown(e));
                    let (shown_a, shown_e) = match (a, e) {
                        // Two files: around their first difference when long.
                        (
                            SnapEntry::File {
                                bytes: ba,
                                mode: ma,
                            },
                            SnapEntry::File {
                                bytes: be,
                                mode: me,
                            },
                        ) => {
                            let mode = |m: &Option<u32>| {
                                m.map(|m| format!(" mode {m:o}")).unwrap_or_default()
                            };
                            // Only the mode differs: the bytes once, and no difference in them
                            // to point at.
                            let (ta, te) = if ba == be {
                                (super::show_bytes(ba), "with the same bytes".to_string())
                            } else {
                                super::show_two(ba, be)
                            };
                            (
                                format!("file {ta}{}", mode(ma)),
                                format!("file {te}{}", mode(me)),
                            )
                        }
                        _ => (show_entry(a), show_entry(e)),
                    };
                    return Err(fail(
                        FailureKind::BytesOnDisk,
                        format!("{path:?} on disk is {shown_a}, the model says {shown_e}"),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some((path, e)) = exp.iter().find(|(p, _)| !act.contains_key(*p)) {
            return Err(fail(
                FailureKind::BytesOnDisk,
                format!(
                    "{path:?} is missing on disk; the model says {}",
                    show_entry(&shown(e))
                ),
            ));
        }
        let laws = std::mem::take(&mut self.pending_laws);
        for law in &laws {
            self.stats.check();
            law.check(&self.before, &actual)?;
        }
        self.before = actual;
        self.known_equal = KnownEqual(equal);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{KnownEqual, same_bytes};
    use bytes::Bytes;

    /// Only the very pair found equal is vouched for: a file the model changed while the world
    /// kept its buffer (a write that reported success and stored nothing), one the world
    /// changed under a model that did not, and a shorter view of a known buffer at the same
    /// address are all compared — and found different.
    #[test]
    fn only_the_very_pair_found_equal_is_vouched_for() {
        let (model, world) = (
            Bytes::from(b"one\n".to_vec()),
            Bytes::from(b"one\n".to_vec()),
        );
        let known = KnownEqual(vec![(model.clone(), world.clone())]).places();
        assert!(same_bytes(&known, &model, &world));
        let (model_now, world_now) = (
            Bytes::from(b"two\n".to_vec()),
            Bytes::from(b"two\n".to_vec()),
        );
        assert!(
            !same_bytes(&known, &model_now, &world),
            "the world kept its buffer"
        );
        assert!(
            !same_bytes(&known, &model, &world_now),
            "the model kept its buffer"
        );
        assert!(
            !same_bytes(&known, &model, &world.slice(0..3)),
            "a shorter view, same address"
        );
        assert!(
            !same_bytes(&known, &model.slice(0..3), &world),
            "a shorter view, same address"
        );
        // Equal bytes in other buffers are still equal: compared, not vouched for.
        assert!(same_bytes(&known, &model_now, &world_now));
        assert!(same_bytes(&Default::default(), &model, &world));
    }
}
