//! The general pre-tokenizer: any split pattern, run by fancy-regex.
//!
//! fancy-regex is tiktoken's engine, so for any pattern the pieces match tiktoken's. It
//! backtracks for look-around (`\s+(?!\S)`), which makes it the slow path; its backtracking
//! limit turns a pathological pattern into an [`Error::Split`] instead of a hang.

use fancy_regex::Regex;

use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct RegexSplitter {
    regex: Regex,
}

impl RegexSplitter {
    pub fn new(pattern: &str) -> Result<Self> {
        let regex = Regex::new(pattern).map_err(|e| Error::Pattern(e.to_string()))?;
        Ok(RegexSplitter { regex })
    }

    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    pub fn for_each_piece<'t, F: FnMut(&'t str)>(&self, text: &'t str, mut f: F) -> Result<()> {
        for m in self.regex.find_iter(text) {
            let m = m.map_err(|e| Error::Split(e.to_string()))?;
            // An empty match carries no bytes; BPE of nothing is nothing.
            if !m.as_str().is_empty() {
                f(m.as_str());
            }
        }
        Ok(())
    }
}
