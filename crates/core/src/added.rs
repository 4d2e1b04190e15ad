//! Added tokens: the spellings a tokenizer finds in the text before anything else runs, and the
//! caller's policy on which of them count. One mechanism serves every model:
//!
//! - tiktoken's special tokens (and SentencePiece's control pieces, LEAP's and QTKR's BOS/EOS)
//!   are added tokens with no flags;
//! - Hugging Face `tokenizers`' added tokens carry four flags:
//!   - `normalized`: matched in the *normalized* text (its own spelling normalized alike);
//!     otherwise in the raw text. Raw tokens are found first, then the text between them is
//!     normalized and searched for the normalized ones, so a raw token wins any overlap.
//!   - `single_word`: a match counts only if the characters on both sides are not word
//!     characters (Unicode `\w`: alphabetic, marks, decimal digits, connector punctuation,
//!     join controls) or it touches the edge of the searched text.
//!   - `lstrip` / `rstrip`: the match absorbs the whitespace (Unicode `White_Space`) on its
//!     left / right, which then belongs to no other piece; on the left never past the end of
//!     the previous match.
//!
//! The policy ([`SpecialFilter`]) names the *special* tokens a call takes as tokens; the others'
//! spellings are plain text there. Non-special added tokens are part of the ordinary vocabulary
//! and always count. What happens after a match the policy refuses is where the two families
//! differ, so each has its search:
//! - [`AddedTokens::next_allowed`] is tiktoken's: the search starts again one byte after the
//!   refused match's start (so an allowed token overlapping a refused one is still found);
//! - [`AddedTokens::split`] is HF's: the search goes on after the refused match.
//!
//! And [`AddedTokens::find_any`] is the disallowed-special check: any occurrence of a refused
//! spelling, even one overlapping an allowed match, as tiktoken's check sees it.
//!
//! Each search is a leftmost-longest Aho-Corasick pass: O(n) per pass plus O(1) per match. The
//! automata are built on first use (plain `encode_ordinary` never needs them, and a model with
//! hundreds of control pieces, Mistral v3's 750, spent a tenth of its load building them).

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};

use crate::error::{Error, Result};

/// One added token, as `tokenizer.json`'s `added_tokens` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedToken {
    pub id: u32,
    pub content: String,
    pub special: bool,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    pub normalized: bool,
}

impl AddedToken {
    /// A special token matched verbatim with no flags (tiktoken's special tokens, QTKR's
    /// BOS/EOS/PAD).
    pub fn special(content: String, id: u32) -> Self {
        AddedToken { id, content, special: true, single_word: false, lstrip: false, rstrip: false, normalized: false }
    }
}

/// Which special tokens a call treats as special (allowed) or refuses (disallowed).
#[derive(Debug, Clone)]
pub enum SpecialFilter {
    None,
    All,
    /// Sorted ids.
    Ids(Vec<u32>),
}

impl SpecialFilter {
    pub fn from_ids(mut ids: Vec<u32>) -> Self {
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            SpecialFilter::None
        } else {
            SpecialFilter::Ids(ids)
        }
    }

    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        match self {
            SpecialFilter::None => false,
            SpecialFilter::All => true,
            SpecialFilter::Ids(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, SpecialFilter::None)
    }

    /// Whether a match of `t` counts under this policy: always for a non-special added token.
    #[inline]
    fn admits(&self, t: &AddedToken) -> bool {
        !t.special || self.contains(t.id)
    }
}

/// A found added token: its byte range in the searched text, its id, and which token matched
/// (an index into [`AddedTokens::tokens`]; an id can have two spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddedMatch {
    pub start: usize,
    pub end: usize,
    pub id: u32,
    pub token: usize,
}

/// A part of the searched text: plain text (with its byte offset) or an added token's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'t> {
    Text(usize, &'t str),
    Token(u32),
}

/// Most bytes, summed over the spellings, for which the matchers are DFAs.
const DFA_MAX_BYTES: usize = 4096;

/// Spellings totalling at least this many bytes build their automata at load, so that a
/// failure is a load error; below it a build cannot fail (the automata's states are bounded by
/// the bytes) and waits for the first call that searches.
const LAZY_MAX_BYTES: usize = 1 << 24;

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

/// One automaton over some of the tokens' spellings.
#[derive(Debug, Clone)]
struct Pass {
    matcher: AhoCorasick,
    /// Pattern index -> index into `AddedTokens::tokens`.
    token: Vec<usize>,
}

impl Pass {
    /// `spellings` as (token index, spelling); None when there are none.
    fn build(spellings: Vec<(usize, &str)>, kind: MatchKind) -> Result<Option<Pass>> {
        if spellings.is_empty() {
            return Ok(None);
        }
        let matcher = AhoCorasickBuilder::new()
            .match_kind(kind)
            .kind(Some(automaton_kind(spellings.iter().map(|s| s.1.len()))))
            .build(spellings.iter().map(|s| s.1.as_bytes()))
            .map_err(|e| Error::Vocab(format!("added tokens: {e}")))?;
        Ok(Some(Pass { matcher, token: spellings.into_iter().map(|s| s.0).collect() }))
    }
}

#[derive(Debug, Clone)]
struct Matchers {
    /// Leftmost-longest over the tokens matched in raw text.
    raw: Option<Pass>,
    /// Leftmost-longest over the normalized spellings of the `normalized` tokens.
    normalized: Option<Pass>,
    /// Every occurrence of a special token's spelling (the disallowed check).
    overlapping: Option<Pass>,
}

/// A tokenizer's added tokens and their matchers.
#[derive(Debug, Clone)]
pub struct AddedTokens {
    tokens: Vec<AddedToken>,
    /// What each `normalized` token matches in normalized text (None for the others).
    normalized_spelling: Vec<Option<String>>,
    /// `(spelling, id)` of the special tokens, in order: what `allowed_special` names.
    specials: Vec<(String, u32)>,
    /// The longest special spelling, in bytes (bounds the overlapping search).
    max_special_len: usize,
    matchers: OnceLock<Matchers>,
}

fn word_char(c: char) -> bool {
    static WORD: OnceLock<Option<regex_automata::meta::Regex>> = OnceLock::new();
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    let mut buf = [0u8; 4];
    WORD.get_or_init(|| regex_automata::meta::Regex::new(r"\w").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(c.encode_utf8(&mut buf).as_bytes()))
}

impl AddedTokens {
    /// `tokens` in HF's order (special tokens first, then the others, each in file order: on
    /// equal spellings the first wins). `normalize` turns a normalized token's spelling into
    /// what it matches in normalized text. Tokens with an empty spelling are never matched.
    pub fn new(tokens: Vec<AddedToken>, normalize: impl Fn(&str) -> String) -> Result<Self> {
        let normalized_spelling = tokens.iter().map(|t| t.normalized.then(|| normalize(&t.content))).collect();
        let specials: Vec<(String, u32)> = tokens.iter().filter(|t| t.special).map(|t| (t.content.clone(), t.id)).collect();
        let max_special_len = specials.iter().map(|s| s.0.len()).max().unwrap_or(0);
        let added = AddedTokens { tokens, normalized_spelling, specials, max_special_len, matchers: OnceLock::new() };
        let bytes: usize = added.tokens.iter().map(|t| t.content.len()).sum();
        if bytes >= LAZY_MAX_BYTES {
            let _ = added.matchers.set(added.build()?);
        }
        Ok(added)
    }

    /// Special tokens with no flags, `(spelling, id)` in order: tiktoken's, and the control
    /// pieces and BOS/EOS of the score and merge-list formats.
    pub fn from_specials(specials: Vec<(String, u32)>) -> Result<Self> {
        Self::new(specials.into_iter().map(|(s, id)| AddedToken::special(s, id)).collect(), str::to_owned)
    }

    fn build(&self) -> Result<Matchers> {
        fn live(i: usize, s: &str) -> Option<(usize, &str)> {
            (!s.is_empty()).then_some((i, s))
        }
        let t = &self.tokens;
        let raw = t.iter().enumerate().filter(|(_, t)| !t.normalized).filter_map(|(i, t)| live(i, &t.content)).collect();
        let normalized = self.normalized_spelling.iter().enumerate().filter_map(|(i, s)| live(i, s.as_deref()?)).collect();
        let special = t.iter().enumerate().filter(|(_, t)| t.special).filter_map(|(i, t)| live(i, &t.content)).collect();
        Ok(Matchers {
            raw: Pass::build(raw, MatchKind::LeftmostLongest)?,
            normalized: Pass::build(normalized, MatchKind::LeftmostLongest)?,
            overlapping: Pass::build(special, MatchKind::Standard)?,
        })
    }

    fn matchers(&self) -> &Matchers {
        // Below LAZY_MAX_BYTES a build cannot fail (see there); at or above it, `new` built them.
        self.matchers.get_or_init(|| self.build().expect("added-token spellings under LAZY_MAX_BYTES always build"))
    }

    pub fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    /// The special tokens' `(spelling, id)`, in order, without building a matcher.
    pub fn special_list(&self) -> &[(String, u32)] {
        &self.specials
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether any token is matched in normalized text.
    pub fn has_normalized(&self) -> bool {
        self.normalized_spelling.iter().any(Option::is_some)
    }

    /// The id of a special token's spelling.
    pub fn special_id(&self, spelling: &str) -> Option<u32> {
        self.specials.iter().find(|t| t.0 == spelling).map(|t| t.1)
    }

    /// The spelling of a match.
    pub fn spelling(&self, m: &AddedMatch) -> &str {
        &self.tokens[m.token].content
    }

    /// tiktoken's search: the first added token at or after byte `from`, matched in raw text,
    /// that `allowed` admits. A refused match is skipped one byte at a time (spellings are
    /// valid UTF-8 starting with a whole character, so the next match cannot begin inside the
    /// refused one's first byte), so an allowed token that overlaps it is still found.
    pub fn next_allowed(&self, text: &str, mut from: usize, allowed: &SpecialFilter) -> Option<AddedMatch> {
        let pass = self.matchers().raw.as_ref()?;
        while from <= text.len() {
            let m = pass.matcher.find(Input::new(text).span(from..text.len()))?;
            let token = pass.token[m.pattern().as_usize()];
            let t = &self.tokens[token];
            if allowed.admits(t) {
                return Some(AddedMatch { start: m.start(), end: m.end(), id: t.id, token });
            }
            from = m.start() + 1;
        }
        None
    }

    /// The first occurrence (smallest start, then longest) of a special token that `wanted`
    /// names, looking at overlapping occurrences too: the disallowed-special check.
    pub fn find_any(&self, text: &str, wanted: impl Fn(u32) -> bool) -> Option<AddedMatch> {
        let pass = self.matchers().overlapping.as_ref()?;
        let mut best: Option<AddedMatch> = None;
        for m in pass.matcher.find_overlapping_iter(text) {
            let token = pass.token[m.pattern().as_usize()];
            let id = self.tokens[token].id;
            if !wanted(id) {
                continue;
            }
            let cand = AddedMatch { start: m.start(), end: m.end(), id, token };
            best = match best {
                None => Some(cand),
                Some(b) if (cand.start, std::cmp::Reverse(cand.end)) < (b.start, std::cmp::Reverse(b.end)) => Some(cand),
                keep => keep,
            };
            // Overlapping matches come in order of their end. Once one ends further than the
            // longest spelling past the best start, no later match can start before it.
            if let Some(b) = best {
                if m.end() > b.start + self.max_special_len {
                    break;
                }
            }
        }
        best
    }

    /// HF's search: cuts `text` into plain parts and added tokens (the raw pass, or the
    /// normalized pass when `normalized`), calling `f` for each in order; a match `allowed`
    /// refuses, or `single_word` rejects, is skipped and the search goes on after it. Empty
    /// plain parts are not reported.
    pub fn split<'t>(&self, text: &'t str, normalized: bool, allowed: &SpecialFilter, mut f: impl FnMut(Part<'t>)) {
        let m = if self.tokens.is_empty() { None } else { Some(self.matchers()) };
        let pass = m.and_then(|m| if normalized { m.normalized.as_ref() } else { m.raw.as_ref() });
        let Some(pass) = pass else {
            if !text.is_empty() {
                f(Part::Text(0, text));
            }
            return;
        };
        let mut done = 0;
        for m in pass.matcher.find_iter(text) {
            let t = &self.tokens[pass.token[m.pattern().as_usize()]];
            if !allowed.admits(t) {
                continue;
            }
            let (mut start, mut end) = (m.start(), m.end());
            if t.single_word {
                let before = text[..start].chars().next_back().is_some_and(word_char);
                let after = text[end..].chars().next().is_some_and(word_char);
                if before || after {
                    continue;
                }
            }
            if t.lstrip {
                let trimmed = text[..start].trim_end_matches(char::is_whitespace).len();
                start = trimmed.max(done);
            }
            if t.rstrip {
                end = text.len() - text[end..].trim_start_matches(char::is_whitespace).len();
            }
            // A match can start inside the whitespace the previous one absorbed; its text is
            // already consumed, only its id remains.
            if start > done {
                f(Part::Text(done, &text[done..start]));
            }
            f(Part::Token(t.id));
            done = end.max(done);
        }
        if done < text.len() {
            f(Part::Text(done, &text[done..]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(content: &str, id: u32) -> AddedToken {
        AddedToken { id, content: content.into(), special: false, single_word: false, lstrip: false, rstrip: false, normalized: false }
    }

    fn parts(v: &AddedTokens, text: &str, allowed: &SpecialFilter) -> Vec<String> {
        let mut out = vec![];
        v.split(text, false, allowed, |p| {
            out.push(match p {
                Part::Text(_, s) => s.to_string(),
                Part::Token(id) => format!("#{id}"),
            })
        });
        out
    }

    #[test]
    fn flags() {
        let mut mask = tok("<mask>", 0);
        mask.single_word = true;
        let v = AddedTokens::new(vec![mask], |s| s.to_string()).unwrap();
        assert_eq!(parts(&v, "<mask> a<mask> <mask>b <mask>", &SpecialFilter::None), ["#0", " a<mask> <mask>b ", "#0"]);
        let mut m = tok("<m>", 1);
        m.lstrip = true;
        m.rstrip = true;
        let v = AddedTokens::new(vec![m], |s| s.to_string()).unwrap();
        assert_eq!(parts(&v, "a \t<m>\u{2000} b<m>", &SpecialFilter::None), ["a", "#1", "b", "#1"]);
    }

    /// `<ab>` refused and `b>x` allowed, overlapping in "<ab>x": tiktoken's rule retries one
    /// byte on and finds `b>x`; HF's goes on after `<ab>` and finds nothing.
    #[test]
    fn the_two_rules_after_a_refused_match() {
        let v = AddedTokens::from_specials(vec![("<ab>".into(), 7), ("b>x".into(), 8)]).unwrap();
        let only_8 = SpecialFilter::from_ids(vec![8]);
        let m = v.next_allowed("<ab>x", 0, &only_8).unwrap();
        assert_eq!((m.start, m.id, v.spelling(&m)), (2, 8, "b>x"));
        assert_eq!(parts(&v, "<ab>x", &only_8), ["<ab>x"]);
        // The disallowed check sees both.
        assert_eq!(v.find_any("<ab>x", |id| id == 8).map(|m| m.start), Some(2));
        assert_eq!(v.find_any("<ab>x", |_| true).map(|m| m.id), Some(7));
    }

    #[test]
    fn non_special_tokens_always_count() {
        let v = AddedTokens::new(vec![tok("<x>", 3), AddedToken::special("<s>".into(), 4)], str::to_owned).unwrap();
        assert_eq!(parts(&v, "a<x>b<s>", &SpecialFilter::None), ["a", "#3", "b<s>"]);
        assert_eq!(v.special_list(), [("<s>".to_string(), 4)]);
        assert!(v.next_allowed("<s>", 0, &SpecialFilter::None).is_none());
    }
}
