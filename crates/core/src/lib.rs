//! bytepair-core: exact byte-pair encoding with no Python in it.
//!
//! The parts, in the order data flows through them when encoding:
//!
//! - [`added`]: added and special tokens (`<|endoftext|>`, HF's flagged added tokens), found in
//!   the text first, and the policy on which count ([`SpecialFilter`]): one mechanism for every
//!   model.
//! - [`normalizers`]: what text becomes before it is split (HF's Prepend/Replace).
//! - [`pretokenize`]: splits ordinary text into pieces with the encoding's split pattern.
//! - [`vocab`]: the token table (id -> bytes, the BPE2 layout) and its bytes -> rank index.
//! - [`models`]: the three models, each a whole pipeline around its merge engine:
//!   [`models::rank`] (tiktoken's rank BPE, [`Encoder`], tiktoken's `CoreBPE`),
//!   [`models::score`] (SentencePiece / LEAP score BPE), [`models::merges`] (merge lists: QTKR,
//!   HF tokenizer.json).
//! - [`spec`]: the plain data formats read into and models are built from (neither imports
//!   the other).
//! - [`formats`]: readers and writers of vocabulary files (tiktoken text, BPE2/BPZ2, SentencePiece
//!   `.model`, LEAP, QTKR, HF tokenizer.json, GPT-2's encoder.json + vocab.bpe).
//! - [`known`]: the pinned facts (hash, pattern, specials) of the encodings bytepair knows by name.
//! - [`tokenizer`]: [`Tokenizer`], one type over the three models: the surface bindings call.
//! - [`train`]: the BPE trainer (chunk counting, the merge loop).
//! - [`chat`]: a rendered chat conversation (special ids and texts) -> ids and training mask.
//! - [`batch`]: many texts' ids in one buffer with offsets (the flat, Arrow-list layout).
//!
//! Nothing here panics on user input: every failure is an [`Error`].

pub mod batch;
pub mod chat;
pub mod error;
pub mod formats;
pub mod added;
pub mod known;
pub mod models;
pub mod normalizers;
pub mod pretokenize;
pub mod spec;
pub mod tokenizer;
pub mod train;
pub mod vocab;

#[cfg(test)]
mod test_data;

pub use added::SpecialFilter;
pub use models::rank::Encoder;
pub use error::{Error, Result};
pub use models::Model;
pub use tokenizer::{AnyModel, EncodeOptions, SpecialDefaults, Tokenizer};
pub use vocab::Vocab;
