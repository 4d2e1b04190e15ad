//! Merge-list BPE: QTKR files, GPT-2 / HF `merges`, applied in list order.
//!
//! Definition: start from initial symbols (one per byte for byte-level vocabularies, one per
//! character for character-level ones); while some adjacent pair is in the merge list, merge
//! the pair whose merge comes **first in the list**, the leftmost such pair on a tie (the same
//! merge can apply at several places); emit the ids.
//!
//! Engine: the shared merge heap ([`crate::models::heap`]), with the list as its rule: a
//! pair's priority is its place in the list, found with the merged id in one hash probe of
//! (left id, right id). O(n log n) per piece; the caller's piece cache
//! ([`crate::models::cache`]) makes most pieces a lookup.

use hashbrown::HashMap;

use crate::error::{Error, Result};
use crate::models::heap::{Heap, MergeRule};

const NONE: u32 = u32::MAX;

type Hasher = foldhash::fast::FixedState;

/// The merge table: (left id, right id) -> (position in the list, merged id).
#[derive(Debug, Clone)]
pub struct Merges {
    pairs: HashMap<(u32, u32), (u32, u32), Hasher>,
}

impl Merges {
    /// `merges[k] = (left, right, merged)`. A pair listed twice is refused.
    pub fn new(merges: &[(u32, u32, u32)]) -> Result<Self> {
        let mut pairs = HashMap::with_capacity_and_hasher(merges.len(), Hasher::default());
        for (k, &(a, b, m)) in merges.iter().enumerate() {
            if let Some((first, _)) = pairs.insert((a, b), (k as u32, m)) {
                return Err(Error::Vocab(format!("merge {k} ({a}, {b}) repeats merge {first}")));
            }
        }
        Ok(Merges { pairs })
    }

    #[inline]
    pub fn get(&self, a: u32, b: u32) -> Option<(u32, u32)> {
        self.pairs.get(&(a, b)).copied()
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// The merge list that reproduces a rank vocabulary: for each token in rank order, every way
/// to cut it into two tokens, ordered by the parts' ranks. Rank BPE may join any adjacent pair
/// whose concatenation is a token, so every cut is listed; each gets the priority of the
/// token it makes.
pub fn from_ranks(vocab: &crate::vocab::Vocab) -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    let mut local = Vec::new();
    for (token, rank) in vocab.mergeable() {
        local.clear();
        for i in 1..token.len() {
            if let (Some(a), Some(b)) = (vocab.rank(&token[..i]), vocab.rank(&token[i..])) {
                local.push((a, b, rank));
            }
        }
        local.sort_unstable();
        out.extend_from_slice(&local);
    }
    out
}

/// Reusable buffers for [`merge`].
#[derive(Default)]
pub struct Scratch {
    heap: Heap,
}

/// The merge list as a [`MergeRule`]: a pair's priority is its place in the list (first listed,
/// highest), and the merged symbol takes the id the list gives.
struct ListOrder<'a> {
    merges: &'a Merges,
    ids: &'a mut [u32],
}

impl MergeRule for ListOrder<'_> {
    #[inline]
    fn pair(&self, l: u32, r: u32) -> Option<(u32, u32)> {
        let (a, b) = (self.ids[l as usize], self.ids[r as usize]);
        if a == NONE || b == NONE {
            return None;
        }
        self.merges.get(a, b).map(|(k, merged)| (!k, merged))
    }

    #[inline]
    fn merge(&mut self, l: u32, _r: u32, merged: u32) {
        self.ids[l as usize] = merged;
    }
}

/// Applies the merges to `ids` (the initial symbols of one piece) and appends the result to
/// `out`. Symbols with id [`u32::MAX`] never merge (unknown characters).
pub fn merge(merges: &Merges, ids: &mut [u32], scratch: &mut Scratch, out: &mut Vec<u32>) {
    if ids.len() < 2 {
        out.extend_from_slice(ids);
        return;
    }
    let heap = &mut scratch.heap;
    heap.run(ids.len(), &mut ListOrder { merges, ids });
    out.extend(heap.symbols().map(|i| ids[i as usize]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_order_then_leftmost() {
        // a=0 b=1; ab=2 (merge 1), ba=3 (merge 0)
        let m = Merges::new(&[(1, 0, 3), (0, 1, 2)]).unwrap();
        let mut out = vec![];
        merge(&m, &mut [0, 1, 0], &mut Scratch::default(), &mut out);
        assert_eq!(out, vec![0, 3], "b+a is listed first");
        out.clear();
        merge(&m, &mut [0, 1, 1, 0, 1], &mut Scratch::default(), &mut out);
        assert_eq!(out, vec![2, 3, 1]);
        assert!(Merges::new(&[(0, 1, 2), (0, 1, 3)]).unwrap_err().to_string().contains("repeats"));
    }
}
