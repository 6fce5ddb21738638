//! The monitor's limits and giving up, on made-up calls.

use super::*;

fn timing() -> Timing {
    Timing {
        hang_after: Duration::from_secs(30),
        hang_scale: 10,
        start_after: Duration::from_secs(60),
        ..Timing::default()
    }
}

/// The hang limit is the floor until an operation is measured, then ten times its slowest
/// call; a start has its own budget; a hang being shrunk gets a tenth of the floor, at
/// least a second; what one operation measured leaves the others alone.
#[test]
fn a_hang_limit_grows_with_the_slowest_call_of_its_operation() {
    let m = Monitor::new(timing());
    let stat = CallKind::Op("stat");
    assert_eq!(m.limit(stat), Duration::from_secs(30));
    assert_eq!(m.limit(CallKind::Start), Duration::from_secs(60));
    lock(&m.clock.slowest).insert("stat", Duration::from_secs(2));
    assert_eq!(
        m.limit(stat),
        Duration::from_secs(30),
        "10 × 2 s is under the floor"
    );
    lock(&m.clock.slowest).insert("stat", Duration::from_secs(5));
    assert_eq!(m.limit(stat), Duration::from_secs(50));
    assert_eq!(m.limit(CallKind::Op("read_text")), Duration::from_secs(30));
    let case = m.for_case(true);
    assert_eq!(
        case.limit(CallKind::Op("read_text")),
        Duration::from_secs(3)
    );
    assert_eq!(
        case.limit(stat),
        Duration::from_secs(50),
        "the case shares the clock"
    );
    let small = Monitor::new(Timing {
        hang_after: Duration::from_secs(5),
        ..timing()
    })
    .for_case(true);
    assert_eq!(small.limit(CallKind::Op("stat")), Duration::from_secs(1));
}

/// A call that returned is measured; one the suite held up, given up or unwound is not.
#[test]
fn only_a_call_that_returned_by_itself_is_measured() {
    let m = Monitor::new(timing());
    let slowest = |m: &Monitor| lock(&m.clock.slowest).get("stat").copied();
    m.enter("stat a".into(), CallKind::Op("stat")).returned();
    assert!(slowest(&m).is_some());
    let m = Monitor::new(timing());
    drop(m.enter("stat a".into(), CallKind::Op("stat")));
    assert_eq!(slowest(&m), None, "given up or unwound");
    let guard = m.enter("stat a".into(), CallKind::Op("stat"));
    let now = Instant::now();
    m.paused(now, now + Duration::from_millis(1));
    guard.returned();
    assert_eq!(slowest(&m), None, "held up by the suite");
    assert!(m.slowness().is_none());
}

/// A call is overdue only past its own limit and the grace; the first hang given up on is
/// the one reported.
#[test]
fn a_call_is_overdue_past_its_limit_and_the_first_hang_is_kept() {
    let m = Monitor::new(timing());
    let _in_flight = m.enter("stat a".into(), CallKind::Op("stat"));
    assert!(m.overdue(Duration::ZERO).is_none());
    m.gave_up(
        "stat a".into(),
        CallKind::Op("stat"),
        Duration::from_secs(30),
    );
    m.gave_up(
        "stat b".into(),
        CallKind::Op("stat"),
        Duration::from_secs(30),
    );
    let hang = m.take_hang().expect("a hang");
    assert_eq!(hang.what, "stat a");
    assert!(!hang.start && !hang.lowered);
    assert!(m.take_hang().is_none());
}
