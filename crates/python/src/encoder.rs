//! `CoreBPE`: the rank-BPE encoder (tiktoken's class of the same name).

use bytepair_core::formats::{bpe2, tiktoken};
use bytepair_core::{Encoder, SpecialFilter};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList};
use rayon::prelude::*;
use std::path::PathBuf;

use crate::errors::guarded;
use crate::ids::{reserve_for, with_ids, IntCache};
use crate::policy::Policy;
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

/// The rank-BPE encoder: tiktoken's CoreBPE.
#[pyclass(frozen, module = "bytepair._core")]
pub struct CoreBPE {
    pub(crate) inner: Encoder,
    ints: IntCache,
}

impl CoreBPE {
    fn wrap(inner: Encoder) -> Self {
        let ints = IntCache::new(inner.vocab().table_len());
        CoreBPE { inner, ints }
    }

    /// The text of an encode call (TypeError unless a `str`; lone surrogates repaired, see
    /// `text.rs`) and its special-token policy.
    fn prepare(&self, text: &Bound<'_, PyAny>, allowed: &Bound<'_, PyAny>, disallowed: &Bound<'_, PyAny>) -> PyResult<(Text, Policy)> {
        Ok((crate::text::text(text)?, Policy::new(self.inner.specials(), Some(allowed), Some(disallowed))?))
    }

    /// `encode` with the disallowed check first: what single calls run with the GIL released
    /// and what each batch worker runs per text. `allowed` is `policy.filter()`.
    fn checked_into(&self, policy: &Policy, allowed: &SpecialFilter, text: &str, ids: &mut Vec<u32>) -> PyResult<()> {
        policy.check(self.inner.specials(), text)?;
        guarded(|| self.inner.encode_into(text, allowed, ids))
    }

    /// `f` of the ids of one `encode` call, in this thread's id vector.
    fn with_encoded<R>(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        f: impl FnOnce(&[u32]) -> PyResult<R>,
    ) -> PyResult<R> {
        let (text, policy) = self.prepare(text, allowed_special, disallowed_special)?;
        let allowed = policy.filter();
        with_ids(reserve_for(text.len()), |ids| {
            py.allow_threads(|| self.checked_into(&policy, &allowed, &text, ids))?;
            f(ids)
        })
    }
}

#[pymethods]
impl CoreBPE {
    /// From tiktoken's arguments: `mergeable_ranks: dict[bytes, int]`, `special_tokens: dict[str, int]`.
    #[new]
    fn new(
        py: Python<'_>,
        mergeable_ranks: &Bound<'_, PyDict>,
        special_tokens: Vec<(String, u32)>,
        pattern: &str,
    ) -> PyResult<Self> {
        let mut ranks: Vec<(Bound<'_, PyBytes>, u32)> = Vec::with_capacity(mergeable_ranks.len());
        for (k, v) in mergeable_ranks.iter() {
            ranks.push((k.downcast_into::<PyBytes>()?, v.extract()?));
        }
        let borrowed: Vec<(&[u8], u32)> = ranks.iter().map(|(b, r)| (b.as_bytes(), *r)).collect();
        let pattern = pattern.to_owned();
        let inner = py.allow_threads(|| {
            guarded(|| Encoder::from_ranks(borrowed, special_tokens, &pattern))
        })?;
        Ok(CoreBPE::wrap(inner))
    }

    /// From the bytes of a `.tiktoken` file (no Python dict in between).
    #[staticmethod]
    fn from_tiktoken(py: Python<'_>, data: &[u8], special_tokens: Vec<(String, u32)>, pattern: &str) -> PyResult<Self> {
        let inner = py.allow_threads(|| {
            guarded(|| {
                let ranks = tiktoken::parse(data)?;
                Encoder::from_ranks(ranks.iter().map(|(b, r)| (b.as_slice(), *r)), special_tokens, pattern)
            })
        })?;
        Ok(CoreBPE::wrap(inner))
    }

    /// From the bytes of a BPE2 or BPZ2 file. `special_tokens` are added at their ids; `None`
    /// takes those recorded in the file's trailing section. `pattern` `None` takes the recorded one.
    #[staticmethod]
    #[pyo3(signature = (data, special_tokens=None, pattern=None))]
    fn from_bpe2(py: Python<'_>, data: &[u8], special_tokens: Option<Vec<(String, u32)>>, pattern: Option<String>) -> PyResult<Self> {
        let inner = py.allow_threads(|| guarded(|| encoder_from_bpe2(bpe2::read(data)?, special_tokens, pattern)))?;
        Ok(CoreBPE::wrap(inner))
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
        Ok(CoreBPE::wrap(inner))
    }

    /// The ids of a `str` (lone surrogates repaired, see `text.rs`), special tokens as text.
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let text = crate::text::text(text)?;
        let text: &str = &text;
        with_ids(reserve_for(text.len()), |ids| {
            py.allow_threads(|| guarded(|| self.inner.encode_ordinary_into(text, ids)))?;
            self.ints.list(py, ids)
        })
    }

    /// `encode_ordinary` of one long text on up to `num_threads` threads: the text is cut at
    /// offsets where every serial run starts a piece (`Encoder::split_points`), the chunks are
    /// encoded in parallel, and the ids concatenated: the same ids as the serial call. Texts
    /// under 1 MB, and patterns on the regex engine, are encoded serially.
    fn encode_ordinary_parallel<'py>(&self, py: Python<'py>, text: &Bound<'py, PyAny>, num_threads: usize) -> PyResult<Bound<'py, PyList>> {
        let text = crate::text::text(text)?;
        let text: &str = &text;
        const MIN_TEXT: usize = 1 << 20;
        let ids = py.allow_threads(|| {
            guarded(|| {
                let threads = num_threads.max(1);
                let points = if threads > 1 && text.len() >= MIN_TEXT {
                    self.inner.split_points(text, (text.len() / (4 * threads)).max(1 << 16))
                } else {
                    None
                };
                let Some(points) = points.filter(|p| !p.is_empty()) else {
                    return self.inner.encode_ordinary(text);
                };
                let mut bounds = Vec::with_capacity(points.len() + 2);
                bounds.push(0);
                bounds.extend(points);
                bounds.push(text.len());
                let parts: Vec<Vec<u32>> = crate::threads::with_threads(threads, || {
                    bounds
                        .par_windows(2)
                        .map(|w| {
                            let mut out = Vec::with_capacity(reserve_for(w[1] - w[0]));
                            self.inner.encode_ordinary_range(text, w[0]..w[1], &mut out)?;
                            Ok(out)
                        })
                        .collect::<Result<_, _>>()
                })?;
                Ok(parts.concat())
            })
        })?;
        self.ints.list(py, &ids)
    }

    /// `encode` with tiktoken's `allowed_special` / `disallowed_special` (the Python layer
    /// passes tiktoken's defaults, `set()` and `"all"`): the disallowed check runs here, with
    /// the GIL released, in the same call as the encoding.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with_encoded(py, text, allowed_special, disallowed_special, |ids| self.ints.list(py, ids))
    }

    /// The ids as native-endian u32 in a bytearray (one copy; numpy wraps it without another).
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        self.with_encoded(py, text, allowed_special, disallowed_special, |ids| {
            PyByteArray::new_with(py, ids.len() * 4, |buf| {
                for (chunk, id) in buf.chunks_exact_mut(4).zip(ids.iter()) {
                    chunk.copy_from_slice(&id.to_ne_bytes());
                }
                Ok(())
            })
        })
    }

    /// How many ids `encode` would return, with no list (or vector) built.
    fn count(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let (text, policy) = self.prepare(text, allowed_special, disallowed_special)?;
        let allowed = policy.filter();
        py.allow_threads(|| {
            policy.check(self.inner.specials(), &text)?;
            guarded(|| self.inner.count(&text, &allowed))
        })
    }

    /// Encodes many texts on up to `num_threads` threads (see `threads::encode_batch`); each
    /// worker runs the disallowed check on its own texts. `allowed_*` as in `encode`.
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed_special: &Bound<'py, PyAny>,
        disallowed_special: &Bound<'py, PyAny>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts = crate::text::texts(texts)?;
        let policy = Policy::new(self.inner.specials(), Some(allowed_special), Some(disallowed_special))?;
        let allowed = policy.filter();
        crate::threads::encode_batch(py, &texts, num_threads, &self.ints, |t, ids| self.checked_into(&policy, &allowed, t, ids))
    }

    /// `encode_ordinary` of many texts on up to `num_threads` threads.
    fn encode_ordinary_batch<'py>(&self, py: Python<'py>, texts: &Bound<'py, PyAny>, num_threads: usize) -> PyResult<Bound<'py, PyList>> {
        let texts = crate::text::texts(texts)?;
        crate::threads::encode_batch(py, &texts, num_threads, &self.ints, |t, ids| guarded(|| self.inner.encode_ordinary_into(t, ids)))
    }

    /// Forgets the merged pieces that threads keep between calls for this encoding
    /// (`Vocab::forget_cached`; the memory is freed as each thread next encodes).
    fn clear_cache(&self) {
        self.inner.vocab().forget_cached();
    }

    fn encode_single_piece(&self, piece: &[u8]) -> Vec<u32> {
        self.inner.encode_single_piece(piece)
    }

    fn encode_single_token(&self, bytes: &[u8]) -> PyResult<u32> {
        self.inner
            .encode_single_token(bytes)
            .ok_or_else(|| PyKeyError::new_err(bytes.to_vec()))
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, tokens: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.allow_threads(|| guarded(|| self.inner.decode_bytes(&tokens)))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn decode_single_token_bytes<'py>(&self, py: Python<'py>, token: u32) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, guarded(|| self.inner.token_bytes(token))?))
    }

    fn decode_tokens_bytes<'py>(&self, py: Python<'py>, tokens: Vec<u32>) -> PyResult<Bound<'py, PyList>> {
        let parts = guarded(|| tokens.iter().map(|&t| self.inner.token_bytes(t)).collect::<Result<Vec<_>, _>>())?;
        PyList::new(py, parts.into_iter().map(|b| PyBytes::new(py, b)))
    }

    /// Every mergeable token's bytes, sorted by bytes (tiktoken's `token_byte_values`).
    fn token_byte_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut all: Vec<&[u8]> = self.inner.vocab().mergeable().map(|(b, _)| b).collect();
        all.sort_unstable();
        PyList::new(py, all.into_iter().map(|b| PyBytes::new(py, b)))
    }

    /// The mergeable tokens as a new `dict[bytes, int]` (built on demand; not kept).
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (b, r) in self.inner.vocab().mergeable() {
            d.set_item(PyBytes::new(py, b), r)?;
        }
        Ok(d)
    }

    /// The table as a BPE2 file (BPZ2 when `zstd_level` is given) with `source_hash` (32 bytes)
    /// in its header and a trailing section recording `name`, the pattern and the special tokens
    /// (`trailer=False` writes the base layout only).
    #[pyo3(signature = (source_hash, name="", zstd_level=None, trailer=true))]
    fn to_bpe2<'py>(&self, py: Python<'py>, source_hash: &[u8], name: &str, zstd_level: Option<i32>, trailer: bool) -> PyResult<Bound<'py, PyBytes>> {
        let hash: [u8; 32] = source_hash
            .try_into()
            .map_err(|_| PyValueError::new_err("source_hash must be 32 bytes"))?;
        let meta = bpe2::Meta {
            name: name.to_owned(),
            pattern: self.inner.pattern().to_owned(),
            specials: self.inner.specials().tokens().to_vec(),
        };
        let data = py.allow_threads(|| guarded(|| bpe2::write(self.inner.vocab(), hash, trailer.then_some(&meta), zstd_level)))?;
        Ok(PyBytes::new(py, &data))
    }

    /// The mergeable tokens as a `.tiktoken` file, in rank order.
    fn to_tiktoken<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let data = py.allow_threads(|| tiktoken::write(self.inner.vocab().mergeable()));
        PyBytes::new(py, &data)
    }

    #[getter]
    fn n_mergeable(&self) -> usize {
        self.inner.vocab().n_mergeable()
    }

    /// The largest mergeable rank.
    #[getter]
    fn max_rank(&self) -> u32 {
        self.inner.vocab().max_rank()
    }

    /// Which pre-tokenizer runs the pattern: a hand-written one ("cl100k", "o200k", ...) or "regex".
    #[getter]
    fn splitter(&self) -> &'static str {
        self.inner.splitter()
    }

    #[getter]
    fn pattern(&self) -> &str {
        self.inner.pattern()
    }
}

