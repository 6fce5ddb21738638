//! The model's literal edit and the contract's are two witnesses written apart (the model walks
//! the file beside its view, the contract keeps a view and the positions it dropped). On texts
//! built from the characters that matter — `\r`, `\n`, multi-byte characters, a BOM — they must
//! agree on every edit: the same bytes, the same `before` and `after`, or the same refusal.
//! The model's edit and write without their texts (the generator's) must leave what the ones
//! with them do.

use proptest::prelude::*;
use seam::edit::{EditFailure, literal_edit};
use seam::{EditRequest, FsErrorCode};
use seam_model::{EditError, Interference, Model, ModelConfig, WorldOp, apply_literal_edit};

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "\n", "\r", "\r\n", "é", "🦀", " ", "ab"])
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..max).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn the_model_and_the_contract_edit_alike(
        bom in any::<bool>(),
        file in text(24),
        old in text(4),
        new in text(3),
        all in any::<bool>(),
    ) {
        let mut bytes = if bom { "\u{feff}".as_bytes().to_vec() } else { Vec::new() };
        bytes.extend_from_slice(file.as_bytes());
        let model = apply_literal_edit(&bytes, &old, &new, all);
        let request = EditRequest { old_string: old.clone(), new_string: new.clone(), replace_all: all };
        let contract = literal_edit(bytes.clone(), &request);
        match (model, contract) {
            (Ok(m), Ok(c)) => {
                prop_assert_eq!(&m.bytes, &c.bytes());
                let (before, after) = c.into_before_after();
                prop_assert_eq!(m.before, before);
                prop_assert_eq!(m.after, after);
            }
            (Err(EditError::EmptyOld), Err(EditFailure::EmptyOld))
            | (Err(EditError::NotFound), Err(EditFailure::NotFound)) => {}
            (Err(EditError::Ambiguous(a)), Err(EditFailure::Ambiguous(b))) => prop_assert_eq!(a, b),
            (m, c) => prop_assert!(false, "model {:?}, contract {:?}", m.map(|r| r.bytes), c.map(|e| e.bytes())),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    /// `edit_text_untold` is `edit_text` but for the texts: the same version or the same
    /// refusal (an ambiguous edit's count only up to two), and the same model after it — every
    /// file, link and directory with its versions, and the version counter (the whole model, as
    /// `Debug` shows it) — whether the edit is aimed at a file, a link to it, a directory, a
    /// dangling link or nothing.
    #[test]
    fn an_edit_untold_changes_what_an_edit_does(
        bom in any::<bool>(),
        file in text(24),
        old in text(4),
        new in text(3),
        all in any::<bool>(),
        at in prop::sample::select(vec!["/r/d/f", "/r/l", "/r/d", "/r/dangling", "/r/missing"]),
    ) {
        let mut told = Model::new(ModelConfig::new("/r"));
        let content = if bom { format!("\u{feff}{file}") } else { file };
        prop_assert!(told.create_dir("/r/d", false, false).is_ok());
        prop_assert!(told.write_text("/r/d/f", &content, None, &Interference::None).outcome.is_ok());
        for (path, target) in [("l", "d/f"), ("dangling", "nowhere")] {
            let link = WorldOp::Symlink { path: path.into(), target: target.into() };
            prop_assert!(told.world(&link).is_some());
        }
        let mut untold = told.clone();
        let a = told.edit_text(at, &old, &new, all, None, &Interference::None);
        let b = untold.edit_text_untold(at, &old, &new, all);
        match (a, b) {
            (Ok((va, _, _)), Ok((vb, before, after))) => {
                prop_assert_eq!(va, vb);
                prop_assert!(before.is_empty() && after.is_empty(), "no texts");
            }
            (Err(ea), Err(eb)) if ea.code == FsErrorCode::AmbiguousEdit => {
                // Counted only up to two: the same refusal, saying 2 for two or more.
                let rest = ea.message.split_once(" times").map(|(_, r)| r.to_string());
                prop_assert_eq!(eb.code, ea.code);
                prop_assert_eq!(eb.message, format!("old_string matched 2 times{}", rest.unwrap_or_default()));
            }
            (Err(ea), Err(eb)) => prop_assert_eq!(format!("{ea:?}"), format!("{eb:?}")),
            (a, b) => prop_assert!(false, "told {:?}, untold {:?}", a.map(|o| o.0), b.map(|o| o.0)),
        }
        prop_assert_eq!(format!("{told:?}"), format!("{untold:?}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    /// `write_text_untold` is `write_text` but for the texts: the same operation and version or
    /// the same refusal, and the same model after it (as `Debug` shows it), whether the write is
    /// aimed at a file (text, binary, or over the diff basis' limit), a link to it, a directory,
    /// a dangling link, nothing, below a missing directory, below a file, or a link to itself
    /// (both refused).
    #[test]
    fn a_write_untold_changes_what_a_write_does(
        bom in any::<bool>(),
        file in text(24),
        content in text(24),
        was in prop::sample::select(vec!["text", "binary", "large"]),
        at in prop::sample::select(vec![
            "/r/d/f", "/r/l", "/r/d", "/r/dangling", "/r/missing", "/r/x/y/z", "/r/d/f/x", "/r/loop",
        ]),
    ) {
        let mut config = ModelConfig::new("/r");
        config.diff_basis_max_bytes = 16;
        let mut told = Model::new(config);
        let mut existing = if bom { format!("\u{feff}{file}") } else { file };
        match was {
            "binary" => existing.push('\0'),
            "large" => existing.push_str(&"x".repeat(16)),
            _ => {}
        }
        prop_assert!(told.create_dir("/r/d", false, false).is_ok());
        prop_assert!(told.write_text("/r/d/f", &existing, None, &Interference::None).outcome.is_ok());
        for (path, target) in [("l", "d/f"), ("dangling", "nowhere"), ("loop", "loop")] {
            let link = WorldOp::Symlink { path: path.into(), target: target.into() };
            prop_assert!(told.world(&link).is_some());
        }
        let mut untold = told.clone();
        let a = told.write_text(at, &content, None, &Interference::None).outcome;
        let b = untold.write_text_untold(at, &content);
        match (a, b) {
            (Ok(wa), Ok(wb)) => {
                prop_assert_eq!((wa.operation, wa.version), (wb.operation, wb.version));
                prop_assert!(wb.before.is_none() && wb.after.is_empty(), "no texts");
            }
            (Err(ea), Err(eb)) => prop_assert_eq!(format!("{ea:?}"), format!("{eb:?}")),
            (a, b) => prop_assert!(false, "told {:?}, untold {:?}", a.map(|w| w.version), b.map(|w| w.version)),
        }
        prop_assert_eq!(format!("{told:?}"), format!("{untold:?}"));
    }
}
