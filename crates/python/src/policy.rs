//! tiktoken's `allowed_special` / `disallowed_special` arguments, for every tokenizer class:
//! `"all"` or a collection of spellings -> sorted ids. The check itself (is a disallowed
//! spelling in the text?) is plain Rust and needs no GIL, so a batch runs it on its worker
//! threads; a hit becomes tiktoken's ValueError, worded here once for all classes.
//!
//! An argument left out is the tokenizer's home default (`bytepair_core::SpecialDefaults`); one
//! given as `None` means "nothing".

use bytepair_core::{SpecialFilter, Tokenizer};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// Which special tokens a call treats as specials: `None` for all of them.
pub struct Policy {
    pub allowed: Option<Vec<u32>>,
    disallowed: Option<Vec<u32>>,
    /// Disallowed spellings that are not special tokens: tiktoken refuses text holding them too.
    disallowed_other: Vec<String>,
}

fn is_all(obj: &Bound<'_, PyAny>) -> bool {
    obj.downcast::<PyString>().is_ok_and(|s| s.to_str().is_ok_and(|s| s == "all"))
}

/// Spellings -> ids of the special tokens among them, and the spellings that are not.
fn ids(tok: &Tokenizer, obj: &Bound<'_, PyAny>) -> PyResult<(Vec<u32>, Vec<String>)> {
    let (mut found, mut other) = (Vec::new(), Vec::new());
    if obj.downcast::<PyString>().is_ok() {
        // A lone string is a collection of one (tiktoken would iterate its characters).
        return Err(pyo3::exceptions::PyTypeError::new_err("expected \"all\" or a collection of special-token spellings"));
    }
    for item in obj.try_iter()? {
        let s: String = item?.extract()?;
        match tok.special_list().iter().find(|t| t.0 == s) {
            Some(t) => found.push(t.1),
            None => other.push(s),
        }
    }
    found.sort_unstable();
    found.dedup();
    Ok((found, other))
}

/// The keyword arguments every encode call takes, as given. An argument left out is the
/// tokenizer's home default (`Tokenizer::special_defaults`); one given as `None` means nothing,
/// as tiktoken's `disallowed_special=None` does.
pub struct CallArgs<'py> {
    pub allowed: Option<Bound<'py, PyAny>>,
    pub disallowed: Option<Bound<'py, PyAny>>,
    pub add_bos: bool,
    pub add_eos: bool,
    pub num_threads: usize,
}

impl<'py> CallArgs<'py> {
    /// Reads `kwargs` (None when the call passed none: the common case costs nothing).
    /// `batch` calls also take `num_threads`.
    pub fn parse(kwargs: Option<&Bound<'py, PyDict>>, batch: bool) -> PyResult<Self> {
        let mut args = CallArgs { allowed: None, disallowed: None, add_bos: false, add_eos: false, num_threads: 8 };
        let Some(kwargs) = kwargs else { return Ok(args) };
        for (key, value) in kwargs.iter() {
            match key.downcast::<PyString>()?.to_str()? {
                "allowed_special" => args.allowed = Some(value),
                "disallowed_special" => args.disallowed = Some(value),
                "add_bos" => args.add_bos = value.is_truthy()?,
                "add_eos" => args.add_eos = value.is_truthy()?,
                "num_threads" if batch => {
                    args.num_threads = if value.is_none() { crate::threads::DEFAULT_THREADS } else { value.extract()? };
                }
                other => return Err(PyTypeError::new_err(format!("unexpected keyword argument {other:?}"))),
            }
        }
        Ok(args)
    }
}

impl Policy {
    /// The policy of one call. Only the special tokens' list is read here: the matcher is
    /// built (by a score model, lazily) only when the check has something to look for.
    pub fn of_call(tok: &Tokenizer, args: &CallArgs<'_>) -> PyResult<Self> {
        let home = tok.special_defaults();
        let allowed = match &args.allowed {
            None if home.allow_all => None,
            None => Some(Vec::new()),
            Some(a) if a.is_none() => Some(Vec::new()),
            Some(a) if is_all(a) => None,
            Some(a) => Some(ids(tok, a)?.0),
        };
        let refuse_all = match &args.disallowed {
            None => home.refuse_all,
            Some(d) => is_all(d),
        };
        let (disallowed, disallowed_other) = if refuse_all {
            match &allowed {
                None => (Some(Vec::new()), Vec::new()),
                Some(a) if a.is_empty() => (None, Vec::new()),
                Some(a) => {
                    // Sorted: `find` binary-searches it.
                    let mut rest: Vec<u32> = tok.special_list().iter().map(|t| t.1).filter(|i| a.binary_search(i).is_err()).collect();
                    rest.sort_unstable();
                    rest.dedup();
                    (Some(rest), Vec::new())
                }
            }
        } else {
            match &args.disallowed {
                Some(d) if !d.is_none() => {
                    let (found, other) = ids(tok, d)?;
                    (Some(found), other)
                }
                _ => (Some(Vec::new()), Vec::new()),
            }
        };
        Ok(Policy { allowed, disallowed, disallowed_other })
    }

    /// The allowed specials as the core's filter (rank-BPE encoders).
    pub fn filter(&self) -> SpecialFilter {
        match &self.allowed {
            None => SpecialFilter::All,
            Some(ids) => SpecialFilter::from_ids(ids.clone()),
        }
    }

    /// The leftmost disallowed spelling in `text`, if any (tiktoken searches one alternation of
    /// them all, so the leftmost wins whether it is a special token or a plain string).
    pub fn find(&self, tok: &Tokenizer, text: &str) -> Option<String> {
        let added = tok.added();
        let special = match &self.disallowed {
            Some(d) if d.is_empty() => None,
            _ if added.special_list().is_empty() => None,
            None => added.find_any(text, |_| true),
            Some(d) => added.find_any(text, |id| d.binary_search(&id).is_ok()),
        }
        .map(|m| (m.start, added.spelling(&m)));
        let other = self
            .disallowed_other
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| text.find(s.as_str()).map(|at| (at, s.as_str())))
            .min_by_key(|&(at, _)| at);
        match (special, other) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
        .map(|(_, s)| s.to_owned())
    }

    /// tiktoken's ValueError if `text` holds a disallowed spelling. Needs no GIL.
    pub fn check(&self, tok: &Tokenizer, text: &str) -> PyResult<()> {
        match self.find(tok, text) {
            None => Ok(()),
            Some(s) => Err(disallowed(&s)),
        }
    }
}

/// tiktoken's error for text holding a disallowed special token. Made without the GIL (a
/// batch's worker threads raise it); the message is written when Python first looks at it.
fn disallowed(token: &str) -> PyErr {
    PyValueError::new_err(Disallowed(token.to_owned()))
}

/// The spelling of a disallowed token; becomes tiktoken's message, word for word.
struct Disallowed(String);

impl<'py> IntoPyObject<'py> for Disallowed {
    type Target = PyString;
    type Output = Bound<'py, PyString>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyString>> {
        // Python's repr of the spelling, as tiktoken's f-string `{token!r}` gives it.
        let r = PyString::new(py, &self.0).repr()?;
        Ok(PyString::new(
            py,
            &format!(
                "Encountered text corresponding to disallowed special token {r}.\n\
                 If you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={{{r}, ...}}`.\n\
                 If you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {{{r}}})`.\n\
                 To disable this check for all special tokens, pass `disallowed_special=()`.\n"
            ),
        ))
    }
}
