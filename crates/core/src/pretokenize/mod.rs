//! Splitting text into pieces before BPE, exactly as the encoding's split pattern does.
//!
//! The general engine is [`regex::RegexSplitter`] (fancy-regex, the engine tiktoken uses, so
//! the pieces are the same by construction). Patterns of the GPT-2/GPT-4 family that can be
//! rewritten exactly without look-around or possessive quantifiers run on
//! [`automata::AutomataSplitter`] (regex-automata, several times faster). Hand-written
//! scanners for the built-in patterns plug in here as further variants of [`Pretokenizer`],
//! chosen by pattern text, and must give the identical pieces.

pub mod automata;
pub mod regex;

use crate::error::Result;

#[derive(Debug, Clone)]
pub enum Pretokenizer {
    Regex(regex::RegexSplitter),
    /// GPT-2/GPT-4-family patterns rewritten exactly for regex-automata (see `automata.rs`).
    Automata(automata::AutomataSplitter),
}

impl Pretokenizer {
    pub fn new(pattern: &str) -> Result<Self> {
        let general = regex::RegexSplitter::new(pattern)?; // validates the pattern as written
        Ok(match automata::AutomataSplitter::new(pattern) {
            Some(fast) => Pretokenizer::Automata(fast),
            None => Pretokenizer::Regex(general),
        })
    }

    /// Calls `f` with each piece of `text`, in order. The pieces need not cover the text: a
    /// pattern can skip characters it does not match (tiktoken drops them too).
    #[inline]
    pub fn for_each_piece<'t, F: FnMut(&'t str)>(&self, text: &'t str, f: F) -> Result<()> {
        match self {
            Pretokenizer::Regex(r) => r.for_each_piece(text, f),
            Pretokenizer::Automata(a) => {
                a.for_each_piece(text, f);
                Ok(())
            }
        }
    }

    pub fn pattern(&self) -> &str {
        match self {
            Pretokenizer::Regex(r) => r.pattern(),
            Pretokenizer::Automata(a) => a.pattern(),
        }
    }
}
