//! The plans power-loss draws, and its judging, on made-up trees.

use super::judge::{history, judge};
use super::plan::{Call, CutAt, Draw, Node, Plan, apply, draw_plan, initial};
use super::*;
use std::collections::BTreeSet;

#[test]
fn drawn_plans_are_valid_every_kind_is_drawn_and_a_seed_draws_the_same() {
    let (mut s1, mut s2) = (0, 0);
    let (mut a, mut b) = (Draw(7), Draw(7));
    let mut kinds = BTreeSet::new();
    for _ in 0..500 {
        let p = draw_plan(&mut a, true, (30, 4), &mut s1);
        assert!(valid(&p.calls), "{}", p.describe());
        assert!(p.cut.call <= p.calls.len());
        let q = draw_plan(&mut b, true, (30, 4), &mut s2);
        assert_eq!(p.describe(), q.describe());
        for c in &p.calls {
            kinds.insert(
                c.to_string()
                    .split(' ')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    assert_eq!(kinds.len(), 5, "{kinds:?}");
}

#[test]
fn the_judge_tells_a_lost_change_from_a_torn_file() {
    let plan = Plan {
        calls: vec![Call::Write {
            path: "a".into(),
            text: "new\n".into(),
        }],
        cut: CutAt {
            call: 1,
            within: 0,
            by_syncs: false,
        },
    };
    let start = initial();
    let after = apply(&start, &plan.calls[0]);
    let candidates = vec![("after every answered call", after.clone())];
    let h = history(&plan, &None);
    let lost = judge(&candidates, &start, &h, false);
    assert!(lost.contains("\"a\" lost its answered change"), "{lost}");
    let mut torn = after.clone();
    torn.insert("a".into(), Node::File(Vec::new()));
    let said = judge(&candidates, &torn, &h, false);
    assert!(said.contains("\"a\" is torn"), "{said}");
}

#[test]
fn a_chain_of_edits_is_aimed_again_when_a_link_is_taken_out() {
    let edit = |old: &str, new: &str| Call::Edit {
        path: "d/c".into(),
        old: old.into(),
        new: new.into(),
    };
    let first = match initial().get("d/c") {
        Some(Node::File(b)) => String::from_utf8_lossy(b)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        other => panic!("d/c is {other:?}"),
    };
    let mut calls = vec![
        edit(&first, "MARKER a edited"),
        edit("MARKER a edited", "MARKER b edited"),
        edit("MARKER b edited", "MARKER c edited"),
    ];
    assert!(super::valid(&calls));
    // The middle one out: the last no longer finds its old text, and is aimed at the first's.
    calls.remove(1);
    assert!(!super::valid(&calls));
    super::rebase(&mut calls);
    assert!(super::valid(&calls));
    assert_eq!(calls[1], edit("MARKER a edited", "MARKER c edited"));
    // The first out too: the one left replaces what the file held from the start.
    calls.remove(0);
    super::rebase(&mut calls);
    assert_eq!(calls, vec![edit(&first, "MARKER c edited")]);
    // An edit that still finds its text once is left as it was.
    let mut kept = vec![edit(&first, "MARKER z edited")];
    super::rebase(&mut kept);
    assert_eq!(kept, vec![edit(&first, "MARKER z edited")]);
}
