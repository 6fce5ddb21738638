//! The text corpus in `fixtures/corpus/` is exactly the hand-written alphabet generation draws
//! from (plus its three byte-only entries), so a reader of the fixtures sees what the suite uses.

#[test]
fn the_corpus_fixtures_hold_exactly_the_generator_alphabet() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/corpus");
    let mut on_disk: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| std::fs::read(e.expect("entry").path()).expect("read"))
        .collect();
    let mut generated: Vec<Vec<u8>> = seam_conformance::text_corpus()
        .into_iter()
        .map(String::into_bytes)
        .collect();
    generated.extend([
        b"h\xFFi".to_vec(),
        b"ok\n\xC3".to_vec(),
        b"\xEF\xBB\xBF".to_vec(),
    ]);
    on_disk.sort();
    generated.sort();
    assert_eq!(on_disk, generated);
}
