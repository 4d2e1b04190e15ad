//! The fallback merge engine for long pieces: rank buckets instead of one heap of pairs. Long
//! pieces normally take the backtracking walk ([`super::backtrack`]); this engine encodes them
//! when a table is outside the walk's layout or its build budget, and serves as the exact
//! reference the walk is tested against.
//!
//! tiktoken's rule merges, at every step, the adjacent pair with the lowest rank, the leftmost
//! on a tie. A binary heap of `(rank, position)` does that in O(log n) per step, but on a
//! million-byte piece the heap's sift paths miss the cache at every level and the run is
//! visibly superlinear. Here pairs are grouped by rank instead:
//!
//! - every pair found goes into the bucket (a `Vec` of positions) of its rank, and a small heap
//!   holds the distinct ranks that have a bucket;
//! - the lowest rank's bucket is taken, sorted by position, and merged left to right. Pushes
//!   made while one bucket is processed arrive in non-decreasing position order, so a bucket is
//!   a few sorted runs and the run-adaptive stable sort merges them in near-linear time;
//! - a merge of rank `r` creates pairs that contain token `r` as a proper part, so they are
//!   longer and never have rank `r` again. They can have a *lower* rank, though, and a merge
//!   made for such a pair can in turn create a pair of rank exactly `r`. Both kinds go into an
//!   "urgent" heap, which is interleaved with the bucket by `(rank, position)`, so the global
//!   order is tiktoken's exactly.
//! - Entries go stale when a neighbour merges; `pair[i]` holds the current rank of the pair
//!   starting at part i, and an entry is live only if it still matches (a position never
//!   regains a rank it lost, because parts only grow).
//!
//! Cost: each pair is pushed once, O(1) expected (a hash lookup of its rank's bucket), plus the
//! bucket sorts (O(k log k) for a bucket of k in the worst case, near O(k) for the few sorted
//! runs that arise in practice) and heap operations on distinct ranks and on urgent pairs. So
//! O(n log n) in the worst case, close to linear on every input we measured (docs/engine.md).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use crate::models::Sink;
use crate::vocab::Vocab;

const NONE: u32 = u32::MAX;

struct State<'a> {
    vocab: &'a Vocab,
    piece: &'a [u8],
    next: Vec<u32>,
    prev: Vec<u32>,
    tok: Vec<u32>,
    pair: Vec<u32>,
    /// rank -> index into `lists`.
    bucket_of: HashMap<u32, u32, foldhash::fast::FixedState>,
    lists: Vec<Vec<u32>>,
    spare: Vec<Vec<u32>>,
    ranks: BinaryHeap<Reverse<u32>>,
    urgent: BinaryHeap<Reverse<(u32, u32)>>,
    /// The rank being processed; pairs at or below it are urgent.
    current: u32,
    /// A small direct-mapped memo in front of `bucket_of` (rank -> bucket), indexed by the
    /// rank's low bits: pushes come in runs of the same few ranks, and the hash map was a third
    /// of the engine's time on repetitive input. Entries are cleared when a bucket is taken.
    recent: [(u32, u32); RECENT],
}

const RECENT: usize = 64;

impl State<'_> {
    #[inline]
    fn push(&mut self, pos: u32, rank: u32) {
        if rank <= self.current {
            self.urgent.push(Reverse((rank, pos)));
            return;
        }
        let slot = rank as usize % RECENT;
        let k = if self.recent[slot].0 == rank {
            self.recent[slot].1 as usize
        } else {
            let k = match self.bucket_of.get(&rank) {
                Some(&k) => k as usize,
                None => {
                    let k = self.lists.len();
                    self.lists.push(self.spare.pop().unwrap_or_default());
                    self.bucket_of.insert(rank, k as u32);
                    self.ranks.push(Reverse(rank));
                    k
                }
            };
            self.recent[slot] = (rank, k as u32);
            k
        };
        self.lists[k].push(pos);
    }

    /// Sets the rank of the pair starting at part `i` (its right neighbour ends at `stop`).
    #[inline]
    fn set_pair(&mut self, i: usize, stop: usize) {
        match self.vocab.rank(&self.piece[i..stop]) {
            Some(r) => {
                self.pair[i] = r;
                self.push(i as u32, r);
            }
            None => self.pair[i] = NONE,
        }
    }

    /// Merges part `i` with the part after it; the pair's rank is `r`.
    #[inline]
    fn merge(&mut self, i: usize, r: u32) {
        let n = self.piece.len();
        let j = self.next[i] as usize;
        let after = self.next[j] as usize;
        self.tok[i] = r;
        self.next[i] = after as u32;
        if after < n {
            self.prev[after] = i as u32;
        }
        self.pair[j] = NONE;
        if after < n {
            let stop = self.next[after] as usize;
            self.set_pair(i, stop);
        } else {
            self.pair[i] = NONE;
        }
        let p = self.prev[i];
        if p != NONE {
            self.set_pair(p as usize, after);
        }
    }

    fn drain_urgent_below(&mut self, bound: (u32, u32)) {
        while let Some(&Reverse((r, pos))) = self.urgent.peek() {
            if (r, pos) >= bound {
                break;
            }
            self.urgent.pop();
            if self.pair[pos as usize] == r {
                self.merge(pos as usize, r);
            }
        }
    }
}

/// Merges a piece of any length (used above the quadratic scan's limit).
pub fn merge_buckets<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let n = piece.len();
    let mut st = State {
        vocab,
        piece,
        next: (1..=n as u32).collect(),
        prev: (0..n as u32).map(|i| i.wrapping_sub(1)).collect(),
        tok: piece.iter().map(|&b| vocab.byte_rank(b)).collect(),
        pair: vec![NONE; n],
        bucket_of: HashMap::default(),
        lists: Vec::new(),
        spare: Vec::new(),
        ranks: BinaryHeap::new(),
        urgent: BinaryHeap::new(),
        current: 0,
        recent: [(NONE, 0); RECENT],
    };
    // Before any rank is processed nothing is urgent; rank 0 can never be a pair anyway in a
    // byte-level vocabulary, but say so explicitly.
    st.current = 0;
    for i in 0..n.saturating_sub(1) {
        if let Some(r) = vocab.rank(&piece[i..i + 2]) {
            st.pair[i] = r;
            if r == 0 {
                st.urgent.push(Reverse((0, i as u32)));
            } else {
                st.push(i as u32, r);
            }
        }
    }
    st.drain_urgent_below((NONE, NONE));
    while let Some(Reverse(r)) = st.ranks.pop() {
        let k = st.bucket_of.remove(&r).expect("every queued rank has a bucket") as usize;
        if st.recent[r as usize % RECENT].0 == r {
            st.recent[r as usize % RECENT] = (NONE, 0);
        }
        let mut list = std::mem::take(&mut st.lists[k]);
        list.sort(); // stable sort: run-adaptive, near-linear on a few sorted runs
        st.current = r;
        for &pos in &list {
            st.drain_urgent_below((r, pos));
            if st.pair[pos as usize] == r {
                st.merge(pos as usize, r);
            }
        }
        st.drain_urgent_below((NONE, NONE));
        list.clear();
        st.spare.push(list);
        // Buckets are indexed by slot; reuse emptied slots only through `spare` lists, and
        // shrink the slot vector when every bucket is gone.
        if st.bucket_of.is_empty() {
            st.lists.clear();
        }
    }
    let mut i = 0usize;
    while i < n {
        out.push(st.tok[i]);
        i = st.next[i] as usize;
    }
}
