//! The GPT-2 / r50k_base / p50k split pattern, in tiktoken's spelling and in GPT-2's original
//! one (the same pieces: `\s+(?!\S)|\s+` and `\s++$|\s+(?!\S)|\s` agree on every run):
//!
//! ```text
//! '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
//! ```
//!
//! Contractions are case-sensitive here; each class run may take one leading space.

use super::block::{for_each_span_block, Grammar};
use super::scan::{flags_at, for_each_span, is_punct, run_end, whitespace_end, Whitespace};
use super::unicode::{char_flags, L, N};

#[inline(always)]
fn end(bytes: &[u8], i: usize) -> usize {
    if bytes[i] == b'\'' {
        let rest = &bytes[i + 1..];
        match rest {
            [b's' | b'd' | b'm' | b't', ..] => return i + 2,
            [b'l', b'l', ..] | [b'v', b'e', ..] | [b'r', b'e', ..] => return i + 3,
            _ => {}
        }
    }
    let (f, _) = char_flags(bytes, i);
    // With a leading space, the class is decided by the character after it.
    let (from, g) = if bytes[i] == b' ' && i + 1 < bytes.len() {
        let (g, _) = flags_at(bytes, i + 1);
        if g & (L | N) != 0 || is_punct(g) {
            (i + 1, g)
        } else {
            (i, f)
        }
    } else {
        (i, f)
    };
    if g & L != 0 {
        return run_end(bytes, from, |h| h & L != 0);
    }
    if g & N != 0 {
        return run_end(bytes, from, |h| h & N != 0);
    }
    if is_punct(g) {
        return run_end(bytes, from, is_punct);
    }
    whitespace_end(bytes, i, Whitespace::NoNewline)
}

/// The pieces of GPT-2's pattern as byte offsets (see [`for_each_span`]): a window of plain
/// text at a time ([`super::block`]), this scanner where the text is not plain.
#[allow(clippy::redundant_closure)] // inlined as a closure, not as the fn item (see `o200k.rs`)
pub fn for_each_span_r50k(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span_block(text, range, Grammar::R50k, |b, i| end(b, i), f)
}

/// The scalar scanner alone: the definition the block driver is tested against.
#[allow(clippy::redundant_closure)]
pub fn for_each_span_r50k_scalar(text: &str, range: std::ops::Range<usize>, f: impl FnMut(usize, usize)) {
    for_each_span(text, range, |b, i| end(b, i), f)
}
