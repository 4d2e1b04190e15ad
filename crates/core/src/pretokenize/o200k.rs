//! The o200k_base split pattern (also o200k_harmony's):
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! Call the two letter sets UP (`[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`) and LO
//! (`[\p{Ll}\p{Lm}\p{Lo}\p{M}]`). They overlap in Lm, Lo and the marks (which are not `\p{L}`,
//! so a mark is also a valid optional first character and is punctuation for alternative 4).
//! The regex backtracks, and the first match in its order is what we must reproduce:
//!
//! - Alternative 1, body `UP* LO+` from `j`: `UP*` first takes the whole UP run `j..k`. If the
//!   character at `k` is in LO, `LO+` takes the LO run from `k`. Otherwise `UP*` gives back
//!   characters until one in LO starts `LO+`: the last character of the UP run that is also in
//!   LO; everything after it in the run is UP only, so `LO+` is that single character.
//! - The optional first character is tried taken first, then not taken (which only matters when
//!   it is a mark, itself UP and LO); all of alternative 1 is tried before alternative 2.
//! - Alternative 2, body `UP+ LO*`: the UP run and then the LO run after it.
//! - Either may end with a case-insensitive contraction.

use super::cl100k::contraction_len;
use super::block::{for_each_span_block, Grammar};
use super::scan::{
    digits_end, flags_at, for_each_span, is_ascii_prefix, is_punct, lower_run, run_end, upper_run, whitespace_end, Whitespace,
};
use super::unicode::{char_flags, L, LO, N, UP};

/// `UP* LO+` from `j`: the end of the match, if any.
#[inline(always)]
fn body1(bytes: &[u8], j: usize) -> Option<usize> {
    let mut k = j;
    let mut after_last_both = None;
    while k < bytes.len() {
        let (f, n) = char_flags(bytes, k);
        if f & UP == 0 {
            if f & LO != 0 {
                return Some(run_end(bytes, k + n, |g| g & LO != 0));
            }
            break;
        }
        k += n;
        if f & LO != 0 {
            after_last_both = Some(k);
        }
    }
    after_last_both
}

/// `UP+ LO*` from `j`: the end of the match, if any.
#[inline(always)]
fn body2(bytes: &[u8], j: usize) -> Option<usize> {
    let k = run_end(bytes, j, |g| g & UP != 0);
    if k == j {
        return None;
    }
    Some(run_end(bytes, k, |g| g & LO != 0))
}

/// Extends a letter match by an optional contraction.
#[inline(always)]
fn with_contraction(bytes: &[u8], e: usize) -> usize {
    if e < bytes.len() && bytes[e] == b'\'' {
        let k = contraction_len(bytes, e + 1);
        if k > 0 {
            return e + 1 + k;
        }
    }
    e
}

/// The letter part of alternative 1 or 2 when the letters start with an ASCII letter at `j`
/// (after the optional first character, if any), or `None` when non-ASCII characters make
/// the general path necessary. ASCII `a-z` are LO only and `A-Z` UP only, so:
/// - `a-z...`: `UP*` takes nothing and `LO+` the lower-case run (which may go on into non-ASCII
///   LO characters);
/// - `A-Z...` then `a-z`: alternative 1, the upper-case run then the lower-case run;
/// - `A-Z...` then an ASCII non-letter: alternative 1 fails (no character of the run is LO),
///   with and without the optional first character, and alternative 2 takes the run;
/// - `A-Z...` then a non-ASCII character: left to the general path.
#[inline(always)]
fn ascii_letters(bytes: &[u8], j: usize) -> Option<usize> {
    let lower_from = if bytes[j].is_ascii_lowercase() {
        j
    } else {
        let k = upper_run(bytes, j + 1);
        match bytes.get(k) {
            Some(b) if b.is_ascii_lowercase() => k,
            Some(&b) if b >= 0x80 => return None,
            _ => return Some(k),
        }
    };
    let e = lower_run(bytes, lower_from + 1);
    Some(if bytes.get(e).is_some_and(|&b| b >= 0x80) { run_end(bytes, e, |g| g & LO != 0) } else { e })
}

#[inline(always)]
fn end(bytes: &[u8], i: usize) -> usize {
    // Fast paths: ASCII letters, alone or after one ASCII character of the optional prefix.
    let b0 = bytes[i];
    let letters_at = if b0.is_ascii_alphabetic() {
        Some(i)
    } else if is_ascii_prefix(b0) && bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphabetic()) {
        Some(i + 1)
    } else {
        None
    };
    if let Some(e) = letters_at.and_then(|j| ascii_letters(bytes, j)) {
        return with_contraction(bytes, e);
    }
    // Only the class and length of the first character matter below; the characters compared
    // by value (`\r`, `\n`, the space) are ASCII, so `b0` stands for the character.
    let (f, n) = char_flags(bytes, i);
    // Fast path: an ASCII lower-case letter, or any LO character not in UP, starts a plain
    // LO run (alternative 1 with no UP part).
    if f & (UP | LO) == LO {
        return with_contraction(bytes, run_end(bytes, i + n, |g| g & LO != 0));
    }
    let prefix = f & (L | N) == 0 && b0 != b'\r' && b0 != b'\n';
    let letters = f & (UP | LO) != 0;
    if prefix || letters {
        if prefix && i + n < bytes.len() {
            if let Some(e) = body1(bytes, i + n) {
                return with_contraction(bytes, e);
            }
        }
        if letters {
            if let Some(e) = body1(bytes, i) {
                return with_contraction(bytes, e);
            }
        }
        if prefix && i + n < bytes.len() {
            if let Some(e) = body2(bytes, i + n) {
                return with_contraction(bytes, e);
            }
        }
        if letters {
            if let Some(e) = body2(bytes, i) {
                return with_contraction(bytes, e);
            }
        }
    }
    if f & N != 0 {
        return digits_end(bytes, i + n, 2);
    }
    let punct_from = if is_punct(f) {
        Some(i)
    } else if b0 == b' ' && i + 1 < bytes.len() && is_punct(flags_at(bytes, i + 1).0) {
        Some(i + 1)
    } else {
        None
    };
    if let Some(p) = punct_from {
        let j = run_end(bytes, p, is_punct);
        let mut k = j;
        while k < bytes.len() && matches!(bytes[k], b'\r' | b'\n' | b'/') {
            k += 1;
        }
        return k;
    }
    whitespace_end(bytes, i, Whitespace::NewlineFirst)
}

/// The pieces of o200k's pattern as byte offsets (see [`for_each_span`]): a window of plain
/// text at a time ([`super::block`]), this scanner where the text is not plain.
#[allow(clippy::redundant_closure)] // inlined as a closure, not as the fn item (see below)
pub fn for_each_span_o200k(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    // A closure, not the function item `end`: passed as an item, it was called through a
    // `Fn::call` shim that LLVM did not inline, a call with six register saves and restores
    // per piece (cachegrind, o200k English: 9% fewer scanner instructions as a closure).
    for_each_span_block(text, range, Grammar::O200k, |b, i| end(b, i), f)
}

/// The scalar scanner alone, piece by piece: the definition the block driver is tested against.
#[allow(clippy::redundant_closure)]
pub fn for_each_span_o200k_scalar(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span(text, range, |b, i| end(b, i), f)
}
