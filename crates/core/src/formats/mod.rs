//! Vocabulary file formats read and written in Rust (the binary ones, and tiktoken text for speed):
//! - [`tiktoken`]: `base64(token) rank` lines (`.tiktoken`, Llama 3's `tokenizer.model`);
//! - [`bpe2`]: the compact binary table (64-byte header, (offset, length) per id, one blob), and BPZ2;
//! - [`leap`]: llama2.c scored vocabulary (`tokenizer.bin`);
//! - [`qtkr`]: QTKR merge-list vocabulary;
//! - [`hf`]: HF `tokenizer.json` (BPE models), streamed with serde_json;
//! - [`gpt2`]: GPT-2's `encoder.json` + `vocab.bpe`, spelled with [`byte_level`]'s byte table
//!   (as HF's ByteLevel tokens are);
//! - [`sentencepiece`]: SentencePiece `.model` (protobuf ModelProto, read by [`protobuf`]).
//!
//! Every reader takes the whole file as bytes and answers a [`crate::Error::Format`] that says
//! where the problem is; none trusts a count or offset before checking it against the size.

pub mod bpe2;
pub mod byte_level;
pub mod gpt2;
pub mod hf;
pub mod leap;
pub mod protobuf;
pub mod qtkr;
pub mod sentencepiece;
pub mod tiktoken;
