//! Drawing and running sequences: seeds, shrinking, the generator thread.

use super::draw::{SequenceStrategy, draw_and_run, generate, sequence_strategy};
use super::*;
use crate::concurrent;
use crate::generate::{GenConfig, GenState, Policies};
use proptest::strategy::{BoxedStrategy, Strategy};
use proptest_state_machine::strategy::Sequential;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

fn strategy() -> SequenceStrategy {
    let gen_config = GenConfig {
        caps: seam::Capabilities::none(),
        fifos: false,
        restore_mtime: true,
        modes: true,
        diff_limit: 1 << 20,
        policies: Policies::None,
    };
    sequence_strategy(gen_config, 12, false)
}

/// A strategy whose every transition panics (the model in it failing).
fn panicking() -> SequenceStrategy {
    Sequential::new(
        (1..=4).into(),
        || proptest::strategy::Just(GenState::new()).boxed(),
        |_, _| true,
        |_| -> BoxedStrategy<Step> { panic!("the model broke while drawing") },
        |state, _| state,
    )
}

fn passing(_: usize, steps: &Arc<[Step]>) -> concurrent::CaseResult {
    let stats = Stats {
        steps: steps.len() as u64,
        ..Stats::default()
    };
    Ok((Vec::new(), stats))
}

/// `f` on a thread of its own, given a minute: `None` when it hangs.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60)).ok()
}

#[test]
fn the_cases_run_are_the_cases_generate_draws_in_its_order() {
    let drawn = generate(&strategy(), 24, 11).expect("drawn");
    let ran = Mutex::new(vec![None; 24]);
    let pre = draw_and_run(
        &strategy(),
        24,
        11,
        &|i, steps| {
            ran.lock().expect("lock")[i] = Some(steps.to_vec());
            passing(i, steps)
        },
        &mut |_| {},
    )
    .expect("ran");
    assert_eq!(pre.len(), 24);
    let ran: Vec<Vec<Step>> = ran
        .into_inner()
        .expect("lock")
        .into_iter()
        .map(|c| c.expect("every case ran"))
        .collect();
    assert_eq!(ran, drawn);
}

#[test]
fn no_case_after_a_failed_one_is_counted() {
    let pre = draw_and_run(
        &strategy(),
        40,
        5,
        &|i, steps| {
            if i == 3 {
                Err(Failure::new(FailureKind::BytesOnDisk, "case 3 departs"))
            } else {
                passing(i, steps)
            }
        },
        &mut |_| {},
    )
    .expect("ran");
    assert_eq!(pre.len(), 4, "cases 0 to 3, the failing one last");
    assert!(concurrent::failed(&pre[3]));
}

/// Drawing that panics is the property's panic, raised where the run was asked for — not a
/// run that waits for ever for a case that will never be drawn.
#[test]
fn a_panic_while_drawing_is_raised_not_waited_for() {
    let outcome = within_a_minute(|| {
        std::panic::catch_unwind(|| {
            draw_and_run(&panicking(), 8, 5, &passing, &mut |_| {}).map(|pre| pre.len())
        })
    })
    .expect("the run ended");
    let payload = outcome.expect_err("the panic came through");
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(text.contains("the model broke while drawing"), "{text}");
}

/// A case's runtime goes to the thread's next case only when the case left no task behind;
/// one that did is dropped with its tasks, as every case's runtime was when each had its own.
#[test]
fn a_runtime_is_kept_for_the_next_case_only_when_no_task_is_left() {
    let kept = || super::KEPT.with(|k| k.borrow().is_some());
    let rt = super::case_runtime().expect("a runtime");
    assert!(!kept());
    // A task that ran to its end leaves nothing behind.
    let done = rt.spawn(async {});
    rt.block_on(done).expect("the task ran");
    super::keep_runtime(rt);
    assert!(kept(), "kept");
    let rt = super::case_runtime().expect("the kept runtime");
    assert!(!kept(), "taken");
    // A task still pending: the runtime is not kept.
    let _left = rt.spawn(std::future::pending::<()>());
    super::keep_runtime(rt);
    assert!(!kept(), "a runtime with a task left behind was kept");
}
