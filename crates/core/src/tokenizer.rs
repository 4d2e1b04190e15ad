//! [`Tokenizer`]: one tokenizer type for every model bytepair runs, and the one surface the
//! bindings (Python, and later C) call.
//!
//! A tokenizer is a pipeline: added/special tokens (split out first, under the caller's
//! allowed/disallowed policy) -> normalizer -> pre-tokenizer -> model -> decoder. Three models
//! run it today, each a complete pipeline of its own:
//!
//! - [`AnyModel::Rank`]: tiktoken's rank BPE ([`Encoder`]): cl100k, o200k, Llama 3, every
//!   `.tiktoken`, BPE2 and GPT-2 vocabulary;
//! - [`AnyModel::Score`]: score BPE ([`ScoreTokenizer`]): SentencePiece BPE models and LEAP tables;
//! - [`AnyModel::Merge`]: merge-list BPE ([`MergeTokenizer`]): QTKR files and HF tokenizer.json.
//!
//! Each implements [`Model`] (crates/core/src/models/mod.rs).
//!
//! **Why an enum, matched once per call.** The rank path is the hot one, and its inner loop is
//! generic over the output sink and inlined per pre-tokenizer. Matching on the model once per
//! call (not per piece) keeps that loop monomorphic: the enum costs one predictable branch per
//! `encode`, which no benchmark can see. A trait object would put an indirect call where the
//! match is and gain nothing, since the set of models is closed. Every method below is the
//! trait's, reached through one match (`with_model!`).
//!
//! Everything here is what every model has: encode (with the special-token policy, BOS/EOS),
//! count, decode, token lookups in both directions. What only one model has (ranks, scores and
//! piece types, merge lists) is reached through [`Tokenizer::model`].

use crate::error::{Error, Result};
use crate::models::merges::MergeTokenizer;
use crate::added::{AddedMatch, AddedTokens, SpecialFilter};
use crate::models::rank::Encoder;
use crate::models::score::ScoreTokenizer;
use crate::models::{Count, Model, Sink};

/// The model a [`Tokenizer`] runs, with its whole pipeline: each arm implements [`Model`].
#[derive(Debug, Clone)]
pub enum AnyModel {
    Rank(Encoder),
    Score(ScoreTokenizer),
    Merge(MergeTokenizer),
}

/// `$body` with `$m` bound to the model, whichever it is: one match per call, and each arm is
/// the model's own monomorphic code.
macro_rules! with_model {
    ($model:expr, $m:ident => $body:expr) => {
        match $model {
            AnyModel::Rank($m) => $body,
            AnyModel::Score($m) => $body,
            AnyModel::Merge($m) => $body,
        }
    };
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
    model: AnyModel,
    defaults: SpecialDefaults,
    /// BOS/EOS for `add_bos` / `add_eos`: the model's own (SentencePiece, LEAP) or the file's
    /// (QTKR records BOS/EOS/PAD ids). Rank vocabularies have none.
    bos: Option<u32>,
    eos: Option<u32>,
}

impl Tokenizer {
    fn of(model: AnyModel, defaults: SpecialDefaults) -> Self {
        let (bos, eos) = with_model!(&model, m => m.bos_eos());
        Tokenizer { model, defaults, bos, eos }
    }
}

impl From<Encoder> for Tokenizer {
    fn from(e: Encoder) -> Self {
        Tokenizer::of(AnyModel::Rank(e), SpecialDefaults::TIKTOKEN)
    }
}

impl From<ScoreTokenizer> for Tokenizer {
    fn from(s: ScoreTokenizer) -> Self {
        Tokenizer::of(AnyModel::Score(s), SpecialDefaults::AS_TEXT)
    }
}

impl From<MergeTokenizer> for Tokenizer {
    fn from(m: MergeTokenizer) -> Self {
        Tokenizer::of(AnyModel::Merge(m), SpecialDefaults::TIKTOKEN)
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

    pub fn model(&self) -> &AnyModel {
        &self.model
    }

    /// "rank", "score" or "merge".
    pub fn kind(&self) -> &'static str {
        fn kind<M: Model>(_: &M) -> &'static str {
            M::KIND
        }
        with_model!(&self.model, m => kind(m))
    }

    pub fn bos_id(&self) -> Option<u32> {
        self.bos
    }
    pub fn eos_id(&self) -> Option<u32> {
        self.eos
    }

    /// The added tokens, special ones among them (what `allowed_special` /
    /// `disallowed_special` name), and their matchers.
    pub fn added(&self) -> &AddedTokens {
        with_model!(&self.model, m => Model::added(m))
    }

    /// The special tokens' (spelling, id) pairs.
    pub fn special_list(&self) -> &[(String, u32)] {
        self.added().special_list()
    }

    /// The first special token in `text` that `filter` names (the disallowed check).
    pub fn find_special(&self, text: &str, filter: &SpecialFilter) -> Option<AddedMatch> {
        if filter.is_none() || self.special_list().is_empty() {
            return None;
        }
        self.added().find_any(text, |id| filter.contains(id))
    }

    /// Forgets what the model's piece cache holds (the ids never depend on it).
    pub fn clear_cache(&self) {
        with_model!(&self.model, m => Model::clear_cache(m))
    }

    /// Size of the id space: the largest id + 1.
    pub fn n_vocab(&self) -> usize {
        with_model!(&self.model, m => Model::n_vocab(m))
    }

    /// Encodes `text`, special tokens as `opts.allowed` says, into `out`.
    #[inline]
    pub fn encode_into(&self, text: &str, opts: &EncodeOptions, out: &mut Vec<u32>) -> Result<()> {
        if opts.add_bos {
            out.push(self.bos.ok_or_else(|| Error::Vocab("this tokenizer has no BOS token (add_bos)".into()))?);
        }
        with_model!(&self.model, m => Model::encode_into(m, text, &opts.allowed, out))?;
        if opts.add_eos {
            out.push(self.eos.ok_or_else(|| Error::Vocab("this tokenizer has no EOS token (add_eos)".into()))?);
        }
        Ok(())
    }

    /// Encodes `text` with every special spelling taken as text.
    #[inline]
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        with_model!(&self.model, m => Model::encode_ordinary_into(m, text, out))
    }

    /// How many ids [`Self::encode_into`] gives. The rank model counts without storing ids.
    pub fn count(&self, text: &str, opts: &EncodeOptions) -> Result<usize> {
        let extra = usize::from(opts.add_bos) + usize::from(opts.add_eos);
        match &self.model {
            AnyModel::Rank(e) if extra == 0 => {
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
            AnyModel::Rank(e) => e.split_points(text, chunk),
            _ => None,
        }
    }

    /// `encode_ordinary` of `text[range]`, `range` between [`Self::split_points`].
    pub fn encode_ordinary_range<S: Sink>(&self, text: &str, range: std::ops::Range<usize>, out: &mut S) -> Result<()> {
        match &self.model {
            AnyModel::Rank(e) => e.encode_ordinary_range(text, range, out),
            _ => Err(Error::Vocab("only rank models encode by ranges".into())),
        }
    }

    /// The decoded bytes, as the model's home system decodes (SentencePiece drops control
    /// pieces and the dummy prefix; tokenizer.json's Metaspace decoder turns U+2581 into
    /// spaces). Bytes that are not UTF-8 are kept as they are.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        with_model!(&self.model, m => Model::decode_bytes(m, ids))
    }

    /// The bytes of one token as the table stores them (special tokens included).
    pub fn token_bytes(&self, id: u32) -> Result<&[u8]> {
        with_model!(&self.model, m => Model::token_bytes(m, id))
    }

    /// The id of bytes that are exactly one token, ordinary or special.
    pub fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        let ordinary = with_model!(&self.model, m => m.ordinary_id(bytes));
        ordinary.or_else(|| std::str::from_utf8(bytes).ok().and_then(|s| self.added().special_id(s)))
    }
}

/// Tokenizers built straight from a file's bytes, for the formats whose file says everything
/// (the rank formats' pattern and specials are the caller's rules: the Python package's known
/// vocabularies, the C library's). The bindings call these rather than each assembling models
/// from the readers.
impl Tokenizer {
    /// A SentencePiece `.model` file (BPE models only).
    pub fn from_sentencepiece(data: &[u8]) -> Result<Self> {
        Ok(ScoreTokenizer::from_sentencepiece(&crate::formats::sentencepiece::read(data)?)?.into())
    }

    /// A LEAP / llama2.c `tokenizer.bin`, BOS/EOS and the dummy prefix as llama2.c has them
    /// (`dummy_prefix` None: llama2.c's rule, see `ScoreTokenizer::from_leap_llama2c`).
    pub fn from_leap(data: &[u8], dummy_prefix: Option<bool>) -> Result<Self> {
        let (_, tokens) = crate::formats::leap::read(data)?;
        Ok(ScoreTokenizer::from_leap_llama2c(&tokens, dummy_prefix)?.into())
    }

    /// A QTKR file, and its PAD id. BOS, EOS and PAD (those spelled in UTF-8) are its special
    /// tokens, split out of text only when a call allows them; BOS/EOS serve `add_bos` /
    /// `add_eos`. `pattern`: the split pattern to pre-tokenize with (the file has none).
    pub fn from_qtkr(data: &[u8], pattern: Option<&str>) -> Result<(Self, Option<u32>)> {
        let q = crate::formats::qtkr::read(data)?;
        let specials: Vec<(String, u32)> = [q.bos, q.eos, q.pad]
            .into_iter()
            .flatten()
            .filter_map(|id| q.tokens.get(id as usize).and_then(|t| String::from_utf8(t.clone()).ok()).map(|s| (s, id)))
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let m = MergeTokenizer::new(&q.tokens, &q.merges, None, false, pattern, false, specials)?;
        Ok((Tokenizer::from(m).with_bos_eos(q.bos, q.eos)?, q.pad))
    }

    /// A HF tokenizer.json file (HF's pipeline: added tokens with their flags, normalizer,
    /// pre-tokenizer, merge-list BPE, Metaspace decoder; every added token split out of text
    /// by default), and what the file says, for callers that report it.
    pub fn from_tokenizer_json(data: &[u8]) -> Result<(Self, crate::formats::hf::HfModel)> {
        let m = crate::formats::hf::read(data)?;
        let specials: Vec<(String, u32)> = m.added.iter().map(|t| (t.content.clone(), t.id)).collect();
        let model = MergeTokenizer::new(&m.tokens, &m.merges, m.char_level, m.ignore_merges, m.pattern.as_deref(), m.pattern.is_some(), specials)?
            .with_pipeline(m.normalizer, m.prefix, m.added.clone())?
            .with_metaspace_decoder(m.space_symbol);
        Ok((Tokenizer::from(model).with_special_defaults(SpecialDefaults::HF), m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank() -> Tokenizer {
        crate::models::rank::tests::toy().into()
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
