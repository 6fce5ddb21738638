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
