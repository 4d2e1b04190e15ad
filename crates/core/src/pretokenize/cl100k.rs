//! The cl100k_base split pattern, and Llama 3's, which differs only in where a whitespace run
//! at the very end of the text is cut:
//!
//! ```text
//! cl100k: '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! and two more of the family, the GPT-4 pattern as minbpe and rustbpe write it
//! ([`RUSTBPE_GPT4`](super::patterns::RUSTBPE_GPT4)) and nanochat's
//! ([`NANOCHAT`](super::patterns::NANOCHAT), digits two at a time):
//!
//! ```text
//! rustbpe:  '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+
//! nanochat: '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+
//! ```
//!
//! These have no `\s++$` branch, so a whitespace run at the end of the text is cut after its
//! last newline as in Llama 3 (`\s*[\r\n]` and `\s*[\r\n]+` both end just after the last
//! newline of the run); `'(?i:[sdmt]|ll|ve|re)` and Llama 3's `(?i:'s|'t|…)` match the same
//! strings; the possessive `?+` on the prefix changes nothing, as below. So rustbpe's form reads
//! exactly as Llama 3's, and nanochat's too but for `\p{N}{1,2}`.
//!
//! Llama 3's quantifiers are not possessive, but nothing follows them inside their alternative
//! that could make the regex give characters back, so both read the same way:
//! 1. `'` and a contraction letter (or two), case-insensitive;
//! 2. one optional character that is not `\r`, `\n`, a letter or a number, then all letters;
//! 3. one to three numbers;
//! 4. an optional space, a run of punctuation (not space, letter or number), then `\r`/`\n`s;
//! 5. whitespace, see [`whitespace_end`].

use super::block::{for_each_span_block, Grammar};
use super::scan::{
    alpha_run, digits_end, flags_at, for_each_span, is_ascii_prefix, is_punct, run_end, whitespace_end, Whitespace,
};
use super::unicode::{char_flags, contraction_letter, decode, L, N};

/// The length of a case-insensitive contraction (`s d m t ll ve re`) at `i`, just after the
/// apostrophe; 0 if there is none.
#[inline]
pub fn contraction_len(bytes: &[u8], i: usize) -> usize {
    if i >= bytes.len() {
        return 0;
    }
    let (c1, n1) = decode(bytes, i);
    let l1 = contraction_letter(c1);
    match l1 {
        b's' | b'd' | b'm' | b't' => n1,
        b'l' | b'v' | b'r' => {
            if i + n1 >= bytes.len() {
                return 0;
            }
            let (c2, n2) = decode(bytes, i + n1);
            let want = match l1 {
                b'l' => b'l',
                _ => b'e', // 've, 're
            };
            if contraction_letter(c2) == want {
                n1 + n2
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// The end of the match at `i`; `DIGITS` is the longest run of numbers one piece takes.
#[inline(always)]
fn end<const DIGITS: usize>(bytes: &[u8], i: usize, ws: Whitespace) -> usize {
    // Fast paths: a run of letters starting with an ASCII letter, alone or after one ASCII
    // character of the optional prefix (not `'`, which may start a contraction, alternative 1).
    let b0 = bytes[i];
    let letters_at = if b0.is_ascii_alphabetic() {
        Some(i)
    } else if b0 != b'\'' && is_ascii_prefix(b0) && bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphabetic()) {
        Some(i + 1)
    } else {
        None
    };
    if let Some(j) = letters_at {
        let e = alpha_run(bytes, j + 1);
        return if bytes.get(e).is_some_and(|&b| b >= 0x80) { run_end(bytes, e, |g| g & L != 0) } else { e };
    }
    // The characters compared by value below (`'`, `\r`, `\n`, the space) are ASCII, so `b0`
    // stands for the character; only its class and length are needed otherwise.
    let (f, n) = char_flags(bytes, i);
    if b0 == b'\'' {
        let k = contraction_len(bytes, i + 1);
        if k > 0 {
            return i + 1 + k;
        }
    }
    if f & L != 0 {
        return run_end(bytes, i + n, |g| g & L != 0);
    }
    if f & N == 0 && b0 != b'\r' && b0 != b'\n' {
        // Alternative 2 with its optional first character.
        let (g, m) = flags_at(bytes, i + n);
        if g & L != 0 {
            return run_end(bytes, i + n + m, |g| g & L != 0);
        }
    }
    if f & N != 0 {
        return digits_end(bytes, i + n, DIGITS - 1);
    }
    let punct_from = if is_punct(f) {
        Some(i)
    } else if b0 == b' ' && is_punct(flags_at(bytes, i + 1).0) && i + 1 < bytes.len() {
        Some(i + 1)
    } else {
        None
    };
    if let Some(p) = punct_from {
        let j = run_end(bytes, p, is_punct);
        let mut k = j;
        while k < bytes.len() && (bytes[k] == b'\r' || bytes[k] == b'\n') {
            k += 1;
        }
        return k;
    }
    whitespace_end(bytes, i, ws)
}

/// The pieces of cl100k_base's pattern as byte offsets (see [`for_each_span`]): a window of
/// plain text at a time ([`super::block`]), this scanner where the text is not plain.
pub fn for_each_span_cl100k(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span_block(text, range, Grammar::Cl100k, |b, i| end::<3>(b, i, Whitespace::EndFirst), f)
}

/// [`for_each_span_cl100k`] for Llama 3's pattern. The two differ only where a whitespace run
/// reaches the end of the text, which no window does.
pub fn for_each_span_llama3(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span_block(text, range, Grammar::Cl100k, |b, i| end::<3>(b, i, Whitespace::NewlineFirst), f)
}

/// The scalar scanner alone: the definition the block driver is tested against.
pub fn for_each_span_cl100k_scalar(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span(text, range, |b, i| end::<3>(b, i, Whitespace::EndFirst), f)
}

/// The scalar scanner alone, for Llama 3.
pub fn for_each_span_llama3_scalar(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span(text, range, |b, i| end::<3>(b, i, Whitespace::NewlineFirst), f)
}

/// [`for_each_span_llama3`] for nanochat's pattern (numbers two digits at a time).
pub fn for_each_span_nanochat(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span_block(text, range, Grammar::Nanochat, |b, i| end::<2>(b, i, Whitespace::NewlineFirst), f)
}

/// The scalar scanner alone, for nanochat's pattern.
pub fn for_each_span_nanochat_scalar(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span(text, range, |b, i| end::<2>(b, i, Whitespace::NewlineFirst), f)
}
