//! `encode_with_last_piece`: tiktoken's `CoreBPE.encode` as its Rust core returns it, the ids
//! and how many of them the last piece gave (`bytepair_core::unstable`). The Python layer builds
//! `Encoding.encode_with_unstable` and `Encoding._encode_bytes` on it.

use pyo3::prelude::*;

use crate::encoder::CoreBPE;
use crate::errors::guarded;
use crate::policy::Policy;

/// `(ids, last_piece_token_len)` of `core.encode(text, allowed_special, disallowed_special)`.
///
/// `text` must be a `str` of valid Unicode: a lone surrogate raises UnicodeEncodeError, as
/// tiktoken's `encode_with_unstable` does (it has no surrogate repair).
#[pyfunction]
pub fn encode_with_last_piece(
    py: Python<'_>,
    core: &CoreBPE,
    text: &str,
    allowed_special: &Bound<'_, PyAny>,
    disallowed_special: &Bound<'_, PyAny>,
) -> PyResult<(Vec<u32>, usize)> {
    let encoder = &core.inner;
    let policy = Policy::new(encoder.specials(), Some(allowed_special), Some(disallowed_special))?;
    let allowed = policy.filter();
    py.allow_threads(|| {
        policy.check(encoder.specials(), text)?;
        guarded(|| encoder.encode_with_last_piece(text, &allowed))
    })
}
