//! `Tokenizer`: the one tokenizer class of the binding, over `bytepair_core::Tokenizer` (rank,
//! score and merge-list models alike). It converts arguments and results and releases the GIL
//! around every loop over text; it keeps no state but the cache of `int` objects (`ids.rs`).
//!
//! What every model has is a method here with one meaning for all. What only one model has
//! (ranks, scores, merge lists) is a method too, and calling it on another model is a
//! TypeError naming the model: the Python layer reaches those through `Encoding.model`.

use bytepair_core::models::merges::merge as merges;
use bytepair_core::formats::{bpe2, leap, qtkr, sentencepiece, tiktoken};
use bytepair_core::models::merges::MergeTokenizer;
use bytepair_core::models::score::{Flavor, ScoreTokenizer};
use bytepair_core::{AnyModel, EncodeOptions, Encoder};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rayon::prelude::*;
use std::path::PathBuf;

use crate::errors::guarded;
use crate::ids::{ids_vec, list, reserve_for, with_ids, IdBuffer};
use crate::threads::{on_pool, DEFAULT_THREADS};
use crate::policy::{CallArgs, Policy};
use crate::text::Text;

/// The encoder of a read BPE2/BPZ2 file: `specials` `None` takes the recorded ones, `pattern`
/// `None` the recorded pattern.
fn encoder_from_bpe2(file: bpe2::Bpe2, specials: Option<Vec<(String, u32)>>, pattern: Option<String>) -> bytepair_core::Result<Encoder> {
    let specials = specials.unwrap_or_else(|| file.recorded_specials());
    let pattern = match pattern {
        Some(p) => p,
        None => match file.meta.as_ref().map(|m| m.pattern.clone()).filter(|p| !p.is_empty()) {
            Some(p) => p,
            None => return Err(bytepair_core::Error::format("trailing section", "the file records no split pattern; pass one")),
        },
    };
    let vocab = file.into_vocab(&specials)?;
    Encoder::new(vocab, &pattern, specials)
}

#[pyclass(frozen, module = "bytepair._core")]
pub struct Tokenizer {
    pub(crate) inner: bytepair_core::Tokenizer,
}

impl Tokenizer {
    fn wrap(inner: impl Into<bytepair_core::Tokenizer>) -> Self {
        let inner = inner.into();
        Tokenizer { inner }
    }

    fn wrong_model(&self, what: &str, model: &str) -> PyErr {
        PyTypeError::new_err(format!("{what} is for {model} models; this tokenizer's model is {} BPE", self.inner.kind()))
    }

    fn rank(&self, what: &str) -> PyResult<&Encoder> {
        match self.inner.model() {
            AnyModel::Rank(e) => Ok(e),
            _ => Err(self.wrong_model(what, "rank")),
        }
    }

    fn score_model(&self, what: &str) -> PyResult<&ScoreTokenizer> {
        match self.inner.model() {
            AnyModel::Score(s) => Ok(s),
            _ => Err(self.wrong_model(what, "score")),
        }
    }

    fn merge_model(&self, what: &str) -> PyResult<&MergeTokenizer> {
        match self.inner.model() {
            AnyModel::Merge(m) => Ok(m),
            _ => Err(self.wrong_model(what, "merge-list")),
        }
    }

    /// The text and options of an encode call (TypeError unless a `str`; lone surrogates
    /// repaired, see `text.rs`) and its special-token policy.
    fn prepare(&self, text: &Bound<'_, PyAny>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<(Text, Policy, EncodeOptions)> {
        let text = crate::text::text(text)?;
        let args = CallArgs::parse(kwargs, false)?;
        let policy = Policy::of_call(&self.inner, &args)?;
        let opts = EncodeOptions { allowed: policy.filter(), add_bos: args.add_bos, add_eos: args.add_eos };
        Ok((text, policy, opts))
    }

    /// `encode` with the disallowed check first: what single calls run with the GIL released
    /// and what each batch worker runs per text.
    fn checked_into(&self, policy: &Policy, opts: &EncodeOptions, text: &str, ids: &mut Vec<u32>) -> PyResult<()> {
        policy.check(&self.inner, text)?;
        guarded(|| self.inner.encode_into(text, opts, ids))
    }

    /// `f` of the ids of one `encode` call, in this thread's id vector.
    fn with_encoded<R>(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        kwargs: Option<&Bound<'_, PyDict>>,
        f: impl FnOnce(&[u32]) -> PyResult<R>,
    ) -> PyResult<R> {
        let (text, policy, opts) = self.prepare(text, kwargs)?;
        with_ids(reserve_for(text.len()), |ids| {
            py.allow_threads(|| self.checked_into(&policy, &opts, &text, ids))?;
            f(ids)
        })
    }
}

#[pymethods]
impl Tokenizer {
    // ------------------------------------------------------------------ construction

    /// A rank model from tiktoken's arguments: `mergeable_ranks: dict[bytes, int]`,
    /// `special_tokens: [(str, int)]`, the split pattern.
    #[staticmethod]
    fn from_ranks(py: Python<'_>, mergeable_ranks: &Bound<'_, PyDict>, special_tokens: Vec<(String, u32)>, pattern: &str) -> PyResult<Self> {
        let mut ranks: Vec<(Bound<'_, PyBytes>, u32)> = Vec::with_capacity(mergeable_ranks.len());
        for (k, v) in mergeable_ranks.iter() {
            ranks.push((k.downcast_into::<PyBytes>()?, v.extract()?));
        }
        let borrowed: Vec<(&[u8], u32)> = ranks.iter().map(|(b, r)| (b.as_bytes(), *r)).collect();
        let pattern = pattern.to_owned();
        let inner = py.allow_threads(|| guarded(|| Encoder::from_ranks(borrowed, special_tokens, &pattern)))?;
        Ok(Tokenizer::wrap(inner))
    }

    /// A rank model from the bytes of a `.tiktoken` file (no Python dict in between).
    #[staticmethod]
    fn from_tiktoken(py: Python<'_>, data: &[u8], special_tokens: Vec<(String, u32)>, pattern: &str) -> PyResult<Self> {
        let inner = py.allow_threads(|| {
            guarded(|| {
                let ranks = tiktoken::parse(data)?;
                Encoder::from_ranks(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), special_tokens, pattern)
            })
        })?;
        Ok(Tokenizer::wrap(inner))
    }

    /// A rank model from the bytes of a BPE2 or BPZ2 file. `special_tokens` are added at their
    /// ids; `None` takes those recorded in the file's trailing section. `pattern` `None` takes
    /// the recorded one.
    #[staticmethod]
    #[pyo3(signature = (data, special_tokens=None, pattern=None))]
    fn from_bpe2(py: Python<'_>, data: &[u8], special_tokens: Option<Vec<(String, u32)>>, pattern: Option<String>) -> PyResult<Self> {
        let inner = py.allow_threads(|| guarded(|| encoder_from_bpe2(bpe2::read(data)?, special_tokens, pattern)))?;
        Ok(Tokenizer::wrap(inner))
    }

    /// `from_bpe2` of the file at `path`, read in Rust straight into the table (no bytes object,
    /// no copy of the whole file): how the bundled encodings load. OSError if it cannot be read.
    #[staticmethod]
    #[pyo3(signature = (path, special_tokens=None, pattern=None))]
    fn from_bpe2_file(py: Python<'_>, path: PathBuf, special_tokens: Option<Vec<(String, u32)>>, pattern: Option<String>) -> PyResult<Self> {
        let inner = py.allow_threads(|| {
            guarded(|| {
                let mut file = std::fs::File::open(&path).map_err(bytepair_core::Error::Io)?;
                let len = file.metadata().map_err(bytepair_core::Error::Io)?.len();
                encoder_from_bpe2(bpe2::read_from(&mut file, len)?, special_tokens, pattern)
            })
        })?;
        Ok(Tokenizer::wrap(inner))
    }

    /// A score model from the bytes of a SentencePiece `.model` file (BPE models only).
    #[staticmethod]
    fn from_sentencepiece(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        py.allow_threads(|| guarded(|| Ok(Tokenizer::wrap(bytepair_core::Tokenizer::from_sentencepiece(data)?))))
    }

    /// A score model from the bytes of a LEAP / llama2.c `tokenizer.bin`, BOS/EOS and the dummy
    /// prefix as llama2.c has them (see `ScoreTokenizer::from_leap_llama2c`).
    #[staticmethod]
    #[pyo3(signature = (data, dummy_prefix=None))]
    fn from_leap(py: Python<'_>, data: &[u8], dummy_prefix: Option<bool>) -> PyResult<Self> {
        py.allow_threads(|| guarded(|| Ok(Tokenizer::wrap(bytepair_core::Tokenizer::from_leap(data, dummy_prefix)?))))
    }

    /// A score model from `(bytes, score)` pairs by id, as LEAP (for exports from other formats).
    #[staticmethod]
    #[pyo3(signature = (tokens, bos_id=None, eos_id=None, dummy_prefix=false))]
    fn from_scored(py: Python<'_>, tokens: Vec<(Vec<u8>, f32)>, bos_id: Option<u32>, eos_id: Option<u32>, dummy_prefix: bool) -> PyResult<Self> {
        py.allow_threads(|| guarded(|| Ok(Tokenizer::wrap(ScoreTokenizer::from_leap(&tokens, bos_id, eos_id, dummy_prefix)?))))
    }

    /// A merge-list model: `tokens[id]` (empty = hole), `merges[k] = (left, right, merged)`.
    /// `char_level`: None for byte-level, else (byte_fallback, unk_id, fuse_unk).
    #[staticmethod]
    #[pyo3(signature = (tokens, merges, char_level=None, ignore_merges=false, pattern=None, emit_gaps=false, special_tokens=vec![], bos_id=None, eos_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_merges(
        py: Python<'_>,
        tokens: Vec<Vec<u8>>,
        merges: Vec<(u32, u32, u32)>,
        char_level: Option<(bool, Option<u32>, bool)>,
        ignore_merges: bool,
        pattern: Option<String>,
        emit_gaps: bool,
        special_tokens: Vec<(String, u32)>,
        bos_id: Option<u32>,
        eos_id: Option<u32>,
    ) -> PyResult<Self> {
        // On our pool: `MergeTokenizer::new` uses `rayon::join` (see `threads.rs` on fork).
        py.allow_threads(|| {
            on_pool(|| {
                guarded(|| {
                    let m = MergeTokenizer::new(&tokens, &merges, char_level, ignore_merges, pattern.as_deref(), emit_gaps, special_tokens)?;
                    bytepair_core::Tokenizer::from(m).with_bos_eos(bos_id, eos_id)
                })
            })
        })
        .map(Tokenizer::wrap)
    }

    /// A merge-list model from a QTKR file: (tokenizer, pad id). BOS, EOS and PAD are its
    /// special tokens (split out of text only when asked); BOS/EOS serve `add_bos`/`add_eos`.
    #[staticmethod]
    #[pyo3(signature = (data, pattern=None))]
    fn from_qtkr(py: Python<'_>, data: &[u8], pattern: Option<String>) -> PyResult<(Self, Option<u32>)> {
        py.allow_threads(|| on_pool(|| guarded(|| bytepair_core::Tokenizer::from_qtkr(data, pattern.as_deref()))))
            .map(|(t, pad)| (Tokenizer::wrap(t), pad))
    }

    /// A merge-list model from a HF tokenizer.json file, parsed in Rust: (tokenizer, info).
    /// `info` holds what the Python layer needs: `pattern`, `space_symbol`, `byte_level`, and
    /// `added_tokens` as (content, id, special) in file order of matching.
    #[staticmethod]
    fn from_tokenizer_json<'py>(py: Python<'py>, data: &[u8]) -> PyResult<(Self, Bound<'py, PyDict>)> {
        let (core, m) = py.allow_threads(|| on_pool(|| guarded(|| bytepair_core::Tokenizer::from_tokenizer_json(data))))?;
        let info = PyDict::new(py);
        info.set_item("pattern", m.pattern.as_deref())?;
        info.set_item("space_symbol", m.space_symbol)?;
        info.set_item("byte_level", m.char_level.is_none())?;
        let added: Vec<(String, u32, bool)> = m.added.iter().map(|t| (t.content.clone(), t.id, t.special)).collect();
        info.set_item("added_tokens", added)?;
        Ok((Tokenizer::wrap(core), info))
    }

    // ------------------------------------------------------------------ encoding (every model)

    /// The ids of a `str` (lone surrogates repaired, see `text.rs`), special tokens as text.
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let text = crate::text::text(text)?;
        let text: &str = &text;
        with_ids(reserve_for(text.len()), |ids| {
            py.allow_threads(|| guarded(|| self.inner.encode_ordinary_into(text, ids)))?;
            list(py, ids)
        })
    }

    /// Encodes `text`. Keyword arguments, all optional: `allowed_special`,
    /// `disallowed_special` (tiktoken's meaning; left out: the tokenizer's home default, see
    /// `policy.rs`), `add_bos`, `add_eos`. The disallowed check runs here, with the GIL
    /// released, in the same call as the encoding. Taking `**kwargs` keeps the common call
    /// (text only) free of argument parsing, so the Python layer can hand this method out as
    /// `Encoding.encode` itself.
    #[pyo3(signature = (text, **kwargs))]
    fn encode<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyList>> {
        self.with_encoded(py, text, kwargs, |ids| list(py, ids))
    }

    /// `encode`'s ids for numpy, without a copy: encoded into a vector of their own, which
    /// the returned object exports through the buffer protocol (see `ids::IdBuffer`).
    #[pyo3(signature = (text, **kwargs))]
    fn encode_to_buffer(&self, py: Python<'_>, text: &Bound<'_, PyAny>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<IdBuffer> {
        let (text, policy, opts) = self.prepare(text, kwargs)?;
        let mut ids = ids_vec(reserve_for(text.len()))?;
        py.allow_threads(|| self.checked_into(&policy, &opts, &text, &mut ids))?;
        Ok(IdBuffer::new(ids))
    }

    /// How many ids `encode` would return (the rank model builds no vector at all).
    #[pyo3(signature = (text, **kwargs))]
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        let (text, policy, opts) = self.prepare(text, kwargs)?;
        py.allow_threads(|| {
            policy.check(&self.inner, &text)?;
            guarded(|| self.inner.count(&text, &opts))
        })
    }

    /// `encode_ordinary` of one long text on up to `num_threads` threads: the text is cut at
    /// offsets where every serial run starts a piece (`Tokenizer::split_points`), the chunks are
    /// encoded in parallel, and the ids concatenated: the same ids as the serial call. Texts
    /// under 1 MB, and models or patterns with no such cuts, are encoded serially.
    #[pyo3(signature = (text, num_threads=None))]
    fn encode_ordinary_parallel<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, num_threads: Option<usize>) -> PyResult<Bound<'py, PyList>> {
        let text = crate::text::text(text)?;
        let text: &str = &text;
        const MIN_TEXT: usize = 1 << 20;
        let serial = || -> PyResult<Vec<u32>> {
            let mut out = ids_vec(reserve_for(text.len()))?;
            guarded(|| self.inner.encode_ordinary_into(text, &mut out))?;
            Ok(out)
        };
        let ids = py.allow_threads(|| {
            let threads = num_threads.unwrap_or(DEFAULT_THREADS).max(1);
            let points = if threads > 1 && text.len() >= MIN_TEXT {
                guarded(|| Ok(self.inner.split_points(text, (text.len() / (4 * threads)).max(1 << 16))))?
            } else {
                None
            };
            let Some(points) = points.filter(|p| !p.is_empty()) else {
                return serial();
            };
            let mut bounds = Vec::with_capacity(points.len() + 2);
            bounds.push(0);
            bounds.extend(points);
            bounds.push(text.len());
            let parts = crate::threads::with_threads(threads, || {
                bounds
                    .par_windows(2)
                    .map(|w| {
                        let mut out = ids_vec(reserve_for(w[1] - w[0]))?;
                        guarded(|| self.inner.encode_ordinary_range(text, w[0]..w[1], &mut out))?;
                        Ok(out)
                    })
                    .collect::<PyResult<Vec<Vec<u32>>>>()
            });
            match parts {
                Some(parts) => {
                    let parts = parts?;
                    let mut all = ids_vec(parts.iter().map(Vec::len).sum())?;
                    for p in &parts {
                        all.extend_from_slice(p);
                    }
                    Ok(all)
                }
                // No thread could be started: the serial call gives the same ids.
                None => serial(),
            }
        })?;
        list(py, &ids)
    }

    /// Encodes many texts on up to `num_threads` threads (see `threads::encode_batch`); each
    /// worker runs the disallowed check on its own texts. Keyword arguments as `encode`'s, and
    /// `num_threads` (default 8).
    #[pyo3(signature = (texts, **kwargs))]
    fn encode_batch<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>, kwargs: Option<&Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyList>> {
        let texts = crate::text::texts(texts)?;
        let args = CallArgs::parse(kwargs, true)?;
        let policy = Policy::of_call(&self.inner, &args)?;
        let opts = EncodeOptions { allowed: policy.filter(), add_bos: args.add_bos, add_eos: args.add_eos };
        crate::threads::encode_batch(py, &texts, args.num_threads, |t, ids| self.checked_into(&policy, &opts, t, ids))
    }

    /// `encode_ordinary` of many texts on up to `num_threads` threads.
    #[pyo3(signature = (texts, num_threads=None))]
    fn encode_ordinary_batch<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>, num_threads: Option<usize>) -> PyResult<Bound<'py, PyList>> {
        let texts = crate::text::texts(texts)?;
        crate::threads::encode_batch(py, &texts, num_threads.unwrap_or(DEFAULT_THREADS), |t, ids| guarded(|| self.inner.encode_ordinary_into(t, ids)))
    }

    /// `encode_batch`'s ids as one flat batch: `(ids, offsets)` buffers for numpy (`uint32`,
    /// `int64`), text `i`'s ids at `ids[offsets[i]..offsets[i + 1]]` (see
    /// `threads::encode_flat`). Keyword arguments as `encode_batch`'s.
    #[pyo3(signature = (texts, **kwargs))]
    fn encode_batch_to_buffers(&self, py: Python<'_>, texts: &Bound<'_, PyAny>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<(IdBuffer, IdBuffer)> {
        let texts = crate::text::texts(texts)?;
        let args = CallArgs::parse(kwargs, true)?;
        let policy = Policy::of_call(&self.inner, &args)?;
        let opts = EncodeOptions { allowed: policy.filter(), add_bos: args.add_bos, add_eos: args.add_eos };
        crate::threads::encode_flat(py, &texts, args.num_threads, |t, ids| self.checked_into(&policy, &opts, t, ids))
    }

    /// `encode_ordinary_batch`'s ids as one flat batch (see `encode_batch_to_buffers`).
    #[pyo3(signature = (texts, num_threads=None))]
    fn encode_ordinary_batch_to_buffers(&self, py: Python<'_>, texts: &Bound<'_, PyAny>, num_threads: Option<usize>) -> PyResult<(IdBuffer, IdBuffer)> {
        let texts = crate::text::texts(texts)?;
        crate::threads::encode_flat(py, &texts, num_threads.unwrap_or(DEFAULT_THREADS), |t, ids| guarded(|| self.inner.encode_ordinary_into(t, ids)))
    }

    /// Rendered chat conversations -> `(ids, mask)` lists, on up to `num_threads` threads
    /// (see `chat.rs`): `(results, failed, jinja2)`.
    /// With `chatml`, `(ChatMLFrame, bytepair.chat.chatml's plain for one conversation)`,
    /// or `jinja`, `(JinjaPreparer, bytepair.chat's preparer for one conversation)`,
    /// `conversations` are the caller's, framed or converted here.
    #[pyo3(signature = (conversations, num_threads=1, chatml=None, jinja=None))]
    fn encode_chat<'py>(
        slf: &Bound<'py, Self>,
        conversations: &Bound<'py, PyAny>,
        num_threads: usize,
        chatml: Option<crate::chat::ChatmlArg<'py>>,
        jinja: Option<crate::chat::JinjaArg<'py>>,
    ) -> PyResult<crate::chat::Answer<'py>> {
        let framer = crate::chat::Framer::from_args(&chatml, &jinja)?;
        crate::chat::encode_chat(slf.py(), slf, conversations, num_threads, framer)
    }

    /// `encode_chat` without waiting: the encoding runs on a pool of `num_threads` threads
    /// while the caller goes on; `.result()` encodes what the pool has not taken yet on the
    /// calling thread too and gives `(results, failed, jinja2)` (see `chat.rs`).
    #[pyo3(signature = (conversations, num_threads=1, chatml=None, jinja=None))]
    fn encode_chat_start<'py>(
        slf: &Bound<'py, Self>,
        conversations: &Bound<'py, PyAny>,
        num_threads: usize,
        chatml: Option<crate::chat::ChatmlArg<'py>>,
        jinja: Option<crate::chat::JinjaArg<'py>>,
    ) -> PyResult<crate::chat::ChatJob> {
        let framer = crate::chat::Framer::from_args(&chatml, &jinja)?;
        crate::chat::start(slf, conversations, num_threads, framer)
    }

    /// Forgets the merged pieces the model's cache holds (rank models: each thread's table,
    /// freed as that thread next encodes; the others: the tokenizer's shared cache).
    fn clear_cache(&self) {
        self.inner.clear_cache();
    }

    /// The id of bytes that are exactly one token, ordinary or special; KeyError if none.
    fn encode_single_token(&self, bytes: &[u8]) -> PyResult<u32> {
        self.inner.token_id(bytes).ok_or_else(|| PyKeyError::new_err(bytes.to_vec()))
    }

    /// The id of bytes that are exactly one token, or None.
    fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.inner.token_id(bytes)
    }

    /// The special tokens as (spelling, id).
    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.inner.special_list().to_vec()
    }

    // ------------------------------------------------------------------ decoding (every model)

    /// Decoded bytes, as the home system decodes. `lossy` (score models from SentencePiece)
    /// applies SentencePiece's rule of one U+FFFD per byte that is not UTF-8.
    #[pyo3(signature = (tokens, lossy=false))]
    fn decode_bytes<'py>(&self, py: Python<'py>, tokens: Vec<u32>, lossy: bool) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.allow_threads(|| {
            guarded(|| match (self.inner.model(), lossy) {
                (AnyModel::Score(s), true) => s.decode(&tokens, true),
                _ => self.inner.decode_bytes(&tokens),
            })
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// `decode_bytes` of many id lists on up to `num_threads` threads, the GIL released.
    #[pyo3(signature = (batch, num_threads=None))]
    fn decode_bytes_batch<'py>(&self, py: Python<'py>, batch: Vec<Vec<u32>>, num_threads: Option<usize>) -> PyResult<Bound<'py, PyList>> {
        let decoded = py.allow_threads(|| {
            guarded(|| {
                crate::threads::with_threads(num_threads.unwrap_or(DEFAULT_THREADS), || batch.par_iter().map(|ids| self.inner.decode_bytes(ids)).collect::<Result<Vec<_>, _>>())
                    .unwrap_or_else(|| batch.iter().map(|ids| self.inner.decode_bytes(ids)).collect())
            })
        })?;
        PyList::new(py, decoded.iter().map(|b| PyBytes::new(py, b)))
    }

    /// The bytes of one token as the table stores them.
    fn decode_single_token_bytes<'py>(&self, py: Python<'py>, token: u32) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, guarded(|| self.inner.token_bytes(token))?))
    }

    fn decode_tokens_bytes<'py>(&self, py: Python<'py>, tokens: Vec<u32>) -> PyResult<Bound<'py, PyList>> {
        let parts = guarded(|| tokens.iter().map(|&t| self.inner.token_bytes(t)).collect::<Result<Vec<_>, _>>())?;
        PyList::new(py, parts.into_iter().map(|b| PyBytes::new(py, b)))
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }
    /// "rank", "score" or "merge".
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    #[getter]
    fn bos_id(&self) -> Option<u32> {
        self.inner.bos_id()
    }
    #[getter]
    fn eos_id(&self) -> Option<u32> {
        self.inner.eos_id()
    }

    // ------------------------------------------------------------------ rank models

    /// BPE of raw bytes as one piece, no splitting (tiktoken's `_encode_single_piece`).
    fn encode_single_piece(&self, piece: &[u8]) -> PyResult<Vec<u32>> {
        Ok(self.rank("encode_single_piece")?.encode_single_piece(piece))
    }

    /// `(ids, last_piece_token_len)` of `encode(text, **kwargs)`: the ids and how many of them
    /// the text's last piece gave, as tiktoken's Rust `encode` returns them (`models::rank::
    /// unstable`); `Encoding.encode_with_unstable` and `_encode_bytes` are built on it. `text`
    /// must be valid Unicode: a lone surrogate raises UnicodeEncodeError, as in tiktoken.
    #[pyo3(signature = (text, **kwargs))]
    fn encode_with_last_piece(&self, py: Python<'_>, text: &str, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<(Vec<u32>, usize)> {
        let encoder = self.rank("encode_with_last_piece")?;
        let policy = Policy::of_call(&self.inner, &CallArgs::parse(kwargs, false)?)?;
        let allowed = policy.filter();
        py.allow_threads(|| {
            policy.check(&self.inner, text)?;
            guarded(|| encoder.encode_with_last_piece(text, &allowed))
        })
    }

    /// Every mergeable token's bytes, sorted by bytes (tiktoken's `token_byte_values`).
    fn token_byte_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut all: Vec<&[u8]> = self.rank("token_byte_values")?.vocab().mergeable().map(|(b, _)| b).collect();
        all.sort_unstable();
        PyList::new(py, all.into_iter().map(|b| PyBytes::new(py, b)))
    }

    /// The mergeable tokens as a new `dict[bytes, int]` (built on demand; not kept).
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (b, r) in self.rank("mergeable_ranks")?.vocab().mergeable() {
            d.set_item(PyBytes::new(py, b), r)?;
        }
        Ok(d)
    }

    /// The table as a BPE2 file (BPZ2 when `zstd_level` is given) with `source_hash` (32 bytes)
    /// in its header and a trailing section recording `name`, the pattern and the special tokens
    /// (`trailer=False` writes the base layout only).
    #[pyo3(signature = (source_hash, name="", zstd_level=None, trailer=true))]
    fn to_bpe2<'py>(&self, py: Python<'py>, source_hash: &[u8], name: &str, zstd_level: Option<i32>, trailer: bool) -> PyResult<Bound<'py, PyBytes>> {
        let e = self.rank("to_bpe2")?;
        let hash: [u8; 32] = source_hash.try_into().map_err(|_| PyValueError::new_err("source_hash must be 32 bytes"))?;
        let meta = bpe2::Meta { name: name.to_owned(), pattern: e.pattern().to_owned(), specials: e.added().special_list().to_vec() };
        let data = py.allow_threads(|| guarded(|| bpe2::write(e.vocab(), hash, trailer.then_some(&meta), zstd_level)))?;
        Ok(PyBytes::new(py, &data))
    }

    /// The mergeable tokens as a `.tiktoken` file, in rank order.
    fn to_tiktoken<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let e = self.rank("to_tiktoken")?;
        let data = py.allow_threads(|| tiktoken::write(e.vocab().mergeable()));
        Ok(PyBytes::new(py, &data))
    }

    /// The merge list that reproduces this rank model's vocabulary (see `merges::from_ranks`).
    fn merges_from_ranks(&self, py: Python<'_>) -> PyResult<Vec<(u32, u32, u32)>> {
        let e = self.rank("merges_from_ranks")?;
        Ok(py.allow_threads(|| merges::from_ranks(e.vocab())))
    }

    #[getter]
    fn n_mergeable(&self) -> PyResult<usize> {
        Ok(self.rank("n_mergeable")?.vocab().n_mergeable())
    }

    /// The largest mergeable rank.
    #[getter]
    fn max_rank(&self) -> PyResult<u32> {
        Ok(self.rank("max_rank")?.vocab().max_rank())
    }

    /// Which pre-tokenizer runs the pattern: a hand-written one ("cl100k", "o200k", ...),
    /// "automata" or "regex".
    #[getter]
    fn splitter(&self) -> PyResult<&'static str> {
        Ok(self.rank("splitter")?.splitter())
    }

    /// The split pattern of a rank model.
    #[getter]
    fn pattern(&self) -> PyResult<&str> {
        Ok(self.rank("pattern")?.pattern())
    }

    // ------------------------------------------------------------------ score models

    fn score(&self, id: u32) -> PyResult<f32> {
        let s = self.score_model("score")?;
        guarded(|| s.score(id))
    }

    /// The piece type (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
    fn piece_kind(&self, id: u32) -> PyResult<u8> {
        let s = self.score_model("piece_kind")?;
        guarded(|| s.kind(id).map(|k| k as u8))
    }

    /// Every piece as (bytes, score, type), by id.
    fn pieces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let s = self.score_model("pieces")?;
        let items: Vec<_> = (0..s.len() as u32)
            .map(|i| {
                let b = s.token_bytes(i).unwrap_or(b"");
                (PyBytes::new(py, b), s.score(i).unwrap_or(0.0), s.kind(i).map_or(1, |k| k as u8))
            })
            .collect();
        PyList::new(py, items)
    }

    /// `data` (the `.model` file this tokenizer was read from, which the Python layer keeps)
    /// checked and written back as a SentencePiece file.
    fn to_sentencepiece<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let s = self.score_model("to_sentencepiece")?;
        if s.flavor() != Flavor::SentencePiece {
            return Err(PyValueError::new_err("only a model read from a SentencePiece file can be written as one"));
        }
        let model = py.allow_threads(|| guarded(|| sentencepiece::read(data)))?;
        Ok(PyBytes::new(py, &sentencepiece::write(&model)))
    }

    /// The table as a LEAP file. From SentencePiece, U+2581 becomes a space in every piece, as
    /// llama2.c's exporter does.
    fn to_leap<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let s = self.score_model("to_leap")?;
        let sp = s.flavor() == Flavor::SentencePiece;
        let toks: Vec<(Vec<u8>, f32)> = (0..s.len() as u32)
            .map(|i| {
                let b = s.token_bytes(i).unwrap_or(b"");
                let b = if sp { String::from_utf8_lossy(b).replace('\u{2581}', " ").into_bytes() } else { b.to_vec() };
                (b, s.score(i).unwrap_or(0.0))
            })
            .collect();
        let data = guarded(|| leap::write(toks.iter().map(|(b, s)| (b.as_slice(), *s))))?;
        Ok(PyBytes::new(py, &data))
    }

    #[getter]
    fn unk_id(&self) -> Option<u32> {
        match self.inner.model() {
            AnyModel::Score(s) => s.unk_id(),
            _ => None,
        }
    }

    /// "sentencepiece" or "leap".
    #[getter]
    fn flavor(&self) -> PyResult<&'static str> {
        Ok(match self.score_model("flavor")?.flavor() {
            Flavor::SentencePiece => "sentencepiece",
            Flavor::Leap => "leap",
        })
    }

    // ------------------------------------------------------------------ merge-list models

    /// Every id's bytes (empty for a hole).
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let m = self.merge_model("tokens")?;
        PyList::new(py, m.tokens().map(|t| PyBytes::new(py, t)))
    }

    /// The added tokens as (content, id, special).
    fn added_tokens(&self) -> PyResult<Vec<(String, u32, bool)>> {
        Ok(self.merge_model("added_tokens")?.added().tokens().iter().map(|t| (t.content.clone(), t.id, t.special)).collect())
    }

    /// The merge list, (left, right, merged) in priority order.
    fn merges(&self) -> PyResult<Vec<(u32, u32, u32)>> {
        Ok(self.merge_model("merges")?.merge_list().to_vec())
    }

    /// The model as a QTKR file with these BOS/EOS/PAD ids.
    #[pyo3(signature = (bos=None, eos=None, pad=None))]
    fn to_qtkr<'py>(&self, py: Python<'py>, bos: Option<u32>, eos: Option<u32>, pad: Option<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let m = self.merge_model("to_qtkr")?;
        let q = qtkr::Qtkr { tokens: m.tokens().map(<[u8]>::to_vec).collect(), merges: m.merge_list().to_vec(), bos, eos, pad };
        let data = guarded(|| qtkr::write(&q))?;
        Ok(PyBytes::new(py, &data))
    }
}
