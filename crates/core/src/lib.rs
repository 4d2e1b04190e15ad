//! bytepair-core: exact byte-pair encoding with no Python in it.
//!
//! The parts, in the order data flows through them when encoding:
//!
//! - [`special`]: finds special-token spellings (`<|endoftext|>`) in text, one pass for all of them.
//! - [`pretokenize`]: splits ordinary text into pieces with the encoding's split pattern.
//! - [`vocab`]: the token table (id -> bytes, the BPE2 layout) and its bytes -> rank index.
//! - [`encode`]: the merge engines; [`encode::rank`] is tiktoken's rank BPE.
//! - [`encoder`]: [`Encoder`] ties the three together: tiktoken's `CoreBPE`.
//! - [`unstable`]: `encode` with the count of the last piece's ids, for tiktoken's
//!   `encode_with_unstable` and `_encode_bytes`.
//! - [`scored`]: [`scored::ScoreTokenizer`], the SentencePiece / LEAP score-BPE pipeline.
//! - [`merged`]: [`merged::MergeTokenizer`], the merge-list (QTKR, HF BPE) pipeline.
//! - [`added`]: HF added tokens and their flags (`lstrip`, `rstrip`, `single_word`, `normalized`).
//! - [`formats`]: readers and writers of vocabulary files (tiktoken text, BPE2/BPZ2, SentencePiece
//!   `.model`, LEAP, QTKR, HF tokenizer.json, GPT-2's encoder.json + vocab.bpe).
//! - [`train`]: the BPE trainer (chunk counting, the merge loop).
//!
//! Nothing here panics on user input: every failure is an [`Error`].

pub mod encode;
pub mod encoder;
pub mod error;
pub mod formats;
pub mod added;
pub mod merged;
pub mod pretokenize;
pub mod scored;
pub mod special;
pub mod train;
pub mod unstable;
pub mod vocab;

pub use encoder::{Encoder, SpecialFilter};
pub use error::{Error, Result};
pub use vocab::Vocab;
