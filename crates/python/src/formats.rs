//! Vocabulary file formats: header and trailer inspection for BPE2/BPZ2, and the readers and
//! writers of the scored (SentencePiece, LEAP) and merge-list (QTKR) formats.

use bytepair_core::formats::{bpe2, byte_level, gpt2, tiktoken};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::guarded;

/// The header and trailing section of a BPE2/BPZ2 file as a dict (the table is not read).
#[pyfunction]
fn bpe2_info<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let info = guarded(|| bpe2::read_info(data))?;
    let d = PyDict::new(py);
    d.set_item("format", if info.compressed { "bpz2" } else { "bpe2" })?;
    d.set_item("token_count", info.token_count)?;
    d.set_item("max_token_len", info.max_token_len)?;
    d.set_item("blob_size", info.blob_size)?;
    d.set_item("source_hash", PyBytes::new(py, &info.source_hash))?;
    d.set_item("compressed_size", info.compressed_size)?;
    match info.meta {
        Some(m) => {
            d.set_item("name", m.name)?;
            d.set_item("pattern", m.pattern)?;
            d.set_item("special_tokens", m.specials)?;
            d.set_item("has_trailer", true)?;
        }
        None => d.set_item("has_trailer", false)?,
    }
    Ok(d)
}

/// GPT-2's `vocab.bpe` + `encoder.json` as a `.tiktoken` file's bytes (ranks checked to agree),
/// for `Tokenizer.from_tiktoken`: no Python object per token.
#[pyfunction]
fn gpt2_to_tiktoken<'py>(py: Python<'py>, vocab_bpe: &[u8], encoder_json: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let text = py.allow_threads(|| {
        guarded(|| {
            let tokens = gpt2::read(vocab_bpe, encoder_json)?;
            Ok(tiktoken::write(tokens.iter().enumerate().map(|(r, t)| (t.as_slice(), r as u32))))
        })
    })?;
    Ok(PyBytes::new(py, &text))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bpe2_info, m)?)?;
    m.add_function(wrap_pyfunction!(gpt2_to_tiktoken, m)?)?;
    // GPT-2's byte table as one string: character i spells byte i.
    m.add("BYTE_LEVEL_CHARS", byte_level::BYTE_CHARS.iter().collect::<String>())?;
    Ok(())
}
