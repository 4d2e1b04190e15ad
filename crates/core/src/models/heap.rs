//! The merge heap of the merge-list and score models: repeatedly merge the best adjacent pair,
//! the leftmost on a tie, until no adjacent pair merges.
//!
//! Both models merge that way and differ only in what "best" is and what a pair merges into,
//! which a [`MergeRule`] says: merge-list BPE ranks a pair by its place in the list (first
//! listed, first merged; [`crate::models::merges::merge`]), score BPE by the score of the piece
//! it makes (highest first; [`crate::models::score::merge`]). The loop is generic over the rule
//! and monomorphised for each, so neither pays for the other.
//!
//! Engine: symbols in a doubly linked list over their initial positions (`next`, `prev`);
//! candidate pairs in a max-heap of (priority, leftmost position) with lazy deletion. Each merge
//! pushes at most two pairs, so n initial symbols cost O(n log n) heap operations and O(n)
//! calls to [`MergeRule::pair`].
//!
//! **Staleness.** An entry remembers where its pair ends: the position after its right symbol
//! (`next[r]` when pushed). It is stale when its left symbol has been absorbed, or that end
//! moved. Exact because symbols only grow, and only by absorbing their right neighbour:
//! positions along the list increase, so while `l` lives and `next[next[l]]` is unchanged,
//! `next[l]` is still the same `r` (had `l` absorbed `r`, `next[l]` would now be the old end,
//! and `next[next[l]]` beyond it) and neither symbol has changed. This is SentencePiece's own
//! check (it compares the pair's byte length) in positions, so it needs nothing from the rule.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// No symbol: the end of the list.
const NONE: u32 = u32::MAX;
/// The `next` of a symbol its left neighbour absorbed.
const GONE: u32 = u32::MAX - 1;

/// What one model's BPE says about adjacent symbols, by their initial positions.
pub trait MergeRule {
    /// Whether symbols `l` and `r` (adjacent, `l` first) merge, and if so with which priority
    /// (higher merges first; ties go to the smaller `l`) into which id.
    fn pair(&self, l: u32, r: u32) -> Option<(u32, u32)>;
    /// Symbol `l` absorbs its right neighbour `r` and becomes `merged` (the id `pair` gave).
    fn merge(&mut self, l: u32, r: u32, merged: u32);
}

/// The loop's buffers, reused across pieces so merging allocates nothing once they have grown.
#[derive(Default)]
pub struct Heap {
    next: Vec<u32>,
    prev: Vec<u32>,
    /// (priority, leftmost position, end of the pair, merged id): a max-heap, so the highest
    /// priority pops first and, among equal ones, the smallest position.
    heap: BinaryHeap<(u32, Reverse<u32>, u32, u32)>,
}

impl Heap {
    /// Merges `n` symbols (positions `0..n`, left to right) by `rule` until no adjacent pair
    /// merges. The symbols left are then [`Heap::symbols`].
    pub fn run<R: MergeRule>(&mut self, n: usize, rule: &mut R) {
        let Heap { next, prev, heap } = self;
        next.clear();
        prev.clear();
        heap.clear();
        if n == 0 {
            return;
        }
        debug_assert!(n < GONE as usize);
        next.extend((1..=n as u32).map(|i| if i as usize == n { NONE } else { i }));
        prev.extend((0..n as u32).map(|i| i.wrapping_sub(1))); // 0 -> NONE
        for l in 0..n as u32 - 1 {
            if let Some((priority, merged)) = rule.pair(l, l + 1) {
                heap.push((priority, Reverse(l), next[l as usize + 1], merged));
            }
        }
        while let Some((_, Reverse(l), end, merged)) = heap.pop() {
            let r = next[l as usize];
            // Stale: `l` was absorbed (GONE), is last (NONE), or the pair's end moved.
            if r >= GONE || next[r as usize] != end {
                continue;
            }
            rule.merge(l, r, merged);
            next[l as usize] = end;
            next[r as usize] = GONE;
            if end != NONE {
                prev[end as usize] = l;
                if let Some((priority, merged)) = rule.pair(l, end) {
                    heap.push((priority, Reverse(l), next[end as usize], merged));
                }
            }
            let p = prev[l as usize];
            if p != NONE {
                if let Some((priority, merged)) = rule.pair(p, l) {
                    heap.push((priority, Reverse(p), end, merged));
                }
            }
        }
    }

    /// The positions of the symbols left by the last [`Heap::run`], left to right.
    pub fn symbols(&self) -> impl Iterator<Item = u32> + '_ {
        let mut i = if self.next.is_empty() { NONE } else { 0 };
        std::iter::from_fn(move || {
            let at = i;
            if at == NONE {
                return None;
            }
            i = self.next[at as usize];
            Some(at)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Symbols are strings; a pair merges when its concatenation is listed, the earlier listed
    /// first. The id of a merged symbol is its index in `syms`' list of strings.
    struct Strings<'a> {
        list: &'a [&'a str],
        syms: Vec<String>,
    }

    impl MergeRule for Strings<'_> {
        fn pair(&self, l: u32, r: u32) -> Option<(u32, u32)> {
            let joined = format!("{}{}", self.syms[l as usize], self.syms[r as usize]);
            let k = self.list.iter().position(|&s| s == joined)? as u32;
            Some((!k, k))
        }
        fn merge(&mut self, l: u32, r: u32, merged: u32) {
            assert_eq!(self.list[merged as usize], format!("{}{}", self.syms[l as usize], self.syms[r as usize]));
            self.syms[l as usize] = self.list[merged as usize].to_string();
        }
    }

    fn run(list: &[&str], text: &str, heap: &mut Heap) -> Vec<String> {
        let mut rule = Strings { list, syms: text.chars().map(String::from).collect() };
        heap.run(rule.syms.len(), &mut rule);
        heap.symbols().map(|i| rule.syms[i as usize].clone()).collect()
    }

    /// The definition, run naively: rescan every adjacent pair each step.
    fn naive(list: &[&str], text: &str) -> Vec<String> {
        let mut syms: Vec<String> = text.chars().map(String::from).collect();
        loop {
            let best = (0..syms.len().saturating_sub(1))
                .filter_map(|i| list.iter().position(|&s| s == format!("{}{}", syms[i], syms[i + 1])).map(|k| (k, i)))
                .min();
            let Some((_, i)) = best else { return syms };
            let right = syms.remove(i + 1);
            syms[i].push_str(&right);
        }
    }

    #[test]
    fn best_first_then_leftmost() {
        let mut heap = Heap::default();
        let list = ["aa", "ab", "aaa", "ba", "bab", "abab", "aab", "bb"];
        assert_eq!(run(&["aa"], "aaa", &mut heap), ["aa", "a"], "leftmost on a tie");
        assert_eq!(run(&list, "aaa", &mut heap), ["aaa"]);
        assert_eq!(run(&list, "abab", &mut heap), ["abab"], "ab, ab, then abab");
        assert_eq!(run(&list, "", &mut heap), Vec::<String>::new());
        assert_eq!(run(&list, "b", &mut heap), ["b"]);
        for len in 0..=24usize {
            for seed in 0..64u64 {
                let text: String = (0..len as u64)
                    .map(|i| if (seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i * 40503)) >> (i % 7 + 3) & 1 == 0 { 'a' } else { 'b' })
                    .collect();
                assert_eq!(run(&list, &text, &mut heap), naive(&list, &text), "{text:?}");
            }
        }
    }
}
