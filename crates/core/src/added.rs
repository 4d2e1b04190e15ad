//! Added tokens as Hugging Face `tokenizers` treats them: found in the text before the
//! pre-tokenizer runs, each with four flags.
//!
//! - `normalized`: matched in the *normalized* text (its own spelling normalized alike);
//!   otherwise in the raw text. Raw tokens are found first, then the text between them is
//!   normalized and searched for the normalized ones, so a raw token wins any overlap.
//! - `single_word`: a match counts only if the characters on both sides are not word
//!   characters (Unicode `\w`: alphabetic, marks, decimal digits, connector punctuation, join
//!   controls) or it touches the edge of the searched text.
//! - `lstrip` / `rstrip`: the match absorbs the whitespace (Unicode `White_Space`) on its
//!   left / right, which then belongs to no other piece; on the left never past the end of the
//!   previous match.
//!
//! Each pass is one leftmost-longest Aho-Corasick search; a match rejected by `single_word`
//! (or by the caller's special-token policy) is skipped and the search goes on after it, as
//! HF's does. Cost: O(n) per pass plus O(1) per match.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

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

/// Which special added tokens a call may match (non-special added tokens always match: they are
/// part of the ordinary vocabulary).
#[derive(Debug, Clone, Copy)]
pub enum Allowed<'a> {
    All,
    None,
    /// Sorted ids.
    Only(&'a [u32]),
}

impl Allowed<'_> {
    #[inline]
    fn admits(&self, t: &AddedToken) -> bool {
        !t.special
            || match self {
                Allowed::All => true,
                Allowed::None => false,
                Allowed::Only(ids) => ids.binary_search(&t.id).is_ok(),
            }
    }
}

/// A part of the searched text: plain text (with its byte offset) or an added token's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'t> {
    Text(usize, &'t str),
    Token(u32),
}

#[derive(Debug, Clone)]
struct Pass {
    matcher: AhoCorasick,
    /// Pattern index -> index into `AddedVocab::tokens`.
    token: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct AddedVocab {
    tokens: Vec<AddedToken>,
    raw: Option<Pass>,
    normalized: Option<Pass>,
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

impl AddedVocab {
    /// `tokens` in HF's order (special tokens first, then the others, each in file order: on
    /// equal spellings the first wins). `normalize` turns a normalized token's spelling into
    /// what it matches in normalized text. Tokens with an empty spelling are never matched.
    pub fn new(tokens: Vec<AddedToken>, normalize: impl Fn(&str) -> String) -> Result<Self> {
        let build = |normalized: bool| -> Result<Option<Pass>> {
            let mut patterns = Vec::new();
            let mut token = Vec::new();
            for (i, t) in tokens.iter().enumerate() {
                if t.normalized != normalized {
                    continue;
                }
                let p = if normalized { normalize(&t.content) } else { t.content.clone() };
                if !p.is_empty() {
                    patterns.push(p);
                    token.push(i);
                }
            }
            if patterns.is_empty() {
                return Ok(None);
            }
            // A DFA only for short spellings: see `special::automaton_kind` (linear build).
            let matcher = AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .kind(Some(crate::special::automaton_kind(patterns.iter().map(|p| p.len()))))
                .build(&patterns)
                .map_err(|e| Error::Vocab(format!("added tokens: {e}")))?;
            Ok(Some(Pass { matcher, token }))
        };
        let raw = build(false)?;
        let normalized = build(true)?;
        Ok(AddedVocab { tokens, raw, normalized })
    }

    pub fn tokens(&self) -> &[AddedToken] {
        &self.tokens
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_none() && self.normalized.is_none()
    }

    pub fn has_normalized(&self) -> bool {
        self.normalized.is_some()
    }

    /// Cuts `text` into plain parts and added tokens (the raw pass, or the normalized pass when
    /// `normalized`), calling `f` for each in order. Empty plain parts are not reported.
    pub fn split<'t>(&self, text: &'t str, normalized: bool, allowed: Allowed, mut f: impl FnMut(Part<'t>)) {
        let pass = if normalized { self.normalized.as_ref() } else { self.raw.as_ref() };
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

    fn parts(v: &AddedVocab, text: &str) -> Vec<String> {
        let mut out = vec![];
        v.split(text, false, Allowed::All, |p| {
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
        let v = AddedVocab::new(vec![mask], |s| s.to_string()).unwrap();
        assert_eq!(parts(&v, "<mask> a<mask> <mask>b <mask>"), ["#0", " a<mask> <mask>b ", "#0"]);
        let mut m = tok("<m>", 1);
        m.lstrip = true;
        m.rstrip = true;
        let v = AddedVocab::new(vec![m], |s| s.to_string()).unwrap();
        assert_eq!(parts(&v, "a \t<m>\u{2000} b<m>"), ["a", "#1", "b", "#1"]);
    }
}
