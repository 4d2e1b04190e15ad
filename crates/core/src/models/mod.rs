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

use crate::error::Result;
use crate::added::AddedTokens;
use crate::SpecialFilter;

/// What every model provides to [`crate::Tokenizer`]: its whole pipeline from text to ids and
/// back. Each model keeps what it alone needs (ranks, scores, merge lists) as inherent methods.
///
/// [`crate::Tokenizer`] holds the three implementations in an enum and matches it once per
/// call, so each call runs one model's code, monomorphic and inlined (the rank model's
/// per-piece loop above all), rather than through a `dyn Model`.
pub trait Model {
    /// "rank", "score" or "merge".
    const KIND: &'static str;

    /// Encodes `text` into `out`, the spellings of the `allowed` special tokens becoming
    /// their ids (each model splits them out as its home system does).
    fn encode_into(&self, text: &str, allowed: &SpecialFilter, out: &mut Vec<u32>) -> Result<()>;

    /// Encodes `text` with every special spelling taken as text.
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        self.encode_into(text, &SpecialFilter::None, out)
    }

    /// The decoded bytes, as the model's home system decodes.
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>>;

    /// The bytes of one token as the table stores them (special tokens included).
    fn token_bytes(&self, id: u32) -> Result<&[u8]>;

    /// The id of bytes that are exactly one ordinary token.
    fn ordinary_id(&self, bytes: &[u8]) -> Option<u32>;

    /// The added tokens (special ones among them) and their matchers, built on first use.
    fn added(&self) -> &AddedTokens;

    /// Size of the id space: the largest id + 1.
    fn n_vocab(&self) -> usize;

    /// The model's own BOS/EOS ids, if its format defines them.
    fn bos_eos(&self) -> (Option<u32>, Option<u32>) {
        (None, None)
    }

    /// Forgets the merged pieces the model's cache holds (ids never depend on it).
    fn clear_cache(&self);
}

impl Model for rank::Encoder {
    const KIND: &'static str = "rank";

    #[inline]
    fn encode_into(&self, text: &str, allowed: &SpecialFilter, out: &mut Vec<u32>) -> Result<()> {
        rank::Encoder::encode_into(self, text, allowed, out)
    }
    #[inline]
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        rank::Encoder::encode_ordinary_into(self, text, out)
    }
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        rank::Encoder::decode_bytes(self, ids)
    }
    fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        rank::Encoder::token_bytes(self, id)
    }
    fn ordinary_id(&self, bytes: &[u8]) -> Option<u32> {
        self.vocab().rank(bytes)
    }
    fn added(&self) -> &AddedTokens {
        rank::Encoder::added(self)
    }
    fn n_vocab(&self) -> usize {
        self.vocab().table_len()
    }
    fn clear_cache(&self) {
        // Each thread's table is freed when that thread next encodes.
        self.vocab().forget_cached();
    }
}

impl Model for score::ScoreTokenizer {
    const KIND: &'static str = "score";

    fn encode_into(&self, text: &str, allowed: &SpecialFilter, out: &mut Vec<u32>) -> Result<()> {
        self.encode_allowed_into(text, allowed, out);
        Ok(())
    }
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        self.decode(ids, false)
    }
    fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        score::ScoreTokenizer::token_bytes(self, id)
    }
    fn ordinary_id(&self, bytes: &[u8]) -> Option<u32> {
        self.piece_id(bytes)
    }
    fn added(&self) -> &AddedTokens {
        score::ScoreTokenizer::added(self)
    }
    fn n_vocab(&self) -> usize {
        self.len()
    }
    fn bos_eos(&self) -> (Option<u32>, Option<u32>) {
        (self.bos_id(), self.eos_id())
    }
    fn clear_cache(&self) {
        score::ScoreTokenizer::clear_cache(self)
    }
}

impl Model for merges::MergeTokenizer {
    const KIND: &'static str = "merge";

    fn encode_into(&self, text: &str, allowed: &SpecialFilter, out: &mut Vec<u32>) -> Result<()> {
        merges::MergeTokenizer::encode_into(self, text, allowed, out)
    }
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        merges::MergeTokenizer::decode_bytes(self, ids)
    }
    fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        self.token(id).ok_or(crate::Error::UnknownToken(id))
    }
    fn ordinary_id(&self, bytes: &[u8]) -> Option<u32> {
        self.id(bytes)
    }
    fn added(&self) -> &AddedTokens {
        merges::MergeTokenizer::added(self)
    }
    fn n_vocab(&self) -> usize {
        self.len()
    }
    fn clear_cache(&self) {
        merges::MergeTokenizer::clear_cache(self)
    }
}

/// Where encoded ids go: a buffer, or just a counter (`Encoding.count` builds no list).
pub trait Sink {
    fn push(&mut self, id: u32);
    #[inline]
    fn extend(&mut self, ids: &[u32]) {
        for &id in ids {
            self.push(id);
        }
    }
    /// Pushes the first `k` (1..=4) of `ids`: a piece cache slot's answer. A sink that can
    /// write all four and count `k` of them does so with no branch on `k`.
    #[inline]
    fn push_first(&mut self, ids: [u32; 4], k: usize) {
        for &id in &ids[..k] {
            self.push(id);
        }
    }
}

/// The ids that `encode` appends for a text of `bytes` bytes, as a vector of their own: what
/// the encoders that return a `Vec` share. Room for half an id per byte is reserved first.
/// Real text gives 0.24-0.48 (o200k: English 0.26, German 0.31, Turkish 0.33; cl100k Chinese
/// 0.48), and the quarter reserved before was outgrown by English, German and Turkish alike: a
/// regrow copies every id into fresh pages, which `stage ... encode` (this path) timed at a
/// tenth or more of a warm call. Room never written costs address space, not memory; more than
/// a few thousand ids of it left over are given back, so a returned vector does not hold twice
/// what it needs (shrinking a large block is a `mremap`, not a copy; timed the same as leaving
/// the room in place: `stage`, 5 rounds each against the quarter, warm en 1.053 / 1.068, de
/// 1.051 / 1.054). When the room cannot be had the vector starts empty and grows as it needs.
pub(crate) fn collect_ids(bytes: usize, encode: impl FnOnce(&mut Vec<u32>) -> Result<()>) -> Result<Vec<u32>> {
    let mut ids = Vec::new();
    let _ = ids.try_reserve_exact(bytes / 2 + 16);
    encode(&mut ids)?;
    if ids.capacity() - ids.len() > 4096 {
        ids.shrink_to_fit();
    }
    Ok(ids)
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
    #[inline(always)]
    fn push_first(&mut self, ids: [u32; 4], k: usize) {
        assert!(k <= 4);
        self.reserve(4);
        let len = self.len();
        // Safety: `reserve(4)` leaves room for four more ids after `len`; the first `k` of the
        // four written are initialized and counted, the rest lie beyond the length.
        unsafe {
            self.as_mut_ptr().add(len).cast::<[u32; 4]>().write_unaligned(ids);
            self.set_len(len + k);
        }
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
    #[inline]
    fn push_first(&mut self, _ids: [u32; 4], k: usize) {
        self.0 += k;
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

    /// `push_first` writes exactly the first `k` ids, into a vector that starts with no room
    /// (so its growth is taken too), and a count counts them.
    #[test]
    fn push_first_writes_the_first_k() {
        let (mut v, mut c, mut want) = (Vec::new(), Count::default(), Vec::new());
        for round in 0..40u32 {
            let k = 1 + (round as usize * 7) % 4;
            let ids = [round, round + 100, round + 200, round + 300];
            v.push_first(ids, k);
            c.push_first(ids, k);
            want.extend_from_slice(&ids[..k]);
        }
        assert_eq!(v, want);
        assert_eq!(c.0, want.len());
    }

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
