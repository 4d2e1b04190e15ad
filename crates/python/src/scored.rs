//! `ScoreBPE`: the SentencePiece / LEAP score-BPE tokenizer.

use bytepair_core::formats::{leap, sentencepiece};
use bytepair_core::scored::{Flavor, ScoreTokenizer};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::errors::guarded;
use crate::ids::IntCache;
use crate::policy::Policy;

#[pyclass(frozen, module = "bytepair._core")]
pub struct ScoreBPE {
    inner: ScoreTokenizer,
    /// The `.model` file's bytes, parsed again to write the model back (SentencePiece only):
    /// keeping the parsed model instead cost an allocation per piece at load.
    model: Option<Vec<u8>>,
    ints: IntCache,
}

impl ScoreBPE {
    fn wrap(inner: ScoreTokenizer, model: Option<Vec<u8>>) -> Self {
        let ints = IntCache::new(inner.len());
        ScoreBPE { inner, model, ints }
    }
}

#[pymethods]
impl ScoreBPE {
    /// From the bytes of a SentencePiece `.model` file (BPE models only).
    #[staticmethod]
    fn from_sentencepiece(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        py.allow_threads(|| {
            guarded(|| {
                let model = sentencepiece::read(data)?;
                let inner = ScoreTokenizer::from_sentencepiece(&model)?;
                Ok(ScoreBPE::wrap(inner, Some(data.to_vec())))
            })
        })
    }

    /// From the bytes of a LEAP / llama2.c `tokenizer.bin`, BOS/EOS and the dummy prefix as
    /// llama2.c has them (see `ScoreTokenizer::from_leap_llama2c`).
    #[staticmethod]
    #[pyo3(signature = (data, dummy_prefix=None))]
    fn from_leap(py: Python<'_>, data: &[u8], dummy_prefix: Option<bool>) -> PyResult<Self> {
        py.allow_threads(|| {
            guarded(|| {
                let (_, tokens) = leap::read(data)?;
                Ok(ScoreBPE::wrap(ScoreTokenizer::from_leap_llama2c(&tokens, dummy_prefix)?, None))
            })
        })
    }

    /// From `(bytes, score)` pairs by id, as LEAP (for exports from other formats).
    #[staticmethod]
    #[pyo3(signature = (tokens, bos_id=None, eos_id=None, dummy_prefix=false))]
    fn from_scored(py: Python<'_>, tokens: Vec<(Vec<u8>, f32)>, bos_id: Option<u32>, eos_id: Option<u32>, dummy_prefix: bool) -> PyResult<Self> {
        py.allow_threads(|| guarded(|| Ok(ScoreBPE::wrap(ScoreTokenizer::from_leap(&tokens, bos_id, eos_id, dummy_prefix)?, None))))
    }

    /// The ids of `text` (any `str`: lone surrogates become U+FFFD first, see `text.rs`).
    /// `allowed_special` / `disallowed_special` as tiktoken's, over the special pieces; `None`
    /// (the default) is the home system's rule: their spellings are plain text.
    #[pyo3(signature = (text, *, add_bos=false, add_eos=false, allowed_special=None, disallowed_special=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        add_bos: bool,
        add_eos: bool,
        allowed_special: Option<&Bound<'py, PyAny>>,
        disallowed_special: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = crate::text::text(text)?;
        let ids = if allowed_special.is_none() && disallowed_special.is_none() {
            py.allow_threads(|| guarded(|| Ok(self.inner.encode(&text, add_bos, add_eos))))?
        } else {
            let policy = Policy::new(self.inner.specials(), allowed_special, disallowed_special)?;
            let allowed = policy.allowed.as_deref();
            py.allow_threads(|| {
                policy.check(self.inner.specials(), &text)?;
                guarded(|| Ok(self.inner.encode_allowed(&text, allowed, add_bos, add_eos)))
            })?
        };
        self.ints.list(py, &ids)
    }

    /// Encodes many texts on up to `num_threads` threads, the GIL released while they work.
    #[pyo3(signature = (texts, *, add_bos=false, add_eos=false, num_threads=8, allowed_special=None, disallowed_special=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        add_bos: bool,
        add_eos: bool,
        num_threads: usize,
        allowed_special: Option<&Bound<'py, PyAny>>,
        disallowed_special: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts = crate::text::texts(texts)?;
        let policy = Policy::new(self.inner.specials(), allowed_special, disallowed_special)?;
        let allowed = policy.allowed.as_deref();
        crate::threads::encode_batch(py, &texts, num_threads, &self.ints, |t, ids| {
            policy.check(self.inner.specials(), t)?;
            ids.extend(guarded(|| Ok(self.inner.encode_allowed(t, allowed, add_bos, add_eos)))?);
            Ok(())
        })
    }

    /// The special pieces as (spelling, id): control and unknown pieces, or LEAP's BOS/EOS.
    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.inner.special_list().to_vec()
    }

    /// Decoded bytes; `lossy` applies SentencePiece's U+FFFD-per-bad-byte rule.
    #[pyo3(signature = (ids, lossy=false))]
    fn decode<'py>(&self, py: Python<'py>, ids: Vec<u32>, lossy: bool) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.allow_threads(|| guarded(|| self.inner.decode(&ids, lossy)))?;
        Ok(PyBytes::new(py, &b))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, guarded(|| self.inner.token_bytes(id))?))
    }

    fn piece_id(&self, piece: &[u8]) -> Option<u32> {
        self.inner.piece_id(piece)
    }

    fn score(&self, id: u32) -> PyResult<f32> {
        guarded(|| self.inner.score(id))
    }

    /// The piece type (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
    fn kind(&self, id: u32) -> PyResult<u8> {
        guarded(|| self.inner.kind(id).map(|k| k as u8))
    }

    /// Every piece as (bytes, score, type), by id.
    fn pieces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<_> = (0..self.inner.len() as u32)
            .map(|i| {
                let b = self.inner.token_bytes(i).unwrap_or(b"");
                (PyBytes::new(py, b), self.inner.score(i).unwrap_or(0.0), self.inner.kind(i).map_or(1, |k| k as u8))
            })
            .collect();
        PyList::new(py, items)
    }

    /// The model as a SentencePiece `.model` file (only for a model read from one).
    fn to_sentencepiece<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Some(data) = &self.model else { return Ok(None) };
        let model = py.allow_threads(|| guarded(|| sentencepiece::read(data)))?;
        Ok(Some(PyBytes::new(py, &sentencepiece::write(&model))))
    }

    /// The table as a LEAP file. From SentencePiece, U+2581 becomes a space in every piece, as
    /// llama2.c's exporter does.
    fn to_leap<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let n = self.inner.len() as u32;
        let sp = self.inner.flavor() == Flavor::SentencePiece;
        let toks: Vec<(Vec<u8>, f32)> = (0..n)
            .map(|i| {
                let b = self.inner.token_bytes(i).unwrap_or(b"");
                let b = if sp { String::from_utf8_lossy(b).replace('\u{2581}', " ").into_bytes() } else { b.to_vec() };
                (b, self.inner.score(i).unwrap_or(0.0))
            })
            .collect();
        let data = guarded(|| leap::write(toks.iter().map(|(b, s)| (b.as_slice(), *s))))?;
        Ok(PyBytes::new(py, &data))
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.len()
    }
    #[getter]
    fn bos_id(&self) -> Option<u32> {
        self.inner.bos_id()
    }
    #[getter]
    fn eos_id(&self) -> Option<u32> {
        self.inner.eos_id()
    }
    #[getter]
    fn unk_id(&self) -> Option<u32> {
        self.inner.unk_id()
    }
    #[getter]
    fn flavor(&self) -> &'static str {
        match self.inner.flavor() {
            Flavor::SentencePiece => "sentencepiece",
            Flavor::Leap => "leap",
        }
    }
    #[getter]
    fn segmented(&self) -> bool {
        self.inner.segmented()
    }
}
