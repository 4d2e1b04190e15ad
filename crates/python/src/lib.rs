//! `bytepair._core`: the PyO3 binding of bytepair-core. It converts types and errors and
//! releases the GIL around every loop over text; the rules (special-token policy, surrogates,
//! registry, file handling) live in the Python package. One module per part of the core.

mod chat;
mod chatml;
mod errors;
mod formats;
mod ids;
mod jinja;
mod policy;
mod text;
mod threads;
mod tokenizer;
mod train;

use bytepair_core::formats::tiktoken;
use bytepair_core::known;
use bytepair_core::pretokenize::patterns;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::guarded;

/// Parses a `.tiktoken` file's bytes into `[(token bytes, rank), ...]` in file order.
#[pyfunction]
fn parse_tiktoken<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
    let pairs = py.allow_threads(|| guarded(|| tiktoken::parse(data)))?;
    PyList::new(py, pairs.into_iter().map(|(b, r)| (PyBytes::new(py, &b), r)))
}

/// A known encoding's facts as Python gets them: `(sha256 hex, pattern, [(spelling, id), ...],
/// n_vocab or None)`.
type KnownFacts = (&'static str, &'static str, Vec<(String, u32)>, Option<u32>);

/// The pinned facts of a known encoding (crates/core/src/known.rs), [`KnownFacts`]; KeyError
/// for a name the table does not hold.
#[pyfunction]
fn known_encoding(name: &str) -> PyResult<KnownFacts> {
    let k = known::encoding(name).ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_owned()))?;
    Ok((k.sha256, k.pattern, k.special_tokens(), k.n_vocab))
}

/// The name of the known encoding a ranks file with this SHA-256 (32 bytes) is named after.
#[pyfunction]
fn known_encoding_by_sha256(digest: [u8; 32]) -> Option<&'static str> {
    known::by_sha256(&digest).map(|k| k.name)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<tokenizer::Tokenizer>()?;
    m.add_class::<ids::IdBuffer>()?;
    m.add_class::<chat::ChatJob>()?;
    m.add_class::<chatml::ChatMLFrame>()?;
    m.add_class::<jinja::JinjaTemplate>()?;
    m.add_class::<jinja::ChatSpecials>()?;
    m.add_class::<jinja::JinjaConversation>()?;
    m.add_class::<jinja::JinjaPreparer>()?;
    m.add_class::<train::Trainer>()?;
    m.add_function(wrap_pyfunction!(parse_tiktoken, m)?)?;
    m.add_function(wrap_pyfunction!(known_encoding, m)?)?;
    m.add_function(wrap_pyfunction!(known_encoding_by_sha256, m)?)?;
    formats::register(m)?;
    // The built-in split patterns by name (crates/core/src/pretokenize/patterns.rs): the
    // Python package's pattern constants are these strings, never copies.
    let builtin = PyDict::new(m.py());
    for b in &patterns::BUILTIN {
        builtin.set_item(b.name, b.pattern)?;
    }
    m.add("PATTERNS", builtin)?;
    // The names of the pinned encodings (crates/core/src/known.rs), in the table's order.
    m.add("KNOWN_ENCODINGS", known::ENCODINGS.iter().map(|k| k.name).collect::<Vec<_>>())?;
    Ok(())
}
