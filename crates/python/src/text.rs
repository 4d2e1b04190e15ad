//! `str` arguments of the encode calls, taken straight from Python objects so the Python layer
//! needs no checks of its own on the hot path.
//!
//! A `str` is borrowed as UTF-8 without a copy. Anything else is a `TypeError` worded as
//! `bytepair.encoding` words it. A `str` holding lone surrogates cannot be UTF-8: it is repaired
//! exactly as the Python layer does everywhere (`utf-16` with `surrogatepass`, decoded back with
//! `replace`: each lone surrogate becomes U+FFFD, a split pair is joined), which costs a copy
//! only for such text.

use std::ops::Deref;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyByteArray, PyBytes, PyString};

/// Text to encode: the caller's `str` (borrowed) or its repaired copy.
pub enum Text {
    Borrowed(PyBackedStr),
    Repaired(String),
}

impl Deref for Text {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Repaired(s) => s,
        }
    }
}

/// The TypeError for a non-`str` argument.
pub fn not_str(obj: &Bound<'_, PyAny>) -> PyErr {
    let hint = if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() {
        " (decode bytes to str first)"
    } else {
        ""
    };
    let name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    PyTypeError::new_err(format!("expected text as str, got {name}{hint}"))
}

/// `obj` as text to encode (see the module docs).
#[inline]
pub fn text(obj: &Bound<'_, PyAny>) -> PyResult<Text> {
    let s = obj.downcast::<PyString>().map_err(|_| not_str(obj))?;
    match PyBackedStr::try_from(s.clone()) {
        Ok(b) => Ok(Text::Borrowed(b)),
        Err(_) => {
            let fixed = s
                .call_method1("encode", ("utf-16", "surrogatepass"))?
                .call_method1("decode", ("utf-16", "replace"))?;
            Ok(Text::Repaired(fixed.extract()?))
        }
    }
}

/// Every item of an iterable as text to encode.
pub fn texts(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Text>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("expected a sequence of str, got a single str"));
    }
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for item in obj.try_iter()? {
        out.push(text(&item?)?);
    }
    Ok(out)
}
