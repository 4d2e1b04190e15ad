//! A fast exact path for split patterns of the GPT-2/GPT-4 family on regex-automata (the DFA
//! engine under fancy-regex), used when a pattern can be rewritten without fancy features.
//!
//! Such patterns use two things regex-automata lacks, and both have exact plain equivalents:
//!
//! - **Possessive quantifiers** on a character-class run (`\p{L}++`, `[^\r\n\p{L}\p{N}]?+`,
//!   `\p{N}{1,3}+`, `\s++$`). A possessive run differs from a greedy one only when giving back
//!   characters could let the rest of its branch match. In the branches listed in
//!   [`POSSESSIVE_SAFE`] the rest is empty, is `$` (which cannot match inside a run), or starts
//!   with a class disjoint from the run's class, so giving back never helps: greedy = possessive.
//!   Only those exact branches are rewritten; a pattern with any other possessive or fancy
//!   construct keeps the regex engine.
//! - **The tail `\s+(?!\S)|\s` (or `|\s+`)**, the only look-ahead. It is replaced by one last
//!   branch `\s+` and a fix-up: the greedy run stops at a non-space or at the end of the text.
//!   At the end, `\s+(?!\S)` takes the whole run. Before a non-space, `\s+(?!\S)` takes the run
//!   minus its last character when the run has two or more characters, and otherwise fails so
//!   that `\s` / `\s+` takes the single character. So: trim the last character off a run of two
//!   or more that is followed by something.
//!
//! The branches become the patterns of one multi-pattern regex with leftmost-first priority,
//! which is exactly alternation, and the match says which branch won (for the fix-up).

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

/// Branches whose possessive quantifiers equal greedy ones (see the module docs), with their
/// greedy spelling.
const POSSESSIVE_SAFE: &[(&str, &str)] = &[
    // optional non-letter prefix (class disjoint from \p{L}), then a letter run at the end
    (r"[^\r\n\p{L}\p{N}]?+\p{L}++", r"[^\r\n\p{L}\p{N}]?\p{L}+"),
    (r"[^\r\n\p{L}\p{N}]?+\p{L}+", r"[^\r\n\p{L}\p{N}]?\p{L}+"),
    // a run at the end of its branch
    (r"\p{N}{1,3}+", r"\p{N}{1,3}"),
    (r"\p{N}{1,2}+", r"\p{N}{1,2}"),
    (r" ?\p{L}++", r" ?\p{L}+"),
    (r" ?\p{N}++", r" ?\p{N}+"),
    (r" ?[^\s\p{L}\p{N}]++", r" ?[^\s\p{L}\p{N}]+"),
    // a run of non-space, then newlines (disjoint from the run's class)
    (r" ?[^\s\p{L}\p{N}]++[\r\n]*+", r" ?[^\s\p{L}\p{N}]+[\r\n]*"),
    (r" ?[^\s\p{L}\p{N}]++[\r\n]*", r" ?[^\s\p{L}\p{N}]+[\r\n]*"),
    // a whitespace run then the end of the text: `$` cannot match inside the run
    (r"\s++$", r"\s+$"),
];

#[derive(Debug, Clone)]
pub struct AutomataSplitter {
    regex: Regex,
    /// The index of the `\s+` branch that stands for `\s+(?!\S)|\s`.
    tail: usize,
    pattern: String,
}

/// Splits a pattern into its top-level branches (`|` outside groups and classes).
fn branches(pattern: &str) -> Option<Vec<&str>> {
    let (mut depth, mut in_class, mut escaped) = (0i32, false, false);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in pattern.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => depth += 1,
            ')' if !in_class => depth -= 1,
            '|' if !in_class && depth == 0 => {
                out.push(&pattern[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || in_class || escaped {
        return None;
    }
    out.push(&pattern[start..]);
    Some(out)
}

/// True if the branch may have syntax that regex-automata would read differently or not at
/// all (possessive quantifiers, look-around, atomic groups, back-references). It errs on the
/// side of "yes": that only means the general engine runs.
fn has_fancy_syntax(branch: &str) -> bool {
    // `\p{L}+` is a class then `+`, not a counted repetition made possessive: blank the
    // Unicode classes first.
    let mut plain = String::with_capacity(branch.len());
    let mut rest = branch;
    while let Some(i) = rest.find("\\p{").or_else(|| rest.find("\\P{")) {
        plain.push_str(&rest[..i]);
        match rest[i..].find('}') {
            Some(j) => {
                plain.push('P');
                rest = &rest[i + j + 1..];
            }
            None => return true,
        }
    }
    plain.push_str(rest);
    ["++", "*+", "?+", "}+", "(?=", "(?!", "(?<", "(?>", "(?P=", "\\G", "\\K", "\\k"]
        .iter()
        .any(|s| plain.contains(s))
        || (1..=9).any(|d| plain.contains(&format!("\\{d}")))
}

impl AutomataSplitter {
    /// The fast splitter for `pattern`, or `None` if the pattern is not of the form handled.
    pub fn new(pattern: &str) -> Option<Self> {
        let parts = branches(pattern)?;
        let n = parts.len();
        if n < 3 || parts[n - 2] != r"\s+(?!\S)" || !(parts[n - 1] == r"\s" || parts[n - 1] == r"\s+") {
            return None;
        }
        let mut rewritten: Vec<&str> = Vec::with_capacity(n - 1);
        for part in &parts[..n - 2] {
            if let Some((_, greedy)) = POSSESSIVE_SAFE.iter().find(|(p, _)| p == part) {
                rewritten.push(greedy);
            } else if has_fancy_syntax(part) {
                return None;
            } else {
                rewritten.push(part);
            }
        }
        rewritten.push(r"\s+");
        let regex = Regex::new_many(&rewritten).ok()?;
        Some(AutomataSplitter { regex, tail: n - 2, pattern: pattern.to_owned() })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    #[inline]
    pub fn for_each_piece<'t, F: FnMut(&'t str)>(&self, text: &'t str, mut f: F) {
        let mut pos = 0;
        while pos < text.len() {
            // Most pieces start right where the last one ended: an anchored search there finds
            // the same match as an unanchored one (no match can start earlier) and skips the
            // reverse scan for the start. Only when nothing starts here, search on.
            let input = Input::new(text).range(pos..);
            let found = self.regex.search(&input.clone().anchored(Anchored::Yes));
            let Some(m) = found.or_else(|| self.regex.search(&input)) else { break };
            let (start, mut end) = (m.start(), m.end());
            if m.pattern().as_usize() == self.tail && end < text.len() {
                // `\s+(?!\S)`: give back the last whitespace character if there are two or more.
                let last = text[start..end].char_indices().next_back().map_or(start, |(i, _)| start + i);
                if last > start {
                    end = last;
                }
            }
            if end > start {
                f(&text[start..end]);
                pos = end;
            } else {
                // An empty match carries no bytes; step over one character.
                pos = start + text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::regex::RegexSplitter;

    use crate::pretokenize::patterns::{CL100K, LLAMA3, NANOCHAT, O200K, R50K};

    fn pieces_fast(s: &AutomataSplitter, t: &str) -> Vec<String> {
        let mut v = vec![];
        s.for_each_piece(t, |x| v.push(x.to_owned()));
        v
    }

    fn pieces_regex(s: &RegexSplitter, t: &str) -> Vec<String> {
        let mut v = vec![];
        s.for_each_piece(t, |x| v.push(x.to_owned())).unwrap();
        v
    }

    /// A small deterministic generator (no dev-dependency): xorshift over tricky characters.
    fn random_texts(n: usize) -> Vec<String> {
        // Every class the patterns test: spaces of several kinds (NEL and U+2028 are \s, U+200B
        // is not), letters of each case class (Lu Ll Lt Lm Lo), marks, digits of several
        // scripts and other numbers, punctuation, symbols, apostrophes, newlines.
        let alphabet: Vec<char> = " \t\n\r\u{a0}\u{3000}\u{2028}\u{85}\u{200b}\u{c}aZé日ǅʰ'’sSlLdDtT1٣½Ⅻ.,!/-_(\u{301}🙂x\u{b}"
            .chars()
            .collect();
        let mut state = 0x9e3779b97f4a7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..n)
            .map(|_| {
                let len = (next() % 24) as usize;
                (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect()
            })
            .collect()
    }

    #[test]
    fn same_pieces_as_fancy_regex() {
        // BYTEPAIR_FUZZ_ITERS raises the count for a longer run (docs/training.md).
        let n = std::env::var("BYTEPAIR_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
        let mut texts = random_texts(n);
        texts.extend(
            ["", " ", "  ", "a  b", "a \n b", "x   ", "\n\n  \n", "it's 12345 ok!!\n\n", "  \u{3000}x", "'S'LL"]
                .map(String::from),
        );
        for p in [CL100K, NANOCHAT, R50K, O200K, LLAMA3] {
            let fast = AutomataSplitter::new(p).unwrap_or_else(|| panic!("pattern not handled: {p}"));
            let general = RegexSplitter::new(p).unwrap();
            for t in &texts {
                assert_eq!(pieces_fast(&fast, t), pieces_regex(&general, t), "pattern {p:?} text {t:?}");
            }
        }
    }

    #[test]
    fn same_pieces_as_fancy_regex_on_the_corpora() {
        // Whole files as single texts; skipped locally when the corpora are not here, a
        // failure in CI (see `crate::test_data`).
        let Some(corpora) = crate::test_data::corpus_prefixes() else { return };
        for (name, text) in &corpora {
            for p in [CL100K, NANOCHAT, R50K, O200K, LLAMA3] {
                let fast = AutomataSplitter::new(p).unwrap();
                let general = RegexSplitter::new(p).unwrap();
                assert_eq!(pieces_fast(&fast, text), pieces_regex(&general, text), "{name} {p}");
            }
        }
    }

    #[test]
    fn other_patterns_are_not_taken() {
        assert!(AutomataSplitter::new(r"\S+|\s+").is_none());
        assert!(AutomataSplitter::new(r"a++|\s+(?!\S)|\s").is_none());
        assert!(AutomataSplitter::new(r"(?=a)a|\s+(?!\S)|\s").is_none());
        assert!(AutomataSplitter::new(r"\p{N}{1,4}+|\s+(?!\S)|\s").is_none());
        assert!(AutomataSplitter::new(r"\p{N}{2}+|\s+(?!\S)|\s").is_none());
        assert!(AutomataSplitter::new(r"(a)\1|\s+(?!\S)|\s").is_none());
        assert!(AutomataSplitter::new(CL100K).is_some());
    }
}
