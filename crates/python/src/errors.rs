//! Core errors -> Python exceptions (the classes live in `bytepair/errors.py`), and the panic
//! guard every entry point runs inside.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bytepair_core::Error;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::PyErr;

pyo3::import_exception!(bytepair.errors, FormatError);
pyo3::import_exception!(bytepair.errors, VocabError);
pyo3::import_exception!(bytepair.errors, PatternError);
pyo3::import_exception!(bytepair.errors, UnknownTokenError);

pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Format { location, message } => FormatError::new_err((message, location)),
        Error::Vocab(m) => VocabError::new_err(m),
        Error::Pattern(m) => PatternError::new_err(m),
        Error::Split(m) => PyValueError::new_err(format!("the split pattern failed on this input: {m}")),
        Error::UnknownToken(id) => UnknownTokenError::new_err(id),
        Error::Io(e) => PyErr::from(e), // FileNotFoundError, PermissionError, ... as Python raises them
    }
}

/// Runs core code, turning its errors into Python exceptions and, should the core ever panic,
/// the panic into a RuntimeError rather than pyo3's PanicException (a BaseException).
pub fn guarded<T>(f: impl FnOnce() -> Result<T, Error>) -> pyo3::PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(to_py),
        Err(_) => Err(PyRuntimeError::new_err("bytepair internal error (a bug: please report it)")),
    }
}
