//! Where the tests that read real data (vocabularies, corpora) find it, and the rule when it is
//! missing, the same as the Python suite's `support.require`: skipped on a developer machine
//! (with a note on stderr), a failure when `CI` is set, where `.ci/run` provides everything
//! (tests/core/test_rust_core.py passes the folders on).

use std::path::PathBuf;

use crate::vocab::Vocab;

/// A vocabulary of every byte (ranks 0-255), then `tokens` in rank order: the toy and random
/// tables of the merge tests.
pub fn byte_vocab<T: AsRef<[u8]>>(tokens: &[T]) -> Vocab {
    let bytes: Vec<[u8; 1]> = (0..=255u8).map(|b| [b]).collect();
    let all = bytes.iter().map(|b| b.as_slice()).chain(tokens.iter().map(|t| t.as_ref()));
    Vocab::new(all.enumerate().map(|(i, t)| (t, i as u32)), []).unwrap()
}

/// `$var/file` when `var` is set and the file is there. Otherwise `None` after a note, or a
/// panic in CI.
pub fn require(var: &str, file: &str) -> Option<PathBuf> {
    let path = std::env::var_os(var).map(|dir| PathBuf::from(dir).join(file));
    match path {
        Some(p) if p.is_file() => Some(p),
        _ => {
            let what = match &path {
                Some(p) => format!("{} (from ${var})", p.display()),
                None => format!("${var} (the folder that holds {file})"),
            };
            if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
                panic!("{what} is missing in CI");
            }
            eprintln!("skipped: {what} is missing");
            None
        }
    }
}

/// The corpora of tests/support.py CORPORA (Latin, Cyrillic and Han scripts, Turkish's dotted
/// and dotless i, Vietnamese's stacked marks, Python source): each name and its first 1.5 MB,
/// cut at a character boundary. `None` when they are missing, by the rule of [`require`].
pub fn corpus_prefixes() -> Option<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for name in ["en", "code", "de", "zh-fortunes", "uk", "tr", "vi"] {
        let mut text = std::fs::read_to_string(require("BYTEPAIR_CORPUS_DIR", &format!("{name}.txt"))?).unwrap();
        let mut end = text.len().min(1_500_000);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        out.push((name, text));
    }
    Some(out)
}

/// A small deterministic generator (xorshift64) for the randomised tests: the same seed gives
/// the same cases on every machine, with no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (> 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `n` bytes drawn from `alphabet`.
    pub fn text(&mut self, alphabet: &[u8], n: usize) -> Vec<u8> {
        (0..n).map(|_| alphabet[self.below(alphabet.len())]).collect()
    }
}
