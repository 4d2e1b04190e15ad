//! Finding special-token spellings in text.
//!
//! One Aho-Corasick automaton over all spellings replaces tiktoken's regex alternation. Two
//! searches are needed, with different semantics:
//! - while encoding, the leftmost match at or after a position (tiktoken's `find_from_pos`);
//! - for the disallowed-special check, *any* occurrence of a disallowed spelling, even one that
//!   overlaps an allowed match, so that check uses overlapping search.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};

use crate::error::{Error, Result};

/// A found special token: byte range in the text and its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialMatch {
    pub start: usize,
    pub end: usize,
    pub id: u32,
    /// Which spelling matched (an index into [`SpecialTokens::tokens`]); ids can have aliases.
    pub spelling: usize,
}

/// Most bytes, summed over the spellings, for which the matchers are DFAs.
const DFA_MAX_BYTES: usize = 4096;

/// The automaton for spellings of these lengths: a DFA (the fastest search) when they are
/// short in total, as every real vocabulary's are, else a contiguous NFA. Building the DFA
/// takes time quadratic in a spelling's length when it repeats one character ("aaa...a"
/// followed failure links state by state: 40,000 characters took 6.6 s, 10 MB did not
/// finish); the NFA is built in linear time and searches in linear time too.
pub(crate) fn automaton_kind(lengths: impl IntoIterator<Item = usize>) -> AhoCorasickKind {
    if lengths.into_iter().sum::<usize>() <= DFA_MAX_BYTES {
        AhoCorasickKind::DFA
    } else {
        AhoCorasickKind::ContiguousNFA
    }
}

#[derive(Debug, Clone)]
pub struct SpecialTokens {
    /// (spelling, id), in the order given.
    tokens: Vec<(String, u32)>,
    leftmost: Option<AhoCorasick>,
    overlapping: Option<AhoCorasick>,
    max_len: usize,
}

impl SpecialTokens {
    pub fn new(tokens: Vec<(String, u32)>) -> Result<Self> {
        if tokens.is_empty() {
            return Ok(SpecialTokens { tokens, leftmost: None, overlapping: None, max_len: 0 });
        }
        let kind = automaton_kind(tokens.iter().map(|t| t.0.len()));
        let build = |match_kind| {
            AhoCorasickBuilder::new()
                .match_kind(match_kind)
                .kind(Some(kind))
                .build(tokens.iter().map(|t| t.0.as_bytes()))
                .map_err(|e| Error::Vocab(format!("special tokens: {e}")))
        };
        let leftmost = Some(build(MatchKind::LeftmostLongest)?);
        let overlapping = Some(build(MatchKind::Standard)?);
        let max_len = tokens.iter().map(|t| t.0.len()).max().unwrap_or(0);
        Ok(SpecialTokens { tokens, leftmost, overlapping, max_len })
    }

    pub fn tokens(&self) -> &[(String, u32)] {
        &self.tokens
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The id of a spelling, if it is a special token.
    pub fn id(&self, spelling: &str) -> Option<u32> {
        self.tokens.iter().find(|t| t.0 == spelling).map(|t| t.1)
    }

    /// The leftmost (then longest) special token starting at or after `from`.
    pub fn find_from(&self, text: &str, from: usize) -> Option<SpecialMatch> {
        let ac = self.leftmost.as_ref()?;
        let m = ac.find(Input::new(text).span(from..text.len()))?;
        let spelling = m.pattern().as_usize();
        Some(SpecialMatch { start: m.start(), end: m.end(), id: self.tokens[spelling].1, spelling })
    }

    /// The first occurrence (smallest start, then longest) of a special token accepted by
    /// `wanted`, looking at overlapping occurrences too.
    pub fn find_any(&self, text: &str, wanted: impl Fn(u32) -> bool) -> Option<SpecialMatch> {
        let ac = self.overlapping.as_ref()?;
        let mut best: Option<SpecialMatch> = None;
        for m in ac.find_overlapping_iter(text) {
            let spelling = m.pattern().as_usize();
            let id = self.tokens[spelling].1;
            if !wanted(id) {
                continue;
            }
            let cand = SpecialMatch { start: m.start(), end: m.end(), id, spelling };
            best = match best {
                None => Some(cand),
                Some(b) if (cand.start, std::cmp::Reverse(cand.end)) < (b.start, std::cmp::Reverse(b.end)) => Some(cand),
                keep => keep,
            };
            // Overlapping matches come in order of their end. Once one ends further than the
            // longest spelling past the best start, no later match can start before it.
            if let Some(b) = best {
                if m.end() > b.start + self.max_len {
                    break;
                }
            }
        }
        best
    }
}
