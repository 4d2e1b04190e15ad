//! The merge loop: distinct chunks with counts -> an ordered list of merges.
//!
//! State:
//! - every distinct chunk of two or more bytes as a run of token ids in one flat array
//!   (`symbols`), with its start, current length and weight (its count in the corpus);
//! - a pair index: for each adjacent pair that occurs, its total count (sum of the weights of
//!   every position where it occurs) and the list of chunks it was seen in;
//! - a max-heap of (count, pair) candidates, ordered by count and then by the *smallest* pair.
//!
//! A step pops the heap until the top entry's count equals the pair's current count (entries
//! go stale when a pair's count changes; a stale entry is re-queued with the current count or
//! dropped), merges that pair in the chunks listed for it, and applies the changes to the
//! counts of the neighbouring pairs in place. Only chunks that contain the pair are touched.
//!
//! Why the lazy heap is exact: every pair with a positive count has an entry whose key is at
//! least its current count (a pair's count only grows at the step where the pair is created or
//! grows, and that step queues it). So when the popped entry is current, no other pair can have
//! a higher count, or an equal count and a smaller pair: it would have been popped first.
//!
//! Two merges can make the same bytes (`a`+`bc` and `ab`+`c`). A rank table maps bytes to one
//! rank, so the second merge reuses the first one's id and does not add a token; see
//! docs/training.md.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use crate::error::{Error, Result};
use crate::train::count::ChunkCounts;

type Hasher = foldhash::fast::FixedState;

/// An adjacent pair of token ids: (left, right).
pub type Pair = (u32, u32);

/// One step of training: `pair` became token `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    pub pair: Pair,
    pub id: u32,
    /// The pair's total count when it was merged.
    pub count: u64,
    /// False when the merged bytes were already a token (the id is reused).
    pub new_token: bool,
}

struct PairInfo {
    count: u64,
    /// Chunks the pair was seen in (may hold chunks that no longer contain it; never misses one).
    words: Vec<u32>,
}

/// A heap entry: the derived order is by count, then by `Reverse(pair)` (smaller pair first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    count: u64,
    pair: Reverse<Pair>,
}

/// Chunks as runs of token ids.
struct Words {
    symbols: Vec<u32>,
    starts: Vec<usize>,
    lens: Vec<u32>,
    weights: Vec<u64>,
}

/// The pair counts and where each pair occurs.
struct PairIndex {
    map: HashMap<Pair, PairInfo, Hasher>,
    /// The pair being merged right now: its entry is already gone, its decrements are moot.
    merging: Pair,
    /// Pairs whose count grew during this step (they need a heap entry).
    grown: Vec<Pair>,
}

impl PairIndex {
    #[inline]
    fn dec(&mut self, pair: Pair, weight: u64) {
        if pair == self.merging {
            return;
        }
        if let Some(info) = self.map.get_mut(&pair) {
            info.count -= weight;
            if info.count == 0 {
                self.map.remove(&pair);
            }
        } else {
            debug_assert!(false, "decrement of a pair that is not indexed: {pair:?}");
        }
    }

    #[inline]
    fn inc(&mut self, pair: Pair, weight: u64, word: u32) {
        let info = self.map.entry(pair).or_insert_with(|| PairInfo { count: 0, words: Vec::new() });
        info.count += weight;
        if info.words.last() != Some(&word) {
            info.words.push(word);
        }
        self.grown.push(pair);
    }
}

/// The merge loop's state. Build it with [`Merger::new`], then call [`Merger::step`] until it
/// returns `None` or there are enough tokens.
pub struct Merger {
    words: Words,
    index: PairIndex,
    heap: BinaryHeap<Candidate>,
    /// The bytes of every token, indexed by id (256 bytes first).
    tokens: Vec<Vec<u8>>,
    by_bytes: HashMap<Vec<u8>, u32, Hasher>,
    merges: Vec<Merge>,
}

impl Merger {
    /// Indexes every adjacent pair of every chunk (chunks of one byte have none and are dropped).
    pub fn new(counts: &ChunkCounts) -> Result<Merger> {
        let mut words = Words { symbols: Vec::new(), starts: Vec::new(), lens: Vec::new(), weights: Vec::new() };
        for (chunk, n) in counts.iter() {
            if chunk.len() < 2 {
                continue;
            }
            if chunk.len() > u32::MAX as usize {
                return Err(Error::Vocab(format!("a chunk of {} bytes is too long to train on", chunk.len())));
            }
            words.starts.push(words.symbols.len());
            words.lens.push(chunk.len() as u32);
            words.weights.push(n);
            words.symbols.extend(chunk.iter().map(|&b| b as u32));
        }
        if words.weights.len() > u32::MAX as usize {
            return Err(Error::Vocab(format!("too many distinct chunks ({})", words.weights.len())));
        }
        let mut map: HashMap<Pair, PairInfo, Hasher> = HashMap::default();
        for w in 0..words.weights.len() {
            let (start, len) = (words.starts[w], words.lens[w] as usize);
            let weight = words.weights[w];
            for win in words.symbols[start..start + len].windows(2) {
                let info = map.entry((win[0], win[1])).or_insert_with(|| PairInfo { count: 0, words: Vec::new() });
                info.count += weight;
                if info.words.last() != Some(&(w as u32)) {
                    info.words.push(w as u32);
                }
            }
        }
        let heap: BinaryHeap<Candidate> =
            map.iter().map(|(&pair, info)| Candidate { count: info.count, pair: Reverse(pair) }).collect();
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let by_bytes = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        Ok(Merger {
            words,
            index: PairIndex { map, merging: (u32::MAX, u32::MAX), grown: Vec::new() },
            heap,
            tokens,
            by_bytes,
            merges: Vec::new(),
        })
    }

    /// The number of tokens so far (256 + new tokens made by merges).
    pub fn n_tokens(&self) -> usize {
        self.tokens.len()
    }

    /// The bytes of every token, indexed by id.
    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    /// Every merge made so far, in order.
    pub fn merges(&self) -> &[Merge] {
        &self.merges
    }

    /// Makes one merge: the pair with the highest count (ties: the smallest pair), if that count
    /// is at least `min_frequency` (and at least 1). Returns `None` when no pair qualifies.
    pub fn step(&mut self, min_frequency: u64) -> Option<Merge> {
        let (pair, count) = loop {
            let top = self.heap.pop()?;
            let pair = top.pair.0;
            let Some(info) = self.index.map.get(&pair) else { continue };
            if info.count != top.count {
                // Stale: the count dropped since this entry was queued.
                self.heap.push(Candidate { count: info.count, pair: top.pair });
                continue;
            }
            break (pair, top.count);
        };
        if count < min_frequency.max(1) {
            self.heap.push(Candidate { count, pair: Reverse(pair) });
            return None;
        }

        let mut bytes = self.tokens[pair.0 as usize].clone();
        bytes.extend_from_slice(&self.tokens[pair.1 as usize]);
        let (id, new_token) = match self.by_bytes.get(&bytes) {
            Some(&id) => (id, false),
            None => {
                let id = self.tokens.len() as u32;
                self.by_bytes.insert(bytes.clone(), id);
                self.tokens.push(bytes);
                (id, true)
            }
        };

        let info = self.index.map.remove(&pair).expect("popped pair is indexed");
        self.index.merging = pair;
        for &w in &info.words {
            merge_word(&mut self.words, &mut self.index, w, pair, id);
        }
        self.index.merging = (u32::MAX, u32::MAX);

        let mut grown = std::mem::take(&mut self.index.grown);
        grown.sort_unstable();
        grown.dedup();
        for p in grown.drain(..) {
            if let Some(info) = self.index.map.get(&p) {
                self.heap.push(Candidate { count: info.count, pair: Reverse(p) });
            }
        }
        self.index.grown = grown;

        let merge = Merge { pair, id, count, new_token };
        self.merges.push(merge);
        Some(merge)
    }
}

/// Replaces each non-overlapping occurrence of `pair`, left to right, in chunk `w` by `id`, and
/// moves the counts of the neighbouring pairs: for `x a b y` -> `x Z y`, the pairs (x,a), (a,b)
/// and (b,y) lose the chunk's weight and (x,Z), (Z,y) gain it. When occurrences touch
/// (`a b a b`, or `a a a` for the pair (a,a)) the pairs credited by one occurrence are debited
/// by the next, so the net change is exact.
fn merge_word(words: &mut Words, index: &mut PairIndex, w: u32, (a, b): Pair, z: u32) {
    let start = words.starts[w as usize];
    let len = words.lens[w as usize] as usize;
    let weight = words.weights[w as usize];
    let s = &mut words.symbols[start..start + len];
    // Most listed chunks still hold the pair; those that do not cost one scan.
    let (mut i, mut o) = (0usize, 0usize);
    while i < len {
        if i + 1 < len && s[i] == a && s[i + 1] == b {
            if o > 0 {
                let x = s[o - 1];
                index.dec((x, a), weight);
                index.inc((x, z), weight, w);
            }
            if i + 2 < len {
                let y = s[i + 2];
                index.dec((b, y), weight);
                index.inc((z, y), weight, w);
            }
            s[o] = z;
            o += 1;
            i += 2;
        } else {
            s[o] = s[i];
            o += 1;
            i += 1;
        }
    }
    words.lens[w as usize] = o as u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn train(chunks: &[(&str, u64)], steps: usize) -> Vec<(Pair, u32)> {
        let mut counts = ChunkCounts::new();
        for (c, n) in chunks {
            counts.add(c.as_bytes(), *n);
        }
        let mut m = Merger::new(&counts).unwrap();
        let mut out = vec![];
        for _ in 0..steps {
            match m.step(1) {
                Some(mg) => out.push((mg.pair, mg.id)),
                None => break,
            }
        }
        out
    }

    #[test]
    fn overlapping_pair_counts_windows_and_merges_left_to_right() {
        // "aaa": the pair (a,a) occurs at 2 windows; merged left to right it gives [aa, a].
        let m = train(&[("aaa", 1)], 5);
        assert_eq!(m, vec![((97, 97), 256), ((256, 97), 257)]);
    }

    #[test]
    fn ties_go_to_the_smallest_pair() {
        let m = train(&[("ab", 1), ("cd", 1)], 1);
        assert_eq!(m, vec![((97, 98), 256)]);
    }

    #[test]
    fn stops_at_min_frequency() {
        let mut counts = ChunkCounts::new();
        counts.add(b"ab", 3);
        counts.add(b"cd", 1);
        let mut m = Merger::new(&counts).unwrap();
        assert!(m.step(2).is_some());
        assert!(m.step(2).is_none());
        assert!(m.step(1).is_some());
    }
}
