//! `Trainer`: the BPE trainer's state, driven step by step from `bytepair/train.py`.
//!
//! Python owns the loop (reading input, progress, Ctrl-C): it hands over one batch of
//! documents at a time (`count`, GIL released while the batch is split and counted on the
//! trainer's own thread pool), then asks for merges a slice at a time (`merge`, GIL released).
//! Between calls the interpreter runs, so KeyboardInterrupt arrives within one batch or slice.

use bytepair_core::train::{ChunkCounter, Merger};
use bytepair_core::Error;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyList};

use crate::errors::guarded;

/// Most threads a trainer takes: past this, the per-thread count tables and OS threads cost
/// more than they give (and 2**31 of them aborted the process). `train.py` checks it first.
pub const MAX_THREADS: usize = 1024;

fn build_pool(threads: usize) -> PyResult<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bytepair-train-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the trainer's threads: {e}")))
}

#[pyclass(module = "bytepair._core")]
pub struct Trainer {
    pool: rayon::ThreadPool,
    /// The process `pool` was built in: a trainer used in a forked child builds a new pool,
    /// the parent's threads not being there (see `threads.rs`).
    pid: u32,
    threads: usize,
    counter: Option<ChunkCounter>,
    merger: Option<Merger>,
    distinct_chunks: usize,
}

fn state_error(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!("Trainer: {what}"))
}

impl Trainer {
    /// Rebuilds the pool if this is a forked child of the process that built it.
    fn refresh_pool(&mut self) -> PyResult<()> {
        let pid = std::process::id();
        if pid != self.pid {
            let old = std::mem::replace(&mut self.pool, build_pool(self.threads)?);
            std::mem::forget(old); // its threads are in the parent: dropping would wait on them
            self.pid = pid;
        }
        Ok(())
    }
}

#[pymethods]
impl Trainer {
    /// A trainer splitting with `pattern` on `num_threads` threads (PatternError if the pattern
    /// does not compile).
    #[new]
    fn new(pattern: &str, num_threads: usize) -> PyResult<Self> {
        if !(1..=MAX_THREADS).contains(&num_threads) {
            return Err(PyValueError::new_err(format!("num_threads must be between 1 and {MAX_THREADS}, got {num_threads}")));
        }
        let threads = num_threads;
        let counter = guarded(|| ChunkCounter::new(pattern, threads))?;
        let pool = build_pool(threads)?;
        Ok(Trainer { pool, pid: std::process::id(), threads, counter: Some(counter), merger: None, distinct_chunks: 0 })
    }

    /// Splits and counts a batch of documents (GIL released).
    fn count(&mut self, py: Python<'_>, docs: Vec<PyBackedStr>) -> PyResult<()> {
        self.refresh_pool()?;
        let counter = self.counter.as_mut().ok_or_else(|| state_error("counting is over"))?;
        let pool = &self.pool;
        py.allow_threads(|| guarded(|| pool.install(|| counter.add_documents(&docs))))
    }

    /// Counts a block of UTF-8 text with one document per line (GIL released). Returns None,
    /// or `(byte offset, reason)` of the first invalid UTF-8 if `lossy` is false; with `lossy`
    /// invalid bytes are read as U+FFFD. Nothing of an invalid block is counted.
    fn count_lines(&mut self, py: Python<'_>, data: &[u8], lossy: bool) -> PyResult<Option<(usize, String)>> {
        self.refresh_pool()?;
        let counter = self.counter.as_mut().ok_or_else(|| state_error("counting is over"))?;
        let pool = &self.pool;
        py.allow_threads(|| {
            let text = match std::str::from_utf8(data) {
                Ok(t) => std::borrow::Cow::Borrowed(t),
                Err(_) if lossy => String::from_utf8_lossy(data),
                Err(e) => {
                    let reason = match e.error_len() {
                        Some(_) => "invalid UTF-8 byte sequence",
                        None => "truncated UTF-8 sequence at the end",
                    };
                    return Ok(Some((e.valid_up_to(), reason.to_owned())));
                }
            };
            guarded(|| pool.install(|| counter.add_lines(&text)))?;
            Ok(None)
        })
    }

    /// (documents, bytes) counted so far.
    fn seen(&self) -> (u64, u64) {
        self.counter.as_ref().map(|c| c.seen()).unwrap_or((0, 0))
    }

    /// Ends counting and indexes the pairs. Returns (distinct chunks, total chunks).
    fn start_merging(&mut self, py: Python<'_>) -> PyResult<(usize, u64)> {
        self.refresh_pool()?;
        let counter = self.counter.take().ok_or_else(|| state_error("merging has already started"))?;
        let pool = &self.pool;
        let (merger, distinct, total) = py.allow_threads(|| {
            guarded(|| {
                pool.install(|| {
                    let counts = counter.finish();
                    let merger = Merger::new(&counts)?;
                    Ok::<_, Error>((merger, counts.len(), counts.total()))
                })
            })
        })?;
        self.merger = Some(merger);
        self.distinct_chunks = distinct;
        Ok((distinct, total))
    }

    /// Merges until there are `n_tokens` tokens, `max_steps` merges were made, or no pair
    /// reaches `min_frequency` (GIL released). Returns (tokens now, finished).
    fn merge(&mut self, py: Python<'_>, n_tokens: usize, min_frequency: u64, max_steps: usize) -> PyResult<(usize, bool)> {
        let merger = self.merger.as_mut().ok_or_else(|| state_error("call start_merging first"))?;
        py.allow_threads(|| {
            guarded(|| {
                for _ in 0..max_steps {
                    if merger.n_tokens() >= n_tokens {
                        return Ok((merger.n_tokens(), true));
                    }
                    if merger.step(min_frequency).is_none() {
                        return Ok((merger.n_tokens(), true));
                    }
                }
                Ok((merger.n_tokens(), merger.n_tokens() >= n_tokens))
            })
        })
    }

    /// The bytes of every token, in id order (ids 0-255 are the single bytes).
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let merger = self.merger.as_ref().ok_or_else(|| state_error("call start_merging first"))?;
        PyList::new(py, merger.tokens().iter().map(|t| PyBytes::new(py, t)))
    }

    /// Every merge as (left id, right id, id, count), in order. A merge whose bytes were
    /// already a token repeats that token's id.
    fn merges(&self) -> PyResult<Vec<(u32, u32, u32, u64)>> {
        let merger = self.merger.as_ref().ok_or_else(|| state_error("call start_merging first"))?;
        Ok(merger.merges().iter().map(|m| (m.pair.0, m.pair.1, m.id, m.count)).collect())
    }
}
