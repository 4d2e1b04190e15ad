//! tiktoken's `allowed_special` / `disallowed_special` arguments, converted for the score-BPE and
//! merge-list tokenizers: `"all"` or a collection of spellings -> sorted ids. The check itself
//! (is a disallowed spelling in the text?) runs in the core; a hit becomes the ValueError that
//! `bytepair.encoding._raise_disallowed` words, so every tokenizer raises the same message.
//!
//! `None` means "nothing": the Python layer passes each tokenizer's home default explicitly.

use bytepair_core::special::SpecialTokens;
use pyo3::prelude::*;
use pyo3::types::PyString;

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
fn ids(specials: &SpecialTokens, obj: &Bound<'_, PyAny>) -> PyResult<(Vec<u32>, Vec<String>)> {
    let (mut found, mut other) = (Vec::new(), Vec::new());
    if obj.downcast::<PyString>().is_ok() {
        // A lone string is a collection of one (tiktoken would iterate its characters).
        return Err(pyo3::exceptions::PyTypeError::new_err("expected \"all\" or a collection of special-token spellings"));
    }
    for item in obj.try_iter()? {
        let s: String = item?.extract()?;
        match specials.id(&s) {
            Some(id) => found.push(id),
            None => other.push(s),
        }
    }
    found.sort_unstable();
    found.dedup();
    Ok((found, other))
}

impl Policy {
    pub fn new(specials: &SpecialTokens, allowed: Option<&Bound<'_, PyAny>>, disallowed: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let allowed = match allowed {
            None => Some(Vec::new()),
            Some(a) if is_all(a) => None,
            Some(a) => Some(ids(specials, a)?.0),
        };
        let (disallowed, disallowed_other) = match disallowed {
            None => (Some(Vec::new()), Vec::new()),
            Some(d) if is_all(d) => match &allowed {
                None => (Some(Vec::new()), Vec::new()),
                Some(a) if a.is_empty() => (None, Vec::new()),
                Some(a) => (Some(specials.tokens().iter().map(|t| t.1).filter(|i| a.binary_search(i).is_err()).collect()), Vec::new()),
            },
            Some(d) => {
                let (found, other) = ids(specials, d)?;
                (Some(found), other)
            }
        };
        Ok(Policy { allowed, disallowed, disallowed_other })
    }

    /// ValueError (tiktoken's message) if `text` holds a disallowed spelling.
    pub fn check(&self, py: Python<'_>, specials: &SpecialTokens, text: &str) -> PyResult<()> {
        let hit = match &self.disallowed {
            Some(d) if d.is_empty() => None,
            None => specials.find_any(text, |_| true),
            Some(d) => specials.find_any(text, |id| d.binary_search(&id).is_ok()),
        };
        let spelling = hit
            .map(|m| specials.tokens()[m.spelling].0.clone())
            .or_else(|| self.disallowed_other.iter().find(|s| !s.is_empty() && text.contains(s.as_str())).cloned());
        match spelling {
            None => Ok(()),
            Some(s) => {
                py.import("bytepair.encoding")?.getattr("_raise_disallowed")?.call1((s,))?;
                Ok(())
            }
        }
    }
}
