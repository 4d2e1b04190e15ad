//! bytepair-core: exact byte-pair encoding with no Python in it.
//!
//! The parts, in the order data flows through them when encoding:
//!
//! - [`special`]: finds special-token spellings (`<|endoftext|>`) in text, one pass for all of them.
//! - [`normalizers`]: what text becomes before it is split (HF's Prepend/Replace).
//! - [`pretokenize`]: splits ordinary text into pieces with the encoding's split pattern.
//! - [`vocab`]: the token table (id -> bytes, the BPE2 layout) and its bytes -> rank index.
//! - [`models`]: the three models, each a whole pipeline around its merge engine:
//!   [`models::rank`] (tiktoken's rank BPE, [`Encoder`], tiktoken's `CoreBPE`),
//!   [`models::score`] (SentencePiece / LEAP score BPE), [`models::merges`] (merge lists: QTKR,
//!   HF tokenizer.json).
//! - [`added`]: HF added tokens and their flags (`lstrip`, `rstrip`, `single_word`, `normalized`).
//! - [`spec`]: the plain data formats read into and models are built from (neither imports
//!   the other).
//! - [`formats`]: readers and writers of vocabulary files (tiktoken text, BPE2/BPZ2, SentencePiece
//!   `.model`, LEAP, QTKR, HF tokenizer.json, GPT-2's encoder.json + vocab.bpe).
//! - [`known`]: the pinned facts (hash, pattern, specials) of the encodings bytepair knows by name.
//! - [`tokenizer`]: [`Tokenizer`], one type over the three models: the surface bindings call.
//! - [`train`]: the BPE trainer (chunk counting, the merge loop).
//!
//! Nothing here panics on user input: every failure is an [`Error`].

pub mod error;
pub mod formats;
pub mod added;
pub mod known;
pub mod models;
pub mod normalizers;
pub mod pretokenize;
pub mod spec;
pub mod special;
pub mod tokenizer;
pub mod train;
pub mod vocab;

#[cfg(test)]
mod test_data;

pub use models::rank::{Encoder, SpecialFilter};
pub use error::{Error, Result};
pub use models::Model;
pub use tokenizer::{AnyModel, EncodeOptions, SpecialDefaults, Tokenizer};
pub use vocab::Vocab;
