//! [`Encoder`]: special tokens + pre-tokenizer + vocabulary + merge engine, the whole encode and
//! decode path for rank BPE. It is tiktoken's `CoreBPE`, and holds no per-call state, so one
//! instance is shared by every thread.

pub mod backtrack;
pub mod bucket;
pub mod cache;
pub mod chars;
pub mod cuts;
pub mod merge;
pub mod unstable;

use crate::models::{Count, Sink};
use cache::PieceCache;
use merge::encode_piece;
use crate::error::{Error, Result};
use crate::pretokenize::Pretokenizer;
use crate::added::{AddedMatch, AddedTokens, SpecialFilter};
use crate::vocab::Vocab;

#[derive(Debug, Clone)]
pub struct Encoder {
    vocab: Vocab,
    pretokenizer: Pretokenizer,
    /// tiktoken's special tokens: added tokens with no flags.
    added: AddedTokens,
}

impl Encoder {
    /// `specials` are `(spelling, id)`; their ids must already be in `vocab`'s table.
    pub fn new(vocab: Vocab, pattern: &str, specials: Vec<(String, u32)>) -> Result<Self> {
        for (spelling, id) in &specials {
            // The table holds this spelling at the id, another spelling of the same special
            // token (an alias), or a mergeable token that the special token shares its id with
            // (as tiktoken allows; see `Vocab::new`).
            if vocab.token(*id).is_none() {
                return Err(Error::Vocab(format!(
                    "special token {spelling:?} (id {id}) is not in the token table as a special token"
                )));
            }
        }
        Ok(Encoder {
            vocab,
            pretokenizer: Pretokenizer::new(pattern)?,
            added: AddedTokens::from_specials(specials)?,
        })
    }

    /// Builds the vocabulary and the encoder in one step.
    pub fn from_ranks<'a>(
        mergeable: impl IntoIterator<Item = (&'a [u8], u32)>,
        specials: Vec<(String, u32)>,
        pattern: &str,
    ) -> Result<Self> {
        let vocab = Vocab::new(mergeable, specials.iter().map(|(s, id)| (s.as_bytes(), *id)))?;
        Self::new(vocab, pattern, specials)
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    pub fn added(&self) -> &AddedTokens {
        &self.added
    }
    pub(crate) fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretokenizer
    }
    pub fn pattern(&self) -> &str {
        self.pretokenizer.pattern()
    }
    /// Which pre-tokenizer runs the pattern (see [`Pretokenizer::kind`]).
    pub fn splitter(&self) -> &'static str {
        self.pretokenizer.kind()
    }

    /// Encodes text with no special-token handling at all.
    pub fn encode_ordinary_into<S: Sink>(&self, text: &str, out: &mut S) -> Result<()> {
        match &self.pretokenizer {
            // The regex engines split the whole text; the hand-written scanners take the
            // range path (the same one parallel chunks use).
            Pretokenizer::Regex(_) | Pretokenizer::Automata(_) => {
                let mut cache = None;
                self.pretokenizer.for_each_piece(text, |piece| self.piece(&mut cache, text, piece, out))
            }
            _ => self.encode_ordinary_range(text, 0..text.len(), out),
        }
    }

    /// Encodes `piece`, a slice of `text` (the lookups read whole words from `text` around it).
    #[inline(always)]
    fn piece<S: Sink>(&self, cache: &mut Option<PieceCache>, text: &str, piece: &str, out: &mut S) {
        let start = piece.as_ptr() as usize - text.as_ptr() as usize;
        self.piece_at(cache, text.as_bytes(), start, start + piece.len(), out)
    }

    /// Encodes the piece `bytes[start..end]` (at least one byte): the vocabulary, the piece
    /// cache and the merge engines, in [`PieceCache::encode`].
    #[inline(always)]
    fn piece_at<S: Sink>(&self, cache: &mut Option<PieceCache>, bytes: &[u8], start: usize, end: usize, out: &mut S) {
        PieceCache::encode(cache, &self.vocab, bytes, start, end, out)
    }

    /// Encodes the pieces of `text[range]`, where `range` runs between [`Self::split_points`]
    /// (or the ends of the text): concatenating the chunks' ids gives `encode_ordinary(text)`.
    pub fn encode_ordinary_range<S: Sink>(&self, text: &str, range: std::ops::Range<usize>, out: &mut S) -> Result<()> {
        use crate::pretokenize::{cl100k, o200k, patterns::Scanner, r50k};
        let bytes = text.as_bytes();
        let mut cache = None;
        // One closure per scanner rather than one passed through
        // `Pretokenizer::for_each_piece_in`: there the same closure is called from six loops
        // (one per splitter), and LLVM did not inline it into any of them, so every piece
        // paid a call with six register saves and restores. Each closure here has one caller,
        // the loop of its scanner, and is inlined there.
        match &self.pretokenizer {
            Pretokenizer::Builtin(b) => match b.scanner {
                Scanner::Cl100k => cl100k::for_each_span_cl100k(text, range, |s, e| self.piece_at(&mut cache, bytes, s, e, out)),
                Scanner::Llama3 => cl100k::for_each_span_llama3(text, range, |s, e| self.piece_at(&mut cache, bytes, s, e, out)),
                Scanner::Nanochat => cl100k::for_each_span_nanochat(text, range, |s, e| self.piece_at(&mut cache, bytes, s, e, out)),
                Scanner::O200k => o200k::for_each_span_o200k(text, range, |s, e| self.piece_at(&mut cache, bytes, s, e, out)),
                Scanner::R50k => r50k::for_each_span_r50k(text, range, |s, e| self.piece_at(&mut cache, bytes, s, e, out)),
            },
            Pretokenizer::Regex(_) | Pretokenizer::Automata(_) => {
                return self.pretokenizer.for_each_piece_in(text, range, |p| self.piece(&mut cache, text, p, out))
            }
        }
        Ok(())
    }

    /// Offsets about `chunk` bytes apart where `text` can be cut for parallel encoding with
    /// output identical to the serial encoder ([`Pretokenizer::split_points`]); `None` when the
    /// pattern runs on the regex engine.
    pub fn split_points(&self, text: &str, chunk: usize) -> Option<Vec<usize>> {
        self.pretokenizer.split_points(text, chunk)
    }

    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        crate::models::collect_ids(text.len(), |out| self.encode_ordinary_into(text, out))
    }

    /// The first occurrence of a special token that `filter` names, if any: the
    /// disallowed-special check.
    pub fn find_special(&self, text: &str, filter: &SpecialFilter) -> Option<AddedMatch> {
        if filter.is_none() {
            return None;
        }
        self.added.find_any(text, |id| filter.contains(id))
    }

    /// Encodes text, turning the spellings of `allowed` special tokens into their ids and
    /// everything else into ordinary tokens. Like tiktoken, a special spelling that is not
    /// allowed is skipped over one byte at a time, and the search goes on from there.
    pub fn encode_into<S: Sink>(&self, text: &str, allowed: &SpecialFilter, out: &mut S) -> Result<()> {
        if allowed.is_none() || self.added.is_empty() {
            return self.encode_ordinary_into(text, out);
        }
        let mut start = 0;
        loop {
            let found = self.next_allowed_special(text, start, allowed);
            let stop = found.map_or(text.len(), |m| m.start);
            self.encode_ordinary_into(&text[start..stop], out)?;
            match found {
                Some(m) => {
                    out.push(m.id);
                    start = m.end;
                }
                None => return Ok(()),
            }
        }
    }

    /// The first special token at or after byte `from` that `allowed` names, as `encode_into`
    /// finds them (tiktoken's rule, [`AddedTokens::next_allowed`]).
    #[inline]
    pub(crate) fn next_allowed_special(&self, text: &str, from: usize, allowed: &SpecialFilter) -> Option<AddedMatch> {
        self.added.next_allowed(text, from, allowed)
    }

    pub fn encode(&self, text: &str, allowed: &SpecialFilter) -> Result<Vec<u32>> {
        crate::models::collect_ids(text.len(), |out| self.encode_into(text, allowed, out))
    }

    pub fn count(&self, text: &str, allowed: &SpecialFilter) -> Result<usize> {
        let mut c = Count::default();
        self.encode_into(text, allowed, &mut c)?;
        Ok(c.0)
    }

    /// BPE of raw bytes as one piece, no splitting: tiktoken's `encode_single_piece`.
    pub fn encode_single_piece(&self, bytes: &[u8]) -> Vec<u32> {
        let mut out = Vec::new();
        if !bytes.is_empty() {
            encode_piece(&self.vocab, bytes, &mut out);
        }
        out
    }

    /// The id of bytes that are exactly one token, mergeable or special.
    pub fn encode_single_token(&self, bytes: &[u8]) -> Option<u32> {
        self.vocab.rank(bytes).or_else(|| {
            std::str::from_utf8(bytes).ok().and_then(|s| self.added.special_id(s))
        })
    }

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.vocab.token(id).ok_or(Error::UnknownToken(id))?);
        }
        Ok(out)
    }

    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        self.vocab.token(id).ok_or(Error::UnknownToken(id))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// All 256 bytes, "ab" at 256, specials `<s>` = 300 and `<t>` = 301, split on `\w+|\s+|...`:
    /// the toy encoder the core's unit tests share.
    pub(crate) fn toy() -> Encoder {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.push(b"ab".to_vec());
        Encoder::from_ranks(
            toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)),
            vec![("<s>".into(), 300), ("<t>".into(), 301)],
            r"\w+|\s+|[^\w\s]+",
        )
        .unwrap()
    }

    #[test]
    fn specials_allowed_and_not() {
        let e = toy();
        let allowed = SpecialFilter::from_ids(vec![300]);
        assert_eq!(e.encode("ab<s>ab<t>", &allowed).unwrap(), vec![256, 300, 256, 60, 116, 62]);
        assert_eq!(e.encode("ab<s>", &SpecialFilter::None).unwrap(), vec![256, 60, 115, 62]);
        assert_eq!(e.find_special("x<t>", &SpecialFilter::All).map(|m| m.id), Some(301));
        assert_eq!(e.count("ab<s>ab", &SpecialFilter::All).unwrap(), 3);
    }

    #[test]
    fn decode_unknown_is_an_error() {
        let e = toy();
        assert!(matches!(e.decode_bytes(&[97, 299]), Err(Error::UnknownToken(299))));
        assert_eq!(e.decode_bytes(&[256, 300]).unwrap(), b"ab<s>");
    }
}
