//! Splitting text into pieces before BPE, exactly as the encoding's split pattern does.
//!
//! - Built-in patterns ([`patterns::BUILTIN`], the one place their texts are written) get
//!   hand-written scanners, chosen when the pattern text is exactly a table entry's:
//!   [`cl100k`] (cl100k_base, Llama 3, nanochat's and minbpe/rustbpe's form of the GPT-4
//!   pattern), [`o200k`] (o200k_base/harmony), [`r50k`] (GPT-2, r50k, p50k). For all
//!   but the regex engines, [`block`] finds the pieces of plain text 64 bytes at a time and the
//!   scanners take the rest. They run a few times faster than any regex engine because
//!   they never backtrack: each reads a class table ([`unicode`], generated from the regex
//!   crate's own Unicode data) and knows where the regex's backtracking would end.
//! - Other patterns of the same family (variants with other digit-run lengths, say) that can
//!   be rewritten exactly without look-around
//!   or possessive quantifiers run on [`automata::AutomataSplitter`] (regex-automata, 4-5x
//!   fancy-regex).
//! - Any other pattern runs on [`regex::RegexSplitter`] (fancy-regex, tiktoken's engine).
//!
//! The scanners must give the regex's pieces on every input; the tests below compare them with
//! fancy-regex on generated text, and the Python suite compares whole encodings with tiktoken.

pub mod prefix;
pub mod automata;
pub mod block;
pub mod cl100k;
pub mod o200k;
pub mod patterns;
pub mod r50k;
pub mod regex;
pub mod scan;
pub mod unicode;

use crate::error::Result;
use patterns::{Builtin, Scanner};

#[derive(Debug, Clone)]
pub enum Pretokenizer {
    /// A built-in pattern, on the hand-written scanner its table entry names.
    Builtin(&'static Builtin),
    /// GPT-2/GPT-4-family patterns rewritten exactly for regex-automata (see `automata.rs`).
    Automata(automata::AutomataSplitter),
    Regex(regex::RegexSplitter),
}

impl Pretokenizer {
    pub fn new(pattern: &str) -> Result<Self> {
        if let Some(builtin) = patterns::find(pattern) {
            return Ok(Pretokenizer::Builtin(builtin));
        }
        let general = regex::RegexSplitter::new(pattern)?; // validates the pattern as written
        Ok(match automata::AutomataSplitter::new(pattern) {
            Some(fast) => Pretokenizer::Automata(fast),
            None => Pretokenizer::Regex(general),
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
            Pretokenizer::Regex(r) => r.for_each_piece(text, f),
            Pretokenizer::Automata(a) => {
                a.for_each_piece(text, f);
                Ok(())
            }
            _ => self.for_each_piece_in(text, 0..text.len(), f),
        }
    }

    /// The pieces of `text` from byte `range.start`, which must be a piece start (see
    /// [`split_points`](Self::split_points)), to `range.end`, as a serial run over the whole
    /// text would give them. The hand-written scanners start scanning at `range.start`; the
    /// regex engines cannot, so they split the whole text and keep the pieces that start
    /// inside the range (correct but a full pass: `split_points` never offers them ranges).
    #[inline]
    pub fn for_each_piece_in<'t, F: FnMut(&'t str)>(
        &self,
        text: &'t str,
        range: std::ops::Range<usize>,
        mut f: F,
    ) -> Result<()> {
        // A closure per arm, each with one call site: one closure shared by the five arms
        // (`&mut piece`) measured 1-1.5% slower here (`stage split`, o200k German and code).
        match self {
            Pretokenizer::Builtin(b) => match b.scanner {
                Scanner::Cl100k => cl100k::for_each_span_cl100k(text, range, |i, j| f(&text[i..j])),
                Scanner::Llama3 => cl100k::for_each_span_llama3(text, range, |i, j| f(&text[i..j])),
                Scanner::Nanochat => cl100k::for_each_span_nanochat(text, range, |i, j| f(&text[i..j])),
                Scanner::O200k => o200k::for_each_span_o200k(text, range, |i, j| f(&text[i..j])),
                Scanner::R50k => r50k::for_each_span_r50k(text, range, |i, j| f(&text[i..j])),
            },
            Pretokenizer::Regex(r) => return r.for_each_piece(text, starting_in(text, range, f)),
            Pretokenizer::Automata(a) => a.for_each_piece(text, starting_in(text, range, f)),
        }
        Ok(())
    }

    /// Byte offsets, about `chunk` bytes apart, where every serial run of this pattern starts a
    /// piece, so the text can be encoded in parallel chunks with the serial output; `None` for
    /// the regex engines.
    ///
    /// The offsets are ASCII letters right after a `\n`. In all the built-in patterns no
    /// alternative can match `\n` and then a letter: the optional first character of the letter
    /// alternatives excludes `\r` and `\n` (GPT-2's allows only a space), the punctuation
    /// alternative ends with `[\r\n]*` (o200k: `[\r\n/]*`), and the rest are digits or
    /// whitespace only. So the piece holding the `\n` ends at the letter.
    pub fn split_points(&self, text: &str, chunk: usize) -> Option<Vec<usize>> {
        if matches!(self, Pretokenizer::Regex(_) | Pretokenizer::Automata(_)) {
            return None;
        }
        let bytes = text.as_bytes();
        let mut points = Vec::new();
        let mut target = chunk.max(1);
        while target < bytes.len() {
            let found = bytes[target..].windows(2).position(|w| w[0] == b'\n' && w[1].is_ascii_alphabetic());
            match found {
                Some(k) => {
                    let p = target + k + 1;
                    points.push(p);
                    target = p + chunk.max(1);
                }
                None => break,
            }
        }
        Some(points)
    }

    pub fn pattern(&self) -> &str {
        match self {
            Pretokenizer::Builtin(b) => b.pattern,
            Pretokenizer::Automata(a) => a.pattern(),
            Pretokenizer::Regex(r) => r.pattern(),
        }
    }

    /// Which splitter runs: a built-in pattern's name (its scanner; see [`patterns::BUILTIN`]),
    /// `"automata"` or `"regex"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Pretokenizer::Builtin(b) => b.name,
            Pretokenizer::Automata(_) => "automata",
            Pretokenizer::Regex(_) => "regex",
        }
    }
}

#[cfg(test)]
mod tests;

/// Wraps `f` to see only the pieces of `text` that start inside `range`.
fn starting_in<'t>(text: &'t str, range: std::ops::Range<usize>, mut f: impl FnMut(&'t str)) -> impl FnMut(&'t str) {
    let base = text.as_ptr() as usize;
    move |piece: &'t str| {
        if range.contains(&(piece.as_ptr() as usize - base)) {
            f(piece)
        }
    }
}
