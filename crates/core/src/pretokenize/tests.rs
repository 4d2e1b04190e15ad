//! The hand-written scanners against fancy-regex on the same patterns: edge cases, then
//! pseudo-random strings drawn from characters of every class the patterns distinguish.

use super::*;

/// Every built-in pattern: each must split as fancy-regex does on its own text.
fn builtin_patterns() -> impl Iterator<Item = &'static str> {
    patterns::BUILTIN.iter().map(|b| b.pattern)
}

/// Characters chosen to sit on every class boundary of the patterns.
const PALETTE: &[char] = &[
    'a', 'z', 'A', 'Z', 's', 'S', 't', 'T', 'l', 'L', 'v', 'V', 'e', 'E', 'r', 'R', 'd', 'D', 'm',
    'M', 'ſ', 'K', 'é', 'É', 'ß', 'Ω', 'ω', 'ǅ', 'ʰ', 'ᵃ', '中', 'あ', 'ア', '한', 'א', 'ع',
    '\u{301}', '\u{903}', '\u{20dd}', '\u{64b}', '0', '7', '٣', '²', 'Ⅻ', '½', '\'', '\'', '’', ' ',
    ' ', ' ', '\t', '\n', '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{a0}', '\u{1680}', '\u{2003}',
    '\u{2028}', '\u{2029}', '\u{3000}', '\u{1c}', '.', ',', '/', '/', '!', '-', '_', '"', '#', '€',
    '😀', '👍', '\u{fe0f}', '\u{200d}', '\u{0}', '\u{7f}', '\u{ad}', '\u{e000}', '\u{10ffff}',
];

use crate::test_data::Rng;

fn random_text(rng: &mut Rng) -> String {
    let len = rng.below(24);
    let mut s = String::new();
    for _ in 0..len {
        let c = match rng.below(12) {
            0 => char::from_u32(rng.below(0x110000) as u32).unwrap_or('x'),
            1 => char::from_u32(rng.below(0x3000) as u32).unwrap_or('x'),
            _ => PALETTE[rng.below(PALETTE.len())],
        };
        let repeat = if rng.below(6) == 0 { 1 + rng.below(4) } else { 1 };
        for _ in 0..repeat {
            s.push(c);
        }
    }
    s
}

fn pieces(p: &Pretokenizer, text: &str) -> Vec<String> {
    let mut v = Vec::new();
    p.for_each_piece(text, |s| v.push(s.to_owned())).unwrap();
    v
}

fn check(pattern: &str, text: &str) {
    let fast = Pretokenizer::new(pattern).unwrap();
    assert!(matches!(fast, Pretokenizer::Builtin(_)), "{pattern} runs on {}", fast.kind());
    let slow = Pretokenizer::new_regex(pattern).unwrap();
    assert_eq!(pieces(&fast, text), pieces(&slow, text), "pattern {} on {text:?}", fast.kind());
}

#[test]
fn edge_cases() {
    let cases = [
        "", " ", "  ", "   x", "  \n", "\n", "a \n\n  b", "x  ", "x \t\n \t", " \r\n \r\n  ", "\u{a0}\u{a0}x",
        "don't I'LL he'S we'Re you'VE 'd 'm", "'ſ 'ſomething", "ab'sx", "A's", "ABC'S", "x'", "'", "''s",
        "12345678 1 22 333", "٣٣٣٣", "hello/world//\n/x", " !!!\n\r\n/x", "é\u{301}x", "\u{301}\u{301}A",
        "ǅA", "ʰAB", "ABʰCD", "ABCdef", "AbC", "ǅǅ", "中文字符", "e\u{301}ABC", ".\u{301}", " \u{301}a",
        "😀😀 👍\u{fe0f}", "\r\r\n\r", "x\u{2028}y", "a\u{3000}\u{3000}b", "\u{85}\u{85}", "$$$ $$",
        "  '  's", "\n's", "\t\tfoo", "\u{b}\u{c} x", " 1 22", "Hello, World! 123",
    ];
    for p in builtin_patterns() {
        for c in cases {
            check(p, c);
        }
    }
}

#[test]
fn random_texts() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let fast: Vec<_> = builtin_patterns().map(|p| Pretokenizer::new(p).unwrap()).collect();
    let slow: Vec<_> = builtin_patterns().map(|p| Pretokenizer::new_regex(p).unwrap()).collect();
    // BYTEPAIR_SCAN_CASES raises the count for a longer run (see docs/engine.md).
    let cases = std::env::var("BYTEPAIR_SCAN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    for _ in 0..cases {
        let text = random_text(&mut rng);
        for (f, s) in fast.iter().zip(&slow) {
            assert_eq!(pieces(f, &text), pieces(s, &text), "pattern {} on {text:?}", f.kind());
        }
    }
}

/// Text made of ASCII words of 1-20 letters in every mix of case, joined by one palette
/// character or ASCII punctuation: the scanners' ASCII fast paths (letter runs read eight
/// bytes at a time, prefixes, upper-case runs meeting lower-case, digits, non-ASCII letters or
/// the end of the text) against fancy-regex.
#[test]
fn ascii_words() {
    let mut rng = Rng(0x5eed_0fa5_c1d3);
    let fast: Vec<_> = builtin_patterns().map(|p| Pretokenizer::new(p).unwrap()).collect();
    let slow: Vec<_> = builtin_patterns().map(|p| Pretokenizer::new_regex(p).unwrap()).collect();
    let cases = std::env::var("BYTEPAIR_SCAN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    for _ in 0..cases / 4 {
        let mut text = String::new();
        for _ in 0..1 + rng.below(6) {
            let len = 1 + rng.below(20);
            let style = rng.below(4);
            for k in 0..len {
                let c = (b'a' + rng.below(26) as u8) as char;
                let upper = match style {
                    0 => false,
                    1 => true,
                    2 => k == 0,
                    _ => rng.below(3) == 0,
                };
                text.push(if upper { c.to_ascii_uppercase() } else { c });
            }
            match rng.below(3) {
                0 => text.push(PALETTE[rng.below(PALETTE.len())]),
                1 => text.push(b" .,'-_/:"[rng.below(8)] as char),
                _ => {}
            }
        }
        for (f, s) in fast.iter().zip(&slow) {
            assert_eq!(pieces(f, &text), pieces(s, &text), "pattern {} on {text:?}", f.kind());
        }
    }
}

#[test]
fn long_runs_are_one_pass() {
    // Not a timing test: these would take minutes if a scanner rescanned runs quadratically.
    let n = 200_000;
    for p in builtin_patterns() {
        let fast = Pretokenizer::new(p).unwrap();
        for unit in [" ", "\n", "a", "A", "ʰA", "1", "^", " \n", "\u{301}"] {
            let text = unit.repeat(n / unit.len());
            let total: usize = pieces(&fast, &text).iter().map(|s| s.len()).sum();
            assert_eq!(total, text.len());
        }
    }
}

#[test]
fn unknown_patterns_use_the_regex_engine() {
    assert_eq!(Pretokenizer::new(r"\w+|\s+").unwrap().kind(), "regex");
    assert_eq!(Pretokenizer::new(patterns::O200K).unwrap().kind(), "o200k");
}

#[test]
fn chunks_at_split_points_give_the_serial_pieces() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..300 {
        let mut text = String::new();
        for _ in 0..20 {
            text.push_str(&random_text(&mut rng));
            text.push_str(["\nab", "\n", " \nX", "  \n\nword", "\r\nZ"][rng.below(5)]);
        }
        for p in builtin_patterns() {
            let pre = Pretokenizer::new(p).unwrap();
            let serial = pieces(&pre, &text);
            for chunk in [1, 7, 50] {
                let points = pre.split_points(&text, chunk).unwrap();
                let mut bounds = vec![0];
                bounds.extend(&points);
                bounds.push(text.len());
                let mut chunked = Vec::new();
                for w in bounds.windows(2) {
                    pre.for_each_piece_in(&text, w[0]..w[1], |s| chunked.push(s.to_owned())).unwrap();
                }
                assert_eq!(chunked, serial, "pattern {} chunk {chunk} on {text:?}", pre.kind());
            }
        }
    }
}

#[test]
fn ranges_on_the_regex_engines_give_the_serial_pieces() {
    // No scanner for these patterns: one runs on regex-automata (the GPT-4 pattern with digits
    // up to four at a time), one on fancy-regex. Cutting at any piece start must still give the
    // serial pieces (the engines filter a full pass).
    let digits4 = patterns::RUSTBPE_GPT4.replace(r"\p{N}{1,3}", r"\p{N}{1,4}");
    let custom = r"\p{L}+(?=\s)|\S+|\s+";
    let mut rng = Rng(0x0bad_cafe_f00d_1234);
    for (pattern, kind) in [(digits4.as_str(), "automata"), (custom, "regex")] {
        let pre = Pretokenizer::new(pattern).unwrap();
        assert_eq!(pre.kind(), kind);
        for _ in 0..100 {
            let text = random_text(&mut rng);
            let serial = pieces(&pre, &text);
            let starts: Vec<usize> = serial.iter().scan(0, |at, p| { let s = *at; *at += p.len(); Some(s) }).collect();
            let cut = starts.get(serial.len() / 2).copied().unwrap_or(0);
            let mut chunked = Vec::new();
            for range in [0..cut, cut..text.len()] {
                pre.for_each_piece_in(&text, range, |s| chunked.push(s.to_owned())).unwrap();
            }
            assert_eq!(chunked, serial, "{} on {text:?}", pre.kind());
        }
    }
}

/// Long texts (100-600 bytes, so the 64-byte block path runs) of Cyrillic, Greek, Latin
/// Extended and Vietnamese words in every mix of case, with digits, apostrophes (`м'ясо`, `'s`, `'ſ`),
/// two-byte punctuation and ASCII around them, against fancy-regex. The block path classifies
/// these letters from its two-byte table; this holds it to the regex directly, not only to the
/// scalar scanners. Word lengths put letters on both sides of every window edge.
#[test]
fn two_byte_scripts_against_the_regex() {
    const UPPER: &[char] = &['Д', 'Я', 'І', 'Ї', 'Є', 'Ґ', 'Ѣ', 'Ӏ', 'Σ', 'Ω', 'Ά', 'İ', 'Ş', 'Ğ', 'ǅ', 'Ա', 'A', 'Z', 'É', 'Ạ', 'Ế', 'Ữ', 'Ơ', 'Đ'];
    const LOWER: &[char] = &['д', 'я', 'і', 'ї', 'є', 'ґ', 'ѣ', 'ӏ', 'σ', 'ς', 'ω', 'ά', 'ı', 'ş', 'ğ', 'ǆ', 'ա', 's', 't', 'é', 'ạ', 'ế', 'ữ', 'ơ', 'đ', 'ẖ'];
    const GLUE: &[&str] = &[
        " ", " ", " ", "", "'", "'", "’", "ʼ", "'s", "'S", "'ſ", "'ll", "1", "23", "4567", ", ", ". ", "!\n", "\n\n", "  ",
        " \t", "«", "»", "—", "·", ";", "΄", "҂", "\u{483}", "\u{301}", "(", "-", "/", "\r\n", "中", "ʰ",
    ];
    against_the_regex(0x0c1a_55e5_0400_0370, |rng| {
        let mut text = String::new();
        let target = 100 + rng.below(500);
        while text.len() < target {
            let len = 1 + rng.below(14);
            let style = rng.below(5);
            for k in 0..len {
                let upper = match style {
                    0 => false,
                    1 => true,
                    2 => k == 0,
                    3 => k + 1 == len,
                    _ => rng.below(3) == 0,
                };
                let set = if upper { UPPER } else { LOWER };
                text.push(set[rng.below(set.len())]);
            }
            text.push_str(GLUE[rng.below(GLUE.len())]);
        }
        text
    });
}

/// Long texts (100-700 bytes, so the 64-byte driver, its shortcut past windows with CJK near
/// their start and the scalar scanner's three-byte classification all run) of CJK runs against
/// fancy-regex: `Lo` letters from every range (CJK Extension A, the Unified block to its last
/// code point, compatibility ideographs, Extensions B-H in planes 2 and 3, Hangul syllables and
/// Jamo, kana, halfwidth kana, Bopomofo, Yi), the `Lm` and marks that sit among them (in both
/// of o200k's letter sets, but a mark is no `\p{L}`), and around the runs what is not a letter:
/// CJK and fullwidth punctuation, the ideographic space, `Nl` and `No` numbers, fullwidth
/// digits, Yijing symbols, box drawing, the no-break space, and cased letters (fullwidth,
/// ASCII, Latin-1, Cyrillic, `Lt`) that end or continue o200k's runs.
#[test]
fn cjk_texts_against_the_regex() {
    const LETTERS: &[char] = &[
        '中', '文', '的', '一', '㐀', '䶿', '鿿', '丽', '﨎', '𠀀', '𪛟', '𰀀', '𱍐', '가', '힣', 'ᄀ', 'ㄱ', 'あ', 'ゟ', 'ア', 'ｱ',
        'ㄅ', 'ꀀ', '〆', 'ー', 'ゝ', '々', 'ｰ', '\u{3099}', '\u{309a}', '\u{302a}', '\u{301}',
    ];
    const OTHER: &[&str] = &[
        "，", "。", "、", "「", "」", "《", "》", "（", "）", "：", "！", "？", "・", "゛", "〇", "〡", "㈠", "\u{3000}", "０", "９",
        "䷀", "─", "│", "┌", "\u{a0}", "Ａ", "ｚ", "A", "z", "Ab", "aB", "É", "é", "Д", "д", "ǅ", "ʰ", " ", "  ", "    ", "\n",
        "\n\n", "\r\n", "\t", "'s", "'S", "'", "1", "23", "456", ".", ", ", "/", "-- ", "😀", "’",
    ];
    against_the_regex(0xc1c_6b70_4e00_9fff, |rng| {
        let mut text = String::new();
        let target = 100 + rng.below(600);
        while text.len() < target {
            for _ in 0..1 + rng.below(30) {
                text.push(LETTERS[rng.below(LETTERS.len())]);
            }
            for _ in 0..1 + rng.below(3) {
                text.push_str(OTHER[rng.below(OTHER.len())]);
            }
        }
        text
    });
}

/// Every built-in scanner against fancy-regex on `BYTEPAIR_SCAN_CASES / 4` texts (1,000 by
/// default) that `make` draws.
fn against_the_regex(seed: u64, mut make: impl FnMut(&mut Rng) -> String) {
    let mut rng = Rng(seed);
    let fast: Vec<_> = builtin_patterns().map(|p| Pretokenizer::new(p).unwrap()).collect();
    let slow: Vec<_> = builtin_patterns().map(|p| Pretokenizer::new_regex(p).unwrap()).collect();
    let cases = std::env::var("BYTEPAIR_SCAN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(4000);
    for _ in 0..cases / 4 {
        let text = make(&mut rng);
        for (f, s) in fast.iter().zip(&slow) {
            assert_eq!(pieces(f, &text), pieces(s, &text), "pattern {} on {text:?}", f.kind());
        }
    }
}

/// The built-in scanners (so the 64-byte driver and the scalar fallback, on real text) against
/// fancy-regex on the first 1.5 MB of every corpus of tests/support.py.
#[test]
fn builtin_scanners_against_the_regex_on_the_corpora() {
    // Skipped locally when the corpora are not here, a failure in CI (see `crate::test_data`).
    let Some(corpora) = crate::test_data::corpus_prefixes() else { return };
    for (name, text) in &corpora {
        for p in builtin_patterns() {
            let (fast, slow) = (Pretokenizer::new(p).unwrap(), Pretokenizer::new_regex(p).unwrap());
            assert!(pieces(&fast, text) == pieces(&slow, text), "{name}: pattern {}", fast.kind());
        }
    }
}
