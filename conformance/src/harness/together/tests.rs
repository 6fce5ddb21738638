//! The group checks on made-up calls: orders, overlaps, shapes.

use super::*;
use seam_model::Version;

#[test]
fn permutations_are_every_order_once() {
    let p = permutations(4);
    assert_eq!(p.len(), 24);
    let mut sorted = p.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 24);
    assert_eq!(permutations(2), vec![vec![0, 1], vec![1, 0]]);
}

#[test]
fn a_version_standing_for_two_states_is_refused() {
    let mut v = Versions::default();
    let t = FsVersion::new("t");
    let one = Version::Object { n: 1 };
    assert!(v.pair(Some(one), Some(&t)).is_ok());
    assert!(v.pair(Some(one), Some(&t)).is_ok());
    assert!(v.pair(Some(Version::Object { n: 2 }), Some(&t)).is_err());
    assert!(v.pair(Some(one), Some(&FsVersion::new("u"))).is_err());
    assert!(v.pair(None, Some(&t)).is_err());
}

/// Only a read the backend answered within a write counts as served during it; one that
/// queued behind it, one answered before it was sent, and one just inside either end (the
/// threads' times may carry it there) do not.
#[test]
fn a_read_counts_as_served_during_a_write_only_if_answered_well_within_it() {
    let t0 = Instant::now();
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    let write = Step::plain(Op::Write {
        path: "a".into(),
        content: "x".into(),
        guard: WriteGuard::None,
    });
    let read = Step::plain(Op::ReadText { path: "a".into() });
    let job = |s: &Step| Job {
        op: s.op.clone(),
        target: FsTarget {
            key: seam::FsTargetKey::new("/r/a"),
            display_path: "/r/a".into(),
        },
        resolved: Resolved {
            display: "/r/a".into(),
            key: seam_model::Key(vec!["a".into()]),
        },
        intent: None,
        edit_guard: None,
        model_guard: None,
        model_edit_guard: None,
        to: None,
        replace: None,
        policy: None,
    };
    let jobs = vec![vec![job(&write)], vec![job(&read)]];
    let call = |lane: usize, sent: u64, answered: u64| Done {
        lane,
        job: 0,
        sent: at(sent),
        answered: at(answered),
        seen: Seen::Stat(None),
        version: None,
    };
    let done = vec![
        call(0, 100, 200),
        call(1, 120, 180), // served within
        call(1, 150, 250), // queued behind
        call(1, 50, 150),  // sent before: the write may not have started
        call(1, 210, 220), // after
        call(1, 105, 180), // sent just inside
        call(1, 120, 195), // answered just inside
    ];
    let o = overlap(&done, &jobs);
    assert_eq!((o.reads, o.sent_during, o.served_during), (6, 4, 1));
}

#[test]
fn a_group_the_checks_cannot_judge_is_refused_before_it_runs() {
    let write = |p: &str| {
        Step::plain(Op::Write {
            path: p.into(),
            content: "x".into(),
            guard: WriteGuard::None,
        })
    };
    let read = Step::plain(Op::ReadText { path: "a".into() });
    assert!(check_shape(&[]).is_err());
    // Two writers, one of them with two steps: too many orders to judge.
    assert!(
        check_shape(&[
            Lane::of(vec![write("a"), write("a")]),
            Lane::of(vec![write("b")])
        ])
        .is_err()
    );
    // A repeating writer.
    let mut repeating = Lane::of(vec![write("a")]);
    repeating.repeat = true;
    assert!(check_shape(&[repeating, Lane::of(vec![read.clone()])]).is_err());
    // Only repeating lanes would never end.
    let mut reader = Lane::of(vec![read.clone()]);
    reader.repeat = true;
    assert!(check_shape(&[reader.clone()]).is_err());
    // A step that names its own instance, reuses a target or interferes: the lane says.
    for bad in [
        read.clone().on(1),
        read.clone().reusing(),
        {
            let mut s = read.clone();
            s.interfere = crate::step::Interfere::CancelledBeforeStart;
            s
        },
        Step::plain(Op::Lstat { path: "a".into() }),
    ] {
        assert!(check_shape(&[Lane::of(vec![write("a")]), Lane::of(vec![bad])]).is_err());
    }
    // Eight racers: more orders than are tried.
    let racers: Vec<Lane> = (0..8).map(|_| Lane::of(vec![write("a")])).collect();
    assert!(check_shape(&racers).is_err());
    assert!(check_shape(&racers[..MAX_BRUTE]).is_ok());
    // A writer with readers beside it; racers of one step each.
    assert!(check_shape(&[Lane::of(vec![write("a"), write("a")]), reader]).is_ok());
    assert!(check_shape(&[Lane::of(vec![write("a")]), Lane::of(vec![write("a")])]).is_ok());
}
