//! [`Tokenizer`]: one tokenizer type for every model bytepair runs, and the one surface the
//! bindings (Python, and later C) call.
//!
//! A tokenizer is a pipeline: added/special tokens (split out first, under the caller's
//! allowed/disallowed policy) -> normalizer -> pre-tokenizer -> model -> decoder. Three models
//! run it today, each a complete pipeline of its own:
//!
//! - [`Model::Rank`]: tiktoken's rank BPE ([`Encoder`]): cl100k, o200k, Llama 3, every
//!   `.tiktoken`, BPE2 and GPT-2 vocabulary;
//! - [`Model::Score`]: score BPE ([`ScoreTokenizer`]): SentencePiece BPE models and LEAP tables;
//! - [`Model::Merge`]: merge-list BPE ([`MergeTokenizer`]): QTKR files and HF tokenizer.json.
//!
//! **Why an enum, matched once per call.** The rank path is the hot one, and its inner loop is
//! generic over the output sink and inlined per pre-tokenizer. Matching on the model once per
//! call (not per piece) keeps that loop monomorphic: the enum costs one predictable branch per
//! `encode`, which no benchmark can see. A trait object would put an indirect call where the
//! match is and gain nothing, since the set of models is closed.
//!
//! Everything here is what every model has: encode (with the special-token policy, BOS/EOS),
//! count, decode, token lookups in both directions. What only one model has (ranks, scores and
//! piece types, merge lists) is reached through [`Tokenizer::model`].

use crate::models::{Count, Sink};
use crate::models::rank::{Encoder, SpecialFilter};
use crate::error::{Error, Result};
use crate::models::merges::MergeTokenizer;
use crate::models::score::ScoreTokenizer;
use crate::special::{SpecialMatch, SpecialTokens};

/// The model a [`Tokenizer`] runs, with its whole pipeline.
#[derive(Debug, Clone)]
pub enum Model {
    Rank(Encoder),
    Score(ScoreTokenizer),
    Merge(MergeTokenizer),
}

/// Per-call encode options shared by every model.
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Special tokens whose spellings in the text become their ids.
    pub allowed: SpecialFilter,
    pub add_bos: bool,
    pub add_eos: bool,
}

/// What a call that names no special-token policy does: each home system's rule. tiktoken (and
/// every rank vocabulary, and QTKR) allows nothing and refuses every special spelling in text;
/// HF tokenizers splits every added token out (all allowed; a caller who narrows
/// `allowed_special` gets the others refused, as tiktoken's `"all"` default does);
/// SentencePiece and llama2.c take the spellings as text (nothing allowed, nothing refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialDefaults {
    pub allow_all: bool,
    pub refuse_all: bool,
}

impl SpecialDefaults {
    pub const TIKTOKEN: SpecialDefaults = SpecialDefaults { allow_all: false, refuse_all: true };
    pub const HF: SpecialDefaults = SpecialDefaults { allow_all: true, refuse_all: true };
    pub const AS_TEXT: SpecialDefaults = SpecialDefaults { allow_all: false, refuse_all: false };
}

#[derive(Debug, Clone)]
pub struct Tokenizer {
    model: Model,
    defaults: SpecialDefaults,
    /// BOS/EOS for `add_bos` / `add_eos`: the model's own (SentencePiece, LEAP) or the file's
    /// (QTKR records BOS/EOS/PAD ids). Rank vocabularies have none.
    bos: Option<u32>,
    eos: Option<u32>,
}

impl From<Encoder> for Tokenizer {
    fn from(e: Encoder) -> Self {
        Tokenizer { model: Model::Rank(e), defaults: SpecialDefaults::TIKTOKEN, bos: None, eos: None }
    }
}

impl From<ScoreTokenizer> for Tokenizer {
    fn from(s: ScoreTokenizer) -> Self {
        let (bos, eos) = (s.bos_id(), s.eos_id());
        Tokenizer { model: Model::Score(s), defaults: SpecialDefaults::AS_TEXT, bos, eos }
    }
}

impl From<MergeTokenizer> for Tokenizer {
    fn from(m: MergeTokenizer) -> Self {
        Tokenizer { model: Model::Merge(m), defaults: SpecialDefaults::TIKTOKEN, bos: None, eos: None }
    }
}

impl Tokenizer {
    /// Sets the BOS/EOS ids `add_bos` / `add_eos` use (each must be a token of the table).
    pub fn with_bos_eos(mut self, bos: Option<u32>, eos: Option<u32>) -> Result<Self> {
        for id in [bos, eos].into_iter().flatten() {
            self.token_bytes(id)?;
        }
        self.bos = bos;
        self.eos = eos;
        Ok(self)
    }

    /// Sets what a call that names no policy does (see [`SpecialDefaults`]).
    pub fn with_special_defaults(mut self, defaults: SpecialDefaults) -> Self {
        self.defaults = defaults;
        self
    }

    pub fn special_defaults(&self) -> SpecialDefaults {
        self.defaults
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// "rank", "score" or "merge".
    pub fn kind(&self) -> &'static str {
        match self.model {
            Model::Rank(_) => "rank",
            Model::Score(_) => "score",
            Model::Merge(_) => "merge",
        }
    }

    pub fn bos_id(&self) -> Option<u32> {
        self.bos
    }
    pub fn eos_id(&self) -> Option<u32> {
        self.eos
    }

    /// The special tokens (spelling, id): what `allowed_special` / `disallowed_special` name.
    pub fn specials(&self) -> &SpecialTokens {
        match &self.model {
            Model::Rank(e) => e.specials(),
            Model::Score(s) => s.specials(),
            Model::Merge(m) => m.specials(),
        }
    }

    /// The special tokens' (spelling, id) pairs, without building a matcher (a score model
    /// builds its matcher only when a call first needs it).
    pub fn special_list(&self) -> &[(String, u32)] {
        match &self.model {
            Model::Rank(e) => e.specials().tokens(),
            Model::Score(s) => s.special_list(),
            Model::Merge(m) => m.specials().tokens(),
        }
    }

    /// The first special token in `text` that `filter` names (the disallowed check).
    pub fn find_special(&self, text: &str, filter: &SpecialFilter) -> Option<SpecialMatch> {
        if filter.is_none() || self.special_list().is_empty() {
            return None;
        }
        self.specials().find_any(text, |id| filter.contains(id))
    }

    /// Size of the id space: the largest id + 1.
    pub fn n_vocab(&self) -> usize {
        match &self.model {
            Model::Rank(e) => e.vocab().table_len(),
            Model::Score(s) => s.len(),
            Model::Merge(m) => m.len(),
        }
    }

    /// Encodes `text`, special tokens as `opts.allowed` says, into `out`.
    #[inline]
    pub fn encode_into(&self, text: &str, opts: &EncodeOptions, out: &mut Vec<u32>) -> Result<()> {
        if opts.add_bos {
            out.push(self.bos.ok_or_else(|| Error::Vocab("this tokenizer has no BOS token (add_bos)".into()))?);
        }
        match &self.model {
            Model::Rank(e) => e.encode_into(text, &opts.allowed, out)?,
            Model::Score(s) => match &opts.allowed {
                SpecialFilter::None => s.encode_into(text, false, false, out),
                SpecialFilter::All => out.extend_from_slice(&s.encode_allowed(text, None, false, false)),
                SpecialFilter::Ids(ids) => out.extend_from_slice(&s.encode_allowed(text, Some(ids), false, false)),
            },
            Model::Merge(m) => m.encode_into(text, &opts.allowed, out)?,
        }
        if opts.add_eos {
            out.push(self.eos.ok_or_else(|| Error::Vocab("this tokenizer has no EOS token (add_eos)".into()))?);
        }
        Ok(())
    }

    /// Encodes `text` with every special spelling taken as text.
    #[inline]
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        match &self.model {
            Model::Rank(e) => e.encode_ordinary_into(text, out),
            Model::Score(s) => {
                s.encode_into(text, false, false, out);
                Ok(())
            }
            Model::Merge(m) => m.encode_into(text, &SpecialFilter::None, out),
        }
    }

    /// How many ids [`Self::encode_into`] gives. The rank model counts without storing ids.
    pub fn count(&self, text: &str, opts: &EncodeOptions) -> Result<usize> {
        let extra = usize::from(opts.add_bos) + usize::from(opts.add_eos);
        match &self.model {
            Model::Rank(e) if extra == 0 => {
                let mut c = Count::default();
                e.encode_into(text, &opts.allowed, &mut c)?;
                Ok(c.0)
            }
            _ => {
                let mut out = Vec::new();
                self.encode_into(text, opts, &mut out)?;
                Ok(out.len())
            }
        }
    }

    /// Offsets where `text` can be cut for parallel encoding with the serial result
    /// ([`Encoder::split_points`]); `None` when the model or its pattern has no such cuts.
    pub fn split_points(&self, text: &str, chunk: usize) -> Option<Vec<usize>> {
        match &self.model {
            Model::Rank(e) => e.split_points(text, chunk),
            _ => None,
        }
    }

    /// `encode_ordinary` of `text[range]`, `range` between [`Self::split_points`].
    pub fn encode_ordinary_range<S: Sink>(&self, text: &str, range: std::ops::Range<usize>, out: &mut S) -> Result<()> {
        match &self.model {
            Model::Rank(e) => e.encode_ordinary_range(text, range, out),
            _ => Err(Error::Vocab("only rank models encode by ranges".into())),
        }
    }

    /// The decoded bytes, as the model's home system decodes (SentencePiece drops control
    /// pieces and the dummy prefix; tokenizer.json's Metaspace decoder turns U+2581 into
    /// spaces). Bytes that are not UTF-8 are kept as they are.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        match &self.model {
            Model::Rank(e) => e.decode_bytes(ids),
            Model::Score(s) => s.decode(ids, false),
            Model::Merge(m) => m.decode_bytes(ids),
        }
    }

    /// The bytes of one token as the table stores them (special tokens included).
    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        match &self.model {
            Model::Rank(e) => e.token_bytes(id),
            Model::Score(s) => s.token_bytes(id),
            Model::Merge(m) => m.token(id).ok_or(Error::UnknownToken(id)),
        }
    }

    /// The id of bytes that are exactly one token, ordinary or special.
    pub fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        let ordinary = match &self.model {
            Model::Rank(e) => return e.encode_single_token(bytes),
            Model::Score(s) => s.piece_id(bytes),
            Model::Merge(m) => m.id(bytes),
        };
        ordinary.or_else(|| std::str::from_utf8(bytes).ok().and_then(|s| self.specials().id(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank() -> Tokenizer {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.push(b"ab".to_vec());
        Encoder::from_ranks(
            toks.iter().enumerate().map(|(i, t)| (t.as_slice(), i as u32)),
            vec![("<s>".into(), 300)],
            r"\w+|\s+|[^\w\s]+",
        )
        .unwrap()
        .into()
    }

    fn opts(allowed: SpecialFilter) -> EncodeOptions {
        EncodeOptions { allowed, add_bos: false, add_eos: false }
    }

    #[test]
    fn one_surface_over_the_rank_model() {
        let t = rank();
        let mut out = Vec::new();
        t.encode_into("ab<s>", &opts(SpecialFilter::All), &mut out).unwrap();
        assert_eq!(out, vec![256, 300]);
        assert_eq!(t.count("ab<s>", &opts(SpecialFilter::None)).unwrap(), 4);
        assert_eq!(t.token_id(b"<s>"), Some(300));
        assert_eq!(t.decode_bytes(&[256, 300]).unwrap(), b"ab<s>");
        assert_eq!(t.kind(), "rank");
    }

    #[test]
    fn bos_without_one_is_an_error() {
        let t = rank();
        let o = EncodeOptions { allowed: SpecialFilter::None, add_bos: true, add_eos: false };
        assert!(matches!(t.encode_into("ab", &o, &mut Vec::new()), Err(Error::Vocab(_))));
        let t = t.with_bos_eos(Some(300), None).unwrap();
        let mut out = Vec::new();
        t.encode_into("ab", &o, &mut out).unwrap();
        assert_eq!(out, vec![300, 256]);
    }
}
