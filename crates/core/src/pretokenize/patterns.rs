//! Every built-in split pattern, written once: its name, its exact text, and the hand-written
//! scanner that runs it. The Python package reads this table through the binding
//! (`bytepair._core.PATTERNS`) instead of keeping copies of the strings.
//!
//! [`Pretokenizer::new`](super::Pretokenizer::new) looks a pattern up here and, when it is one
//! of these texts exactly, runs the entry's scanner; anything else goes to the regex engines.
//! So a built-in pattern that drifts by one character on either side of the boundary is no
//! longer found, and the tests that build every entry and check it runs on its scanner fail
//! (rather than the encoder slowing down silently on the general regex).

/// The hand-written scanners (each a module of this folder). Several patterns share one when
/// they split every text the same way (see each scanner's module docs for the argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanner {
    /// [`super::cl100k`], cl100k_base's rules.
    Cl100k,
    /// [`super::cl100k`], Llama 3's rules (a whitespace run at the end is cut after its last
    /// newline).
    Llama3,
    /// [`super::cl100k`], Llama 3's rules with numbers two digits at a time.
    Nanochat,
    /// [`super::o200k`].
    O200k,
    /// [`super::r50k`].
    R50k,
}

/// One built-in split pattern.
#[derive(Debug, PartialEq, Eq)]
pub struct Builtin {
    /// The name it is known by here and in `bytepair._core.PATTERNS`; also what
    /// [`Pretokenizer::kind`](super::Pretokenizer::kind) reports for it.
    pub name: &'static str,
    /// The exact text (as the encoding's `pat_str`).
    pub pattern: &'static str,
    pub scanner: Scanner,
}

/// cl100k_base (tiktoken's spelling, with possessive quantifiers).
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// cl100k_base as a tokenizer.json file holds it (what `Encoding.save(..., "tokenizer.json")`
/// writes, for HF's Oniguruma engine): [`CL100K`] with `\p{N}{1,3}+` written `\p{N}{1,3}`,
/// since Oniguruma reads `X{1,3}+` as `(X{1,3})+`. The two split alike: that branch has nothing
/// after the quantifier, so no later failure can backtrack into it, and possessive and greedy
/// take the same digits. So the cl100k scanner runs it (without this entry, a cl100k tokenizer
/// read back from tokenizer.json ran on the regex engine: about a fifth of its encoding time).
/// tests/parity/test_fuzz_pretokenize.py holds the scanner to tiktoken with this spelling.
pub const CL100K_HF: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// Llama 3's pattern.
pub const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The GPT-4 pattern as minbpe and rustbpe write it (rustbpe's default); it splits as Llama 3's.
pub const RUSTBPE_GPT4: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";

/// nanochat's pattern: rustbpe's form with numbers one or two digits at a time.
pub const NANOCHAT: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";

/// o200k_base's (and o200k_harmony's) pattern.
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// GPT-2's pattern in tiktoken's spelling (possessive quantifiers): gpt2, r50k_base, p50k_base
/// and p50k_edit.
pub const R50K: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// GPT-2's pattern as GPT-2's `encoder.py` writes it, which is also what HF tokenizers' ByteLevel
/// pre-tokenizer splits with. Same pieces as [`R50K`] (see `r50k.rs`).
pub const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// The table. Names are unique and so are the texts (tests below).
pub static BUILTIN: [Builtin; 8] = [
    Builtin { name: "cl100k", pattern: CL100K, scanner: Scanner::Cl100k },
    Builtin { name: "cl100k_hf", pattern: CL100K_HF, scanner: Scanner::Cl100k },
    Builtin { name: "o200k", pattern: O200K, scanner: Scanner::O200k },
    Builtin { name: "r50k", pattern: R50K, scanner: Scanner::R50k },
    Builtin { name: "gpt2", pattern: GPT2, scanner: Scanner::R50k },
    Builtin { name: "llama3", pattern: LLAMA3, scanner: Scanner::Llama3 },
    Builtin { name: "rustbpe", pattern: RUSTBPE_GPT4, scanner: Scanner::Llama3 },
    Builtin { name: "nanochat", pattern: NANOCHAT, scanner: Scanner::Nanochat },
];

/// The entry whose text is exactly `pattern`, if any (a scan of eight strings, at construction).
pub fn find(pattern: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.pattern == pattern)
}

/// The entry named `name`, if any.
pub fn named(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Pretokenizer;

    #[test]
    fn every_builtin_runs_on_its_scanner() {
        for b in &BUILTIN {
            let pre = Pretokenizer::new(b.pattern).unwrap();
            match pre {
                Pretokenizer::Builtin(found) => assert!(std::ptr::eq(found, b), "{} found as {}", b.name, found.name),
                _ => panic!("{} runs on {}, not its scanner", b.name, pre.kind()),
            }
            assert_eq!(pre.kind(), b.name);
            assert_eq!(pre.pattern(), b.pattern);
            assert!(std::ptr::eq(named(b.name).unwrap(), b));
        }
    }

    #[test]
    fn names_and_texts_are_unique() {
        for (i, a) in BUILTIN.iter().enumerate() {
            for b in &BUILTIN[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.pattern, b.pattern, "{} and {}", a.name, b.name);
            }
        }
    }

    #[test]
    fn a_drifted_pattern_is_not_taken_for_a_builtin() {
        // One character more or less is another pattern: it must reach the regex engines, never
        // a scanner written for the original.
        for b in &BUILTIN {
            for drifted in [format!("{}x", b.pattern), b.pattern[..b.pattern.len() - 1].to_string()] {
                assert!(find(&drifted).is_none());
                let pre = Pretokenizer::new(&drifted);
                assert!(!matches!(pre, Ok(Pretokenizer::Builtin(_))), "{}: {drifted}", b.name);
            }
        }
    }
}
