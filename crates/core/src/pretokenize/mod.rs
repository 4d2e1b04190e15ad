//! Splitting text into pieces before BPE, exactly as the encoding's split pattern does.
//!
//! - Built-in patterns get hand-written scanners, chosen when the pattern text is exactly one
//!   they implement: [`cl100k`] (cl100k_base and Llama 3), [`o200k`] (o200k_base/harmony),
//!   [`r50k`] (GPT-2, r50k, p50k). They run a few times faster than any regex engine because
//!   they never backtrack: each reads a class table ([`unicode`], generated from the regex
//!   crate's own Unicode data) and knows where the regex's backtracking would end.
//! - Other patterns of the same family (nanochat's, minbpe/rustbpe's form of the GPT-4 pattern,
//!   variants with other digit-run lengths) that can be rewritten exactly without look-around
//!   or possessive quantifiers run on [`automata::AutomataSplitter`] (regex-automata, 4-5x
//!   fancy-regex).
//! - Any other pattern runs on [`regex::RegexSplitter`] (fancy-regex, tiktoken's engine).
//!
//! The scanners must give the regex's pieces on every input; the tests below compare them with
//! fancy-regex on generated text, and the Python suite compares whole encodings with tiktoken.

pub mod automata;
pub mod cl100k;
pub mod o200k;
pub mod r50k;
pub mod regex;
pub mod scan;
pub mod unicode;

use crate::error::Result;

#[derive(Debug, Clone)]
pub enum Pretokenizer {
    Cl100k,
    Llama3,
    O200k,
    R50k(&'static str),
    /// GPT-2/GPT-4-family patterns rewritten exactly for regex-automata (see `automata.rs`).
    Automata(automata::AutomataSplitter),
    Regex(regex::RegexSplitter),
}

impl Pretokenizer {
    pub fn new(pattern: &str) -> Result<Self> {
        Ok(match pattern {
            cl100k::CL100K_PATTERN => Pretokenizer::Cl100k,
            cl100k::LLAMA3_PATTERN => Pretokenizer::Llama3,
            o200k::O200K_PATTERN => Pretokenizer::O200k,
            r50k::R50K_PATTERN => Pretokenizer::R50k(r50k::R50K_PATTERN),
            r50k::GPT2_PATTERN => Pretokenizer::R50k(r50k::GPT2_PATTERN),
            _ => {
                let general = regex::RegexSplitter::new(pattern)?; // validates the pattern as written
                match automata::AutomataSplitter::new(pattern) {
                    Some(fast) => Pretokenizer::Automata(fast),
                    None => Pretokenizer::Regex(general),
                }
            }
        })
    }

    /// Always the general regex engine, even for a built-in pattern (for tests and benchmarks).
    pub fn new_regex(pattern: &str) -> Result<Self> {
        Ok(Pretokenizer::Regex(regex::RegexSplitter::new(pattern)?))
    }

    /// Calls `f` with each piece of `text`, in order. The pieces need not cover the text: a
    /// pattern can skip characters it does not match (tiktoken drops them too).
    #[inline]
    pub fn for_each_piece<'t, F: FnMut(&'t str)>(&self, text: &'t str, f: F) -> Result<()> {
        match self {
            Pretokenizer::Cl100k => cl100k::for_each_cl100k(text, f),
            Pretokenizer::Llama3 => cl100k::for_each_llama3(text, f),
            Pretokenizer::O200k => o200k::for_each_o200k(text, f),
            Pretokenizer::R50k(_) => r50k::for_each_r50k(text, f),
            Pretokenizer::Automata(a) => a.for_each_piece(text, f),
            Pretokenizer::Regex(r) => return r.for_each_piece(text, f),
        }
        Ok(())
    }

    pub fn pattern(&self) -> &str {
        match self {
            Pretokenizer::Cl100k => cl100k::CL100K_PATTERN,
            Pretokenizer::Llama3 => cl100k::LLAMA3_PATTERN,
            Pretokenizer::O200k => o200k::O200K_PATTERN,
            Pretokenizer::R50k(p) => p,
            Pretokenizer::Automata(a) => a.pattern(),
            Pretokenizer::Regex(r) => r.pattern(),
        }
    }

    /// Which splitter runs: `"cl100k"`, `"llama3"`, `"o200k"`, `"r50k"`, `"automata"` or
    /// `"regex"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Pretokenizer::Cl100k => "cl100k",
            Pretokenizer::Llama3 => "llama3",
            Pretokenizer::O200k => "o200k",
            Pretokenizer::R50k(_) => "r50k",
            Pretokenizer::Automata(_) => "automata",
            Pretokenizer::Regex(_) => "regex",
        }
    }
}

#[cfg(test)]
mod tests;
