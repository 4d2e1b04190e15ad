//! Merge engines: turn one pre-tokenized piece into token ids.
//!
//! - [`rank`]: tiktoken's rank BPE (merge the adjacent pair whose concatenation has the lowest
//!   rank, leftmost first), used by cl100k, o200k, Llama 3 and every `.tiktoken` vocabulary.
//! - [`merges`]: merge-list BPE (QTKR, GPT-2 and HF merges): the pair listed first merges first.
//! - [`score`]: SentencePiece / llama2.c score BPE (merge the pair whose piece scores highest).

pub mod backtrack;
pub mod bucket;
pub mod cache;
pub mod rank;
pub mod merges;
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
