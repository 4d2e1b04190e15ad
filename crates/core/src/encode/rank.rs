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
//! 3. long pieces: [`super::backtrack`], a longest-match walk that backtracks (linear), with
//!    [`super::bucket`] (rank buckets, near-linear) as its fallback.

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
    } else if let Some(rank) = (piece.len() <= vocab.max_token_len()).then(|| vocab.rank(piece)).flatten() {
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
        super::backtrack::merge_long(vocab, piece, out);
    }
}

/// The quadratic scan for short pieces, in stack arrays sized for the piece: most missed
/// pieces are under 16 bytes, and clearing a 128-entry array per piece would cost more than the
/// merging.
#[inline]
fn merge_small<S: Sink>(vocab: &Vocab, piece: &[u8], out: &mut S) {
    // The piece followed by at least 8 readable bytes, so that every part or pair of up to 7
    // bytes is keyed from one load (`Vocab::rank_word`) with no branch on its length.
    let mut buf = [0u8; SMALL + 8];
    buf[..piece.len()].copy_from_slice(piece);
    if piece.len() <= 16 {
        merge_scan16(vocab, piece, &buf, out)
    } else {
        merge_scan::<SMALL, S>(vocab, piece, &buf, out)
    }
}

/// The rank of `piece[s..e]`, with `buf` the piece followed by readable bytes.
#[inline(always)]
fn rank_of(vocab: &Vocab, piece: &[u8], buf: &[u8; SMALL + 8], s: usize, e: usize) -> u32 {
    let r = if e - s <= 7 {
        vocab.rank_word(u64::from_le_bytes(buf[s..s + 8].try_into().unwrap()), e - s)
    } else {
        vocab.rank(&piece[s..e])
    };
    r.unwrap_or(NONE)
}

/// `merge_scan` for pieces of at most 16 bytes, branch-free in its inner loops: the arrays
/// are scanned and shifted over their whole fixed width (entries past the last part hold NONE
/// pairs and the end offset), which costs a few more instructions than loops bounded by the
/// part count but no mispredicted loop exits, the most common cost of the variable loops
/// (and of the `memmove` calls behind `copy_within`) on the 5-15 byte pieces real text misses.
fn merge_scan16<S: Sink>(vocab: &Vocab, piece: &[u8], buf: &[u8; SMALL + 8], out: &mut S) {
    const CAP: usize = 16;
    let n = piece.len();
    debug_assert!((2..=CAP).contains(&n));
    // start[i]: where part i begins; start[parts..] = n, so part i ends at start[i + 1].
    let mut start = [n as u32; CAP + 1];
    let mut tok = [0u32; CAP];
    // pair[i]: rank of parts i and i+1 joined; NONE from parts - 1 on.
    let mut pair = [NONE; CAP];
    for i in 0..n {
        start[i] = i as u32;
        tok[i] = vocab.byte_rank(piece[i]);
    }
    for (i, p) in pair[..n - 1].iter_mut().enumerate() {
        *p = rank_of(vocab, piece, buf, i, i + 2);
    }
    let mut parts = n;
    loop {
        let (mut best, mut best_rank) = (0, NONE);
        for (i, &r) in pair.iter().enumerate() {
            // Strictly less: the leftmost of equal ranks wins.
            let lower = r < best_rank;
            best = if lower { i } else { best };
            best_rank = if lower { r } else { best_rank };
        }
        if best_rank == NONE {
            break;
        }
        tok[best] = best_rank;
        // Part best+1 disappears: everything after it moves down by one.
        for k in 0..CAP {
            let from = if k > best { k + 1 } else { k };
            start[k] = start[from];
            if k + 1 < CAP {
                tok[k] = tok[from];
                pair[k] = pair[from];
            }
        }
        parts -= 1;
        if parts == 1 {
            break;
        }
        let joined = |i: usize| rank_of(vocab, piece, buf, start[i] as usize, start[i + 2] as usize);
        pair[best] = if best + 1 < parts { joined(best) } else { NONE };
        if best > 0 {
            pair[best - 1] = joined(best - 1);
        }
    }
    for &t in &tok[..parts] {
        out.push(t);
    }
}

/// `start[i]` is where part i begins (the last part ends at `n`), `tok[i]` its rank, and
/// `pair[i]` the rank of parts i and i+1 joined, or NONE. Each round finds the lowest pair rank
/// (the leftmost on a tie, as the scan keeps the first minimum), merges, and updates the two
/// pair ranks that changed.
fn merge_scan<const CAP: usize, S: Sink>(vocab: &Vocab, piece: &[u8], buf: &[u8; SMALL + 8], out: &mut S) {
    let n = piece.len();
    debug_assert!((2..=CAP).contains(&n));
    let mut start = [0u32; CAP];
    let mut tok = [0u32; CAP];
    let mut pair = [NONE; CAP];
    for i in 0..n {
        start[i] = i as u32;
        tok[i] = vocab.byte_rank(piece[i]);
    }
    for (i, p) in pair[..n - 1].iter_mut().enumerate() {
        *p = rank_of(vocab, piece, buf, i, i + 2);
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
            rank_of(vocab, piece, buf, start[i] as usize, stop)
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
            crate::encode::bucket::merge_buckets(v, piece, &mut c);
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

    /// Tables that are not a BPE merge order (a token may rank below its own parts), so a merge
    /// can create a pair ranked below the one just merged: the bucket engine's urgent path.
    #[test]
    fn engines_agree_on_random_tables() {
        let mut x: u64 = 0x2545f4914f6cdd1d;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..60 {
            let mut merges: Vec<String> = Vec::new();
            while merges.len() < 25 {
                let len = 2 + rnd(4) as usize;
                let t: String = (0..len).map(|_| b"abc"[rnd(3) as usize] as char).collect();
                if !merges.contains(&t) {
                    merges.push(t);
                }
            }
            let refs: Vec<&str> = merges.iter().map(|s| s.as_str()).collect();
            let v = vocab(&refs);
            for len in [2, 3, 5, 9, 17, 40, 150, 400] {
                let s: Vec<u8> = (0..len).map(|_| b"abc"[rnd(3) as usize]).collect();
                let want = merge_reference(&v, &s);
                // Like tiktoken, encode_piece returns a piece that is itself a token as that
                // token, which in such a table can differ from merging it; compare the engines.
                for got in &all_engines(&v, &s)[1..] {
                    assert_eq!(got, &want, "{merges:?} {:?}", String::from_utf8_lossy(&s));
                }
            }
        }
    }
}
