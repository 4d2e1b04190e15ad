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

/// A word of `k` characters drawn from `chars` (the CJK merge tests: models/rank/chars.rs and
/// cuts.rs).
pub fn cjk_word(rng: &mut Rng, chars: &[Vec<u8>], k: usize) -> Vec<u8> {
    (0..k).flat_map(|_| chars[rng.below(chars.len())].clone()).collect()
}

/// Adds 20-99 random tokens to `tokens` for the CJK merge tests: single characters of `chars`,
/// words of two to six of them, slices of four characters that cut characters anywhere, and a
/// character before one of `other`; distinct, of two bytes or more. In every third `round` the
/// whole list is sorted by length (a merge order of sorts); otherwise the ranks are random.
pub fn cjk_tokens(rng: &mut Rng, chars: &[Vec<u8>], other: &[Vec<u8>], round: usize, tokens: &mut Vec<Vec<u8>>) {
    for _ in 0..20 + rng.below(80) {
        let t = match rng.below(6) {
            0 | 1 => cjk_word(rng, chars, 1),
            2 | 3 => {
                let k = 2 + rng.below(5);
                cjk_word(rng, chars, k)
            }
            // A slice cutting characters, or a character next to another script.
            4 => {
                let w = cjk_word(rng, chars, 4);
                let (a, k) = (rng.below(5), 2 + rng.below(6));
                w[a..a + k].to_vec()
            }
            _ => [cjk_word(rng, chars, 1), other[rng.below(other.len())].clone()].concat(),
        };
        if t.len() >= 2 && !tokens.contains(&t) {
            tokens.push(t);
        }
    }
    if round.is_multiple_of(3) {
        tokens.sort_by_key(|t| t.len());
    }
}

/// A piece of `n` bytes for the CJK merge tests: words of one to three of `chars`, one part in
/// `other_every` from `other`, cut at byte `n` (raw bytes may end inside a character), and one
/// piece in five without its first byte.
pub fn cjk_piece(rng: &mut Rng, chars: &[Vec<u8>], other: &[Vec<u8>], n: usize, other_every: usize) -> Vec<u8> {
    let mut s = Vec::new();
    while s.len() < n {
        if rng.below(other_every) == 0 {
            s.extend_from_slice(&other[rng.below(other.len())]);
        } else {
            let k = 1 + rng.below(3);
            s.extend(cjk_word(rng, chars, k));
        }
    }
    s.truncate(n);
    if rng.below(5) == 0 {
        s.remove(0);
    }
    s
}

/// At least `len` bytes of CJK text for the tests on the real tables: their own `words` of
/// whole three-byte characters (60%), random ideographs, CJK punctuation, ASCII, kana and
/// Hangul.
pub fn cjk_text(rng: &mut Rng, words: &[&[u8]], len: usize) -> Vec<u8> {
    let mut text = Vec::new();
    while text.len() < len {
        match rng.below(20) {
            0..=11 => text.extend_from_slice(words[rng.below(words.len())]),
            12..=15 => text.extend(char::from_u32(0x4e00 + rng.below(0x5200) as u32).unwrap().to_string().bytes()),
            16 => text.extend("，。、「」！？".chars().nth(rng.below(7)).unwrap().to_string().bytes()),
            17 => text.push(b" .,a"[rng.below(4)]),
            18 => text.extend(char::from_u32(0x3040 + rng.below(0x60) as u32).unwrap().to_string().bytes()),
            _ => text.extend(char::from_u32(0xac00 + rng.below(0x2c00) as u32).unwrap().to_string().bytes()),
        }
    }
    text
}
