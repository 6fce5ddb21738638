//! Reading the world back after every step: every entry, its bytes, kind and mode, compared
//! with the model — nothing missing, nothing extra (staging left behind, a stray write) — and
//! then the rule-based laws of the step, against the world as it was before and after.

use super::Harness;
use crate::failure::{Check, FailureKind, fail};
use seam_model::SnapEntry;

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
        for (path, a) in act {
            self.stats.check();
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
        Ok(())
    }
}
