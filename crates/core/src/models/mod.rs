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
//! Models never import [`crate::formats`]: a format reads a file into plain data
//! ([`crate::spec`] and the stages' own types) and a model is built from that.

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
