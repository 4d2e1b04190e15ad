//! Normalizers: what a tokenizer does to text before pre-tokenizing it.
//!
//! The merge-list pipeline (HF tokenizer.json) runs [`Normalizer`]; SentencePiece's own
//! normalization (dummy prefix, whitespace escaping, collapsing runs of spaces) lives with the
//! score model, which applies it to the whole text before segmenting.

use std::borrow::Cow;

/// The space symbol of SentencePiece-derived models.
pub const SPACE: &str = "\u{2581}";

/// The text normalizers read from tokenizer.json (others are refused at load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalizer {
    None,
    /// Llama's `Sequence[Prepend("▁"), Replace(" ", "▁")]`: non-empty text gets "▁" in front and
    /// every space becomes "▁".
    PrependReplace,
}

impl Normalizer {
    pub fn apply<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self {
            Normalizer::PrependReplace if !text.is_empty() => Cow::Owned(format!("{SPACE}{}", text.replace(' ', SPACE))),
            _ => Cow::Borrowed(text),
        }
    }
}

