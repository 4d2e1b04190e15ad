//! Building blocks shared by the hand-written scanners: runs of a class, the whitespace
//! alternatives, and the driver loop that turns "where does the piece starting here end?" into
//! pieces.
//!
//! Every scanner is a function `end(bytes, i) -> j` giving the end of the regex match that
//! starts at `i`. The built-in patterns match at every position (each character is covered by
//! some alternative), so the pieces tile the text and the driver never searches.

use super::unicode::{char_flags, L, N, S};

/// The end of the run of characters from `i` whose flags satisfy `keep`.
#[inline(always)]
pub fn run_end(bytes: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    while i < bytes.len() {
        let (f, n) = char_flags(bytes, i);
        if !keep(f) {
            break;
        }
        i += n;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` that is in `lo..=hi` (ASCII bounds), and no other bit.
/// Bytewise arithmetic in one word: every byte's subtraction stays within its byte.
#[inline(always)]
fn in_range(w: u64, lo: u8, hi: u8) -> u64 {
    let low7 = w & !HIGH;
    // (low7 | 0x80) - lo keeps the high bit iff low7 >= lo; (hi | 0x80) - low7 iff low7 <= hi.
    let ge = (low7 | HIGH) - ONES * lo as u64;
    let le = ONES * (hi as u64 | 0x80) - low7;
    ge & le & !w & HIGH
}

/// The end of the run from `j` of ASCII bytes that `mask` marks (as [`in_range`] does) and
/// `one` accepts: eight bytes a step while eight are left, so a word of up to seven more
/// letters costs one step and no loop exit that depends on its length.
#[inline(always)]
fn ascii_run(bytes: &[u8], mut j: usize, mask: impl Fn(u64) -> u64, one: impl Fn(u8) -> bool) -> usize {
    while let Some(w) = bytes.get(j..j + 8) {
        let stop = !mask(u64::from_le_bytes(w.try_into().unwrap())) & HIGH;
        if stop != 0 {
            return j + (stop.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < bytes.len() && one(bytes[j]) {
        j += 1;
    }
    j
}

/// The end of the run of `a-z` from `j`.
#[inline(always)]
pub fn lower_run(bytes: &[u8], j: usize) -> usize {
    ascii_run(bytes, j, |w| in_range(w, b'a', b'z'), |b| b.is_ascii_lowercase())
}

/// The end of the run of `A-Z` from `j`.
#[inline(always)]
pub fn upper_run(bytes: &[u8], j: usize) -> usize {
    ascii_run(bytes, j, |w| in_range(w, b'A', b'Z'), |b| b.is_ascii_uppercase())
}

/// The end of the run of ASCII letters from `j`.
#[inline(always)]
pub fn alpha_run(bytes: &[u8], j: usize) -> usize {
    ascii_run(bytes, j, |w| in_range(w, b'a', b'z') | in_range(w, b'A', b'Z'), |b| b.is_ascii_alphabetic())
}

/// An ASCII byte that `[^\r\n\p{L}\p{N}]` matches: the optional first character of the
/// letter alternatives.
#[inline(always)]
pub fn is_ascii_prefix(b: u8) -> bool {
    b < 0x80 && !b.is_ascii_alphanumeric() && b != b'\r' && b != b'\n'
}

/// `\p{N}{1,more+1}` after its first digit (which ends at `i`): the end of at most `more` more
/// digits (2 for `\p{N}{1,3}`, 1 for nanochat's `\p{N}{1,2}`).
#[inline]
pub fn digits_end(bytes: &[u8], mut i: usize, more: usize) -> usize {
    for _ in 0..more {
        let (g, m) = flags_at(bytes, i);
        if g & N == 0 {
            break;
        }
        i += m;
    }
    i
}

/// `[^\s\p{L}\p{N}]`: "punctuation" in the patterns' sense (marks included).
#[inline(always)]
pub fn is_punct(f: u8) -> bool {
    f & (L | N | S) == 0
}

/// The flags of the character at `i`, or 0 past the end (a class test then fails).
#[inline(always)]
pub fn flags_at(bytes: &[u8], i: usize) -> (u8, usize) {
    if i < bytes.len() {
        char_flags(bytes, i)
    } else {
        (0, 0)
    }
}

/// How the trailing-whitespace alternatives of a pattern are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whitespace {
    /// cl100k: `\s++$|\s*[\r\n]|\s+(?!\S)|\s` (a run that reaches the end is one piece).
    EndFirst,
    /// o200k, Llama 3: `\s*[\r\n]+|\s+(?!\S)|\s+` (a run split after its last newline first).
    NewlineFirst,
    /// r50k / GPT-2: `\s++$|\s+(?!\S)|\s` (no newline rule).
    NoNewline,
}

/// The end of the whitespace match at `i` (the character at `i` is in `\s`).
///
/// With `W` the maximal run of whitespace from `i`:
/// - `\s++$`: if `W` reaches the end of the text, all of it.
/// - `\s*[\r\n]` / `\s*[\r\n]+`: `\s*` is greedy and gives back characters until a newline
///   follows, so the match ends just after the last `\r` or `\n` in `W`.
/// - `\s+(?!\S)`: at the end of `W` a non-space follows, so the regex gives back one character:
///   all of `W` but its last character, if `W` has at least two (at the end of the text, all).
/// - `\s` / `\s+`: otherwise `W` is one character, the match.
#[inline]
pub fn whitespace_end(bytes: &[u8], i: usize, rule: Whitespace) -> usize {
    let mut j = i;
    let mut last_start = i;
    let mut after_newline = usize::MAX;
    while j < bytes.len() {
        let b = bytes[j];
        if b < 0x80 {
            // ASCII White_Space: \t \n \x0b \x0c \r and space (not \x1c-\x1f, unlike str.isspace).
            if super::unicode::flags(b as u32) & S == 0 {
                break;
            }
            if b == b'\n' || b == b'\r' {
                after_newline = j + 1;
            }
            last_start = j;
            j += 1;
        } else {
            let (f, n) = char_flags(bytes, j);
            if f & S == 0 {
                break;
            }
            last_start = j;
            j += n;
        }
    }
    let at_end = j == bytes.len();
    match rule {
        Whitespace::EndFirst if at_end => return j,
        Whitespace::EndFirst | Whitespace::NewlineFirst if after_newline != usize::MAX => return after_newline,
        _ => {}
    }
    if at_end {
        j
    } else if last_start > i {
        last_start
    } else {
        j
    }
}

/// Calls `f(start, end)` with each piece's byte offsets in `text`, from `range.start` (a piece
/// start) until a piece ends at or after `range.end`, where `end(bytes, i)` is the end of the
/// match starting at `i`. The scanner always sees the whole text, so a match may look past
/// `range.end` (`\s++$`, `(?!\S)`) exactly as in a serial run. Offsets, not `&str`: the
/// encoder's lookups read whole words of the text around a piece, and slicing a `&str` checks
/// both ends for character boundaries (about fifteen instructions a piece).
#[inline(always)]
pub fn for_each_span(
    text: &str,
    range: std::ops::Range<usize>,
    end: impl Fn(&[u8], usize) -> usize,
    mut f: impl FnMut(usize, usize),
) {
    let bytes = text.as_bytes();
    let mut i = range.start;
    while i < range.end {
        let j = end(bytes, i);
        debug_assert!(j > i && text.is_char_boundary(j));
        f(i, j);
        i = j;
    }
}
