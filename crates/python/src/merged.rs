//! `MergeBPE`: the merge-list tokenizer (QTKR files, HF tokenizer.json BPE models).

use bytepair_core::added::Allowed;
use bytepair_core::encode::merges;
use bytepair_core::formats::{hf, qtkr};
use bytepair_core::merged::MergeTokenizer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::encoder::CoreBPE;
use crate::errors::guarded;
use crate::ids::IntCache;
use crate::policy::Policy;

#[pyclass(frozen, module = "bytepair._core")]
pub struct MergeBPE {
    inner: MergeTokenizer,
    tokens: Vec<Vec<u8>>,
    merges: Vec<(u32, u32, u32)>,
    ints: IntCache,
}

impl MergeBPE {
    fn wrap(inner: MergeTokenizer, tokens: Vec<Vec<u8>>, merges: Vec<(u32, u32, u32)>) -> Self {
        let ints = IntCache::new(inner.len());
        MergeBPE { inner, tokens, merges, ints }
    }
}

#[pymethods]
impl MergeBPE {
    /// `char_level`: None for byte-level, else (byte_fallback, unk_id, fuse_unk).
    #[new]
    #[pyo3(signature = (tokens, merges, char_level=None, ignore_merges=false, pattern=None, emit_gaps=false, special_tokens=vec![]))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tokens: Vec<Vec<u8>>,
        merges: Vec<(u32, u32, u32)>,
        char_level: Option<(bool, Option<u32>, bool)>,
        ignore_merges: bool,
        pattern: Option<String>,
        emit_gaps: bool,
        special_tokens: Vec<(String, u32)>,
    ) -> PyResult<Self> {
        py.allow_threads(|| {
            guarded(|| {
                let inner = MergeTokenizer::new(&tokens, &merges, char_level, ignore_merges, pattern.as_deref(), emit_gaps, special_tokens)?;
                Ok(MergeBPE::wrap(inner, tokens, merges))
            })
        })
    }

    /// From a QTKR file, with no Python objects in between: (tokenizer, bos, eos, pad). BOS, EOS
    /// and PAD are its special tokens (split out of text only when asked).
    #[staticmethod]
    #[pyo3(signature = (data, pattern=None))]
    #[allow(clippy::type_complexity)]
    fn from_qtkr(py: Python<'_>, data: &[u8], pattern: Option<String>) -> PyResult<(Self, Option<u32>, Option<u32>, Option<u32>)> {
        py.allow_threads(|| {
            guarded(|| {
                let q = qtkr::read(data)?;
                let specials: Vec<(String, u32)> = [q.bos, q.eos, q.pad]
                    .into_iter()
                    .flatten()
                    .filter_map(|id| String::from_utf8(q.tokens[id as usize].clone()).ok().map(|s| (s, id)))
                    .collect::<std::collections::BTreeMap<_, _>>()
                    .into_iter()
                    .collect();
                let inner = MergeTokenizer::new(&q.tokens, &q.merges, None, false, pattern.as_deref(), false, specials)?;
                Ok((MergeBPE::wrap(inner, q.tokens, q.merges), q.bos, q.eos, q.pad))
            })
        })
    }

    /// From a HF tokenizer.json file, parsed in Rust: (tokenizer, info). `info` holds what the
    /// Python layer needs: `pattern`, `space_symbol` (decode maps "▁" to spaces),
    /// `byte_level`, and `added_tokens` as (content, id, special) in file order of matching.
    #[staticmethod]
    fn from_tokenizer_json<'py>(py: Python<'py>, data: &[u8]) -> PyResult<(Self, Bound<'py, PyDict>)> {
        let (core, m) = py.allow_threads(|| {
            guarded(|| {
                let m = hf::read(data)?;
                let specials: Vec<(String, u32)> = m.added.iter().map(|t| (t.content.clone(), t.id)).collect();
                let inner = MergeTokenizer::new(&m.tokens, &m.merges, m.char_level, m.ignore_merges, m.pattern.as_deref(), m.pattern.is_some(), specials)?
                    .with_pipeline(m.normalizer, m.prefix, m.added.clone())?;
                Ok((inner, m))
            })
        })?;
        let info = PyDict::new(py);
        info.set_item("pattern", m.pattern.as_deref())?;
        info.set_item("space_symbol", m.space_symbol)?;
        info.set_item("byte_level", m.char_level.is_none())?;
        let added: Vec<(String, u32, bool)> = m.added.iter().map(|t| (t.content.clone(), t.id, t.special)).collect();
        info.set_item("added_tokens", added)?;
        Ok((MergeBPE::wrap(core, m.tokens, m.merges), info))
    }

    /// Parses a QTKR file: (tokens, merges, bos, eos, pad).
    #[staticmethod]
    #[allow(clippy::type_complexity)]
    fn read_qtkr(py: Python<'_>, data: &[u8]) -> PyResult<(Vec<Vec<u8>>, Vec<(u32, u32, u32)>, Option<u32>, Option<u32>, Option<u32>)> {
        let q = py.allow_threads(|| guarded(|| qtkr::read(data)))?;
        Ok((q.tokens, q.merges, q.bos, q.eos, q.pad))
    }

    /// The merge list that reproduces a rank encoder's vocabulary (see `merges::from_ranks`).
    #[staticmethod]
    fn merges_from_ranks(py: Python<'_>, core: &CoreBPE) -> Vec<(u32, u32, u32)> {
        py.allow_threads(|| merges::from_ranks(core.inner.vocab()))
    }

    #[pyo3(signature = (bos=None, eos=None, pad=None))]
    fn to_qtkr<'py>(&self, py: Python<'py>, bos: Option<u32>, eos: Option<u32>, pad: Option<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let q = qtkr::Qtkr { tokens: self.tokens.clone(), merges: self.merges.clone(), bos, eos, pad };
        let data = guarded(|| qtkr::write(&q))?;
        Ok(PyBytes::new(py, &data))
    }

    /// The ids of `text` (any `str`: lone surrogates become U+FFFD first, see `text.rs`).
    /// `allowed_special` / `disallowed_special` as tiktoken's, over the special added tokens
    /// (non-special added tokens always match); `None` means none.
    #[pyo3(signature = (text, allowed_special=None, disallowed_special=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed_special: Option<&Bound<'py, PyAny>>,
        disallowed_special: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let text = crate::text::text(text)?;
        let policy = Policy::new(self.inner.specials(), allowed_special, disallowed_special)?;
        let ids = py.allow_threads(|| {
            policy.check(self.inner.specials(), &text)?;
            guarded(|| self.inner.encode(&text, as_allowed(&policy.allowed)))
        })?;
        self.ints.list(py, &ids)
    }

    /// Encodes many texts on up to `num_threads` threads, the GIL released while they work.
    #[pyo3(signature = (texts, allowed_special=None, disallowed_special=None, num_threads=8))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed_special: Option<&Bound<'py, PyAny>>,
        disallowed_special: Option<&Bound<'py, PyAny>>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts = crate::text::texts(texts)?;
        let policy = Policy::new(self.inner.specials(), allowed_special, disallowed_special)?;
        crate::threads::encode_batch(py, &texts, num_threads, &self.ints, |t, ids| {
            policy.check(self.inner.specials(), t)?;
            ids.extend(guarded(|| self.inner.encode(t, as_allowed(&policy.allowed)))?);
            Ok(())
        })
    }

    /// The special added tokens as (spelling, id).
    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.inner.specials().tokens().to_vec()
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let b = py.allow_threads(|| guarded(|| self.inner.decode_bytes(&ids)))?;
        Ok(PyBytes::new(py, &b))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.inner.token(id).ok_or(bytepair_core::Error::UnknownToken(id));
        Ok(PyBytes::new(py, guarded(|| t)?))
    }

    fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.inner.id(bytes)
    }

    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.tokens.iter().map(|t| PyBytes::new(py, t)))
    }

    fn merges(&self) -> Vec<(u32, u32, u32)> {
        self.merges.clone()
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.len()
    }
}

fn as_allowed(ids: &Option<Vec<u32>>) -> Allowed<'_> {
    match ids {
        None => Allowed::All,
        Some(v) if v.is_empty() => Allowed::None,
        Some(v) => Allowed::Only(v),
    }
}
