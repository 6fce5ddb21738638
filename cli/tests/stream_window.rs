//! The gate reads a long stream slowly only where a window is kept.
//!
//! A backend over the wire grants its reader a window of chunks in flight; the gate stops after
//! the first chunk of every stream over 128 KiB, so that one sending past its window has the
//! time to (and is caught: `fixtures/adapters/broken/ignores_credit.py`). A provider read in
//! the suite's own process has no window, and a pause there only idles: its factory says so
//! (`Factory::streams_through_a_window`), and its long streams are read straight on.
//!
//! Here the in-memory provider's streams tell how their second chunk was asked for (see
//! `support::StreamLog`: no clock is read), with the factory's own answer and with a window
//! claimed for it, beside a short stream that is never read slowly.

mod support;

use seam_conformance::{
    CaseDurability, CaseOptions, DEFAULT_CONFIGURATION, Factory, HarnessConfig, Op, Step,
    WriteGuard, run_steps,
};
use seam_memory_testkit::MemoryFactory;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::{Before, HookedFactory, StreamLog};

/// A write of `len` bytes of text to `path` and a stream of it.
fn write_and_stream(path: &str, len: usize) -> [Step; 2] {
    let text: String = (0..len)
        .map(|i| if i % 64 == 63 { '\n' } else { 'q' })
        .collect();
    [
        Step::plain(Op::Write {
            path: path.into(),
            content: text.into(),
            guard: WriteGuard::None,
        }),
        Step::plain(Op::StreamText { path: path.into() }),
    ]
}

/// Runs a 200 KiB stream and a 100 KiB one against the memory provider, with `window` claimed
/// for it (`None`: the factory's own answer); returns the long and the short stream's logs as
/// (paused, straight), after checking every step passed.
fn read(window: Option<bool>) -> ((usize, usize), (usize, usize)) {
    let run = |len: usize| {
        let log = Arc::new(StreamLog::default());
        let mut factory = HookedFactory::new(Arc::new(MemoryFactory), Arc::new(|_, _| Before::Go));
        factory.streams = Some(log.clone());
        factory.window = window;
        let rt = seam_conformance::runtime().expect("a runtime");
        let options = CaseOptions::new(
            7,
            CaseDurability::Relaxed,
            DEFAULT_CONFIGURATION.to_string(),
        );
        let steps = write_and_stream("big", len);
        let (records, _) = run_steps(&factory, &rt, &options, HarnessConfig::default(), &steps)
            .expect("the case ran");
        assert_eq!(records.len(), 2);
        for r in &records {
            assert!(r.failure.is_none(), "{}: {:?}", r.description, r.failure);
        }
        (
            log.paused.load(Ordering::SeqCst),
            log.straight.load(Ordering::SeqCst),
        )
    };
    (run(200 * 1024), run(100 * 1024))
}

#[test]
fn the_memory_provider_keeps_no_window_and_its_long_streams_are_read_straight_on() {
    assert!(!MemoryFactory.streams_through_a_window());
    let (long, short) = read(None);
    assert_eq!(long, (0, 1), "the long stream, as (paused, straight)");
    assert_eq!(short, (0, 1), "the short stream, as (paused, straight)");
}

#[test]
fn with_a_window_a_long_stream_is_read_slowly_and_a_short_one_is_not() {
    let (long, short) = read(Some(true));
    assert_eq!(long, (1, 0), "the long stream, as (paused, straight)");
    assert_eq!(short, (0, 1), "the short stream, as (paused, straight)");
}

/// A factory that says nothing keeps the gate's caution: its streams are read slowly.
#[test]
fn a_factory_that_says_nothing_is_taken_to_keep_a_window() {
    struct Silent;
    impl Factory for Silent {
        fn name(&self) -> String {
            "silent".into()
        }
        fn make(&self, options: &CaseOptions) -> Result<seam_conformance::Subject, String> {
            MemoryFactory.make(options)
        }
    }
    assert!(Silent.streams_through_a_window());
    let log = Arc::new(StreamLog::default());
    let mut factory = HookedFactory::new(Arc::new(Silent), Arc::new(|_, _| Before::Go));
    factory.streams = Some(log.clone());
    let rt = seam_conformance::runtime().expect("a runtime");
    let options = CaseOptions::new(
        7,
        CaseDurability::Relaxed,
        DEFAULT_CONFIGURATION.to_string(),
    );
    let (records, _) = run_steps(
        &factory,
        &rt,
        &options,
        HarnessConfig::default(),
        &write_and_stream("big", 200 * 1024),
    )
    .expect("the case ran");
    assert!(records.iter().all(|r| r.failure.is_none()), "{records:?}");
    assert_eq!(
        (
            log.paused.load(Ordering::SeqCst),
            log.straight.load(Ordering::SeqCst)
        ),
        (1, 0)
    );
}
