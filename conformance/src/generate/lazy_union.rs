//! A weighted choice among strategies that are built only when drawn. A free step is one of a
//! dozen kinds, each a tree of boxed strategies aimed at what exists at that point of the
//! sequence; proptest's `Union` wants every kind built before it draws one, so each step built
//! (and dropped) all of them to use one — about a third of drawing a case.
//!
//! [`LazyUnion`] draws as `Union::new_weighted` does — the same pick from the same random
//! number, and a fresh random source set aside for every kind before the pick, as the union's
//! lazy value trees take one — so a seed draws the same cases. It shrinks as the union does:
//! first within the kind drawn, then to the kinds listed before it, each built when the shrink
//! first reaches it. One difference, in shrinking only: proptest gives such a kind a runner that
//! shares the run's count of `prop_flat_map` regenerations (`partial_clone`, not public), this
//! one a runner that counts its own; the two shrink alike until a run reaches
//! `Config::max_flat_map_regens` (a million by default; the suite never sets it).

use proptest::strategy::{BoxedStrategy, NewTree, Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use std::fmt;
use std::sync::Arc;

/// Builds the strategy of one option.
type Build<K, T> = Arc<dyn Fn(K) -> BoxedStrategy<T>>;

/// A weighted choice among options of kind `K`, each built by `build` when drawn.
pub(crate) struct LazyUnion<K, T> {
    options: Arc<[(u32, K)]>,
    build: Build<K, T>,
}

impl<K: Copy + fmt::Debug + 'static, T: fmt::Debug + 'static> LazyUnion<K, T> {
    /// The options in order with their weights (none zero), and how to build each.
    pub(crate) fn new(
        options: Vec<(u32, K)>,
        build: impl Fn(K) -> BoxedStrategy<T> + 'static,
    ) -> Self {
        assert!(
            !options.is_empty() && options.iter().all(|(w, _)| *w > 0),
            "a lazy union needs options, none of weight 0"
        );
        Self {
            options: options.into(),
            build: Arc::new(build),
        }
    }
}

impl<K: fmt::Debug, T> fmt::Debug for LazyUnion<K, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyUnion")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<K: Copy + fmt::Debug + 'static, T: fmt::Debug + 'static> Strategy for LazyUnion<K, T> {
    type Tree = LazyUnionTree<K, T>;
    type Value = T;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let sum: u64 = self.options.iter().map(|&(w, _)| u64::from(w)).sum();
        // `Union`'s draw: uniform in `0..sum`, and the pick is how many running sums are at
        // most it.
        let drawn = proptest::num::sample_uniform_incl(runner, 0, sum - 1);
        let pick = self
            .options
            .iter()
            .scan(0u64, |total, &(w, _)| {
                *total += u64::from(w);
                Some(*total)
            })
            .filter(|&total| total <= drawn)
            .count();
        let mut slots = Vec::with_capacity(pick + 1);
        for &(_, kind) in &self.options[..pick] {
            // What `Union` gives each earlier option's lazy tree: a runner of its own.
            let rng = runner.new_rng();
            slots.push(Slot::Waiting(
                kind,
                Box::new(TestRunner::new_with_rng(runner.config().clone(), rng)),
            ));
        }
        let tree = (self.build)(self.options[pick].1).new_tree(runner)?;
        slots.push(Slot::Ready(tree));
        Ok(LazyUnionTree {
            build: self.build.clone(),
            slots,
            pick,
            min_pick: 0,
            prev_pick: None,
        })
    }
}

/// One option of a drawn [`LazyUnion`].
enum Slot<K, T> {
    /// Drawn.
    Ready(Box<dyn ValueTree<Value = T>>),
    /// Not drawn yet: its kind, and the runner to draw it with.
    Waiting(K, Box<TestRunner>),
    /// Drawing it failed.
    Failed,
}

/// A drawn [`LazyUnion`]: the option drawn, and those before it to shrink to.
pub(crate) struct LazyUnionTree<K, T> {
    build: Build<K, T>,
    slots: Vec<Slot<K, T>>,
    pick: usize,
    min_pick: usize,
    prev_pick: Option<usize>,
}

impl<K: Copy, T: fmt::Debug> LazyUnionTree<K, T> {
    /// The tree of the option at `at`, drawn now if it was not.
    fn ready(&mut self, at: usize) -> Option<&mut Box<dyn ValueTree<Value = T>>> {
        if let Slot::Waiting(kind, runner) = &mut self.slots[at] {
            self.slots[at] = match (self.build)(*kind).new_tree(runner) {
                Ok(tree) => Slot::Ready(tree),
                Err(_) => Slot::Failed,
            };
        }
        match &mut self.slots[at] {
            Slot::Ready(tree) => Some(tree),
            _ => None,
        }
    }

    fn picked(&mut self) -> &mut Box<dyn ValueTree<Value = T>> {
        match &mut self.slots[self.pick] {
            Slot::Ready(tree) => tree,
            // `pick` only ever names a drawn option.
            _ => unreachable!("the picked option is drawn"),
        }
    }
}

impl<K: Copy, T: fmt::Debug> ValueTree for LazyUnionTree<K, T> {
    type Value = T;

    fn current(&self) -> T {
        match &self.slots[self.pick] {
            Slot::Ready(tree) => tree.current(),
            _ => unreachable!("the picked option is drawn"),
        }
    }

    fn simplify(&mut self) -> bool {
        if self.picked().simplify() {
            self.prev_pick = None;
            return true;
        }
        if self.pick == self.min_pick {
            return false;
        }
        self.prev_pick = Some(self.pick);
        let mut next = self.pick;
        while next > self.min_pick {
            next -= 1;
            if self.ready(next).is_some() {
                self.pick = next;
                return true;
            }
        }
        false
    }

    fn complicate(&mut self) -> bool {
        match self.prev_pick.take() {
            Some(pick) => {
                self.pick = pick;
                self.min_pick = pick;
                true
            }
            None => self.picked().complicate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng};

    fn runner(seed: u8) -> TestRunner {
        TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
        )
    }

    /// Options whose values say which option and which draw they came from.
    fn option(k: u32) -> BoxedStrategy<(u32, u32)> {
        (0u32..1000).prop_map(move |v| (k, v)).boxed()
    }

    const WEIGHTS: [u32; 5] = [35, 1, 14, 2, 6];

    /// Every draw and every shrink the same as proptest's `Union` of the same options.
    #[test]
    fn draws_and_shrinks_as_the_union_does() {
        for seed in 0..64u8 {
            let union = proptest::strategy::Union::new_weighted(
                WEIGHTS
                    .iter()
                    .enumerate()
                    .map(|(k, &w)| (w, option(k as u32)))
                    .collect(),
            );
            let lazy = LazyUnion::new(
                WEIGHTS
                    .iter()
                    .enumerate()
                    .map(|(k, &w)| (w, k as u32))
                    .collect(),
                option,
            );
            let (mut a, mut b) = (runner(seed), runner(seed));
            for _ in 0..8 {
                let mut ta = union.new_tree(&mut a).expect("drawn");
                let mut tb = lazy.new_tree(&mut b).expect("drawn");
                assert_eq!(ta.current(), tb.current(), "seed {seed}");
                // A shrink that takes every simplification while the value is over 100 and
                // undoes the rest visits the same values in the same order.
                for step in 0..200 {
                    let keep = ta.current().1 > 100;
                    let (ra, rb) = if keep || step % 3 == 0 {
                        (ta.simplify(), tb.simplify())
                    } else {
                        (ta.complicate(), tb.complicate())
                    };
                    assert_eq!(ra, rb, "seed {seed} step {step}");
                    assert_eq!(ta.current(), tb.current(), "seed {seed} step {step}");
                }
            }
            // The runners are left in the same state: later draws agree too.
            let next = |r: &mut TestRunner| (0u64..u64::MAX).new_tree(r).map(|t| t.current()).ok();
            assert_eq!(next(&mut a), next(&mut b), "seed {seed}");
        }
    }

    /// An option is built when it is drawn or shrunk to, not before.
    #[test]
    fn builds_only_what_is_drawn() {
        let built = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = built.clone();
        // The last option nearly always drawn, so that there are options before it.
        let lazy = LazyUnion::new(
            [1, 1, 1, 1, 96]
                .iter()
                .enumerate()
                .map(|(k, &w)| (w, k as u32))
                .collect(),
            move |k| {
                log.lock().expect("log").push(k);
                option(k)
            },
        );
        let mut r = runner(9);
        let mut tree = lazy.new_tree(&mut r).expect("drawn");
        let drawn = tree.current().0;
        assert_eq!(drawn, 4);
        assert_eq!(*built.lock().expect("log"), [drawn]);
        while tree.simplify() {}
        let log = built.lock().expect("log").clone();
        // Shrinking reached the first option, building each one before the drawn one once.
        assert_eq!(tree.current().0, 0);
        let mut expected = vec![drawn];
        expected.extend((0..drawn).rev());
        assert_eq!(log, expected);
    }
}
