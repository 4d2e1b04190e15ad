//! Rank BPE, exactly as tiktoken defines it.
//!
//! Definition: split the piece into single bytes; while some adjacent pair's concatenation is a
//! token, merge the pair with the lowest rank (the leftmost such pair on a tie); emit the ranks
//! of the parts.
//!
//! Three paths, fastest first:
//! 1. the whole piece is a token (most pieces of real text): one hash lookup;
//! 2. short pieces: tiktoken's scan over an array of parts, O(n^2) in the piece length but with
//!    everything in cache, which beats any heap for n below [`SMALL`];
//! 3. long pieces: a doubly linked list of parts and a min-heap of (rank, position) with lazy
//!    deletion: O(n log n). Stale heap entries are recognised because a part's current pair rank
//!    no longer equals the entry's rank. Ordering by (rank, position) with positions increasing
//!    along the list picks exactly tiktoken's pair: lowest rank, then leftmost.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Sink;
use crate::vocab::Vocab;

/// Pieces up to this many bytes take the quadratic scan.
pub const SMALL: usize = 128;

const NONE: u32 = u32::MAX;

/// Encodes one piece into `out`.
#[inline]
pub fn encode_piece<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() == 1 {
        out.push(vocab.byte_rank(piece[0]));
    } else if let Some(rank) = vocab.rank(piece) {
        out.push(rank);
    } else {
        merge_piece(vocab, piece, out);
    }
}

/// Merges a piece of at least two bytes that is not itself a token.
#[inline]
pub fn merge_piece<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() <= SMALL {
        merge_small(vocab, piece, out);
    } else {
        merge_heap(vocab, piece, out);
    }
}

/// The quadratic scan for short pieces, in stack arrays sized for the piece: most missed
/// pieces are under 16 bytes, and clearing a 128-entry array per piece would cost more than the
/// merging.
#[inline]
fn merge_small<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    if piece.len() <= 16 {
        merge_scan::<16, S>(vocab, piece, out)
    } else {
        merge_scan::<SMALL, S>(vocab, piece, out)
    }
}

/// `start[i]` is where part i begins (the last part ends at `n`), `tok[i]` its rank, and
/// `pair[i]` the rank of parts i and i+1 joined, or NONE. Each round finds the lowest pair rank
/// (the leftmost on a tie, as the scan keeps the first minimum), merges, and updates the two
/// pair ranks that changed.
fn merge_scan<const CAP: usize, S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let n = piece.len();
    debug_assert!((2..=CAP).contains(&n));
    let mut start = [0u32; CAP];
    let mut tok = [0u32; CAP];
    let mut pair = [NONE; CAP];
    for i in 0..n {
        start[i] = i as u32;
        tok[i] = vocab.byte_rank(piece[i]);
    }
    for i in 0..n - 1 {
        pair[i] = vocab.rank(&piece[i..i + 2]).unwrap_or(NONE);
    }
    let mut parts = n;
    loop {
        let (mut best, mut best_rank) = (0, NONE);
        for (i, &r) in pair[..parts - 1].iter().enumerate() {
            if r < best_rank {
                best = i;
                best_rank = r;
            }
        }
        if best_rank == NONE {
            break;
        }
        tok[best] = best_rank;
        // Part best+1 disappears: shift everything after it down by one.
        start.copy_within(best + 2..parts, best + 1);
        tok.copy_within(best + 2..parts, best + 1);
        if best + 2 < parts {
            pair.copy_within(best + 2..parts - 1, best + 1);
        }
        parts -= 1;
        if parts == 1 {
            break;
        }
        let joined = |i: usize| {
            let stop = if i + 2 < parts { start[i + 2] as usize } else { n };
            vocab.rank(&piece[start[i] as usize..stop]).unwrap_or(NONE)
        };
        pair[best] = if best + 1 < parts { joined(best) } else { NONE };
        if best > 0 {
            pair[best - 1] = joined(best - 1);
        }
    }
    for &t in &tok[..parts] {
        out.push(t);
    }
}

/// The heap engine for long pieces. Parts are nodes 0..n of a linked list (node i starts at
/// byte i until merged away); `token[i]` is the id of the part at node i.
fn merge_heap<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    let n = piece.len();
    let mut next: Vec<u32> = (1..=n as u32).collect(); // n means "end"
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect(); // NONE at 0
    let mut token: Vec<u32> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    let mut pair: Vec<u32> = vec![NONE; n];
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::with_capacity(n);

    let end_of = |next: &[u32], i: usize| -> usize { next[i] as usize }; // node i's part ends where the next node starts
    for i in 0..n - 1 {
        if let Some(r) = vocab.rank(&piece[i..i + 2]) {
            pair[i] = r;
            heap.push(Reverse((r, i as u32)));
        }
    }
    while let Some(Reverse((r, i))) = heap.pop() {
        let i = i as usize;
        if pair[i] != r {
            continue; // stale: this part or its neighbour has merged since
        }
        let j = next[i] as usize; // the right part, merged into i
        token[i] = r;
        let after = next[j];
        next[i] = after;
        if (after as usize) < n {
            prev[after as usize] = i as u32;
        }
        pair[j] = NONE;
        // Right neighbour pair of the merged part.
        pair[i] = NONE;
        if (after as usize) < n {
            let stop = end_of(&next, after as usize);
            if let Some(nr) = vocab.rank(&piece[i..stop]) {
                pair[i] = nr;
                heap.push(Reverse((nr, i as u32)));
            }
        }
        // Left neighbour pair.
        let p = prev[i];
        if p != NONE {
            let p = p as usize;
            pair[p] = NONE;
            if let Some(nr) = vocab.rank(&piece[p..after as usize]) {
                pair[p] = nr;
                heap.push(Reverse((nr, p as u32)));
            }
        }
    }
    let mut i = 0usize;
    while i < n {
        out.push(token[i]);
        i = next[i] as usize;
    }
}

/// Reference implementation of the definition above, for tests: slow and obviously right.
#[cfg(test)]
pub(crate) fn merge_reference(vocab: &Vocab, piece: &[u8]) -> Vec<u32> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let best = (0..parts.len().saturating_sub(1))
            .filter_map(|i| vocab.rank(&[parts[i].clone(), parts[i + 1].clone()].concat()).map(|r| (r, i)))
            .min();
        match best {
            Some((_, i)) => {
                let right = parts.remove(i + 1);
                parts[i].extend(right);
            }
            None => break,
        }
    }
    parts.iter().map(|p| vocab.rank(p).unwrap()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: all bytes, then the given merges in rank order.
    fn vocab(merges: &[&str]) -> Vocab {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.extend(merges.iter().map(|m| m.as_bytes().to_vec()));
        Vocab::new(toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)), []).unwrap()
    }

    fn all_engines(v: &Vocab, piece: &[u8]) -> [Vec<u32>; 3] {
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        encode_piece(v, piece, &mut a);
        if piece.len() >= 2 && piece.len() <= SMALL {
            merge_small(v, piece, &mut b);
        } else {
            b = a.clone();
        }
        if piece.len() >= 2 {
            merge_heap(v, piece, &mut c);
        } else {
            c = a.clone();
        }
        [a, b, c]
    }

    #[test]
    fn engines_agree_with_the_definition() {
        let v = vocab(&["aa", "ab", "aaa", "bc", "abc", "aaaa", "ca", "cab", "bca"]);
        let inputs = ["aaaaaaa", "abcabcab", "aabcaab", "cabca", "a", "zz", "aaab", "bcaaaab"];
        for s in inputs {
            let want = merge_reference(&v, s.as_bytes());
            for got in all_engines(&v, s.as_bytes()) {
                assert_eq!(got, want, "{s}");
            }
        }
    }

    #[test]
    fn engines_agree_on_pseudorandom_pieces() {
        let v = vocab(&["ab", "ba", "aa", "bb", "aba", "bab", "abab", "aab", "bba", "ababa", "bbb"]);
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for len in 2..300 {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b"abc"[(x % 3) as usize]
                })
                .collect();
            let want = merge_reference(&v, &s);
            for got in all_engines(&v, &s) {
                assert_eq!(got, want, "len {len}");
            }
        }
    }
}
