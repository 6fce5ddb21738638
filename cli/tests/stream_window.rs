//! The gate reads a long stream slowly only where a window is kept.
//!
//! A backend over the wire grants its reader a window of chunks in flight; the gate stops after
//! the first chunk of every stream over 128 KiB, so that one sending past its window has the
//! time to (and is caught: `fixtures/adapters/broken/ignores_credit.py`). A provider read in
//! the suite's own process has no window, and a pause there only idles: its factory says so
//! (`Factory::streams_through_a_window`), and its long streams are read straight on.
//!
//! Here the in-memory provider's streams tell how their second chunk was asked for (see
//! `support::StreamLog`: no clock is read, so a reader that merely yielded would look like one
//! that paused; that the pause lasts is `flow_control.rs`'s to show), with the factory's own
//! answer and with a window claimed for it, beside a short stream that is never read slowly —
//! run alone and replayed the way `seam replay` and every property run a case (through the
//! watching wrapper). And every provider `seam check` can be pointed at says what it should:
//! the in-process ones no window, the remote one and every server by address a window, through
//! each wrapper the CLI puts around a factory.

mod support;

use seam_conformance::{
    CaseDurability, CaseOptions, DEFAULT_CONFIGURATION, Factory, HarnessConfig, Op, ReplayConfig,
    Step, TRACE_FORMAT, Trace, WriteGuard, replay, run_steps,
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

/// The same, replayed as a trace: the case runs the way every property runs one (a watched
/// factory around the hooked one, on a thread of its own), and the answer still reaches it.
#[test]
fn a_replayed_trace_reads_as_its_factory_says() {
    for (window, expected) in [(None, (0, 1)), (Some(true), (1, 0))] {
        let log = Arc::new(StreamLog::default());
        let mut factory = HookedFactory::new(Arc::new(MemoryFactory), Arc::new(|_, _| Before::Go));
        factory.streams = Some(log.clone());
        factory.window = window;
        let trace = Trace {
            seam_trace: TRACE_FORMAT,
            provider: "memory".into(),
            property: "sequences".into(),
            seed: 7,
            configuration: None,
            steps: write_and_stream("big", 200 * 1024).to_vec(),
            failure: None,
        };
        let outcome =
            replay(Arc::new(factory), &trace, &ReplayConfig::default()).expect("replayed");
        assert_eq!(outcome.records.len(), 2);
        assert!(outcome.departure().is_none(), "{:?}", outcome.records);
        assert_eq!(
            (
                log.paused.load(Ordering::SeqCst),
                log.straight.load(Ordering::SeqCst)
            ),
            expected,
            "window {window:?}, as (paused, straight)"
        );
    }
}

/// Every provider `seam check --provider` takes says whether its streams come through a
/// window, and each wrapper the CLI puts around a factory (a reference for `--against` and
/// `seam replay`, a broken variant for the self-test) passes the answer on.
#[test]
fn every_provider_the_cli_runs_says_whether_its_streams_come_through_a_window() {
    for name in seam_cli::table::shipped_names() {
        let factory = seam_cli::table::factory(name).expect("a shipped factory");
        let expected = name == "remote";
        assert_eq!(factory.streams_through_a_window(), expected, "{name}");
        let reference = seam_cli::providers::Reference::around(factory.clone());
        assert_eq!(
            reference.streams_through_a_window(),
            expected,
            "{name} as a reference"
        );
        let broken = seam_faults::FaultyFactory::new(factory, seam_faults::Fault::ALL[0]);
        assert_eq!(
            broken.streams_through_a_window(),
            expected,
            "{name}, broken"
        );
    }
    // A server by address is reached over the wire (nothing is started or connected to here).
    for address in [
        "exec:python3 adapter.py",
        "unix:/nonexistent/seam.sock",
        "tcp://127.0.0.1:9",
    ] {
        let factory = seam_cli::table::factory(address).expect("a server's factory");
        assert!(factory.streams_through_a_window(), "{address}");
    }
}
