//! The models: how one pre-tokenized piece becomes token ids, and each model's whole pipeline
//! around that (added tokens, normalizer, pre-tokenizer, decoder), which
//! [`crate::Tokenizer`] puts behind one surface.
//!
//! - [`rank`]: tiktoken's rank BPE ([`rank::Encoder`]): merge the adjacent pair whose
//!   concatenation has the lowest rank, leftmost first. cl100k, o200k, Llama 3 and every
//!   `.tiktoken`, BPE2 and GPT-2 vocabulary. Its engines: whole-piece lookup, the short-piece
//!   merge ([`rank::merge`]), the long-piece walk ([`rank::backtrack`], [`rank::bucket`]) and
//!   the piece cache ([`rank::cache`]).
//! - [`merges`]: merge-list BPE ([`merges::MergeTokenizer`]: QTKR, HF tokenizer.json): the
//!   pair listed first merges first ([`merges::merge`]).
//! - [`score`]: score BPE ([`score::ScoreTokenizer`]: SentencePiece, LEAP / llama2.c): the pair
//!   whose merged piece scores highest merges first ([`score::merge`]).
//!
//! Shared by the score and merge-list models: [`cache`], their piece cache (bytes -> ids, one
//! per tokenizer, shared by its threads), and [`heap`], their merge loop (best adjacent pair
//! first, leftmost on a tie), generic over what "best" means.
//!
//! Models never import [`crate::formats`]: a format reads a file into plain data
//! ([`crate::spec`] and the stages' own types) and a model is built from that.

pub mod cache;
pub mod heap;
pub mod merges;
pub mod rank;
pub mod score;

/// Where encoded ids go: a buffer, or just a counter (`Encoding.count` builds no list).
pub trait Sink {
    fn push(&mut self, id: u32);
    #[inline]
    fn extend(&mut self, ids: &[u32]) {
        for &id in ids {
            self.push(id);
        }
    }
}

impl Sink for Vec<u32> {
    #[inline]
    fn push(&mut self, id: u32) {
        Vec::push(self, id)
    }
    #[inline]
    fn extend(&mut self, ids: &[u32]) {
        self.extend_from_slice(ids)
    }
}

/// Counts ids instead of storing them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Count(pub usize);

impl Sink for Count {
    #[inline]
    fn push(&mut self, _id: u32) {
        self.0 += 1;
    }
    #[inline]
    fn extend(&mut self, ids: &[u32]) {
        self.0 += ids.len();
    }
}

/// Equality of two slices of the same length, without a libc call for the short keys that
/// dominate lookups (most pieces are under 16 bytes): two overlapping fixed-size loads cover
/// any length from 4 to 16, and three byte reads any length below 4.
#[inline(always)]
pub fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => a == b,
    }
}

#[inline(always)]
pub(crate) fn u64_at(s: &[u8], i: usize) -> u64 {
    u64::from_ne_bytes([s[i], s[i + 1], s[i + 2], s[i + 3], s[i + 4], s[i + 5], s[i + 6], s[i + 7]])
}

#[inline(always)]
pub(crate) fn u32_at(s: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_eq_every_length() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(short_eq(&a, &a.clone()));
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x55;
                assert!(!short_eq(&a, &b), "length {n}, byte {i}");
            }
            assert!(!short_eq(&a, &[0u8; 41][..n + 1]));
        }
    }
}
