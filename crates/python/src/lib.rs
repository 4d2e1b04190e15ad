//! `bytepair._core`: the PyO3 binding of bytepair-core. It converts types and errors and
//! releases the GIL around every loop over text; the rules (special-token policy, surrogates,
//! registry, file handling) live in the Python package. One module per part of the core.

mod encoder;
mod errors;
mod formats;
mod ids;
mod merged;
mod policy;
mod scored;
mod text;
mod threads;
mod train;
mod unstable;

use bytepair_core::formats::{bpe2, tiktoken};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::errors::guarded;

/// Parses a `.tiktoken` file's bytes into `[(token bytes, rank), ...]` in file order.
#[pyfunction]
fn parse_tiktoken<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
    let pairs = py.allow_threads(|| guarded(|| tiktoken::parse(data)))?;
    PyList::new(py, pairs.into_iter().map(|(b, r)| (PyBytes::new(py, &b), r)))
}

/// The source hash stored in a BPE2 file's header (after checking the whole file).
#[pyfunction]
fn bpe2_source_hash<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let file = py.allow_threads(|| guarded(|| bpe2::read(data)))?;
    Ok(PyBytes::new(py, &file.source_hash))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<encoder::CoreBPE>()?;
    m.add_class::<train::Trainer>()?;
    m.add_function(wrap_pyfunction!(parse_tiktoken, m)?)?;
    m.add_function(wrap_pyfunction!(bpe2_source_hash, m)?)?;
    m.add_function(wrap_pyfunction!(unstable::encode_with_last_piece, m)?)?;
    m.add_class::<scored::ScoreBPE>()?;
    m.add_class::<merged::MergeBPE>()?;
    formats::register(m)?;
    Ok(())
}
