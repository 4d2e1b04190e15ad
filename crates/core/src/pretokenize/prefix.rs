//! The prefix rule some pre-tokenizers apply to each part of the text before splitting it
//! (HF's `ByteLevel(add_prefix_space)` and non-splitting `Metaspace`).

use std::borrow::Cow;

use crate::normalizers::SPACE;

/// What the pre-tokenizer does to each part before splitting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    None,
    /// `ByteLevel(add_prefix_space=true)`: a space in front unless the part starts with one.
    Space,
    /// Non-splitting `Metaspace`: spaces become "▁" and "▁" goes in front unless the part
    /// starts with it; with `first_only` only for the part at the start of the text.
    Metaspace { first_only: bool },
}


impl Prefix {
    /// `text` (one part between added tokens; `at_start`: the part begins the whole text) with
    /// the rule applied.
    pub fn apply<'t>(&self, text: &'t str, at_start: bool) -> Cow<'t, str> {
        match *self {
            Prefix::None => Cow::Borrowed(text),
            Prefix::Space if text.starts_with(' ') || text.is_empty() => Cow::Borrowed(text),
            Prefix::Space => Cow::Owned(format!(" {text}")),
            Prefix::Metaspace { first_only } => {
                let t = text.replace(' ', SPACE);
                if t.is_empty() || t.starts_with(SPACE) || (first_only && !at_start) {
                    Cow::Owned(t)
                } else {
                    Cow::Owned(format!("{SPACE}{t}"))
                }
            }
        }
    }
}
